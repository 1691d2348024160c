//! Validation levels and output checks (`spec.validationConfig`).
//!
//! The core decides everything a check means; the validation Pod carries it out:
//!
//! 1. [`resolve`] turns a `validationConfig` into a [`CheckPolicy`]: the severity
//!    (off, warn, fail) of every [`Check`] from the level and the explicit fields, and
//!    the parsed [`Expectation`]s. A field nbv cannot check fails the job at once,
//!    naming it ([`InvalidCheckSpec`]). The Pod receives the policy as JSON in
//!    `NBV_CHECKS`.
//! 2. In the Pod, the notebook runs with a probe in its kernel that observes each
//!    cell's value ([`Observation`]), the Python warnings shown and the shell commands'
//!    exit codes, without leaving a trace in the notebook. [`evaluate`] is what an
//!    observation means against an expectation; the Pod's script does the same in
//!    Python and a test holds the two together.
//! 3. The findings come back in the termination message ([`CheckReport`], key `chk`,
//!    at most [`MAX_CHECKS_BYTES`]). A failing finding fails the job for good
//!    ([`FailureCause::CheckFailed`](crate::phase::FailureCause::CheckFailed)); warnings
//!    are recorded in the status condition `ValidationWarnings` and the run's Event.
//!
//! A job without `validationConfig` asks for no check.
//!
//! # Examples
//!
//! ```
//! use nbv_core::api::{ValidationConfig, ValidationLevel};
//! use nbv_core::checks::{resolve, Severity};
//!
//! let policy = resolve(&ValidationConfig { level: Some(ValidationLevel::Production), ..Default::default() })?;
//! assert_eq!(policy.checks.warnings, Severity::Fail);
//! let json = serde_json::to_value(&policy).unwrap();
//! assert_eq!(json["checks"]["exitCodes"], "fail");
//! # Ok::<(), nbv_core::checks::InvalidCheckSpec>(())
//! ```

mod expectation;
mod finding;
mod observation;
mod policy;
mod run;

pub use expectation::{Expectation, InvalidCheckSpec};
pub use finding::{CheckReport, Finding, MAX_CHECKS_BYTES, Outcome, Rule, warnings_message};
pub use observation::{Observation, evaluate, type_matches};
pub use policy::{Check, CheckPolicy, Severities, Severity, level_defaults, resolve};
pub use run::{cell_findings, missing_cells};

use crate::api::NotebookValidationJobSpec;

/// The check policy of a job: `None` when it has no `validationConfig`.
///
/// # Examples
///
/// ```
/// use nbv_core::api::NotebookValidationJobSpec;
/// use nbv_core::checks::policy_of;
///
/// assert_eq!(policy_of(&NotebookValidationJobSpec::default())?, None);
/// # Ok::<(), nbv_core::checks::InvalidCheckSpec>(())
/// ```
///
/// # Errors
///
/// [`InvalidCheckSpec`] as [`resolve`].
pub fn policy_of(
    spec: &NotebookValidationJobSpec,
) -> Result<Option<CheckPolicy>, InvalidCheckSpec> {
    spec.validation_config.as_ref().map(resolve).transpose()
}
