//! What each trigger action does to its target, decided from the target as read.
//!
//! One file and one pure function per action, as Argo CD's health package has one per
//! kind: [`restart`], [`sync`] and [`refresh`]. Each takes the target object (JSON, as
//! the shell read it), the [`Run`] that owes the trigger and the time, and returns a
//! [`Decision`]: a write to make, the run's effect already in place (with a typed
//! [`Already`] reason), deferred until something changes, or refused. The shell reads,
//! calls the function, makes the write it names and reports the [`TriggerOutcome`] it
//! gets back; it decides nothing itself.
//!
//! Every decision is idempotent for its run: deciding again on the object the write
//! produced gives [`Decision::AlreadyDone`], which is what makes a retry after a lost
//! answer safe.
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_core::actions::{Already, Decision, Run, refresh};
//! use nbv_core::triggers::parse_triggers;
//!
//! let set = parse_triggers("- {apiVersion: v1, kind: ConfigMap, name: model, action: refresh}", "ml").unwrap();
//! let target = set.triggers()[0].target();
//! let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).unwrap();
//!
//! let config_map = serde_json::json!({"metadata": {"name": "model", "resourceVersion": "7"}});
//! let Decision::Write(write) = refresh::decide(&config_map, target, &run, now) else { panic!() };
//! assert_eq!(write.patch["metadata"]["annotations"]["mlops.dev/restart-timestamp"], "2026-01-24T22:30:00Z");
//!
//! let refreshed = serde_json::json!({"metadata": {"name": "model", "resourceVersion": "8",
//!     "annotations": {"mlops.dev/restart-timestamp": "2026-01-24T22:30:00Z"}}});
//! assert!(matches!(
//!     refresh::decide(&refreshed, target, &run, now),
//!     Decision::AlreadyDone { reason: Already::Refreshed { .. }, .. }
//! ));
//! ```

pub mod refresh;
pub mod restart;
pub mod sync;

use std::fmt;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::plan::{Outcome, SyncStage};
use crate::reconcile::Wake;
use crate::sync::SyncRequest;
use crate::time::rfc3339;
use crate::triggers::TargetRef;

/// The run a trigger acts for: the job that ran and when its run ended.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::Run;
///
/// let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// assert_eq!(run.completed(), "2026-01-24T22:30:00Z");
/// assert_eq!(run.sync_request("nbv-operator").marker, "ml/train@2026-01-24T22:30:00Z");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// The job's namespace.
    pub namespace: String,
    /// The job's name.
    pub job: String,
    /// When the run ended (`status.completionTime`).
    pub completed_at: DateTime<Utc>,
}

impl Run {
    /// The run of `namespace/job` that ended at `completed_at`.
    pub fn new(namespace: &str, job: &str, completed_at: DateTime<Utc>) -> Run {
        Run {
            namespace: namespace.to_owned(),
            job: job.to_owned(),
            completed_at,
        }
    }

    /// The completion time as nbv writes it on targets ([`rfc3339`]).
    pub fn completed(&self) -> String {
        rfc3339(self.completed_at)
    }

    /// The Argo CD sync this run asks for, started by `initiator`.
    pub fn sync_request(&self, initiator: &str) -> SyncRequest {
        SyncRequest::of_run(&self.namespace, &self.job, self.completed_at, initiator)
    }
}

/// What to do about one trigger of a run, decided from its target as read.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::{Decision, Patch, TriggerOutcome};
///
/// let write: Decision<Patch> = Decision::Write(Patch {
///     patch: serde_json::json!({"metadata": {"annotations": {"a": "b"}}}),
///     summary: "ConfigMap ml/model refreshed".into(),
/// });
/// let Ok(patch) = write.into_write() else { panic!() };
/// assert_eq!(patch.done(), TriggerOutcome::Done { summary: "ConfigMap ml/model refreshed".into() });
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    tag = "decision",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Decision<W> {
    /// Make this write; its [`TriggerOutcome`] follows from the write's answer.
    Write(W),
    /// The run's effect is already in place; write nothing.
    AlreadyDone {
        /// Why nothing is needed.
        reason: Already,
        /// The same, in words, for the `TriggerSucceeded` Event.
        summary: String,
    },
    /// The trigger cannot act now; decide again later without counting an attempt.
    Deferred {
        /// What it waits for.
        reason: String,
        /// When it may act, when known (a sync window opens).
        until: Option<DateTime<Utc>>,
    },
    /// The trigger can never act on this target as it is; write nothing and give up.
    Refused(Refused),
}

