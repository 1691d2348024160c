//! The validation Pod: the Pod that runs a job's notebook, and what its status means.
//!
//! ```text
//! ┌─ Pod <job>-<attempt> ─────────────────────────────────────── restricted profile ─┐
//! │ init "clone"     git image   fetch spec.notebook.git.url @ ref → /workspace/repo  │
//! │ init "clone-golden"          spec.goldenNotebook.git → /workspace/golden          │
//! │                              (only when URL or ref differ from the notebook's)    │
//! │ "notebook"       job image   papermill /workspace/repo/<path> → out.ipynb;        │
//! │                              compare with the golden notebook, if any;           │
//! │                              ask the models for a prediction, if any;            │
//! │                              compact JSON result → /dev/termination-log          │
//! └──────────────────────────────────────────────────────────────────────────────────┘
//! ```
//!
//! Two pure halves, for a shell to wire to a cluster:
//!
//! - [`validation_pod`] builds the Pod of an attempt (a value: the shell creates it,
//!   and [`pod_name`] finds it again);
//! - [`observe_pod`] turns the Pod's status into the [`PhaseEvent`](crate::phase::PhaseEvent)
//!   for [`step`](crate::phase::step): running, succeeded with per-cell results read
//!   from the termination message ([`RunReport`]), or failed with a
//!   [`FailureCause`] that says whether a retry may help; [`observed_part`] is what
//!   it (and every other reader of a Pod) reads, all a watch cache needs to keep.
//!
//! An image build (`podConfig.buildConfig`) happens before the Pod, in
//! [`crate::build`]; the Pod runs the image it built.
//!
//! # Examples
//!
//! ```
//! use chrono::Utc;
//! use nbv_core::api::NotebookValidationJob;
//! use nbv_core::phase::{Attempt, PhaseEvent};
//! use nbv_core::pod::{observe_pod, validation_pod, PodDefaults, DEFAULT_START_GRACE};
//!
//! let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
//!     "metadata": {"name": "train", "namespace": "ml", "uid": "4b1c"},
//!     "spec": {
//!         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
//!         "podConfig": {"containerImage": "quay.io/example/papermill:1"}
//!     }
//! }))?;
//! let attempt = Attempt::new(1, 0);
//! let mut pod = validation_pod(&job, attempt, None, None, &PodDefaults::default())?;
//! assert_eq!(observe_pod(&pod, Utc::now(), DEFAULT_START_GRACE)?, None); // not created yet
//!
//! pod.status = Some(serde_json::from_value(serde_json::json!({"phase": "Running"}))?);
//! let event = observe_pod(&pod, Utc::now(), DEFAULT_START_GRACE)?;
//! assert!(matches!(event, Some(PhaseEvent::PodRunning { pod }) if pod.attempt == attempt));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod admission;
mod classify;
mod container;
mod defaults;
mod defaults_file;
mod error;
mod executor;
mod git;
mod models;
mod names;
mod observe;
mod observed;
mod placement;
mod policy;
mod report;
mod resources;
mod run;
mod spec;
pub(crate) mod syntax;
mod timeout;
mod tools;
mod unimplemented;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::api::NotebookValidationJob;

