//! Starting an Argo CD sync for a run: whether it may start now, what counts as done,
//! and how the sync nbv started ended.
//!
//! The shell observes the Application (from its watch cache) and the sync windows of
//! the Application's AppProject; [`decide_sync`] decides, as `argocd app sync` and
//! Argo CD's application controller would:
//!
//! 1. The run's sync was already requested: the Application's `operation`, or the
//!    operation Argo CD copied into `status.operationState.operation`, carries the
//!    run's marker in its `info` ([`RUN_INFO`]).
//! 2. A *full* sync already deployed what the run left behind: the last operation was
//!    a sync that succeeded, started no earlier than the run's end, and synced
//!    everything to the Application's target revision: not a `dryRun`, no `resources`
//!    subset, no `revision`/`revisions`/`source` of its own (a rollback or a pinned
//!    revision), except in Argo CD's auto-sync, which pins the commit its target
//!    revision resolved to.
//! 3. An operation is requested (`operation` is set): `argocd app sync` refuses, nbv
//!    waits for it to finish.
//! 4. The AppProject's sync windows block the sync ([`window_verdict`]); nbv waits
//!    until they open instead of writing an operation Argo CD would hold.
//! 5. Otherwise nbv writes the operation as `SetAppOperation` does: `operation` set,
//!    `status.operationState` cleared. A leftover `operationState` that never
//!    completed (its `operation` is gone, for example after the controller was
//!    killed mid-sync) is stuck, not running: clearing it is what lets the new sync
//!    start.
//!
//! [`sync_progress`] then follows the sync nbv started, for the report of its result.
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_core::sync::{decide_sync, SyncDecision, SyncRequest};
//!
//! let app = serde_json::json!({
//!     "metadata": {"name": "serving", "namespace": "argocd", "resourceVersion": "42"},
//!     "spec": {"destination": {"namespace": "ml"}},
//!     "status": {"operationState": {"phase": "Running", "operation": {"sync": {}}}}
//! });
//! let request = SyncRequest {
//!     marker: "ml/train@2026-01-24T22:30:00Z".into(),
//!     completed_at: Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap(),
//!     initiator: "nbv-operator".into(),
//! };
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).unwrap();
//! match decide_sync(&app, None, &request, now) {
//!     SyncDecision::Start { patch, stuck } => {
//!         assert_eq!(stuck.as_deref(), Some("Running"));
//!         assert_eq!(patch["status"]["operationState"], serde_json::Value::Null);
//!         assert_eq!(patch["metadata"]["resourceVersion"], "42");
//!     }
//!     other => panic!("{other:?}"),
//! }
//! ```

mod glob;
mod schedule;
mod window;

use crate::time::rfc3339;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};

pub use glob::glob_match;
pub use schedule::{Schedule, ScheduleError};
pub use window::{
    AppTarget, InvalidWindow, OPENING_SEARCH_STARTS, SyncWindow, WindowVerdict, applies_to,
    window_verdict,
};

/// Name of the `operation.info` entry that identifies the run a sync belongs to.
pub const RUN_INFO: &str = "nbv-run";

/// Operation phases after which Argo CD starts a new operation
/// (gitops-engine `OperationPhase.Completed()`); any other phase is in progress.
pub const COMPLETED_PHASES: [&str; 3] = ["Succeeded", "Failed", "Error"];

/// The sync a run asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRequest {
    /// The run's marker, `<namespace>/<job>@<completion time>`.
    pub marker: String,
    /// When the run ended.
    pub completed_at: DateTime<Utc>,
    /// Who asks (`operation.initiatedBy.username`).
    pub initiator: String,
}

impl SyncRequest {
    /// The request of the run of `namespace/job` that ended at `completed_at`.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::sync::SyncRequest;
    ///
    /// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let request = SyncRequest::of_run("ml", "train", at, "nbv-operator");
    /// assert_eq!(request.marker, "ml/train@2026-01-24T22:30:00Z");
    /// ```
    pub fn of_run(
        namespace: &str,
        job: &str,
        completed_at: DateTime<Utc>,
        initiator: &str,
    ) -> SyncRequest {
        SyncRequest {
            marker: format!("{namespace}/{job}@{}", rfc3339(completed_at)),
            completed_at,
            initiator: initiator.to_owned(),
        }
    }
}

