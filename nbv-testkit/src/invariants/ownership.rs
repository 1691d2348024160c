//! Invariant 5: nbv changes only what it owns, and reports malformed annotations.

use chrono::{DateTime, Utc};
use nbv_core::actions::restart::Method;
use nbv_core::annotations::{
    ARGOCD_REFRESH, ARGOCD_REFRESH_TIMESTAMP, COMPLETION_TIME, KUBECTL_RESTARTED_AT,
    NOTEBOOK_STATUS, NOTEBOOK_SUMMARY, RESTART_TIMESTAMP, WAVE_COMPLETE, WAVE_FAILED,
};
use nbv_core::api::NotebookValidationJob;
use nbv_core::build::BUILD_STRATEGY_LABEL;
use nbv_core::plan::{PlanContext, plan};
use nbv_core::pod::{MANAGED_BY, MANAGED_BY_LABEL};
use nbv_core::time::rfc3339;
use serde_json::Value;

use super::diff::{Path, changed_paths, show, starts_with};
use super::replay::{Index, ObjKey, annotations, group_of, string_map};
use super::{Observation, Violation};
use crate::cluster::{Actor, Change, VerbKind};
use crate::scenario::Mode;

const INVARIANT: u8 = 5;

/// Metadata the API server owns: a write never "changes" it on purpose.
const SERVER_FIELDS: [&str; 5] = [
    "resourceVersion",
    "generation",
    "managedFields",
    "uid",
    "creationTimestamp",
];

/// Whether nbv may change `path` of an object of `group`/`kind`.
fn owned(group: &str, kind: &str, path: &Path, mode: Mode) -> bool {
    if path.len() == 2 && path[0] == "metadata" && SERVER_FIELDS.contains(&path[1].as_str()) {
        return true;
    }
    let annotation = |keys: &[&str]| {
        path.len() == 3
            && path[0] == "metadata"
            && path[1] == "annotations"
            && keys.contains(&path[2].as_str())
    };
    match (group, kind) {
        ("coordination.k8s.io", "Lease") => true,
        ("mlops.mlops.dev", "NotebookValidationJob") => {
            annotation(&[WAVE_COMPLETE, WAVE_FAILED, COMPLETION_TIME])
                || starts_with(path, &["status", "effects"])
                || starts_with(path, &["status", "conditions"])
                || (mode == Mode::Default && starts_with(path, &["status"]))
        }
        ("argoproj.io", "Application") => {
            annotation(&[
                NOTEBOOK_STATUS,
                NOTEBOOK_SUMMARY,
                RESTART_TIMESTAMP,
                ARGOCD_REFRESH,
                ARGOCD_REFRESH_TIMESTAMP,
            ]) || starts_with(path, &["operation"])
                // Cleared when nbv starts a sync, as Argo CD's SetAppOperation does.
                || starts_with(path, &["status", "operationState"])
        }
        // The template annotation of a rolling restart (nbv-core's restart method).
        (group, kind) if Method::of_kind(group, kind) == Method::RollingRestart => {
            path.as_slice()
                == [
                    "spec",
                    "template",
                    "metadata",
                    "annotations",
                    KUBECTL_RESTARTED_AT,
                ]
                || annotation(&[RESTART_TIMESTAMP])
        }
        ("", "Pod") => {
            starts_with(path, &["metadata", "deletionTimestamp"])
                || starts_with(path, &["metadata", "deletionGracePeriodSeconds"])
        }
        _ => annotation(&[RESTART_TIMESTAMP]),
    }
}

/// Whether `object` is one of nbv's image builds (`podConfig.buildConfig`): a
/// PipelineRun, Build, BuildRun, BuildConfig or kaniko Pod labelled as nbv's build.
fn is_build(object: &Value) -> bool {
    let labels = string_map(object, "labels");
    labels.get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGED_BY)
        && labels.contains_key(BUILD_STRATEGY_LABEL)
}

/// Whether nbv may create `object`.
fn may_create(change: &Change, object: &Value, mode: Mode) -> bool {
    if mode == Mode::Default && is_build(object) {
        return true;
    }
    match change.kind.as_str() {
        "Event" | "Lease" => true,
        "Pod" => {
            mode == Mode::Default
                && string_map(object, "labels")
                    .get(MANAGED_BY_LABEL)
                    .map(String::as_str)
                    == Some(MANAGED_BY)
        }
        _ => false,
    }
}

