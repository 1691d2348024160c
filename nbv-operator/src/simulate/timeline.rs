//! The readable account of a simulation: what each actor did, when.
//!
//! Two sources make the timeline: what the simulator itself does (the scenario's
//! steps and the stand-ins' actions, logged as they happen) and what nbv did, read
//! back from the cluster's change history (every write nbv makes is an API request,
//! so every one is there).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use nbv_core::annotations::{
    ARGOCD_REFRESH, COMPLETION_TIME, KSERVE_INFERENCESERVICE, KUBECTL_RESTARTED_AT,
    NOTEBOOK_SUMMARY, RESTART_TIMESTAMP, WAVE_COMPLETE, WAVE_FAILED,
};
use nbv_core::api::EffectLedger;
use nbv_testkit::FakeCluster;
use nbv_testkit::cluster::{Actor, Change};
use serde::Serialize;
use serde_json::Value;

/// Who did something.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::Who;
///
/// assert_eq!(Who::ArgoCd.as_str(), "argo-cd");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Who {
    /// The initial objects.
    Setup,
    /// The operator process: started, stopped, crashed.
    Operator,
    /// nbv, through the API.
    Nbv,
    /// Another controller writing job phases (mode gitops-only).
    Controller,
    /// The kubelet running validation Pods.
    Kubelet,
    /// KServe keeping an InferenceService's pods running.
    Kserve,
    /// Argo CD running sync operations.
    ArgoCd,
    /// The build systems building images (Tekton, Shipwright, kaniko).
    Builder,
    /// A user: edits, deletions, `kubectl rollout restart`.
    User,
    /// The network and API server: injected faults, dropped watches.
    Network,
}

impl Who {
    /// The name in the timeline.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::simulate::Who;
    ///
    /// assert_eq!(Who::Nbv.as_str(), "nbv");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Who::Setup => "setup",
            Who::Operator => "operator",
            Who::Nbv => "nbv",
            Who::Controller => "controller",
            Who::Kubelet => "kubelet",
            Who::Kserve => "kserve",
            Who::ArgoCd => "argo-cd",
            Who::Builder => "builder",
            Who::User => "user",
            Who::Network => "network",
        }
    }
}

/// One line of the timeline.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, Who, run, seed_scenario};
///
/// let report = run(&seed_scenario()?, &Options::default())?;
/// let first = &report.timeline[0];
/// assert_eq!(first.who, Who::Setup);
/// assert_eq!(first.at, report.start);
/// assert!(report.timeline.iter().any(|e| e.who == Who::Kserve));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// When (virtual time).
    pub at: DateTime<Utc>,
    /// Who.
    pub who: Who,
    /// What happened.
    pub text: String,
    /// Order among entries at the same time (see [`Log::into_timeline`]).
    #[serde(skip)]
    rank: Rank,
}

/// Order among entries at the same virtual instant: first what the simulator did, in
/// the order it did it (the causes), then nbv's changes grouped by the job they concern
/// (other objects after the jobs, by object), each group in commit order. Reconciles of
/// different jobs run concurrently and interleave differently from run to run; the
/// grouping makes the timeline the same every time.
type Rank = (u8, String, u64);

/// What the simulator logs as it goes.
#[derive(Debug, Default)]
pub(super) struct Log {
    entries: Vec<Entry>,
}

impl Log {
    pub fn push(&mut self, cluster: &FakeCluster, who: Who, text: impl Into<String>) {
        let rank = (0, String::new(), self.entries.len() as u64);
        self.entries.push(Entry {
            at: cluster.now(),
            who,
            text: text.into(),
            rank,
        });
    }

    /// The simulator's entries merged with nbv's changes from `history`, ordered by
    /// time, then as [`Rank`] says.
    pub fn into_timeline(self, history: &[Change]) -> Vec<Entry> {
        let mut all = self.entries;
        let nbv: Vec<&Change> = history
            .iter()
            .filter(|c| c.actor == Actor::Client)
            .collect();
        let reports = trigger_reports(&nbv);
        for change in nbv {
            for text in describe(change) {
                all.push(Entry {
                    at: change.at,
                    who: Who::Nbv,
                    text,
                    rank: (1, concerns(change, &reports), change.resource_version),
                });
            }
        }
        // A stable sort: the texts of one change keep their order.
        all.sort_by(|a, b| (a.at, &a.rank).cmp(&(b.at, &b.rank)));
        all
    }
}

/// The trigger reports (`TriggerSucceeded`, `TriggerFailed` Events) nbv created:
/// when, about which job (`namespace/name`), and their message.
fn trigger_reports(changes: &[&Change]) -> Vec<(DateTime<Utc>, String, String)> {
    changes
        .iter()
        .filter(|c| c.kind == "Event" && c.before.is_none())
        .filter_map(|c| {
            let event = c.after.as_ref()?;
            let reason = event["reason"].as_str()?;
            if !reason.starts_with("Trigger") {
                return None;
            }
            let job = format!(
                "{}/{}",
                event["involvedObject"]["namespace"].as_str()?,
                event["involvedObject"]["name"].as_str()?
            );
            Some((c.at, job, event["message"].as_str()?.to_owned()))
        })
        .collect()
}

