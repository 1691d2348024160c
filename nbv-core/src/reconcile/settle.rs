//! From the outcomes of a plan's effects to what the job's status records.

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::api::EffectLedger;
use crate::events::{Report, ReportReason};
use crate::phase::set_condition;
use crate::plan::{ConditionUpdate, EffectRetryPolicy, Plan, PlannedEffect, conditions, record};

use super::carried::Meaning;
use super::{Carried, Reported, Wake};

/// The bookkeeping of one reconcile's plan: the ledger as the outcomes of its effects
/// leave it, the conditions they report, and when to look again.
///
/// Built from the plan, fed each effect's [`Carried`] outcome in turn, then asked what
/// to persist. See [the module](super) for the whole sequence.
#[derive(Clone, Debug)]
pub struct Settlement {
    ledger: EffectLedger,
    carried_out: bool,
    deferred: usize,
    retry_at: Option<DateTime<Utc>>,
    diagnostics: Vec<crate::plan::Diagnostic>,
    reported: Vec<Reported>,
    wake: Wake,
}

/// The conditions to write, and the Events that announce what changed in them (to be
/// created once the write succeeded).
#[derive(Clone, Debug, PartialEq)]
pub struct ConditionsChange {
    /// The job's whole `status.conditions`, as it is to be written.
    pub conditions: Vec<Condition>,
    /// Events to create after the write: one per annotation error when the
    /// `AnnotationsValid` condition changed, and one per reported condition that
    /// announces itself and changed.
    pub announce: Vec<Report>,
}

impl ConditionsChange {
    /// The merge patch that writes these conditions, with `resource_version` (of the
    /// job as the reconcile last wrote or read it) as a precondition: the conditions
    /// are shared with the phase machine.
    pub fn patch(&self, resource_version: Option<&str>) -> serde_json::Value {
        serde_json::json!({
            "metadata": {"resourceVersion": resource_version},
            "status": {"conditions": self.conditions},
        })
    }
}

impl Settlement {
    /// The settlement of `plan`, before anything was carried out.
    pub fn new(plan: &Plan) -> Self {
        let mut wake = Wake::default();
        if let Some(at) = plan.retry_at {
            wake.at(at);
        }
        Settlement {
            ledger: plan.ledger(),
            carried_out: !plan.effects.is_empty(),
            deferred: 0,
            retry_at: plan.retry_at,
            diagnostics: plan.diagnostics.clone(),
            reported: Vec::new(),
            wake,
        }
    }

    /// Adds a condition found outside the plan (the parent Application's, for
    /// example), reported like the plan's.
    pub fn report(&mut self, reported: Reported) {
        self.reported.push(reported);
    }

    /// Records what carrying out `planned` came to at `now`, and returns the Event to
    /// create at once, if any (a trigger's success or failure, the end of a sync).
    pub fn record(
        &mut self,
        planned: &PlannedEffect,
        carried: Carried,
        now: DateTime<Utc>,
        retry: &EffectRetryPolicy,
    ) -> Option<Report> {
        let meaning = Meaning::of(planned, carried);
        if let Some(outcome) = meaning.outcome {
            let ledger = std::mem::take(&mut self.ledger);
            self.ledger = record(ledger, &planned.key, outcome, now, retry).ledger;
        }
        self.deferred += usize::from(meaning.owed);
        self.reported.extend(meaning.reported);
        self.wake.merge(meaning.wake);
        meaning.report
    }

    /// The ledger as recorded so far.
    pub fn ledger(&self) -> &EffectLedger {
        &self.ledger
    }

    /// When to look at the job again for the plan's sake.
    pub fn wake(&self) -> Wake {
        self.wake
    }

    /// The ledger to write to `status.effects`, given the one `persisted` on the
    /// cluster; `None` when it need not be written.
    ///
    /// Compared with the ledger on the cluster (not the one merged with what the shell
    /// remembers): after a failed write nothing new may have been carried out, and the
    /// ledger must still be written, or a restart would repeat every effect it records.
    /// A ledger with no record and nothing carried out is not written.
    pub fn ledger_write(&self, persisted: Option<&EffectLedger>) -> Option<EffectLedger> {
        let has_records = !self.ledger.done.is_empty() || !self.ledger.failed.is_empty();
        ((self.carried_out || has_records) && persisted != Some(&self.ledger))
            .then(|| self.ledger.clone())
    }

    /// The job's conditions after this reconcile, given the conditions it has
    /// (`before`, as the last write left them), when they differ.
    ///
    /// The plan's `AnnotationsValid` and `EffectsApplied` conditions, then the reported
    /// ones; for each condition type the last state reported wins.
    pub fn conditions(
        &self,
        before: &[Condition],
        now: DateTime<Utc>,
        generation: Option<i64>,
    ) -> Option<ConditionsChange> {
        let owed_later = self.deferred + usize::from(self.retry_at.is_some());
        let [annotations, effects] = conditions(&self.diagnostics, &self.ledger, owed_later);
        let mut updates: Vec<ConditionUpdate> = vec![annotations.clone(), effects];
        for reported in &self.reported {
            updates.retain(|u| u.type_ != reported.update.type_);
            updates.push(reported.update.clone());
        }
        let mut after = before.to_vec();
        for update in &updates {
            set_condition(
                &mut after,
                &update.type_,
                update.status,
                &update.reason,
                &update.message,
                now,
                generation,
            );
        }
        if after == before {
            return None;
        }

        let mut announce = Vec::new();
        // One Event per new annotation problem, not per reconcile.
        if changed(before, &annotations) {
            announce.extend(self.diagnostics.iter().filter(|d| d.is_error).map(|d| {
                Report::new(
                    ReportReason::InvalidAnnotation,
                    format!("{}: {}", d.annotation, d.message),
                )
            }));
        }
        // And one per new state of a reported condition that announces itself, when
        // that state is the one written.
        for reported in &self.reported {
            let Some(reason) = reported.announce else {
                continue;
            };
            let last = updates
                .iter()
                .rev()
                .find(|u| u.type_ == reported.update.type_);
            if last == Some(&reported.update) && changed(before, &reported.update) {
                announce.push(Report::new(reason, reported.update.message.clone()));
            }
        }
        Some(ConditionsChange {
            conditions: after,
            announce,
        })
    }
}

/// Whether `update` says something else than the condition of its type in `before`.
fn changed(before: &[Condition], update: &ConditionUpdate) -> bool {
    before
        .iter()
        .find(|c| c.type_ == update.type_.as_str())
        .is_none_or(|c| c.message != update.message || c.status != update.status.as_str())
}
