//! One reconcile of a NotebookValidationJob: observe, decide (in the core), act,
//! record.
//!
//! 1. In the default mode, run the phase machine ([`nbv_core::phase::step`]) and write
//!    the status if it changed, with the job's `resourceVersion` as a precondition so a
//!    stale view never overwrites a newer status. In `--gitops-only` mode another
//!    controller owns the phase, and this step is skipped.
//! 2. Feed the job's phase and parent Application to the [`Publisher`](crate::publisher::Publisher).
//! 3. Plan ([`nbv_core::plan::plan`]) from the *persisted* status: GitOps effects of a
//!    terminal transition are planned only once the terminal phase is written.
//! 4. Carry each effect out, record its outcome in the run's ledger, write the ledger
//!    to `status.effects` and the `AnnotationsValid` / `EffectsApplied` conditions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use nbv_core::aggregate::{JobEntry, JobKey, application_set_owner, application_status_condition};
use nbv_core::api::{EffectLedger, NotebookValidationJob, Phase};
use nbv_core::phase::{Attempt, Failure, Next, PhaseEvent, PodRef, Reason, set_condition, step};
use nbv_core::plan::{
    ConditionUpdate, Effect, Outcome, PlanContext, SyncStage, conditions, merge_patch,
    parent_diagnostics, plan, record, sync_condition,
};
use nbv_core::pod::{build_unsupported, pod_name};
use nbv_core::triggers::Action as TriggerAction;
use serde_json::json;

use crate::context::Context;
use crate::effects::{Delivery, EffectError, ReportReason, SyncReport, TriggerOutcome};
use crate::metrics::{ReconcileOutcome, TriggerStatus};
use crate::pods::PodError;

/// The field manager of every write nbv makes.
pub const FIELD_MANAGER: &str = "nbv-operator";

/// Why a reconcile failed; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The job lacks a namespace or a name (never the case for objects from a watch).
    #[error("the job has no namespace or name")]
    Identity,
    /// The validation Pod could not be created or read.
    #[error("running the validation pod of NotebookValidationJob {job}: {source}")]
    Pod {
        /// `namespace/name` of the job.
        job: String,
        /// What failed.
        #[source]
        source: PodError,
    },
    /// The status could not be written.
    #[error("writing the status of NotebookValidationJob {job}: {source}")]
    Status {
        /// `namespace/name` of the job.
        job: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// A short label for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Identity => "identity",
            Error::Pod { .. } => "pod",
            Error::Status { source, .. } if is_conflict(source) => "conflict",
            Error::Status { .. } => "status",
        }
    }
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// Ledgers the shell wrote recently, by job uid. The watch cache may not show a
/// status write yet when the next reconcile runs; merging what was written keeps a
/// reconcile on a stale view from carrying an effect out twice.
#[derive(Default)]
pub struct RecentLedgers(Mutex<HashMap<String, EffectLedger>>);

impl RecentLedgers {
    fn merged(&self, uid: &str, observed: Option<&EffectLedger>) -> Option<EffectLedger> {
        let recent = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(uid)
            .cloned();
        match (observed, recent) {
            (Some(o), Some(r)) if o.run == r.run => {
                let mut merged = r;
                merged.done.extend(o.done.iter().cloned());
                Some(merged)
            }
            (Some(o), _) => Some(o.clone()),
            (None, r) => r,
        }
    }

    fn remember(&self, uid: &str, ledger: &EffectLedger) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uid.to_owned(), ledger.clone());
    }

    pub(crate) fn forget(&self, uid: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(uid);
    }
}

/// Reconciles one job. Used as the controller's reconcile function.
pub async fn reconcile(
    job: Arc<NotebookValidationJob>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let started = Instant::now();
    let result = reconcile_job(&job, &ctx).await;
    let outcome = match &result {
        Ok(_) => ReconcileOutcome::Ok,
        Err(e) => {
            ctx.metrics.reconcile_error(e.kind());
            ReconcileOutcome::Error
        }
    };
    ctx.metrics.reconciled(outcome, started.elapsed());
    result
}