/// The job a change of nbv concerns (`0 namespace/name`), or the object itself
/// (`1 Kind namespace/name`) when it is not about one job. A change to a trigger's
/// target belongs to the job whose trigger report of the same instant names it.
fn concerns(change: &Change, reports: &[(DateTime<Utc>, String, String)]) -> String {
    let namespace = change.namespace.as_deref().unwrap_or_default();
    let object = change.after.as_ref().or(change.before.as_ref());
    match (change.kind.as_str(), object) {
        ("NotebookValidationJob", _) => format!("0 {namespace}/{}", change.name),
        ("Event", Some(event)) => format!(
            "0 {}/{}",
            event["involvedObject"]["namespace"]
                .as_str()
                .unwrap_or(namespace),
            event["involvedObject"]["name"].as_str().unwrap_or_default()
        ),
        (kind, _) => {
            // The target as a trigger report names it: `InferenceService ns/name`.
            let service = object
                .and_then(|o| {
                    o.pointer(&format!(
                        "/metadata/labels/{}",
                        KSERVE_INFERENCESERVICE.replace('/', "~1")
                    ))
                })
                .and_then(Value::as_str);
            let target = match (kind, service) {
                ("Pod", Some(service)) => format!("InferenceService {namespace}/{service}"),
                _ => format!("{kind} {namespace}/{}", change.name),
            };
            reports
                .iter()
                .filter(|(at, _, message)| *at == change.at && message.contains(&target))
                .map(|(_, job, _)| format!("0 {job}"))
                .min()
                .unwrap_or_else(|| format!("1 {kind} {namespace}/{}", change.name))
        }
    }
}

/// `HH:MM:SS` of a time (the date is in the report's header).
pub(super) fn clock(at: DateTime<Utc>) -> String {
    at.format("%H:%M:%S").to_string()
}

fn annotations(object: Option<&Value>) -> BTreeMap<String, String> {
    object
        .and_then(|o| o.pointer("/metadata/annotations"))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// `key=value` for each of `keys` that changed, `key removed` for removals.
fn annotation_changes(before: Option<&Value>, after: Option<&Value>, keys: &[&str]) -> Vec<String> {
    let (b, a) = (annotations(before), annotations(after));
    keys.iter()
        .filter(|k| b.get(**k) != a.get(**k))
        .map(|k| match a.get(*k) {
            Some(v) => format!("{k}={v}"),
            None => format!("{k} removed"),
        })
        .collect()
}

/// The first line of a text, at most `max` characters.
pub(super) fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    nbv_core::text::truncate_chars(line, max, "…").into_owned()
}

/// What nbv's change means, in a few words; nothing for uninteresting ones (Leases).
fn describe(change: &Change) -> Vec<String> {
    let (before, after) = (change.before.as_ref(), change.after.as_ref());
    let object = format!(
        "{}/{}",
        change.namespace.as_deref().unwrap_or_default(),
        change.name
    );
    match change.kind.as_str() {
        "Lease" => Vec::new(),
        "NotebookValidationJob" => job(before, after, &object),
        "Event" => match after {
            Some(event) if before.is_none() => vec![format!(
                "Event {} ({}) about job {}: {}",
                event["reason"].as_str().unwrap_or("?"),
                event["type"].as_str().unwrap_or("?"),
                format_args!(
                    "{}/{}",
                    event["involvedObject"]["namespace"].as_str().unwrap_or("?"),
                    event["involvedObject"]["name"].as_str().unwrap_or("?")
                ),
                first_line(event["message"].as_str().unwrap_or_default(), 110)
            )],
            _ => vec![format!("changed Event {object}")],
        },
        "Pod" => match (before, after) {
            (Some(pod), None) => {
                let service = pod
                    .pointer(&format!(
                        "/metadata/labels/{}",
                        KSERVE_INFERENCESERVICE.replace('/', "~1")
                    ))
                    .and_then(Value::as_str)
                    .map(|s| format!(" of InferenceService {s}"))
                    .unwrap_or_default();
                let created = pod["metadata"]["creationTimestamp"].as_str().unwrap_or("?");
                vec![format!("deleted Pod {object}{service} (created {created})")]
            }
            (None, Some(_)) => vec![format!("created Pod {object}")],
            _ => vec![format!("changed Pod {object}")],
        },
        "Application" => application(before, after, &object),
        "Deployment" | "StatefulSet" | "DaemonSet" => {
            let pointer = format!(
                "/spec/template/metadata/annotations/{}",
                KUBECTL_RESTARTED_AT.replace('/', "~1")
            );
            let restarted = after
                .and_then(|a| a.pointer(&pointer))
                .and_then(Value::as_str);
            let mut out = Vec::new();
            if restarted
                != before
                    .and_then(|b| b.pointer(&pointer))
                    .and_then(Value::as_str)
            {
                out.push(format!(
                    "rolling restart of {} {object} (restartedAt {})",
                    change.kind,
                    restarted.unwrap_or("removed")
                ));
            }
            out.extend(refreshed(before, after, &change.kind, &object));
            out
        }
        kind => {
            let refresh = refreshed(before, after, kind, &object);
            if refresh.is_empty() {
                vec![format!("changed {kind} {object}")]
            } else {
                refresh
            }
        }
    }
}