/// Checks invariant 5 (see the [module documentation](super)).
///
/// Every change made through the API (nbv is the only client in a simulation) is
/// compared with the object before: creations are allowed for Events and Leases (and
/// validation Pods and image builds in the default mode), deletions for Pods and nbv's
/// builds, a build's cancellation, and updates only of the
/// fields nbv owns: a job's wave annotations and `status.effects` and
/// `status.conditions` (its whole status in the default mode); an Application's two
/// status annotations, its refresh annotations and `operation`; a workload's pod
/// template `restartedAt`; any target's `mlops.dev/restart-timestamp`.
///
/// Then every job whose annotations have held for
/// [`Settings::react_within`](super::Settings::react_within) at the end must report
/// exactly its malformed annotations: `AnnotationsValid=False` and an
/// `InvalidAnnotation` Event when nbv-core finds an error (the Event may be missing only
/// if creating an Event in that namespace failed), never `False` otherwise.
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::{Observation, Settings, nbv_changes_only_what_it_owns};
/// use nbv_testkit::scenario::Mode;
///
/// let observation = Observation {
///     history: &[], requests: &[], end: chrono::Utc::now(), mode: Mode::GitopsOnly,
///     uptimes: &[], disturbed: false, settings: Settings::default(),
/// };
/// assert!(nbv_changes_only_what_it_owns(&observation).is_empty());
/// ```
pub fn nbv_changes_only_what_it_owns(observation: &Observation<'_>) -> Vec<Violation> {
    let mut violations = Vec::new();
    for change in observation
        .history
        .iter()
        .filter(|c| c.actor == Actor::Client)
    {
        let what = ObjKey::of(change);
        let problem = match (&change.before, &change.after) {
            (None, Some(after)) if !may_create(change, after, observation.mode) => Some(format!(
                "nbv created {what}, which it has no reason to create"
            )),
            (Some(before), None) if change.kind != "Pod" && !is_build(before) => Some(format!(
                "nbv deleted {what}; it only ever deletes Pods and its own builds"
            )),
            // Cancelling a build past its timeout.
            (Some(before), Some(after)) if is_build(before) => {
                let foreign: Vec<String> = changed_paths(before, after)
                    .iter()
                    .filter(|p| {
                        !(owned("", "", p, observation.mode)
                            || [
                                ["spec", "status"],
                                ["spec", "state"],
                                ["status", "cancelled"],
                            ]
                            .iter()
                            .any(|cancel| starts_with(p, &cancel[..])))
                    })
                    .map(show)
                    .collect();
                (!foreign.is_empty())
                    .then(|| format!("nbv changed {} of its build {what}", foreign.join(", ")))
            }
            (Some(before), Some(after)) => {
                let group = group_of(&change.api_version);
                let foreign: Vec<String> = changed_paths(before, after)
                    .iter()
                    .filter(|p| !owned(group, &change.kind, p, observation.mode))
                    .map(show)
                    .collect();
                (!foreign.is_empty()).then(|| {
                    format!(
                        "nbv changed {} of {what}, which it does not own",
                        foreign.join(", ")
                    )
                })
            }
            _ => None,
        };
        if let Some(message) = problem {
            violations.push(Violation::new(INVARIANT, Some(change.at), message));
        }
    }
    annotations_reported(observation, &mut violations);
    violations
}

fn condition_status<'v>(job: &'v Value, type_: &str) -> Option<&'v str> {
    job.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?
        .get("status")?
        .as_str()
}

/// When the job's `malformed` annotations last changed (creation included): editing
/// another annotation (a request to run again, say) leaves the report standing.
fn annotations_since(
    index: &Index<'_>,
    job: &ObjKey,
    malformed: &[String],
) -> Option<DateTime<Utc>> {
    let values = |object: Option<&Value>| {
        object.map(|o| {
            let all = annotations(o);
            malformed
                .iter()
                .map(|key| all.get(key).cloned())
                .collect::<Vec<_>>()
        })
    };
    index
        .changes(job)
        .iter()
        .rev()
        .find(|c| values(c.before.as_ref()) != values(c.after.as_ref()) && c.actor != Actor::Client)
        .map(|c| c.at)
}

fn annotations_reported(observation: &Observation<'_>, violations: &mut Vec<Violation>) {
    let index = Index::new(observation.history);
    let within = observation.react_within();
    let jobs: Vec<(ObjKey, &Value)> = index
        .all_at(nbv_core::api::KIND, observation.end)
        .map(|(k, v)| (k.clone(), v))
        .collect();
    for (key, job) in jobs {
        let quiet = index
            .last_outside_change(&key)
            .and_then(|last| observation.deadline(last, within));
        if quiet.is_none() {
            continue;
        }
        let Ok(typed) = serde_json::from_value::<NotebookValidationJob>(job.clone()) else {
            continue;
        };
        let errors: Vec<String> = plan(&typed, &PlanContext::default(), observation.end)
            .diagnostics
            .into_iter()
            .filter(|d| d.is_error)
            .map(|d| d.annotation.to_owned())
            .collect();
        let condition = condition_status(job, "AnnotationsValid");
        if errors.is_empty() {
            if condition == Some("False") {
                violations.push(Violation::new(
                    INVARIANT,
                    Some(observation.end),
                    format!(
                        "job {} reports AnnotationsValid=False, but its annotations are valid",
                        key.path()
                    ),
                ));
            }
            continue;
        }
        if condition != Some("False") {
            violations.push(Violation::new(
                INVARIANT,
                Some(observation.end),
                format!(
                    "job {} has malformed annotations ({}) but its AnnotationsValid condition \
                     is {}",
                    key.path(),
                    errors.join(", "),
                    condition.unwrap_or("absent")
                ),
            ));
        }
        let since = annotations_since(&index, &key, &errors).unwrap_or(DateTime::<Utc>::MIN_UTC);
        let reported = observation.history.iter().any(|c| {
            c.actor == Actor::Client
                && c.kind == "Event"
                && c.before.is_none()
                && c.at >= since
                && c.after.as_ref().is_some_and(|e| {
                    e["reason"] == "InvalidAnnotation"
                        && e["involvedObject"]["name"] == key.name.as_str()
                        && e["involvedObject"]["namespace"] == key.namespace.as_str()
                })
        });
        let events_failed = observation.requests.iter().any(|r| {
            r.resource == "events"
                && r.verb.kind() == VerbKind::Create
                && r.namespace.as_deref() == Some(key.namespace.as_str())
                && r.status >= 400
                && r.status != 409
        });
        if !reported && !events_failed {
            violations.push(Violation::new(
                INVARIANT,
                Some(observation.end),
                format!(
                    "job {} has had malformed annotations ({}) since {} but no InvalidAnnotation \
                     Event reports them",
                    key.path(),
                    errors.join(", "),
                    rfc3339(since)
                ),
            ));
        }
    }
}