/// The controller's error policy: log, and retry soon (conflicts sooner).
pub fn error_policy(job: Arc<NotebookValidationJob>, error: &Error, _ctx: Arc<Context>) -> Action {
    let name = job.metadata.name.as_deref().unwrap_or_default();
    tracing::warn!(job = name, %error, "reconcile failed; retrying");
    match error {
        Error::Status { source, .. } if is_conflict(source) => {
            Action::requeue(Duration::from_secs(1))
        }
        _ => Action::requeue(Duration::from_secs(15)),
    }
}

async fn reconcile_job(observed: &NotebookValidationJob, ctx: &Context) -> Result<Action, Error> {
    let (Some(namespace), Some(name)) = (
        observed.metadata.namespace.clone(),
        observed.metadata.name.clone(),
    ) else {
        return Err(Error::Identity);
    };
    let key = JobKey::new(namespace.clone(), name.clone());
    let uid = observed.metadata.uid.clone().unwrap_or_default();
    let jobs: Api<NotebookValidationJob> = Api::namespaced(ctx.client.clone(), &namespace);

    if observed.metadata.deletion_timestamp.is_some() {
        ctx.job_deleted(observed);
        return Ok(Action::await_change());
    }

    let now = ctx.clock.now();
    let mut job = observed.clone();
    let mut requeue: Option<Duration> = None;

    // Test-only mutation (`config::Mutation`, always `None` in production): the
    // upstream operator's order, effects before the status write.
    let upstream_order = matches!(&ctx.tamper, Some(t) if t.effects_before_status());
    let mut unwritten = None;

    // 1. The phase machine and the validation Pod (default mode).
    if !ctx.config.gitops_only {
        let (status, requeue_after) = run_phase_machine(&job, ctx, now).await?;
        if let Some(status) = status {
            if upstream_order {
                job.status = Some(status.clone());
                unwritten = Some(status);
            } else {
                job = write_status(&jobs, &job, &status).await?;
            }
        }
        requeue = min(requeue, requeue_after);
    }

    // 2. The Application aggregate.
    let entry = JobEntry::of(&job, &ctx.tracking).ok_or(Error::Identity)?;
    let application = entry
        .lookup
        .parent
        .as_ref()
        .map(|p| p.app.name().to_owned());
    // Conditions beyond the plan's, each with the Event that announces a change of it.
    let mut reported: Vec<(ConditionUpdate, Option<ReportReason>)> = Vec::new();
    if let Some(parent) = &entry.lookup.parent
        && let Some(object) = ctx.publisher.application(&parent.app, &namespace)
    {
        let value = serde_json::to_value(&*object).unwrap_or_default();
        let owner = application_set_owner(&value);
        let name = format!(
            "{}/{}",
            object.metadata.namespace.as_deref().unwrap_or_default(),
            parent.app.name()
        );
        let event = owner.is_some().then_some(ReportReason::ApplicationSetOwned);
        reported.push((application_status_condition(&name, owner.as_deref()), event));
    }
    let parent_warnings = parent_diagnostics(&entry.lookup.problems);
    ctx.publisher
        .job_changed(entry.key, entry.lookup.parent, entry.phase);
    let phase = job
        .status
        .as_ref()
        .and_then(|s| s.phase)
        .map(Phase::migrated);

    // 3. The plan, from the persisted status and what this shell wrote recently.
    if let Some(status) = job.status.as_mut() {
        status.effects = ctx.recent.merged(&uid, status.effects.as_ref());
    }
    let plan_ctx = PlanContext {
        application,
        max_retries: ctx.config.max_retries,
        retry: ctx.effect_retry.clone(),
        argocd_namespace: ctx.config.argocd_namespace.clone(),
    };
    let mut plan = plan(&job, &plan_ctx, now);
    plan.diagnostics.extend(parent_warnings);

    // 4. Carry it out.
    let mut ledger = plan.ledger();
    let mut deferred = 0usize;
    // Deferred because an operation runs (look again soon), or until a window opens.
    let mut busy = false;
    let mut window_opens: Option<DateTime<Utc>> = None;
    for planned in &plan.effects {
        let outcome = match &planned.effect {
            Effect::PatchJob { patch } => match ctx
                .executor
                .patch_job_metadata(&namespace, &name, patch)
                .await
            {
                Ok(()) => Some(Outcome::Done),
                Err(e) => Some(e.outcome()),
            },
            Effect::Trigger {
                trigger,
                completed_at,
            } => {
                let action = trigger.action().as_str();
                match ctx
                    .executor
                    .fire_trigger(&job, trigger, *completed_at)
                    .await
                {
                    Ok(TriggerOutcome::Deferred { reason, until }) => {
                        ctx.metrics.trigger(action, TriggerStatus::Deferred);
                        tracing::info!(job = %key, %trigger, %reason, "trigger deferred");
                        deferred += 1;
                        match until {
                            // A closed sync window: look again when it opens.
                            Some(at) => window_opens = earliest(window_opens, at),
                            None => busy = true,
                        }
                        if trigger.action() == TriggerAction::Sync {
                            reported.push((
                                sync_condition(
                                    SyncStage::Deferred,
                                    &format!("{trigger}: {reason}"),
                                ),
                                Some(ReportReason::SyncDeferred),
                            ));
                        }
                        None
                    }
                    Ok(
                        done @ (TriggerOutcome::Done { .. } | TriggerOutcome::AlreadyDone { .. }),
                    ) => {
                        ctx.metrics.trigger(action, TriggerStatus::Succeeded);
                        let summary = match &done {
                            TriggerOutcome::Done { summary }
                            | TriggerOutcome::AlreadyDone { summary } => summary,
                            TriggerOutcome::Deferred { reason, .. } => reason,
                        };
                        if trigger.action() == TriggerAction::Sync {
                            // Already done: a full sync since the run, or this run's.
                            let stage = match &done {
                                TriggerOutcome::AlreadyDone { summary }
                                    if summary.contains("already synced successfully") =>
                                {
                                    SyncStage::Succeeded
                                }
                                _ => SyncStage::Started,
                            };
                            reported.push((
                                sync_condition(stage, &format!("{trigger}: {summary}")),
                                None,
                            ));
                        }
                        report(
                            ctx,
                            &job,
                            ReportReason::TriggerSucceeded,
                            &format!("{trigger}: {summary}"),
                            now,
                        )
                        .await;
                        Some(Outcome::Done)
                    }
                    Err(e) => {
                        let status = match e {
                            EffectError::Refused(_) => TriggerStatus::Refused,
                            _ => TriggerStatus::Failed,
                        };
                        ctx.metrics.trigger(action, status);
                        report(
                            ctx,
                            &job,
                            ReportReason::TriggerFailed,
                            &format!("{trigger}: {e}"),
                            now,
                        )
                        .await;
                        Some(e.outcome())
                    }
                }
            }
            Effect::SyncResult {
                trigger,
                completed_at,
            } => match ctx
                .executor
                .sync_result(&job, trigger.target(), *completed_at)
                .await
            {
                Ok(SyncReport::InProgress { summary }) => {
                    // Not an effect owed: the trigger took effect, and Argo CD may take
                    // its time. Only looked at again soon.
                    busy = true;
                    reported.push((
                        sync_condition(SyncStage::Started, &format!("{trigger}: {summary}")),
                        None,
                    ));
                    None
                }
                Ok(SyncReport::Finished { succeeded, summary }) => {
                    let (stage, reason) = if succeeded {
                        (SyncStage::Succeeded, ReportReason::SyncSucceeded)
                    } else {
                        (SyncStage::Failed, ReportReason::SyncFailed)
                    };
                    let message = format!("{trigger}: {summary}");
                    report(ctx, &job, reason, &message, now).await;
                    reported.push((sync_condition(stage, &message), None));
                    Some(Outcome::Done)
                }
                Ok(SyncReport::Replaced { summary }) => {
                    let message = format!("{trigger}: {summary}");
                    report(ctx, &job, ReportReason::SyncReplaced, &message, now).await;
                    reported.push((sync_condition(SyncStage::Replaced, &message), None));
                    Some(Outcome::Done)
                }
                Err(e) => Some(e.outcome()),
            },
            Effect::Notify { event } => match ctx.executor.create_notification(&job, event).await {
                Ok(delivery) => {
                    if delivery == Delivery::Created {
                        let status = job.status.as_ref();
                        let duration = status
                            .and_then(|s| Some(s.completion_time? - s.start_time?))
                            .and_then(|d| d.to_std().ok());
                        if let Some(p) = phase {
                            ctx.metrics.validation_finished(p, duration);
                        }
                    }
                    Some(Outcome::Done)
                }
                Err(e) => Some(e.outcome()),
            },
            Effect::ReportGaveUp {
                effect,
                error,
                attempts,
            } => {
                let message = format!("gave up on {effect} after {attempts} attempts: {error}");
                match ctx
                    .executor
                    .report(&job, ReportReason::EffectAbandoned, &message, now)
                    .await
                {
                    Ok(()) => Some(Outcome::Done),
                    Err(e) => Some(e.outcome()),
                }
            }
        };
        if let Some(outcome) = outcome {
            if let Outcome::Failed(error) | Outcome::GiveUp(error) = &outcome {
                tracing::warn!(job = %key, effect = %planned.key, %error, "effect failed");
            }
            ledger = record(ledger, &planned.key, outcome, now, &ctx.effect_retry).ledger;
        }
    }

    // 5. Record: the ledger (nbv is its only writer: no precondition needed), then the
    //    conditions (shared with the phase machine: with a precondition).
    //    Compared with the ledger on the cluster (not the one merged with what this shell
    //    remembers): after a failed write nothing new may be carried out, and the ledger
    //    must still be written, or a restart would repeat every effect it records.
    let persisted = observed.status.as_ref().and_then(|s| s.effects.as_ref());
    let carried_out = !plan.effects.is_empty();
    let has_records = !ledger.done.is_empty() || !ledger.failed.is_empty();
    // Test-only mutation (`config::Mutation`, always `None` in production): forget
    // what was carried out.
    let forget = upstream_order || matches!(&ctx.tamper, Some(t) if t.forget_ledger());
    if (carried_out || has_records) && !forget && persisted != Some(&ledger) {
        ctx.recent.remember(&uid, &ledger);
        let mut effects = serde_json::to_value(&ledger).unwrap_or_default();
        // The ledger's JSON leaves out an empty `failed`; the merge patch must still
        // clear failures persisted before (of this run, or of an earlier one).
        effects["failed"] = json!(ledger.failed);
        let patch = json!({"status": {"effects": effects}});
        let written = jobs
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| Error::Status {
                job: key.to_string(),
                source,
            })?;
        // The conditions below are written with a precondition: against the job as
        // this write left it (conditions included, should someone else have changed
        // them), not the version read before, which would always conflict.
        job.metadata.resource_version = written.metadata.resource_version;
        if let Some(status) = job.status.as_mut() {
            status.conditions = written.status.and_then(|s| s.conditions);
        }
    }
    let owed_later = deferred + usize::from(plan.retry_at.is_some());
    let mut updates: Vec<ConditionUpdate> =
        conditions(&plan.diagnostics, &ledger, owed_later).into();
    // One update per condition type: the last one seen this reconcile.
    for (update, _) in &reported {
        updates.retain(|u| u.type_ != update.type_);
        updates.push(update.clone());
    }
    let mut status_conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let before = status_conditions.clone();
    let generation = job.metadata.generation;
    for update in &updates {
        set_condition(
            &mut status_conditions,
            &update.type_,
            update.status,
            &update.reason,
            &update.message,
            now,
            generation,
        );
    }
    if status_conditions != before {
        let annotations_changed = before
            .iter()
            .find(|c| c.type_ == updates[0].type_.as_str())
            .is_none_or(|c| {
                c.message != updates[0].message || c.status != updates[0].status.as_str()
            });
        let patch = json!({
            "metadata": {"resourceVersion": job.metadata.resource_version},
            "status": {"conditions": status_conditions},
        });
        let written = jobs
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match written {
            Ok(_) => {
                // One Event per new annotation problem, not per reconcile.
                if annotations_changed {
                    for diagnostic in plan.diagnostics.iter().filter(|d| d.is_error) {
                        let message = format!("{}: {}", diagnostic.annotation, diagnostic.message);
                        report(ctx, &job, ReportReason::InvalidAnnotation, &message, now).await;
                    }
                }
                // And one per new state of a reported condition that announces itself.
                for (update, event) in &reported {
                    let Some(event) = event else { continue };
                    let last = updates.iter().rev().find(|u| u.type_ == update.type_);
                    if last != Some(update) {
                        continue;
                    }
                    let changed = before
                        .iter()
                        .find(|c| c.type_ == update.type_.as_str())
                        .is_none_or(|c| {
                            c.message != update.message || c.status != update.status.as_str()
                        });
                    if changed {
                        report(ctx, &job, *event, &update.message, now).await;
                    }
                }
            }
            // Someone wrote the job meanwhile: the next reconcile sees it and retries.
            Err(e) if is_conflict(&e) => requeue = min(requeue, Some(Duration::from_secs(1))),
            Err(source) => {
                return Err(Error::Status {
                    job: key.to_string(),
                    source,
                });
            }
        }
    }

    if let Some(status) = unwritten {
        write_status(&jobs, observed, &status).await?;
    }
    if busy {
        requeue = min(requeue, Some(ctx.config.deferred_retry));
    }
    if let Some(at) = window_opens {
        // A second after it opens: at its very start a window is not open yet.
        requeue = min(requeue, Some(until(at + chrono::Duration::seconds(1), now)));
    }
    if let Some(at) = plan.retry_at {
        requeue = min(requeue, Some(until(at, now)));
    }
    Ok(Action::requeue(requeue.unwrap_or(ctx.config.resync)))
}