impl<W> Decision<W> {
    /// The write to make, or (`Err`) what to report without one: `Ok` a
    /// [`TriggerOutcome`] for an already-done or deferred trigger, `Err` a refusal.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::{Already, Decision, Patch};
    ///
    /// let done: Decision<Patch> = Decision::AlreadyDone {
    ///     reason: Already::SyncRequested,
    ///     summary: "Application argocd/models already has a sync for this run".into(),
    /// };
    /// let Err(Ok(outcome)) = done.into_write() else { panic!() };
    /// assert!(outcome.outcome().is_some());
    /// ```
    pub fn into_write(self) -> Result<W, Result<TriggerOutcome, Refused>> {
        match self {
            Decision::Write(write) => Ok(write),
            Decision::AlreadyDone { reason, summary } => {
                Err(Ok(TriggerOutcome::AlreadyDone { reason, summary }))
            }
            Decision::Deferred { reason, until } => {
                Err(Ok(TriggerOutcome::Deferred { reason, until }))
            }
            Decision::Refused(refused) => Err(Err(refused)),
        }
    }
}

/// Why a trigger can never act on its target as it is; the request is not sent.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::Refused;
///
/// let refused = Refused::new("restart Widget ml/w", "it has no metadata.uid");
/// assert_eq!(refused.to_string(), "restart Widget ml/w: it has no metadata.uid");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{request}: {reason}")]
pub struct Refused {
    /// What nbv would have done, for example `restart Widget ml/w`.
    pub request: String,
    /// What is wrong and how to fix it.
    pub reason: String,
}

impl Refused {
    /// A refusal of `request` because of `reason`.
    pub fn new(request: impl Into<String>, reason: impl Into<String>) -> Refused {
        Refused {
            request: request.into(),
            reason: reason.into(),
        }
    }
}

/// Why a run's effect was already in place.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::Already;
///
/// assert!(Already::Synced { started_at: "2026-01-24T22:31:00Z".into() }.deployed());
/// assert!(!Already::SyncRequested.deployed());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "already",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Already {
    /// The workload's template already restarted at the run's time or later.
    Restarted {
        /// The time found (`kubectl.kubernetes.io/restartedAt`).
        at: String,
    },
    /// No pod of the target predates the run: they all run the new model.
    NoPodPredatesRun,
    /// The target was already refreshed at the run's time or later.
    Refreshed {
        /// The time found (`mlops.dev/restart-timestamp`).
        at: String,
    },
    /// The Application carries this run's sync (requested or running).
    SyncRequested,
    /// A full sync that succeeded and started after the run ended already deployed it.
    Synced {
        /// When that sync started (`status.operationState.startedAt`).
        started_at: String,
    },
}

impl Already {
    /// Whether the run's change is known to be deployed already (a finished sync),
    /// rather than requested and still to be followed.
    pub fn deployed(&self) -> bool {
        matches!(self, Already::Synced { .. })
    }
}

/// A JSON merge patch of the target, and what to report once it is written.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::{Patch, TriggerOutcome};
///
/// let patch = Patch { patch: serde_json::json!({}), summary: "rolling restart of Deployment ml/web".into() };
/// assert!(matches!(patch.done(), TriggerOutcome::Done { .. }));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Patch {
    /// The merge patch, with the `resourceVersion` read, so that a change in between
    /// makes it a conflict.
    pub patch: Value,
    /// What the write does, for the `TriggerSucceeded` Event.
    pub summary: String,
}

