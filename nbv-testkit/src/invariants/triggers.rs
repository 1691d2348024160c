//! Invariant 1: each trigger of each successful run takes effect exactly once.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use nbv_core::actions::Run;
use nbv_core::actions::restart::{Method, predates};
use nbv_core::annotations::{KSERVE_INFERENCESERVICE, KUBECTL_RESTARTED_AT, RESTART_TIMESTAMP};
use nbv_core::api::Phase;
use nbv_core::sync::RUN_INFO;
use nbv_core::time::rfc3339;
use nbv_core::triggers::{Action, from_annotations};
use serde_json::Value;

use super::replay::{Index, ObjKey, annotations, run_start, string_map, time_at};
use super::runs::{Transition, ledger, records, transitions};
use super::{Observation, Violation};
use crate::cluster::{Actor, Change};

const INVARIANT: u8 = 1;

/// How a trigger shows in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// `spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]`.
    RollingRestart,
    /// `metadata.annotations["mlops.dev/restart-timestamp"]`.
    Refresh,
    /// `operation` with the run's marker.
    Sync,
    /// Deleted pods labelled with the InferenceService's name.
    InferenceServicePods,
}

impl Class {
    fn describe(self) -> &'static str {
        match self {
            Class::RollingRestart => {
                "spec.template.metadata.annotations.\"kubectl.kubernetes.io/restartedAt\""
            }
            Class::Refresh => "metadata.annotations.\"mlops.dev/restart-timestamp\"",
            Class::Sync => "a sync operation for",
            Class::InferenceServicePods => "pods of",
        }
    }
}

/// A trigger a successful run owes.
struct Owed<'t, 'a> {
    transition: &'t Transition<'a>,
    /// The effect key nbv records (`trigger/<trigger key>`).
    key: String,
    class: Class,
    target: ObjKey,
    /// What the trigger writes: the run's completion time, or its sync marker.
    value: String,
}

/// A value nbv wrote on a target.
struct Write {
    at: DateTime<Utc>,
}

/// Checks invariant 1 (see the [module documentation](super)).
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::{Observation, Settings, triggers_take_effect_once};
/// use nbv_testkit::scenario::Mode;
///
/// let observation = Observation {
///     history: &[], requests: &[], end: chrono::Utc::now(), mode: Mode::GitopsOnly,
///     uptimes: &[], disturbed: false, settings: Settings::default(),
/// };
/// assert!(triggers_take_effect_once(&observation).is_empty());
/// ```
pub fn triggers_take_effect_once(observation: &Observation<'_>) -> Vec<Violation> {
    let index = Index::new(observation.history);
    let transitions = transitions(&index);
    let owed = owed(&transitions);
    let mut violations = Vec::new();
    written_values(observation, &index, &owed, &mut violations);
    inference_service_pods(observation, &index, &owed, &mut violations);
    stale_records(&index, &mut violations);
    recorded_at_end(observation, &index, &owed, &mut violations);
    violations
}

fn owed<'t, 'a>(transitions: &'t [Transition<'a>]) -> Vec<Owed<'t, 'a>> {
    let mut owed = Vec::new();
    for transition in transitions.iter().filter(|t| t.phase == Phase::Succeeded) {
        let Ok(set) = from_annotations(&annotations(transition.state), &transition.job.namespace)
        else {
            continue;
        };
        let completed = rfc3339(transition.completed);
        for trigger in set.triggers() {
            let target = trigger.target();
            let group = target.api_version().group();
            let kind = target.kind().as_str();
            // How nbv-core restarts the target, and the sync marker it writes.
            let class = match trigger.action() {
                Action::Refresh => Class::Refresh,
                Action::Sync => Class::Sync,
                Action::Restart => match Method::of(target) {
                    Method::RollingRestart => Class::RollingRestart,
                    Method::InferenceServicePods => Class::InferenceServicePods,
                    // Pods owned through other kinds are not followed by the checks.
                    Method::OwnedPods => continue,
                },
            };
            let value = match class {
                Class::Sync => {
                    let job = &transition.job;
                    Run::new(&job.namespace, &job.name, transition.completed)
                        .sync_request("")
                        .marker
                }
                _ => completed.clone(),
            };
            owed.push(Owed {
                transition,
                key: format!("trigger/{}", trigger.key()),
                class,
                target: ObjKey::new(
                    group,
                    kind,
                    target.namespace().as_str(),
                    target.name().as_str(),
                ),
                value,
            });
        }
    }
    owed
}

