//! Invariant 2: wave annotations match the last terminal phase of each job.

use chrono::{DateTime, Utc};
use nbv_core::api::Phase;
use nbv_core::waves::{WaveOutcome, wave_patch};
use serde_json::Value;

use super::replay::{Index, ObjKey, RunState, annotations};
use super::{Observation, Violation};
use crate::cluster::Actor;

const INVARIANT: u8 = 2;

/// What the job's status says its wave annotations should record.
fn outcome(job: &Value) -> WaveOutcome {
    match RunState::of(job).terminal() {
        Some((Phase::Succeeded, completed_at)) => WaveOutcome::Succeeded { completed_at },
        Some((_, completed_at)) => WaveOutcome::Failed { completed_at },
        None => WaveOutcome::NewRun,
    }
}

fn describe(outcome: &WaveOutcome) -> String {
    match outcome {
        WaveOutcome::Succeeded { completed_at } => {
            format!(
                "a run that succeeded at {}",
                nbv_core::time::rfc3339(*completed_at)
            )
        }
        WaveOutcome::Failed { completed_at } => {
            format!(
                "a run that failed at {}",
                nbv_core::time::rfc3339(*completed_at)
            )
        }
        WaveOutcome::NewRun => "a run that has not ended".to_owned(),
    }
}

/// Checks invariant 2 (see the [module documentation](super)).
///
/// After every change to a job that matters (someone else's: a new phase, an edit; or a
/// phase nbv writes in the default mode), once the operator has had [`Settings::react_within`](super::Settings::react_within), the
/// job's `mlops.dev/wave-complete`, `mlops.dev/wave-failed` and
/// `mlops.dev/completion-time` must be what its status calls for: nothing for a run
/// that has not ended, the wave and completion time of the last ended one otherwise.
/// A job whose `argocd.argoproj.io/sync-wave` cannot be read is not checked (it is
/// reported under invariant 5).
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::{Observation, Settings, wave_annotations_follow_the_phase};
/// use nbv_testkit::scenario::Mode;
///
/// let observation = Observation {
///     history: &[], requests: &[], end: chrono::Utc::now(), mode: Mode::GitopsOnly,
///     uptimes: &[], disturbed: false, settings: Settings::default(),
/// };
/// assert!(wave_annotations_follow_the_phase(&observation).is_empty());
/// ```
pub fn wave_annotations_follow_the_phase(observation: &Observation<'_>) -> Vec<Violation> {
    let index = Index::new(observation.history);
    let jobs: Vec<ObjKey> = index.of_kind(nbv_core::api::KIND).cloned().collect();
    let within = observation.react_within();
    let mut violations = Vec::new();
    for job in jobs {
        let changes = index.changes(&job);
        // A change matters when someone else made it (a new phase, an edit of the wave)
        // or when it changed what the status calls for (nbv's own phase writes in the
        // default mode).
        let matters = |i: usize| {
            let change = changes[i];
            let before = i.checked_sub(1).and_then(|p| changes[p].after.as_ref());
            change.actor != Actor::Client
                || change.after.as_ref().map(outcome) != before.map(outcome)
        };
        let points: Vec<usize> = (0..changes.len()).filter(|i| matters(*i)).collect();
        for (n, &i) in points.iter().enumerate() {
            let change = changes[i];
            let Some(after) = change.after.as_ref() else {
                continue;
            };
            let expected = outcome(after);
            let Some(due) = observation.deadline(change.at, within) else {
                continue;
            };
            // Checked only if nothing that matters happened in the meantime.
            let next: Option<DateTime<Utc>> = points.get(n + 1).map(|&j| changes[j].at);
            if next.is_some_and(|next| next <= due) {
                continue;
            }
            let Some(state) = index.state_at(&job, due) else {
                continue;
            };
            match wave_patch(&annotations(state), &expected) {
                Ok(None) | Err(_) => {}
                Ok(Some(patch)) => violations.push(Violation::new(
                    INVARIANT,
                    Some(due),
                    format!(
                        "the wave annotations of job {} do not match {}: they still need {}",
                        job.path(),
                        describe(&expected),
                        patch["metadata"]["annotations"]
                    ),
                )),
            }
        }
    }
    violations
}
