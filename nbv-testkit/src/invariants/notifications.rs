//! Invariant 4: exactly one notification Event per terminal transition.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use nbv_core::api::Phase;
use nbv_core::time::rfc3339;
use serde_json::Value;

use super::replay::{Index, time_at};
use super::runs::{records, transitions};
use super::{Observation, Violation};
use crate::cluster::Actor;

const INVARIANT: u8 = 4;

/// The phase a notification reason reports.
fn phase_of(reason: &str) -> Option<Phase> {
    match reason {
        "ValidationSucceeded" => Some(Phase::Succeeded),
        "ValidationFailed" => Some(Phase::Failed),
        _ => None,
    }
}

/// Which transition a notification is about: job namespace and name, phase, and the
/// run's completion time (the Event's `eventTime`).
type Subject = (String, String, Phase, DateTime<Utc>);

fn subject(event: &Value) -> Option<Subject> {
    let phase = phase_of(event.get("reason")?.as_str()?)?;
    let involved = event.get("involvedObject")?;
    let name = involved.get("name")?.as_str()?.to_owned();
    let namespace = involved
        .get("namespace")
        .and_then(Value::as_str)
        .or_else(|| event.pointer("/metadata/namespace").and_then(Value::as_str))?
        .to_owned();
    let at = time_at(event, "/eventTime").or_else(|| time_at(event, "/firstTimestamp"))?;
    Some((namespace, name, phase, at))
}

/// Checks invariant 4 (see the [module documentation](super)).
///
/// Notifications are the `ValidationSucceeded` and `ValidationFailed` Events nbv
/// creates; each names its job (`involvedObject`) and the run's completion time
/// (`eventTime`). A transition that held for
/// [`Settings::react_within`](super::Settings::react_within) must have its Event, unless
/// nbv recorded the notification as failed in the job's status.
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::{Observation, Settings, one_notification_per_terminal_transition};
/// use nbv_testkit::scenario::Mode;
///
/// let observation = Observation {
///     history: &[], requests: &[], end: chrono::Utc::now(), mode: Mode::GitopsOnly,
///     uptimes: &[], disturbed: false, settings: Settings::default(),
/// };
/// assert!(one_notification_per_terminal_transition(&observation).is_empty());
/// ```
pub fn one_notification_per_terminal_transition(observation: &Observation<'_>) -> Vec<Violation> {
    let index = Index::new(observation.history);
    let mut events: BTreeMap<Subject, Vec<(DateTime<Utc>, String)>> = BTreeMap::new();
    for change in observation
        .history
        .iter()
        .filter(|c| c.actor == Actor::Client && c.kind == "Event" && c.before.is_none())
    {
        if let Some(subject) = change.after.as_ref().and_then(subject) {
            events
                .entry(subject)
                .or_default()
                .push((change.at, change.name.clone()));
        }
    }
    let mut violations = Vec::new();
    let transitions = transitions(&index);
    for transition in &transitions {
        let subject = (
            transition.job.namespace.clone(),
            transition.job.name.clone(),
            transition.phase,
            transition.completed,
        );
        let created = events.remove(&subject).unwrap_or_default();
        if created.len() > 1 {
            let names: Vec<&str> = created.iter().map(|(_, n)| n.as_str()).collect();
            violations.push(Violation::new(
                INVARIANT,
                created.get(1).map(|(at, _)| *at),
                format!(
                    "{} notifications ({}) for job {} {} at {}",
                    created.len(),
                    names.join(", "),
                    transition.job.path(),
                    transition.phase,
                    rfc3339(transition.completed)
                ),
            ));
        }
        if !created.is_empty() {
            continue;
        }
        let Some(due) = transition.settled_by(observation, observation.react_within()) else {
            continue;
        };
        let recorded_failure = transition.run.as_deref().is_some_and(|run| {
            records(&index, &transition.job, run)
                .failed
                .contains_key("notify")
        });
        if !recorded_failure {
            violations.push(Violation::new(
                INVARIANT,
                Some(due),
                format!(
                    "no notification for job {} {} at {}, and no failure to create one is \
                     recorded",
                    transition.job.path(),
                    transition.phase,
                    rfc3339(transition.completed)
                ),
            ));
        }
    }
    for ((namespace, name, phase, at), created) in events {
        violations.push(Violation::new(
            INVARIANT,
            created.first().map(|(at, _)| *at),
            format!(
                "notification {} says job {namespace}/{name} {phase} at {}, which no status of \
                 the job ever said",
                created.first().map_or("", |(_, n)| n.as_str()),
                rfc3339(at)
            ),
        ));
    }
    violations
}