fn refreshed(
    before: Option<&Value>,
    after: Option<&Value>,
    kind: &str,
    object: &str,
) -> Vec<String> {
    let changes = annotation_changes(before, after, &[RESTART_TIMESTAMP, ARGOCD_REFRESH]);
    if changes.is_empty() {
        Vec::new()
    } else {
        vec![format!("refreshed {kind} {object}: {}", changes.join(", "))]
    }
}

fn application(before: Option<&Value>, after: Option<&Value>, object: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (b, a) = (annotations(before), annotations(after));
    if b.get(NOTEBOOK_SUMMARY) != a.get(NOTEBOOK_SUMMARY)
        || b.get(nbv_core::annotations::NOTEBOOK_STATUS)
            != a.get(nbv_core::annotations::NOTEBOOK_STATUS)
    {
        out.push(format!(
            "Application {object}: notebook status published: {:?}",
            a.get(NOTEBOOK_SUMMARY).map_or("", String::as_str)
        ));
    }
    let operation = |v: Option<&Value>| v.map(|v| v["operation"].clone()).unwrap_or(Value::Null);
    let op = operation(after);
    if op != operation(before) && !op.is_null() {
        let marker = op["info"]
            .as_array()
            .and_then(|info| info.iter().find(|e| e["name"] == "nbv-run"))
            .and_then(|e| e["value"].as_str())
            .unwrap_or("?");
        out.push(format!(
            "Application {object}: sync requested (nbv-run {marker})"
        ));
    }
    out.extend(refreshed(before, after, "Application", object));
    if out.is_empty() {
        out.push(format!("changed Application {object}"));
    }
    out
}

fn ledger(object: Option<&Value>) -> Option<EffectLedger> {
    object
        .and_then(|o| o.pointer("/status/effects"))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Conditions by type: status, reason, message.
fn conditions(object: Option<&Value>) -> BTreeMap<String, (String, String, String)> {
    let text = |c: &Value, field: &str| c[field].as_str().unwrap_or_default().to_owned();
    object
        .and_then(|o| o.pointer("/status/conditions"))
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|c| {
                    let type_ = c["type"].as_str()?.to_owned();
                    Some((
                        type_,
                        (text(c, "status"), text(c, "reason"), text(c, "message")),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn job(before: Option<&Value>, after: Option<&Value>, object: &str) -> Vec<String> {
    let mut out = Vec::new();
    let phase = |v: Option<&Value>| v.and_then(|v| v.pointer("/status/phase")).cloned();
    if phase(before) != phase(after) {
        out.push(format!(
            "job {object}: phase {}",
            phase(after)
                .and_then(|p| p.as_str().map(str::to_owned))
                .unwrap_or("removed".into())
        ));
    }
    let waves = annotation_changes(
        before,
        after,
        &[WAVE_COMPLETE, WAVE_FAILED, COMPLETION_TIME],
    );
    if !waves.is_empty() {
        out.push(format!(
            "job {object}: wave annotations {}",
            waves.join(", ")
        ));
    }
    let (old, new) = (ledger(before), ledger(after));
    if let Some(new) = &new {
        let same_run = old.as_ref().filter(|o| o.run == new.run);
        let done_before: BTreeSet<&String> = same_run
            .map(|o| o.done.iter().collect())
            .unwrap_or_default();
        let added: Vec<&str> = new
            .done
            .iter()
            .filter(|k| !done_before.contains(k))
            .map(String::as_str)
            .collect();
        if !added.is_empty() {
            out.push(format!(
                "job {object}: recorded as done for run {}: {}",
                new.run,
                added.join(", ")
            ));
        }
        for failure in &new.failed {
            let attempts_before = same_run
                .and_then(|o| o.failure(&failure.key))
                .map_or(0, |f| f.attempts);
            if failure.attempts > attempts_before {
                out.push(format!(
                    "job {object}: {} failed (attempt {}{}): {}",
                    failure.key,
                    failure.attempts,
                    if failure.gave_up { ", gave up" } else { "" },
                    first_line(&failure.last_error, 110)
                ));
            }
        }
    }
    let (old, new) = (conditions(before), conditions(after));
    for (type_, condition) in &new {
        if old.get(type_) != Some(condition) {
            let (status, reason, message) = condition;
            out.push(format!(
                "job {object}: condition {type_}={status} ({reason}): {}",
                first_line(message, 90)
            ));
        }
    }
    if out.is_empty() {
        out.push(format!("job {object}: status updated"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_cuts_long_lines_and_keeps_short_ones() {
        assert_eq!(first_line("a\nb", 10), "a");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("", 3), "");
    }
}
