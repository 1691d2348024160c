//! One reconcile of a NotebookValidationJob: observe, decide, carry out, persist.
//!
//! Every decision is the core's ([`nbv_core::reconcile`]); this file makes the calls:
//!
//! 1. **Phase** (default mode; with `--gitops-only` another controller owns it): step
//!    the phase machine with what is observed of the job and its Pod, do what
//!    [`PodWork`] says, and write the status if it changed, with the job's
//!    `resourceVersion` as a precondition so a stale view never overwrites a newer one.
//! 2. **Plan** ([`nbv_core::plan::plan`]) from the *persisted* status, its ledger merged
//!    with the one this process wrote a moment ago: GitOps effects of a terminal
//!    transition are planned only once the terminal phase is written.
//! 3. **Carry out** each effect, and let the [`Settlement`] record what it came to.
//! 4. **Persist** the ledger to `status.effects`, then the conditions, and create the
//!    Events that announce what changed; requeue as [`Wake`] says.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use nbv_core::aggregate::{JobEntry, JobKey};
use nbv_core::api::{EffectLedger, NotebookValidationJob, NotebookValidationJobStatus, Phase};
use nbv_core::events::Report;
use nbv_core::phase::{Attempt, PhaseEvent, step};
use nbv_core::plan::{
    Effect, Outcome, Plan, PlanContext, PlannedEffect, RunKey, parent_diagnostics, plan,
};
use nbv_core::reconcile::{
    Carried, MAX_PHASE_STEPS, PodWork, Reported, Settlement, Wake, abandonment, ledger_patch,
    merge_recent, parent_condition, pod_refused, status_patch,
};

use crate::context::Context;
use crate::effects::{Delivery, EffectError, TriggerOutcome};
use crate::metrics::{ReconcileOutcome, TriggerStatus};
use crate::validation_pod::PodError;

/// The field manager of every write nbv makes.
pub use crate::effects::FIELD_MANAGER;

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
    crate::api_error::is_conflict(e)
}

/// Ledgers the shell wrote recently, by job uid. The watch cache may not show a
/// status write yet when the next reconcile runs; merging what was written keeps a
/// reconcile on a stale view from carrying an effect out twice.
#[derive(Default)]
pub struct RecentLedgers(Mutex<HashMap<String, EffectLedger>>);

