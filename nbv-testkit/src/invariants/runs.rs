//! Terminal transitions of jobs, and what nbv recorded about each run.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, TimeDelta, Utc};
use nbv_core::api::{EffectLedger, Phase};
use serde_json::Value;

use super::Observation;
use super::replay::{Index, ObjKey, RunState};

/// A job's run reaching a terminal phase, as persisted.
#[derive(Clone, Debug)]
pub(crate) struct Transition<'a> {
    pub job: ObjKey,
    pub phase: Phase,
    /// `status.completionTime`.
    pub completed: DateTime<Utc>,
    /// When the terminal status was committed.
    pub at: DateTime<Utc>,
    /// When the job left this terminal status (a new run, another phase, deletion);
    /// `None` when it still held at the end.
    pub until: Option<DateTime<Utc>>,
    /// The run key of the status.
    pub run: Option<String>,
    /// The job as committed with the terminal status.
    pub state: &'a Value,
}

impl Transition<'_> {
    /// The time by which what this transition owes must be in place, if the operator
    /// had that long before the transition was superseded or the simulation ended.
    pub fn settled_by(
        &self,
        observation: &Observation<'_>,
        within: TimeDelta,
    ) -> Option<DateTime<Utc>> {
        observation
            .deadline(self.at, within)
            .filter(|due| self.until.is_none_or(|until| *due <= until))
    }
}

fn uid(object: &Value) -> Option<&str> {
    object.pointer("/metadata/uid").and_then(Value::as_str)
}

/// Every terminal transition in the history, per job in commit order.
pub(crate) fn transitions<'a>(index: &Index<'a>) -> Vec<Transition<'a>> {
    let jobs: Vec<ObjKey> = index.of_kind(nbv_core::api::KIND).cloned().collect();
    let mut out = Vec::new();
    for job in jobs {
        let mut open: Option<Transition<'a>> = None;
        for change in index.changes(&job) {
            let terminal = change.after.as_ref().and_then(|after| {
                let state = RunState::of(after);
                state
                    .terminal()
                    .map(|(phase, completed)| (phase, completed, state.run, after))
            });
            let same = match (&open, &terminal) {
                (Some(o), Some((phase, completed, _, after))) => {
                    o.phase == *phase && o.completed == *completed && uid(o.state) == uid(after)
                }
                _ => false,
            };
            if same {
                continue;
            }
            if let Some(mut closed) = open.take() {
                closed.until = Some(change.at);
                out.push(closed);
            }
            if let Some((phase, completed, run, after)) = terminal {
                open = Some(Transition {
                    job: job.clone(),
                    phase,
                    completed,
                    at: change.at,
                    until: None,
                    run,
                    state: after,
                });
            }
        }
        out.extend(open);
    }
    out
}

/// A job's `status.effects`, if it reads as a ledger.
pub(crate) fn ledger(job: &Value) -> Option<EffectLedger> {
    job.pointer("/status/effects")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// What nbv ever recorded for one run of one job.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunRecords {
    /// Keys ever recorded as done.
    pub done: BTreeSet<String>,
    /// Keys ever recorded as failed, with whether nbv gave up on them.
    pub failed: BTreeMap<String, bool>,
}

/// Everything recorded for `run` of `job` across the history.
pub(crate) fn records(index: &Index<'_>, job: &ObjKey, run: &str) -> RunRecords {
    let mut records = RunRecords::default();
    for change in index.changes(job) {
        let Some(ledger) = change.after.as_ref().and_then(ledger) else {
            continue;
        };
        if ledger.run != run {
            continue;
        }
        records.done.extend(ledger.done.iter().cloned());
        for failure in &ledger.failed {
            let gave_up = records.failed.entry(failure.key.clone()).or_default();
            *gave_up |= failure.gave_up;
        }
    }
    records
}
