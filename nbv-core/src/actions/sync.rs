//! The `sync` action: starting an Argo CD sync for a run, and reporting how it ended.
//!
//! What the Application needs is [`crate::sync::decide_sync`]'s rule (its marker, a
//! full sync since the run, a running operation, the sync windows, the operation to
//! write); [`decide`] turns it into a trigger's [`Decision`] with the words of its
//! report, and [`report`] follows the sync nbv started ([`crate::sync::sync_progress`]).
//!
//! The operation's `info` carries a marker of the job's run (`nbv-run:
//! <namespace>/<job>@<completion time>`). Argo CD copies the operation into
//! `status.operationState.operation` when it runs it, so finding the marker in either
//! place means this run's sync was already requested, even if nbv lost its record of
//! it, and it is how [`report`] follows the sync to its end.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Already, Decision, Patch, Refused, Run, SyncReport, describe};
use crate::sync::{
    RUN_INFO, SyncDecision, SyncProgress, SyncWindow, decide_sync, full_sync_since, sync_progress,
};
use crate::time::rfc3339;
use crate::triggers::TargetRef;

/// What syncing `target` (the Application, as read) for `run` at `now` takes, given
/// the sync `windows` of its AppProject (`None`: not known, no window applies);
/// `initiator` is who the operation names as having asked.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::{Already, Decision, Run, sync};
///
/// let set = nbv_core::triggers::parse_triggers(
///     "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}", "ml").unwrap();
/// let target = set.triggers()[0].target();
/// let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).unwrap();
/// let app = serde_json::json!({"metadata": {"name": "serving", "namespace": "argocd", "resourceVersion": "42"}});
/// let Decision::Write(write) = sync::decide(&app, None, target, &run, "nbv-operator", now) else { panic!() };
/// assert_eq!(write.patch["operation"]["info"][0]["value"], "ml/train@2026-01-24T22:30:00Z");
///
/// // The same decision on what the write left behind.
/// let requested = serde_json::json!({"metadata": {"resourceVersion": "43"}, "operation": write.patch["operation"]});
/// assert!(matches!(
///     sync::decide(&requested, None, target, &run, "nbv-operator", now),
///     Decision::AlreadyDone { reason: Already::SyncRequested, .. }
/// ));
/// ```
pub fn decide(
    application: &Value,
    windows: Option<&[SyncWindow]>,
    target: &TargetRef,
    run: &Run,
    initiator: &str,
    now: DateTime<Utc>,
) -> Decision<Patch> {
    let name = describe(target);
    let request = run.sync_request(initiator);
    let marker = &request.marker;
    match decide_sync(application, windows, &request, now) {
        SyncDecision::AlreadyRequested => Decision::AlreadyDone {
            reason: Already::SyncRequested,
            summary: format!("{name} already has a sync for this run ({RUN_INFO}: {marker})"),
        },
        SyncDecision::AlreadySynced { started_at } => Decision::AlreadyDone {
            summary: format!(
                "{name} already synced successfully in a full sync started at {started_at}, \
                 after the run ended at {}",
                run.completed()
            ),
            reason: Already::Synced { started_at },
        },
        SyncDecision::Deleting => Decision::Refused(Refused::new(
            format!("sync {name}"),
            "the Application is being deleted",
        )),
        SyncDecision::Busy { reason } => Decision::Deferred {
            reason: format!("{name} {reason}; the sync starts when it has finished"),
            until: None,
        },
        SyncDecision::Blocked { reason, opens_at } => Decision::Deferred {
            reason: format!(
                "{name}: a sync window of its AppProject {}: {reason}; {}",
                project_of(application),
                match opens_at {
                    Some(at) => format!("the sync starts when it opens, at {}", rfc3339(at)),
                    None => "no opening was found in the windows' next occurrences; nbv \
                             keeps checking"
                        .to_owned(),
                }
            ),
            until: opens_at,
        },
        SyncDecision::Start { patch, stuck } => {
            if application["metadata"]["resourceVersion"]
                .as_str()
                .is_none()
            {
                return Decision::Refused(Refused::new(
                    format!("sync {name}"),
                    "the Application has no metadata.resourceVersion",
                ));
            }
            let summary = match stuck {
                Some(phase) => format!(
                    "started a sync of {name} ({RUN_INFO}: {marker}), clearing a leftover \
                     operation state in phase {phase} that had no operation, as argocd app \
                     sync does"
                ),
                None => format!("started a sync of {name} ({RUN_INFO}: {marker})"),
            };
            Decision::Write(Patch { patch, summary })
        }
    }
}