/// Steps the phase machine from what is observed: starts a run, starts or observes
/// the attempt's validation Pod, and fails a run that asks for an image build. Returns
/// the new status (when it changed) and when to look again. Only observations move
/// the machine; every decision is the core's ([`step`], [`nbv_core::pod`]).
async fn run_phase_machine(
    job: &NotebookValidationJob,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Result<
    (
        Option<nbv_core::api::NotebookValidationJobStatus>,
        Option<Duration>,
    ),
    Error,
> {
    let key = format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    );
    let mut transition = step(
        job.status.as_ref(),
        &PhaseEvent::observe(job),
        now,
        &ctx.retry_policy,
    );
    let mut changed = transition.changed;
    // Each observation may lead to the next (a Pod found already finished): a few
    // steps at most, and never on an event the machine ignores.
    for _ in 0..4 {
        let event = match transition.next {
            Next::StartBuild { generation } | Next::WatchBuild { generation } => {
                let failure = build_unsupported(job).unwrap_or_else(|| {
                    Failure::permanent(
                        Reason::BUILD_FAILED,
                        "the image build cannot be carried out",
                    )
                });
                PhaseEvent::BuildFailed {
                    generation,
                    reason: failure.reason,
                    message: failure.message,
                }
            }
            Next::StartPod(attempt) => {
                if transition.run_started || attempt.retry > 0 {
                    // Pods of earlier runs or attempts are done with.
                    if let Err(error) = ctx.pods.delete_other_attempts(job, attempt).await {
                        tracing::warn!(job = %key, %error, "deleting earlier validation pods failed");
                    }
                }
                match ctx.pods.ensure_started(job, attempt, None).await {
                    Ok(_) => match ctx.pods.observe(job, attempt, now).await {
                        Ok(Some(event)) => event,
                        Ok(None) => break,
                        Err(e) => pod_failure_event(job, attempt, e, &key)?,
                    },
                    Err(e) => pod_failure_event(job, attempt, e, &key)?,
                }
            }
            Next::WatchPod(attempt) => match ctx.pods.observe(job, attempt, now).await {
                Ok(Some(event)) => event,
                Ok(None) => break,
                Err(e) => pod_failure_event(job, attempt, e, &key)?,
            },
            Next::Observe | Next::WaitUntil(_) | Next::Done => break,
        };
        let next = step(Some(&transition.status), &event, now, &ctx.retry_policy);
        if !next.changed {
            break;
        }
        changed = true;
        transition = next;
    }
    let requeue = match transition.next {
        // Pod changes wake the controller (it watches nbv's pods); this is a backstop.
        Next::WatchPod(_) | Next::StartPod(_) => Some(Duration::from_secs(30)),
        _ => transition.requeue_after,
    };
    Ok((changed.then_some(transition.status), requeue))
}

