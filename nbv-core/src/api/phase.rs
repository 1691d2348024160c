//! The wire form of a job's phase.

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The phase of a `NotebookValidationJob`, as written in `status.phase`.
///
/// `Pending` and `Running` are legacy phases written by older operators; they stay
/// readable and [`Phase::migrated`] maps them to their current equivalents.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Phase {
    /// The job was accepted; nothing runs yet (also: waiting for a retry).
    Initializing,
    /// A custom image is being built (`podConfig.buildConfig.enabled`).
    Building,
    /// The build finished; validation is about to start.
    BuildComplete,
    /// The validation Pod runs the notebook.
    ValidationRunning,
    /// The run ended successfully. Terminal.
    Succeeded,
    /// The run ended in failure, retries exhausted or not applicable. Terminal.
    Failed,
    /// Legacy spelling of [`Phase::Initializing`].
    Pending,
    /// Legacy spelling of [`Phase::ValidationRunning`].
    Running,
}

impl Phase {
    /// Every phase, current ones first, in the order of the phase machine.
    pub const ALL: [Phase; 8] = [
        Phase::Initializing,
        Phase::Building,
        Phase::BuildComplete,
        Phase::ValidationRunning,
        Phase::Succeeded,
        Phase::Failed,
        Phase::Pending,
        Phase::Running,
    ];

    /// The name written in `status.phase`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Initializing => "Initializing",
            Phase::Building => "Building",
            Phase::BuildComplete => "BuildComplete",
            Phase::ValidationRunning => "ValidationRunning",
            Phase::Succeeded => "Succeeded",
            Phase::Failed => "Failed",
            Phase::Pending => "Pending",
            Phase::Running => "Running",
        }
    }

    /// `true` for `Succeeded` and `Failed`: a run that has ended.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Phase::Succeeded | Phase::Failed)
    }

    /// `true` for the legacy phases `Pending` and `Running`.
    pub const fn is_legacy(self) -> bool {
        matches!(self, Phase::Pending | Phase::Running)
    }

    /// The current phase a legacy phase stands for; current phases map to themselves.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::Phase;
    ///
    /// let legacy: Phase = "Running".parse()?;
    /// assert_eq!(legacy.migrated(), Phase::ValidationRunning);
    /// assert!(Phase::Failed.is_terminal());
    /// assert_eq!("Done".parse::<Phase>().unwrap_err().to_string(),
    ///     "unknown phase \"Done\"; expected one of Initializing, Building, BuildComplete, \
    ///      ValidationRunning, Succeeded, Failed, Pending, Running");
    /// # Ok::<(), nbv_core::api::UnknownPhase>(())
    /// ```
    pub const fn migrated(self) -> Phase {
        match self {
            Phase::Pending => Phase::Initializing,
            Phase::Running => Phase::ValidationRunning,
            other => other,
        }
    }
}

/// How far a job's run has come, as everything that only asks "has it ended, and how?"
/// sees it: the Application status counts, the `mlops.dev/block-wave` gate and the
/// metrics.
///
/// Derived from the job's `status.phase` ([`JobPhase::of`]): a job without a phase, or
/// with one this version cannot read, is still running as far as anyone can tell.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{JobPhase, Phase};
///
/// assert_eq!(JobPhase::of(Some(Phase::Failed)), JobPhase::Failed);
/// assert!(JobPhase::Running < JobPhase::Succeeded);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobPhase {
    /// Any phase that is not terminal: initializing, building, validating, waiting to
    /// retry, or not reported yet (or not readable).
    Running,
    /// The run ended in success.
    Succeeded,
    /// The run ended in failure with no retry left.
    Failed,
}

impl JobPhase {
    /// How a job in `phase` (its `status.phase`, legacy names included) counts.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::{JobPhase, Phase};
    ///
    /// assert_eq!(JobPhase::of(Some(Phase::Succeeded)), JobPhase::Succeeded);
    /// assert_eq!(JobPhase::of(Some(Phase::ValidationRunning)), JobPhase::Running);
    /// assert_eq!(JobPhase::of(Some(Phase::Running)), JobPhase::Running);
    /// assert_eq!(JobPhase::of(None), JobPhase::Running);
    /// ```
    pub const fn of(phase: Option<Phase>) -> JobPhase {
        match phase {
            Some(Phase::Succeeded) => JobPhase::Succeeded,
            Some(Phase::Failed) => JobPhase::Failed,
            _ => JobPhase::Running,
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `status.phase` value that is not one of [`Phase::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown phase {0:?}; expected one of Initializing, Building, BuildComplete, \
     ValidationRunning, Succeeded, Failed, Pending, Running"
)]
pub struct UnknownPhase(pub String);

impl FromStr for Phase {
    type Err = UnknownPhase;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Phase::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPhase(s.to_owned()))
    }
}