/// What to do about a run's sync.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "decision",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SyncDecision {
    /// The run's sync was already requested (its marker is on the Application).
    AlreadyRequested,
    /// A full sync that succeeded and started after the run ended already deployed it.
    AlreadySynced {
        /// When that sync started (`status.operationState.startedAt`).
        started_at: String,
    },
    /// The Application is being deleted; no sync can start.
    Deleting,
    /// An operation is requested; wait until Argo CD has finished it.
    Busy {
        /// What is in progress.
        reason: String,
    },
    /// The AppProject's sync windows block the sync (or are invalid); wait.
    Blocked {
        /// Why, naming the windows.
        reason: String,
        /// When a sync may start, if known.
        opens_at: Option<DateTime<Utc>>,
    },
    /// Write this merge patch to the Application.
    Start {
        /// The patch: `operation`, `status.operationState: null`, and the
        /// `resourceVersion` read, so that a change in between is a conflict.
        patch: Value,
        /// The phase of a leftover operation state that never completed, if the patch
        /// clears one (for the report).
        stuck: Option<String>,
    },
}

/// Decides what to do about `request` for `application` (the object as the watch cache
/// holds it) at `now`, given the `windows` of its AppProject (`None` when the shell
/// does not know the project: no window is applied). See the module documentation.
pub fn decide_sync(
    application: &Value,
    windows: Option<&[SyncWindow]>,
    request: &SyncRequest,
    now: DateTime<Utc>,
) -> SyncDecision {
    if has_marker(&application["operation"], &request.marker)
        || has_marker(
            &application["status"]["operationState"]["operation"],
            &request.marker,
        )
    {
        return SyncDecision::AlreadyRequested;
    }
    if !application["metadata"]["deletionTimestamp"].is_null() {
        return SyncDecision::Deleting;
    }
    if !application["operation"].is_null() {
        return SyncDecision::Busy {
            reason: "has an operation requested".to_owned(),
        };
    }
    if let Some(started_at) = full_sync_since(application, request.completed_at) {
        return SyncDecision::AlreadySynced { started_at };
    }
    if let Some(windows) = windows {
        match window_verdict(windows, &AppTarget::of(application), true, now) {
            WindowVerdict::Open => {}
            WindowVerdict::Closed { reason, opens_at } => {
                return SyncDecision::Blocked { reason, opens_at };
            }
            WindowVerdict::Invalid { reason } => {
                return SyncDecision::Blocked {
                    reason,
                    opens_at: None,
                };
            }
        }
    }
    let state = &application["status"]["operationState"];
    let stuck = (!state.is_null())
        .then(|| state["phase"].as_str().unwrap_or_default())
        .filter(|phase| !COMPLETED_PHASES.contains(phase))
        .map(|phase| {
            if phase.is_empty() {
                "(no phase)".to_owned()
            } else {
                phase.to_owned()
            }
        });
    let patch = json!({
        "metadata": {"resourceVersion": application["metadata"]["resourceVersion"]},
        "operation": operation(application, request),
        "status": {"operationState": null},
    });
    SyncDecision::Start { patch, stuck }
}

/// The sync operation, as the Argo CD API server builds it for `argocd app sync`
/// without flags: the Application's own sync options and retry policy, the target
/// revision of its spec (by leaving `revision` out), and who asked.
fn operation(application: &Value, request: &SyncRequest) -> Value {
    let policy = &application["spec"]["syncPolicy"];
    let mut sync = Map::new();
    if let Some(options) = policy["syncOptions"].as_array().filter(|o| !o.is_empty()) {
        sync.insert("syncOptions".to_owned(), Value::Array(options.clone()));
    }
    let mut operation = json!({
        "sync": sync,
        "initiatedBy": {"username": request.initiator},
        "info": [{"name": RUN_INFO, "value": request.marker}],
    });
    if policy["retry"].is_object() {
        operation["retry"] = policy["retry"].clone();
    }
    operation
}

