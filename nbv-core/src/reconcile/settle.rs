//! From the outcomes of a plan's effects to what the job's status records.

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::api::EffectLedger;
use crate::events::{Report, ReportReason};
use crate::phase::{ConditionStatus, ConditionUpdate, set_condition};
use crate::plan::{EffectRetryPolicy, Plan, PlannedEffect, conditions, record};

use super::carried::Meaning;
use super::{Carried, Reported, Wake, ledger_patch};

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
    /// Whether failed effects wait for their backoff: owed later.
    retrying: bool,
    diagnostics: Vec<crate::plan::Diagnostic>,
    reported: Vec<Reported>,
    shows_sync: bool,
    wake: Wake,
}

/// The conditions to write, and the Events that announce what changed in them (created
/// just before the write, each once: see [`Report::once`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ConditionsChange {
    /// The job's whole `status.conditions`, as it is to be written.
    pub conditions: Vec<Condition>,
    /// Events to create before the write: one per annotation error when the
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

/// Everything a reconcile records at its end, as one merge patch of the job's status:
/// the ledger ([`Settlement::ledger_write`]) and the conditions
/// ([`Settlement::conditions`]).
///
/// One write, not one per part: a completion then costs one status patch. The patch
/// carries a `resourceVersion` precondition when it writes conditions (they are shared
/// with the phase machine and with other controllers); if it loses that race,
/// [`StatusWrite::ledger_patch`] still records what was carried out, without one.
///
/// # Examples
///
/// ```
/// use nbv_core::api::EffectLedger;
/// use nbv_core::reconcile::StatusWrite;
///
/// let write = StatusWrite { ledger: Some(EffectLedger::for_run("g1@t0")), conditions: None };
/// let patch = write.patch(Some("41"));
/// assert_eq!(patch["status"]["effects"]["run"], "g1@t0");
/// assert!(patch.get("metadata").is_none(), "the ledger alone needs no precondition");
/// assert!(write.announce().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StatusWrite {
    /// The ledger to write to `status.effects`, when it changed.
    pub ledger: Option<EffectLedger>,
    /// The conditions to write, when they changed, with the Events that announce them.
    pub conditions: Option<ConditionsChange>,
}

impl StatusWrite {
    /// The merge patch: `status.effects` and `status.conditions` as far as they are
    /// written, with `resource_version` (of the job as the reconcile last wrote or
    /// read it) as a precondition when conditions are written.
    pub fn patch(&self, resource_version: Option<&str>) -> serde_json::Value {
        let mut status = serde_json::Map::new();
        if let Some(ledger) = &self.ledger {
            let mut patch = ledger_patch(ledger);
            status.insert("effects".into(), patch["status"]["effects"].take());
        }
        let mut patch = serde_json::json!({});
        if let Some(change) = &self.conditions {
            status.insert("conditions".into(), serde_json::json!(change.conditions));
            patch["metadata"] = serde_json::json!({"resourceVersion": resource_version});
        }
        patch["status"] = serde_json::Value::Object(status);
        patch
    }

    /// The ledger alone, without a precondition: what to write when [`Self::patch`]
    /// lost a race, so that a restart never repeats what was carried out. `None` when
    /// there is no ledger to write, or the patch wrote nothing else (it had no
    /// precondition to lose).
    pub fn ledger_patch(&self) -> Option<serde_json::Value> {
        self.conditions.as_ref()?;
        self.ledger.as_ref().map(ledger_patch)
    }

    /// The Events to create just before the write, each once ([`Report::once`]).
    pub fn announce(&self) -> &[Report] {
        match &self.conditions {
            Some(change) => &change.announce,
            None => &[],
        }
    }
}