/// How the sync that `run` started on `target` stands, from the Application as read.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::{Run, SyncReport, sync};
///
/// let set = nbv_core::triggers::parse_triggers(
///     "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}", "ml").unwrap();
/// let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// let app = serde_json::json!({"status": {"operationState": {"phase": "Succeeded",
///     "operation": {"info": [{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]}}}});
/// assert_eq!(
///     sync::report(&app, set.triggers()[0].target(), &run),
///     SyncReport::Finished {
///         succeeded: true,
///         summary: "the sync of Application argocd/serving for this run ended in phase Succeeded".into(),
///     }
/// );
/// ```
pub fn report(application: &Value, target: &TargetRef, run: &Run) -> SyncReport {
    let name = describe(target);
    let marker = run.sync_request("").marker;
    match sync_progress(application, &marker) {
        SyncProgress::InProgress { phase } => SyncReport::InProgress {
            summary: format!("the sync of {name} for this run is {phase}"),
        },
        SyncProgress::Finished {
            succeeded,
            phase,
            message,
        } => SyncReport::Finished {
            succeeded,
            summary: format!(
                "the sync of {name} for this run ended in phase {phase}{}",
                if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                }
            ),
        },
        // The run's operation is gone, but a full sync that started after the run
        // ended and succeeded deployed it all the same (the one nbv started, followed
        // by another, or one that overtook it): the run's sync is done.
        SyncProgress::Replaced => match full_sync_since(application, run.completed_at) {
            Some(started_at) => SyncReport::Finished {
                succeeded: true,
                summary: format!(
                    "{name} was synced successfully in a full sync started at {started_at}, \
                     after the run ended at {}",
                    run.completed()
                ),
            },
            None => SyncReport::Replaced {
                summary: format!(
                    "{name} shows no operation of this run any more ({RUN_INFO}: {marker}): \
                     another operation replaced it, and no full sync has succeeded since the \
                     run ended"
                ),
            },
        },
    }
}

/// `spec.project` of an Application (`default` when empty, as in Argo CD).
///
/// # Examples
///
/// ```
/// use nbv_core::actions::sync::project_of;
///
/// assert_eq!(project_of(&serde_json::json!({"spec": {"project": "ml"}})), "ml");
/// assert_eq!(project_of(&serde_json::json!({"spec": {}})), "default");
/// ```
pub fn project_of(application: &Value) -> String {
    application["spec"]["project"]
        .as_str()
        .filter(|p| !p.is_empty())
        .unwrap_or("default")
        .to_owned()
}

/// The sync windows of an AppProject (`spec.syncWindows`; none when absent).
///
/// # Errors
///
/// The windows cannot be read as Argo CD's `SyncWindow`s.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::sync::windows_of;
///
/// let project = serde_json::json!({"spec": {"syncWindows": [
///     {"kind": "deny", "schedule": "0 22 * * *", "duration": "1h", "applications": ["*"]}]}});
/// assert_eq!(windows_of(&project).unwrap().len(), 1);
/// assert!(windows_of(&serde_json::json!({"spec": {}})).unwrap().is_empty());
/// assert!(windows_of(&serde_json::json!({"spec": {"syncWindows": "always"}})).is_err());
/// ```
pub fn windows_of(project: &Value) -> Result<Vec<SyncWindow>, serde_json::Error> {
    let windows = &project["spec"]["syncWindows"];
    if windows.is_null() {
        return Ok(Vec::new());
    }
    serde_json::from_value(windows.clone())
}