impl RecentLedgers {
    /// The ledger to plan from ([`merge_recent`]).
    fn merged(
        &self,
        uid: &str,
        run: &str,
        observed: Option<&EffectLedger>,
    ) -> Option<EffectLedger> {
        let recent = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(uid)
            .cloned();
        merge_recent(run, observed, recent)
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

/// The controller's error policy: log, and retry as the core's policy says.
pub fn error_policy(job: Arc<NotebookValidationJob>, error: &Error, ctx: Arc<Context>) -> Action {
    let name = job.metadata.name.as_deref().unwrap_or_default();
    tracing::warn!(job = name, %error, "reconcile failed; retrying");
    let conflict = matches!(error, Error::Status { source, .. } if is_conflict(source));
    Action::requeue(ctx.config.requeue.after_error(conflict))
}

async fn reconcile_job(observed: &NotebookValidationJob, ctx: &Context) -> Result<Action, Error> {
    let (Some(namespace), Some(name)) = (
        observed.metadata.namespace.clone(),
        observed.metadata.name.clone(),
    ) else {
        return Err(Error::Identity);
    };
    let key = JobKey::new(namespace.clone(), name.clone());
    let jobs: Api<NotebookValidationJob> = Api::namespaced(ctx.client.clone(), &namespace);
    if observed.metadata.deletion_timestamp.is_some() {
        ctx.job_deleted(observed);
        return Ok(Action::await_change());
    }
    let now = ctx.clock.now();
    let mut job = observed.clone();
    let mut wake = Wake::default();

    // A deliberate bug the simulation may inject (the `Tamper` hook; never in
    // production): the upstream operator's order, effects before the status write.
    let upstream_order = matches!(&ctx.tamper, Some(t) if t.effects_before_status());
    let mut unwritten = None;

    // 1. The phase machine and the validation Pod (default mode).
    if !ctx.config.gitops_only {
        let (status, after) = advance_phase(&job, ctx, now).await?;
        wake.after(after);
        if let Some(status) = status {
            if upstream_order {
                job.status = Some(status.clone());
                unwritten = Some(status);
            } else {
                job = write_status(&jobs, &job, &status).await?;
            }
        }
    }

    // 2. The plan, from the persisted status and what this process wrote recently.
    let entry = JobEntry::of(&job, &ctx.tracking).ok_or(Error::Identity)?;
    let parent = parent_condition_of(ctx, &entry, &namespace);
    let plan = plan_of(&mut job, &entry, ctx, now);
    let mut settlement = Settlement::new(&plan);
    if let Some(parent) = parent {
        settlement.report(parent);
    }

    // 3. Carry it out.
    for planned in &plan.effects {
        let carried = carry_out(ctx, &job, planned, now).await;
        if let Some(error) = carried.failure() {
            tracing::warn!(job = %key, effect = %planned.key, %error, "effect failed");
        }
        if let Some(report) = settlement.record(planned, carried, now, &ctx.effect_retry) {
            create_report(ctx, &job, &report, now).await;
        }
    }

    // 4. Persist.
    // A deliberate bug the simulation may inject (the `Tamper` hook; never in
    // production): forget what was carried out.
    let forget = upstream_order || matches!(&ctx.tamper, Some(t) if t.forget_ledger());
    let persisted = observed.status.as_ref().and_then(|s| s.effects.as_ref());
    if let Some(ledger) = settlement.ledger_write(persisted).filter(|_| !forget) {
        ctx.recent.remember(&observed_uid(observed), &ledger);
        let written = patch_status(&jobs, &key, &ledger_patch(&ledger)).await?;
        // The conditions below are written with a precondition: against the job as
        // this write left it (conditions included, should someone else have changed
        // them), not the version read before, which would always conflict.
        job.metadata.resource_version = written.metadata.resource_version;
        if let Some(status) = job.status.as_mut() {
            status.conditions = written.status.and_then(|s| s.conditions);
        }
    }
    let before = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    if let Some(change) = settlement.conditions(&before, now, job.metadata.generation) {
        let patch = change.patch(job.metadata.resource_version.as_deref());
        match patch_status(&jobs, &key, &patch).await {
            Ok(_) => {
                for report in &change.announce {
                    create_report(ctx, &job, report, now).await;
                }
            }
            // Someone wrote the job meanwhile: the next reconcile sees it and retries.
            Err(Error::Status { source, .. }) if is_conflict(&source) => wake.conflicted(),
            Err(e) => return Err(e),
        }
    }
    if let Some(status) = unwritten {
        write_status(&jobs, observed, &status).await?;
    }
    wake.merge(settlement.wake());
    Ok(Action::requeue(wake.requeue(now, &ctx.config.requeue)))
}

fn observed_uid(job: &NotebookValidationJob) -> String {
    job.metadata.uid.clone().unwrap_or_default()
}

/// The plan of `job`, planned from its persisted ledger merged with the one written
/// recently (which `job`'s status then holds).
fn plan_of(
    job: &mut NotebookValidationJob,
    entry: &JobEntry,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Plan {
    let uid = observed_uid(job);
    let run = RunKey::of(job);
    if let Some(status) = job.status.as_mut() {
        status.effects = ctx
            .recent
            .merged(&uid, run.as_str(), status.effects.as_ref());
    }
    let plan_ctx = PlanContext {
        application: entry
            .lookup
            .parent
            .as_ref()
            .map(|p| p.app.name().to_owned()),
        max_retries: ctx.config.max_retries,
        retry: ctx.effect_retry.clone(),
        argocd_namespace: ctx.config.argocd_namespace.clone(),
    };
    let mut plan = plan(job, &plan_ctx, now);
    plan.diagnostics
        .extend(parent_diagnostics(&entry.lookup.problems));
    plan
}

/// The `ApplicationStatus` condition, when the watch cache holds the job's parent
/// Application.
fn parent_condition_of(ctx: &Context, entry: &JobEntry, namespace: &str) -> Option<Reported> {
    let parent = entry.lookup.parent.as_ref()?;
    let object = ctx.applications.find(&parent.app, [namespace])?;
    Some(parent_condition(&serde_json::to_value(&*object).ok()?))
}

/// Carries `planned` out with the smallest API calls, and says what it came to.
async fn carry_out(
    ctx: &Context,
    job: &NotebookValidationJob,
    planned: &PlannedEffect,
    now: DateTime<Utc>,
) -> Carried {
    let ex = &ctx.executor;
    match &planned.effect {
        Effect::PatchJob { patch } => {
            let (namespace, name) = (
                job.metadata.namespace.as_deref().unwrap_or_default(),
                job.metadata.name.as_deref().unwrap_or_default(),
            );
            written(ex.patch_job_metadata(namespace, name, patch).await)
        }
        Effect::Trigger {
            trigger,
            completed_at,
        } => {
            let fired = ex.fire_trigger(job, trigger, *completed_at).await;
            let status = match &fired {
                Ok(TriggerOutcome::Deferred { reason, .. }) => {
                    tracing::info!(job = ?job.metadata.name, %trigger, %reason, "trigger deferred");
                    TriggerStatus::Deferred
                }
                Ok(_) => TriggerStatus::Succeeded,
                Err(EffectError::Refused(_)) => TriggerStatus::Refused,
                Err(_) => TriggerStatus::Failed,
            };
            ctx.metrics.trigger(trigger.action().as_str(), status);
            Carried::Trigger(fired.map_err(|e| e.outcome()))
        }
        Effect::SyncResult {
            trigger,
            completed_at,
        } => Carried::Sync(
            ex.sync_result(job, trigger.target(), *completed_at)
                .await
                .map_err(|e| e.outcome()),
        ),
        Effect::Notify { event } => {
            let delivered = ex.create_notification(job, event).await;
            if delivered.as_ref().is_ok_and(|d| *d == Delivery::Created) {
                validation_finished(ctx, job);
            }
            written(delivered.map(|_| ()))
        }
        effect @ Effect::ReportGaveUp { .. } => match abandonment(effect) {
            Some(report) => written(ex.report(job, report.reason, &report.message, now).await),
            None => Carried::Written(Outcome::Done),
        },
    }
}

fn written(result: Result<(), EffectError>) -> Carried {
    Carried::Written(match result {
        Ok(()) => Outcome::Done,
        Err(e) => e.outcome(),
    })
}

/// Counts a run that ended, once: when its notification is created.
fn validation_finished(ctx: &Context, job: &NotebookValidationJob) {
    let status = job.status.as_ref();
    let duration = status
        .and_then(|s| Some(s.completion_time? - s.start_time?))
        .and_then(|d| d.to_std().ok());
    if let Some(phase) = status.and_then(|s| s.phase).map(Phase::migrated) {
        ctx.metrics.validation_finished(phase, duration);
    }
}

/// Steps the phase machine from what is observed: starts a run, starts or observes
/// the attempt's validation Pod, and fails a run that asks for an image build. Returns
/// the new status (when it changed) and when to look again. Only observations move
/// the machine; every decision is the core's ([`step`], [`PodWork`]).
async fn advance_phase(
    job: &NotebookValidationJob,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Result<(Option<NotebookValidationJobStatus>, Option<Duration>), Error> {
    let policy = &ctx.retry_policy;
    let mut transition = step(job.status.as_ref(), &PhaseEvent::observe(job), now, policy);
    let mut changed = transition.changed;
    for _ in 0..MAX_PHASE_STEPS {
        let event = match PodWork::of(job, &transition) {
            PodWork::Step(event) => event,
            PodWork::Start {
                attempt,
                clear_earlier,
            } => {
                if clear_earlier
                    && let Err(error) = ctx.pods.delete_other_attempts(job, attempt).await
                {
                    tracing::warn!(job = ?job.metadata.name, %error, "deleting earlier validation pods failed");
                }
                match ctx.pods.ensure_started(job, attempt, None).await {
                    Ok(_) => match observe_pod(job, attempt, ctx, now).await? {
                        Some(event) => event,
                        None => break,
                    },
                    Err(e) => pod_error_event(job, attempt, e)?,
                }
            }
            PodWork::Watch(attempt) => match observe_pod(job, attempt, ctx, now).await? {
                Some(event) => event,
                None => break,
            },
            PodWork::Rest => break,
        };
        let next = step(Some(&transition.status), &event, now, policy);
        if !next.changed {
            break;
        }
        changed = true;
        transition = next;
    }
    let requeue = PodWork::requeue_after(&transition);
    Ok((changed.then_some(transition.status), requeue))
}

async fn observe_pod(
    job: &NotebookValidationJob,
    attempt: Attempt,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Result<Option<PhaseEvent>, Error> {
    match ctx.pods.observe(job, attempt, now).await {
        Ok(event) => Ok(event),
        Err(e) => pod_error_event(job, attempt, e).map(Some),
    }
}

/// The phase event for a Pod that cannot be created or read: a refusal the core
/// classifies (an invalid spec, a Pod Security refusal) fails the attempt; anything
/// else is an API error the controller retries.
fn pod_error_event(
    job: &NotebookValidationJob,
    attempt: Attempt,
    error: PodError,
) -> Result<PhaseEvent, Error> {
    match error.failure() {
        Some(failure) => Ok(pod_refused(job, attempt, failure)),
        None => Err(Error::Pod {
            job: JobKey::of(job).map(|k| k.to_string()).unwrap_or_default(),
            source: error,
        }),
    }
}

/// Writes `status` as a merge patch of what changed ([`status_patch`]) and returns the
/// job as the API server stored it.
async fn write_status(
    jobs: &Api<NotebookValidationJob>,
    job: &NotebookValidationJob,
    status: &NotebookValidationJobStatus,
) -> Result<NotebookValidationJob, Error> {
    let Some(patch) = status_patch(job, status) else {
        return Ok(job.clone());
    };
    let key = JobKey::of(job).ok_or(Error::Identity)?;
    patch_status(jobs, &key, &patch).await
}

/// One merge patch of the job's status subresource.
async fn patch_status(
    jobs: &Api<NotebookValidationJob>,
    key: &JobKey,
    patch: &serde_json::Value,
) -> Result<NotebookValidationJob, Error> {
    jobs.patch_status(key.name(), &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map_err(|source| Error::Status {
            job: key.to_string(),
            source,
        })
}

async fn create_report(
    ctx: &Context,
    job: &NotebookValidationJob,
    report: &Report,
    now: DateTime<Utc>,
) {
    if let Err(error) = ctx
        .executor
        .report(job, report.reason, &report.message, now)
        .await
    {
        // An Event that cannot be created is logged; the outcome it describes is
        // recorded in the job's status regardless.
        tracing::warn!(reason = report.reason.as_str(), %error, "creating an Event failed");
    }
}