fn annotation(object: Option<&Value>, pointer: &str) -> Option<String> {
    object
        .and_then(|o| o.pointer(pointer))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn sync_markers(object: Option<&Value>) -> BTreeSet<String> {
    object
        .and_then(|o| o.pointer("/operation/info"))
        .and_then(Value::as_array)
        .map(|info| {
            info.iter()
                .filter(|e| e["name"] == RUN_INFO)
                .filter_map(|e| e["value"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The values nbv wrote: what each client change set that a trigger sets.
fn writes_of(change: &Change) -> Vec<(Class, String)> {
    let (before, after) = (change.before.as_ref(), change.after.as_ref());
    let mut out = Vec::new();
    let restarted = format!(
        "/spec/template/metadata/annotations/{}",
        KUBECTL_RESTARTED_AT.replace('~', "~0").replace('/', "~1")
    );
    let refreshed = format!(
        "/metadata/annotations/{}",
        RESTART_TIMESTAMP.replace('/', "~1")
    );
    let group = super::replay::group_of(&change.api_version);
    if Method::of_kind(group, &change.kind) == Method::RollingRestart {
        let new = annotation(after, &restarted);
        if new.is_some() && new != annotation(before, &restarted) {
            out.extend(new.map(|v| (Class::RollingRestart, v)));
        }
    }
    let new = annotation(after, &refreshed);
    if new.is_some() && new != annotation(before, &refreshed) {
        out.extend(new.map(|v| (Class::Refresh, v)));
    }
    if group == "argoproj.io" && change.kind == "Application" {
        let old = sync_markers(before);
        for marker in sync_markers(after).difference(&old) {
            out.push((Class::Sync, marker.clone()));
        }
    }
    out
}

type Group<'o, 't, 'a> = Vec<&'o Owed<'t, 'a>>;

fn written_values(
    observation: &Observation<'_>,
    index: &Index<'_>,
    owed: &[Owed<'_, '_>],
    violations: &mut Vec<Violation>,
) {
    let mut writes: BTreeMap<(Class, ObjKey, String), Vec<Write>> = BTreeMap::new();
    for change in observation
        .history
        .iter()
        .filter(|c| c.actor == Actor::Client)
    {
        for (class, value) in writes_of(change) {
            writes
                .entry((class, ObjKey::of(change), value))
                .or_default()
                .push(Write { at: change.at });
        }
    }
    let mut groups: BTreeMap<(Class, ObjKey, String), Group<'_, '_, '_>> = BTreeMap::new();
    for o in owed
        .iter()
        .filter(|o| o.class != Class::InferenceServicePods)
    {
        groups
            .entry((o.class, o.target.clone(), o.value.clone()))
            .or_default()
            .push(o);
    }
    for ((class, target, value), seen) in &writes {
        if !groups.contains_key(&(*class, target.clone(), value.clone())) {
            violations.push(Violation::new(
                INVARIANT,
                seen.first().map(|w| w.at),
                format!(
                    "nbv wrote {} {target} = {value:?}, which is the trigger of no successful run",
                    class.describe()
                ),
            ));
        }
    }
    for ((class, target, value), members) in &groups {
        let seen = writes
            .get(&(*class, target.clone(), value.clone()))
            .map_or(&[][..], Vec::as_slice);
        if seen.len() > 1 {
            let times: Vec<String> = seen.iter().map(|w| rfc3339(w.at)).collect();
            violations.push(Violation::new(
                INVARIANT,
                seen.get(1).map(|w| w.at),
                format!(
                    "{} {target} = {value:?} was written {} times (at {}); a trigger takes effect \
                     once per run",
                    class.describe(),
                    seen.len(),
                    times.join(", ")
                ),
            ));
        }
        if !seen.is_empty() {
            continue;
        }
        for member in members {
            let Some(due) = member
                .transition
                .settled_by(observation, observation.react_within())
            else {
                continue;
            };
            if failure_recorded(index, member)
                || superseded(observation, *class, target, member, &groups)
            {
                continue;
            }
            violations.push(Violation::new(
                INVARIANT,
                Some(due),
                format!(
                    "{} of job {} (run ended {}) never took effect: {} {target} never became \
                     {value:?}, and no failure is recorded",
                    member.key,
                    member.transition.job.path(),
                    rfc3339(member.transition.completed),
                    class.describe(),
                ),
            ));
        }
    }
}

/// Whether `target` was restarted or refreshed (by anyone: a user's `kubectl rollout
/// restart`, another tool, nbv for another job's later run) or synced (by someone else:
/// Argo CD's auto-sync) at a time no earlier than the end of `owed`'s run: the target already holds what the run wrote, and nbv rightly
/// leaves the newer restart in place (it never moves a target's timestamp backwards)
/// and starts no second sync.
fn superseded(
    observation: &Observation<'_>,
    class: Class,
    target: &ObjKey,
    owed: &Owed<'_, '_>,
    runs: &BTreeMap<(Class, ObjKey, String), Group<'_, '_, '_>>,
) -> bool {
    let after_the_run =
        |at: Option<DateTime<Utc>>| at.is_some_and(|at| at >= owed.transition.completed);
    let mut changes = observation
        .history
        .iter()
        .filter(|change| &ObjKey::of(change) == target);
    match class {
        // A full sync that succeeded and started after the run ended (nbv-core's rule),
        // started by someone else: nbv's own syncs carry the run's marker.
        Class::Sync => changes
            .filter(|change| change.actor != Actor::Client)
            .filter_map(|change| change.after.as_ref())
            .any(|app| nbv_core::sync::full_sync_since(app, owed.transition.completed).is_some()),
        // A timestamp no earlier than the run's end, written by someone else or by nbv
        // for another successful run (a later run of another job); not a stray write.
        Class::RollingRestart | Class::Refresh => changes.any(|change| {
            writes_of(change).into_iter().any(|(written, value)| {
                let owed_by_a_run = runs.contains_key(&(class, target.clone(), value.clone()));
                written == class
                    && (change.actor != Actor::Client || owed_by_a_run)
                    && after_the_run(
                        DateTime::parse_from_rfc3339(&value)
                            .ok()
                            .map(|at| at.with_timezone(&Utc)),
                    )
            })
        }),
        Class::InferenceServicePods => false,
    }
}

fn failure_recorded(index: &Index<'_>, owed: &Owed<'_, '_>) -> bool {
    owed.transition.run.as_deref().is_some_and(|run| {
        records(index, &owed.transition.job, run)
            .failed
            .contains_key(&owed.key)
    })
}

fn inference_service_pods(
    observation: &Observation<'_>,
    index: &Index<'_>,
    owed: &[Owed<'_, '_>],
    violations: &mut Vec<Violation>,
) {
    let restarts: Vec<&Owed<'_, '_>> = owed
        .iter()
        .filter(|o| o.class == Class::InferenceServicePods)
        .collect();
    let isvc_of = |pod: &Value| {
        string_map(pod, "labels")
            .get(KSERVE_INFERENCESERVICE)
            .cloned()
    };
    // No pod deleted unless it predates the latest run that restarts its service.
    for change in observation.history.iter().filter(|c| {
        c.actor == Actor::Client && c.kind == "Pod" && c.after.is_none() && c.before.is_some()
    }) {
        let Some(pod) = change.before.as_ref() else {
            continue;
        };
        let Some(isvc) = isvc_of(pod) else {
            continue;
        };
        let namespace = change.namespace.clone().unwrap_or_default();
        let latest = restarts
            .iter()
            .filter(|o| {
                o.target.namespace == namespace
                    && o.target.name == isvc
                    && o.transition.at <= change.at
            })
            .map(|o| o.transition.completed)
            .max();
        let created = time_at(pod, "/metadata/creationTimestamp");
        let metadata = serde_json::from_value(pod["metadata"].clone()).unwrap_or_default();
        match (latest, created) {
            (None, _) => violations.push(Violation::new(
                INVARIANT,
                Some(change.at),
                format!(
                    "nbv deleted Pod {namespace}/{} of InferenceService {isvc}, which no \
                     successful run restarts",
                    change.name
                ),
            )),
            (Some(ended), Some(created)) if !predates(&metadata, ended) => {
                violations.push(Violation::new(
                    INVARIANT,
                    Some(change.at),
                    format!(
                        "nbv deleted Pod {namespace}/{} of InferenceService {isvc}, created at {} \
                     after the run it restarts for ended ({}): it already served the new model",
                        change.name,
                        rfc3339(created),
                        rfc3339(ended)
                    ),
                ))
            }
            _ => {}
        }
    }
    // Every pod that predates a settled run is gone.
    for o in restarts {
        let Some(due) = o
            .transition
            .settled_by(observation, observation.react_within())
        else {
            continue;
        };
        let stale: Vec<String> = index
            .all_at("Pod", due)
            .filter(|(key, pod)| {
                key.namespace == o.target.namespace
                    && isvc_of(pod).as_deref() == Some(o.target.name.as_str())
                    && serde_json::from_value(pod["metadata"].clone())
                        .is_ok_and(|metadata| predates(&metadata, o.transition.completed))
            })
            .map(|(key, _)| key.name.clone())
            .collect();
        if !stale.is_empty() && !failure_recorded(index, o) {
            violations.push(Violation::new(
                INVARIANT,
                Some(due),
                format!(
                    "{} of job {} (run ended {}) did not take effect: Pods {} of {} predate the \
                     run and still run, and no failure is recorded",
                    o.key,
                    o.transition.job.path(),
                    rfc3339(o.transition.completed),
                    stale.join(", "),
                    o.target
                ),
            ));
        }
    }
}

/// The ledger of a run holds no failure from before the run started: such a record
/// delays, or gives up on, an effect of this run that was never tried.
fn stale_records(index: &Index<'_>, violations: &mut Vec<Violation>) {
    let mut reported = BTreeSet::new();
    let jobs: Vec<ObjKey> = index.of_kind(nbv_core::api::KIND).cloned().collect();
    for job in jobs {
        for change in index.changes(&job) {
            let Some(ledger) = change.after.as_ref().and_then(ledger) else {
                continue;
            };
            let Some(started) = run_start(&ledger.run) else {
                continue;
            };
            for failure in &ledger.failed {
                let Some(last) = failure.last_attempt.filter(|last| *last < started) else {
                    continue;
                };
                if !reported.insert((job.clone(), ledger.run.clone(), failure.key.clone())) {
                    continue;
                }
                violations.push(Violation::new(
                    INVARIANT,
                    Some(change.at),
                    format!(
                        "status.effects of job {} for run {} holds a failure of {} last attempted \
                         at {}, before the run started: a record of an earlier run, which can \
                         make nbv delay or give up an effect of this run",
                        job.path(),
                        ledger.run,
                        failure.key,
                        rfc3339(last)
                    ),
                ));
            }
        }
    }
}

/// Every trigger of a settled, current run is recorded in the job's status, done or
/// failed: the status is where users (and a restarted operator) learn what happened.
fn recorded_at_end(
    observation: &Observation<'_>,
    index: &Index<'_>,
    owed: &[Owed<'_, '_>],
    violations: &mut Vec<Violation>,
) {
    for o in owed.iter().filter(|o| o.transition.until.is_none()) {
        let Some(run) = o.transition.run.as_deref() else {
            continue;
        };
        let within = observation.react_within();
        if o.transition.settled_by(observation, within).is_none() {
            continue;
        }
        let quiet = index
            .last_outside_change(&o.transition.job)
            .and_then(|last| observation.deadline(last, within));
        if quiet.is_none() {
            continue;
        }
        let Some(job) = index.state_at(&o.transition.job, observation.end) else {
            continue;
        };
        let recorded = ledger(job)
            .filter(|l| l.run == run)
            .is_some_and(|l| l.is_done(&o.key) || l.failure(&o.key).is_some());
        if !recorded {
            violations.push(Violation::new(
                INVARIANT,
                Some(observation.end),
                format!(
                    "{} of job {} (run {run}) is recorded neither as done nor as failed in \
                     status.effects",
                    o.key,
                    o.transition.job.path()
                ),
            ));
        }
    }
}