impl Settlement {
    /// The settlement of `plan`, before anything was carried out.
    pub fn new(plan: &Plan) -> Self {
        Settlement {
            ledger: plan.ledger(),
            carried_out: !plan.carries_out_nothing(),
            deferred: 0,
            retrying: plan.retry_at.is_some(),
            diagnostics: plan.diagnostics.clone(),
            reported: Vec::new(),
            shows_sync: plan.shows_sync,
            wake: plan.wake(),
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
        let meaning = Meaning::of(planned, carried, self.shows_sync);
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

    /// Everything to write at the end of the reconcile, in one patch: the ledger
    /// against the one `persisted` on the cluster, the conditions against `before`
    /// ([`Self::ledger_write`], [`Self::conditions`]). `None` when nothing changed.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::plan::{plan, PlanContext};
    /// use nbv_core::reconcile::Settlement;
    ///
    /// // A running job nbv has nothing to do for: nothing to write.
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml", "generation": 1},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
    ///     "status": {"phase": "ValidationRunning", "observedGeneration": 1,
    ///                "startTime": "2026-01-24T22:29:00Z"}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    /// let settlement = Settlement::new(&plan(&job, &PlanContext::default(), now));
    /// assert_eq!(settlement.status_write(None, &[], now, Some(1)), None);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn status_write(
        &self,
        persisted: Option<&EffectLedger>,
        before: &[Condition],
        now: DateTime<Utc>,
        generation: Option<i64>,
    ) -> Option<StatusWrite> {
        let write = StatusWrite {
            ledger: self.ledger_write(persisted),
            conditions: self.conditions(before, now, generation),
        };
        (write.ledger.is_some() || write.conditions.is_some()).then_some(write)
    }

    /// Whether this reconcile has nothing of its own to report: no effect carried out
    /// or recorded, none owed later, nothing wrong or doubtful with the annotations.
    fn has_nothing_to_report(&self) -> bool {
        !self.carried_out
            && self.ledger.done.is_empty()
            && self.ledger.failed.is_empty()
            && self.deferred == 0
            && !self.retrying
            && self.diagnostics.is_empty()
    }

    /// The job's conditions after this reconcile, given the conditions it has
    /// (`before`, as the last write left them), when they differ.
    ///
    /// The plan's `AnnotationsValid` and `EffectsApplied` conditions, then the reported
    /// ones; for each condition type the last state reported wins.
    ///
    /// A job nbv has nothing to report about (no effect carried out, recorded or owed,
    /// no annotation diagnostic) does not get a condition that would only say all is
    /// well (`True`, announced by no Event) when it does not carry it yet: "the
    /// annotations are well-formed, every effect is applied, the status is published on
    /// the Application" says nothing that the absence of a complaint does not, and
    /// writing it would cost one status patch per job at a first start over jobs nbv
    /// has never seen. A job that carries such a condition keeps it up to date.
    pub fn conditions(
        &self,
        before: &[Condition],
        now: DateTime<Utc>,
        generation: Option<i64>,
    ) -> Option<ConditionsChange> {
        let owed_later = self.deferred + usize::from(self.retrying);
        let [annotations, effects] = conditions(&self.diagnostics, &self.ledger, owed_later);
        // Good news nobody needs: a condition that would only say all is well, on a
        // job nbv has nothing to report about and that does not carry it yet.
        let needless = |update: &ConditionUpdate| {
            self.has_nothing_to_report()
                && update.status == ConditionStatus::True
                && !before.iter().any(|c| c.type_ == update.type_.as_str())
        };
        let mut updates: Vec<ConditionUpdate> = [annotations.clone(), effects]
            .into_iter()
            .filter(|update| !needless(update))
            .collect();
        for reported in &self.reported {
            updates.retain(|u| u.type_ != reported.update.type_);
            if reported.announce.is_some() || !needless(&reported.update) {
                updates.push(reported.update.clone());
            }
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
                let message = format!("{}: {}", d.annotation, d.message);
                let key = announcement_key(before, &annotations, generation, &message);
                Report::once(ReportReason::InvalidAnnotation, message, key)
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
                let update = &reported.update;
                let key = announcement_key(before, update, generation, "");
                announce.push(Report::once(reason, update.message.clone(), key));
            }
        }
        Some(ConditionsChange {
            conditions: after,
            announce,
        })
    }
}

/// What makes the announcement of `update` (with `detail`) one of a kind: the
/// condition of its type it replaces (absent, or its state and when it last changed),
/// the job's generation and the state announced. The announcement is created before
/// the status write; retried after that write failed, or after it was carried out but
/// its answer lost, it has the same key, so its Event is not created twice. The same
/// state announced again after another change has another key.
fn announcement_key(
    before: &[Condition],
    update: &ConditionUpdate,
    generation: Option<i64>,
    detail: &str,
) -> String {
    let replaced = before
        .iter()
        .find(|c| c.type_ == update.type_.as_str())
        .map_or("absent".to_owned(), |c| {
            format!(
                "{}/{}/{}/{}",
                c.status, c.reason, c.message, c.last_transition_time.0
            )
        });
    format!(
        "{}|{replaced}|{}|{}/{}/{}|{detail}",
        update.type_.as_str(),
        generation.unwrap_or_default(),
        update.status.as_str(),
        update.reason,
        update.message
    )
}

/// Whether `update` says something else than the condition of its type in `before`.
fn changed(before: &[Condition], update: &ConditionUpdate) -> bool {
    before
        .iter()
        .find(|c| c.type_ == update.type_.as_str())
        .is_none_or(|c| c.message != update.message || c.status != update.status.as_str())
}