impl Patch {
    /// The outcome once the patch is written.
    pub fn done(self) -> TriggerOutcome {
        TriggerOutcome::Done {
            summary: self.summary,
        }
    }
}

/// How long after the instant a sync window opens a deferred sync is tried again.
const AFTER_OPENING: chrono::Duration = chrono::Duration::seconds(1);

/// How firing a trigger went, when it did not fail: the action's result, from which
/// the ledger's record ([`TriggerOutcome::outcome`]), the look again
/// ([`TriggerOutcome::wake`]) and the metrics' label
/// ([`TriggerStatus::of`](crate::carry::TriggerStatus::of)) are derived.
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "outcome",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum TriggerOutcome {
    /// The trigger took effect; `summary` says what was done (for the
    /// `TriggerSucceeded` Event).
    Done {
        /// What was done, for example `deleted 2 pods of InferenceService ml/x`.
        summary: String,
    },
    /// The run's effect was already in place; nothing was written.
    AlreadyDone {
        /// Why nothing was needed.
        reason: Already,
        /// The same, in words.
        summary: String,
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

    /// Where the run's Argo CD sync stands after a `sync` trigger had this outcome:
    /// deferred, started (written now, or already requested by this run), or
    /// succeeded (a full sync since the run already deployed it).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::{Already, TriggerOutcome};
    /// use nbv_core::plan::SyncStage;
    ///
    /// let synced = TriggerOutcome::AlreadyDone {
    ///     reason: Already::Synced { started_at: "2026-01-24T22:31:00Z".into() },
    ///     summary: "Application argocd/serving already synced successfully".into(),
    /// };
    /// assert_eq!(synced.sync_stage(), SyncStage::Succeeded);
    /// assert_eq!(TriggerOutcome::Done { summary: String::new() }.sync_stage(), SyncStage::Started);
    /// ```
    pub fn sync_stage(&self) -> SyncStage {
        match self {
            TriggerOutcome::AlreadyDone { reason, .. } if reason.deployed() => SyncStage::Succeeded,
            TriggerOutcome::Done { .. } | TriggerOutcome::AlreadyDone { .. } => SyncStage::Started,
            TriggerOutcome::Deferred { .. } => SyncStage::Deferred,
        }
    }

    /// When to look at the job again because of this outcome: a deferred trigger a
    /// second after the sync window it waits for opens, or, when it waits for an
    /// operation to end, after the deferred retry; a trigger that took effect asks
    /// for nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::actions::TriggerOutcome;
    /// use nbv_core::reconcile::Wake;
    ///
    /// let opens = Utc.with_ymd_and_hms(2026, 1, 24, 23, 0, 0).unwrap();
    /// let closed = TriggerOutcome::Deferred { reason: "a sync window is closed".into(), until: Some(opens) };
    /// assert_eq!(closed.wake(), Wake::by(opens + chrono::Duration::seconds(1)));
    /// let busy = TriggerOutcome::Deferred { reason: "an operation is running".into(), until: None };
    /// assert_eq!(busy.wake(), Wake::followed());
    /// assert_eq!(TriggerOutcome::Done { summary: String::new() }.wake(), Wake::default());
    /// ```
    pub fn wake(&self) -> Wake {
        match self {
            // The time a deferral waits for is the first instant of a sync window;
            // the window is only open a moment after it.
            TriggerOutcome::Deferred {
                until: Some(at), ..
            } => Wake::by(at.checked_add_signed(AFTER_OPENING).unwrap_or(*at)),
            TriggerOutcome::Deferred { until: None, .. } => Wake::followed(),
            TriggerOutcome::Done { .. } | TriggerOutcome::AlreadyDone { .. } => Wake::default(),
        }
    }

    /// What happened, in words: the summary, or what a deferred trigger waits for.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::TriggerOutcome;
    ///
    /// let busy = TriggerOutcome::Deferred { reason: "an operation is running".into(), until: None };
    /// assert_eq!(busy.summary(), "an operation is running");
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "report",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SyncReport {
    /// Argo CD has not finished it; look again later.
    InProgress {
        /// Where it stands.
        summary: String,
    },
    /// Argo CD finished it, or it was replaced (`succeeded` is then `false` only when
    /// Argo CD reported a failure).
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

impl SyncReport {
    /// When to look at the job again because of where the sync stands: while Argo CD
    /// has not finished it, after the deferred retry; once it ended, nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::SyncReport;
    /// use nbv_core::reconcile::Wake;
    ///
    /// let running = SyncReport::InProgress { summary: "the sync is running".into() };
    /// assert_eq!(running.wake(), Wake::followed());
    /// let replaced = SyncReport::Replaced { summary: "another operation ran".into() };
    /// assert_eq!(replaced.wake(), Wake::default());
    /// ```
    pub fn wake(&self) -> Wake {
        match self {
            SyncReport::InProgress { .. } => Wake::followed(),
            SyncReport::Finished { .. } | SyncReport::Replaced { .. } => Wake::default(),
        }
    }
}

/// The time already written in `current` when it is not older than `completed_at`
/// (both compared at the whole seconds nbv writes): the target then already carries
/// this run's effect or a newer run's, and writing would move it backwards. A value
/// that is absent or not an RFC 3339 time is not nbv's and gives `None`.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::not_older;
///
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// assert_eq!(not_older(Some("2026-01-24T22:31:00Z"), ended).as_deref(), Some("2026-01-24T22:31:00Z"));
/// assert_eq!(not_older(Some("2026-01-24T22:29:59Z"), ended), None);
/// assert_eq!(not_older(Some("yesterday"), ended), None);
/// ```
pub fn not_older(current: Option<&str>, completed_at: DateTime<Utc>) -> Option<String> {
    let current = current?;
    let existing = DateTime::parse_from_rfc3339(current).ok()?;
    let ours = DateTime::parse_from_rfc3339(&rfc3339(completed_at)).ok()?;
    (existing >= ours).then(|| current.to_owned())
}

/// How messages name a target: `InferenceService ml/x`.
///
/// # Examples
///
/// ```
/// let set = nbv_core::triggers::parse_triggers("- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}", "ml").unwrap();
/// assert_eq!(nbv_core::actions::describe(set.triggers()[0].target()).to_string(), "Deployment ml/web");
/// ```
pub fn describe(target: &TargetRef) -> impl fmt::Display + '_ {
    Described(target)
}

struct Described<'a>(&'a TargetRef);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self.0;
        write!(
            f,
            "{} {}/{}",
            target.kind(),
            target.namespace(),
            target.name()
        )
    }
}

/// The patch `build` makes with `object`'s `resourceVersion`, or the refusal to patch
/// an object without one (a conditional patch needs it).
fn conditional(
    object: &Value,
    target: &TargetRef,
    build: impl FnOnce(&str) -> Value,
    summary: String,
) -> Decision<Patch> {
    match object["metadata"]["resourceVersion"].as_str() {
        Some(version) => Decision::Write(Patch {
            patch: build(version),
            summary,
        }),
        None => Decision::Refused(Refused::new(
            format!("patch {}", describe(target)),
            "it has no metadata.resourceVersion",
        )),
    }
}

/// Already done when the time `current` written on `target` is not older than `run`
/// ([`not_older`]); `done` says what it was (`restarted`), `reason` types it.
fn done_since<W>(
    current: Option<&str>,
    target: &TargetRef,
    run: &Run,
    done: &str,
    reason: fn(String) -> Already,
) -> Option<Decision<W>> {
    let at = not_older(current, run.completed_at)?;
    Some(Decision::AlreadyDone {
        summary: format!(
            "{} already {done} at {at} (not older than this run)",
            describe(target)
        ),
        reason: reason(at),
    })
}