/// The phase event for a Pod that cannot be created or read: a failure the core
/// classifies (an invalid spec, a Pod Security refusal) fails the attempt; anything
/// else is an API error the controller retries.
fn pod_failure_event(
    job: &NotebookValidationJob,
    attempt: Attempt,
    error: PodError,
    key: &str,
) -> Result<PhaseEvent, Error> {
    match error.failure() {
        Some(failure) => Ok(PhaseEvent::PodFailed {
            pod: PodRef::new(
                pod_name(job.metadata.name.as_deref().unwrap_or_default(), attempt),
                attempt,
            ),
            failure,
            results: Vec::new(),
        }),
        None => Err(Error::Pod {
            job: key.to_owned(),
            source: error,
        }),
    }
}

/// Writes `status` as a merge patch of what changed, with the job's resourceVersion
/// as a precondition, and returns the job as the API server stored it.
async fn write_status(
    jobs: &Api<NotebookValidationJob>,
    job: &NotebookValidationJob,
    status: &nbv_core::api::NotebookValidationJobStatus,
) -> Result<NotebookValidationJob, Error> {
    let name = job.metadata.name.clone().unwrap_or_default();
    let key = format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        name
    );
    let before = serde_json::to_value(&job.status).unwrap_or_default();
    let after = serde_json::to_value(status).unwrap_or_default();
    let before = if before.is_null() { json!({}) } else { before };
    let Some(diff) = merge_patch(&before, &after) else {
        return Ok(job.clone());
    };
    let patch = json!({
        "metadata": {"resourceVersion": job.metadata.resource_version},
        "status": diff,
    });
    jobs.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(|source| Error::Status { job: key, source })
}

async fn report(
    ctx: &Context,
    job: &NotebookValidationJob,
    reason: ReportReason,
    message: &str,
    now: DateTime<Utc>,
) {
    if let Err(error) = ctx.executor.report(job, reason, message, now).await {
        // An Event that cannot be created is logged; the outcome it describes is
        // recorded in the job's status regardless.
        tracing::warn!(reason = reason.as_str(), %error, "creating an Event failed");
    }
}

fn until(at: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (at - now)
        .to_std()
        .unwrap_or(Duration::ZERO)
        .max(Duration::from_millis(100))
}

fn earliest(a: Option<DateTime<Utc>>, b: DateTime<Utc>) -> Option<DateTime<Utc>> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn min(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