pub use admission::{
    Admission, DEFAULT_POD_ADMISSION_TIMEOUT, InvalidAdmissionTimeout, MAX_ANSWER_BYTES,
    POD_ADMISSION_TIMEOUT_ANNOTATION, PodRefusal, RefusalKind, admission_after, admission_timeout,
    refusal_message,
};
// Why an attempt failed, at its old path; it lives in phase, below pod and models.
pub use crate::phase::FailureCause;
pub use defaults::{
    CloneUser, DEFAULT_NBV_IMAGE, DEFAULT_START_GRACE, MAX_UID, NOBODY_UID,
    OPENSHIFT_SECURITY_GROUP, Platform, PodDefaults,
};
pub use defaults_file::InvalidPodDefaults;
pub use error::PodSpecError;
pub use executor::NOTEBOOK_CONTAINER;
pub(crate) use git::build_clone;
pub use git::{CLONE_CONTAINER, GOLDEN_CLONE_CONTAINER};
// The Kubernetes name rules the Pod's names follow, at their old paths.
pub use crate::kube_names::{MAX_LABEL_LEN, MAX_SUBDOMAIN_LEN, is_dns_label, is_dns_subdomain};
pub use names::{job_label_value, pod_name};
pub use observe::{InvalidValidationPod, observe_pod, pod_ref, pod_vanished, reported_predictions};
pub use observed::observed_part;
pub use placement::Placement;
pub use policy::{
    ImagePattern, InvalidPodPolicy, InvalidTokenAnnotation, ObjectRule, PlacementField, PodPolicy,
    PolicyRefusal, PolicyRule, SERVICE_ACCOUNT_TOKEN_ANNOTATION, api_token_requested,
    normalized_repository, parse_secret_rule, parse_service_account_rule, parse_volume_source,
};
pub use report::{
    CellOutcome, InvalidReport, MAX_REPORT_BYTES, ReportedCell, RunError, RunErrorKind, RunReport,
};
pub use resources::merge_resources;
pub(crate) use run::cells as run_cells;
pub use run::{
    GoldenSettings, InvalidRunSettings, Judged, ModelEndpoint, PredictionRequest, Probe, RUNNER,
    RUNNER_FILE, RunSettings, RunnerOutcome, Start, before_run, executed_cells, judge,
    prediction_entry, with_predictions,
};
pub use spec::validation_pod;
pub(crate) use syntax::image_problem;
pub use timeout::{DEFAULT_TIMEOUT_SECONDS, InvalidTimeout, TimeoutProblem, timeout_seconds};
pub use tools::TOOLS_CONTAINER;

/// Label key marking what nbv manages (the Kubernetes recommended label).
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Value of [`MANAGED_BY_LABEL`] on validation Pods.
pub const MANAGED_BY: &str = "nbv";
/// Label key: the job a validation Pod belongs to ([`job_label_value`]).
pub const JOB_LABEL: &str = "mlops.dev/job";
/// Label key: the attempt a validation Pod was created for (`g3-r1`).
pub const ATTEMPT_LABEL: &str = "mlops.dev/attempt";

/// Whether `pod` is controlled by `job` (its controller owner reference has the job's
/// uid). A Pod with the right name but another owner is left over from an earlier job
/// of the same name (deleted with `--cascade=orphan`): its outcome is not this job's.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
/// use nbv_core::api::{NotebookValidationJob, NotebookValidationJobSpec};
/// use nbv_core::pod::is_controlled_by;
///
/// let mut job = NotebookValidationJob::new("train", NotebookValidationJobSpec::default());
/// job.metadata.uid = Some("u1".into());
/// let mut pod = Pod::default();
/// assert!(!is_controlled_by(&pod, &job));
/// pod.metadata.owner_references = Some(vec![OwnerReference {
///     uid: "u1".into(), controller: Some(true), ..Default::default()
/// }]);
/// assert!(is_controlled_by(&pod, &job));
/// ```
pub fn is_controlled_by(pod: &Pod, job: &NotebookValidationJob) -> bool {
    let Some(uid) = job.metadata.uid.as_deref() else {
        return false;
    };
    controller_of(pod).is_some_and(|owner| owner.uid == uid)
}

/// The owner reference that names `pod`'s controller (the API server allows at most
/// one).
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
///
/// let mut pod = Pod::default();
/// pod.metadata.owner_references = Some(vec![
///     OwnerReference { name: "owner".into(), ..Default::default() },
///     OwnerReference { name: "controller".into(), controller: Some(true), ..Default::default() },
/// ]);
/// assert_eq!(nbv_core::pod::controller_of(&pod).map(|o| o.name.as_str()), Some("controller"));
/// assert_eq!(nbv_core::pod::controller_of(&Pod::default()), None);
/// ```
pub fn controller_of(pod: &Pod) -> Option<&OwnerReference> {
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
}