/// Whether an operation's `info` carries `nbv-run: <marker>`.
fn has_marker(operation: &Value, marker: &str) -> bool {
    operation["info"].as_array().is_some_and(|info| {
        info.iter()
            .any(|entry| entry["name"] == RUN_INFO && entry["value"] == marker)
    })
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// When the Application's last operation started, if it was a full sync (see the
/// module documentation) that succeeded and started no earlier than `completed_at`.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::sync::full_sync_since;
///
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let app = |sync: serde_json::Value| serde_json::json!({"status": {"operationState": {
///     "phase": "Succeeded", "startedAt": "2026-01-24T22:31:00Z",
///     "operation": {"sync": sync, "initiatedBy": {"username": "admin"}}
/// }}});
/// assert!(full_sync_since(&app(serde_json::json!({})), ended).is_some());
/// assert!(full_sync_since(&app(serde_json::json!({"dryRun": true})), ended).is_none());
/// assert!(full_sync_since(&app(serde_json::json!({"revision": "0ld"})), ended).is_none());
/// ```
pub fn full_sync_since(application: &Value, completed_at: DateTime<Utc>) -> Option<String> {
    let state = &application["status"]["operationState"];
    let operation = &state["operation"];
    let sync = &operation["sync"];
    if state["phase"] != "Succeeded" || !sync.is_object() {
        return None;
    }
    let automated = operation["initiatedBy"]["automated"] == true;
    let pinned = ["revision", "revisions", "source", "sources"]
        .iter()
        .any(|field| !is_empty(&sync[*field]));
    if sync["dryRun"] == true || !is_empty(&sync["resources"]) || (pinned && !automated) {
        return None;
    }
    let started = state["startedAt"].as_str()?;
    let at = DateTime::parse_from_rfc3339(started).ok()?;
    (at.with_timezone(&Utc) >= completed_at).then(|| started.to_owned())
}

/// Where the sync nbv started for a run stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "progress",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SyncProgress {
    /// Requested or running; look again later.
    InProgress {
        /// The operation's phase (`Running`, or `Requested` before Argo CD starts it).
        phase: String,
    },
    /// Argo CD finished it.
    Finished {
        /// Whether it succeeded (phase `Succeeded`).
        succeeded: bool,
        /// `Succeeded`, `Failed` or `Error`.
        phase: String,
        /// Argo CD's message.
        message: String,
    },
    /// Neither the operation nor its state carries the run's marker any more: another
    /// operation replaced it before nbv saw it finish.
    Replaced,
}

/// How the sync with `marker` stands on `application`.
///
/// # Examples
///
/// ```
/// use nbv_core::sync::{sync_progress, SyncProgress};
///
/// let app = serde_json::json!({"status": {"operationState": {
///     "phase": "Failed", "message": "one or more objects failed to apply",
///     "operation": {"info": [{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]}
/// }}});
/// assert_eq!(
///     sync_progress(&app, "ml/train@2026-01-24T22:30:00Z"),
///     SyncProgress::Finished {
///         succeeded: false,
///         phase: "Failed".into(),
///         message: "one or more objects failed to apply".into(),
///     }
/// );
/// assert_eq!(sync_progress(&app, "ml/other@2026-01-24T22:30:00Z"), SyncProgress::Replaced);
/// ```
pub fn sync_progress(application: &Value, marker: &str) -> SyncProgress {
    let state = &application["status"]["operationState"];
    if has_marker(&state["operation"], marker) {
        let phase = state["phase"].as_str().unwrap_or_default().to_owned();
        if COMPLETED_PHASES.contains(&phase.as_str()) {
            return SyncProgress::Finished {
                succeeded: phase == "Succeeded",
                message: state["message"].as_str().unwrap_or_default().to_owned(),
                phase,
            };
        }
        return SyncProgress::InProgress {
            phase: if phase.is_empty() {
                "Running".to_owned()
            } else {
                phase
            },
        };
    }
    if has_marker(&application["operation"], marker) {
        return SyncProgress::InProgress {
            phase: "Requested".to_owned(),
        };
    }
    SyncProgress::Replaced
}
