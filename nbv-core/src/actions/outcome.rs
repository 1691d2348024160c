//! How a trigger, or the sync it started, stands after the shell acted.

use chrono::{DateTime, Utc};

use crate::plan::Outcome;

/// Why a trigger had nothing to write: its effect for the run was already in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlreadyDone {
    /// The run's own write is in place (its restart time, its sync operation, its
    /// refresh timestamp, the pods it would delete are gone).
    ByThisRun,
    /// A full sync of the Application that succeeded and started after the run ended
    /// already deployed it: there is nothing left to follow.
    SyncedSince,
}

/// How firing a trigger went, when it did not fail.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::TriggerOutcome;
/// use nbv_core::plan::Outcome;
///
/// let done = TriggerOutcome::Done { summary: "started a sync of Application argocd/models".into() };
/// assert_eq!(done.outcome(), Some(Outcome::Done));
/// let busy = TriggerOutcome::Deferred { reason: "an operation is running".into(), until: None };
/// assert_eq!(busy.outcome(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TriggerOutcome {
    /// The trigger took effect; `summary` says what was done (for the
    /// `TriggerSucceeded` Event).
    Done {
        /// What was done, for example `deleted 2 pods of InferenceService ml/x`.
        summary: String,
    },
    /// The run's effect was already in place; nothing was written.
    AlreadyDone {
        /// Why nothing was needed, in words.
        summary: String,
        /// Why nothing was needed.
        by: AlreadyDone,
    },
    /// The trigger cannot act now (an Argo CD operation is running, a sync window is
    /// closed); try again later without counting an attempt.
    Deferred {
        /// What it waits for.
        reason: String,
        /// When it may act, when known (a sync window opens).
        until: Option<DateTime<Utc>>,
    },
}

impl TriggerOutcome {
    /// The outcome to record in the job's effect ledger; `None` for
    /// [`TriggerOutcome::Deferred`], which records nothing.
    pub fn outcome(&self) -> Option<Outcome> {
        match self {
            TriggerOutcome::Done { .. } | TriggerOutcome::AlreadyDone { .. } => Some(Outcome::Done),
            TriggerOutcome::Deferred { .. } => None,
        }
    }

    /// What the outcome says, in words.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::{AlreadyDone, TriggerOutcome};
    ///
    /// let done = TriggerOutcome::AlreadyDone { summary: "restarted at 22:30".into(), by: AlreadyDone::ByThisRun };
    /// assert_eq!(done.summary(), "restarted at 22:30");
    /// ```
    pub fn summary(&self) -> &str {
        match self {
            TriggerOutcome::Done { summary } | TriggerOutcome::AlreadyDone { summary, .. } => {
                summary
            }
            TriggerOutcome::Deferred { reason, .. } => reason,
        }
    }
}

/// How the sync nbv started for a run stands, for the job's report.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::SyncReport;
///
/// let done = SyncReport::Finished { succeeded: true, summary: "Application argocd/serving synced".into() };
/// assert!(matches!(done, SyncReport::Finished { succeeded: true, .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncReport {
    /// Argo CD has not finished it; look again later.
    InProgress {
        /// Where it stands.
        summary: String,
    },
    /// Argo CD finished it (`succeeded` is `false` when Argo CD reported a failure).
    Finished {
        /// Whether Argo CD reported success.
        succeeded: bool,
        /// What happened.
        summary: String,
    },
    /// Another operation replaced it before nbv saw it end.
    Replaced {
        /// What is known.
        summary: String,
    },
}
