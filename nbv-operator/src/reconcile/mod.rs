//! One reconcile of a NotebookValidationJob: observe, decide, carry out, persist.
//!
//! Every decision is the core's ([`nbv_core::reconcile`]); this module makes the calls
//! (`phase.rs` the phase machine's, `carry.rs` the effects', `write.rs` the status
//! writes):
//!
//! 1. **Phase** (default mode; with `--gitops-only` another controller owns it): step
//!    the phase machine with what is observed of the job and its Pod, do what
//!    [`PodWork`](nbv_core::reconcile::PodWork) says, and write the status if it changed, with the job's
//!    `resourceVersion` as a precondition so a stale view never overwrites a newer one.
//! 2. **Plan** ([`nbv_core::plan::plan_with`]; the trigger annotation's parse is kept in
//!    [`ParsedTriggers`] while the annotation does not change) from the *persisted*
//!    status, its ledger merged with the one this process wrote a moment ago: GitOps
//!    effects of a terminal transition are planned only once the terminal phase is
//!    written.
//! 3. **Carry out** each effect, and let the [`Settlement`] record what it came to.
//! 4. **Persist** the ledger (`status.effects`) and the conditions in one status
//!    patch, and create the Events that announce what changed; requeue as [`Wake`]
//!    says.

mod carry;
mod error;
mod parsed;
mod phase;
mod recent;
mod write;

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};

use kube::api::Api;
use kube::runtime::controller::Action;
use nbv_core::aggregate::{JobEntry, JobKey};
use nbv_core::api::NotebookValidationJob;
use nbv_core::plan::{Plan, PlanContext, RunKey, parent_diagnostics};
use nbv_core::reconcile::{Reported, Settlement, Wake, access_condition, parent_condition};

use crate::context::Context;
use crate::metrics::ReconcileOutcome;
use crate::projection::CachedJob;

pub use error::Error;
pub use parsed::ParsedTriggers;
pub use recent::RecentLedgers;

use carry::{carry_out, create_report};
use error::is_conflict;
use phase::advance_phase;
use write::{patch_status, write_status};

/// Reconciles one job, unpacked from the cache. Used as the controller's reconcile
/// function.
pub async fn reconcile(cached: Arc<CachedJob>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = match cached.job() {
        Ok(job) => reconcile_job(&job, &ctx).await,
        Err(error) => Err(Error::Cache(error)),
    };
    let outcome = match &result {
        Ok(_) => ReconcileOutcome::Ok,
        Err(e) => {
            ctx.metrics.reconcile_error(e.kind());
            ReconcileOutcome::Error
        }
    };
    ctx.metrics.reconciled(outcome, started.elapsed());
    // An error is retried at a time of its own (`error_policy`).
    let requeued = result
        .as_ref()
        .map_or(true, |action| *action != Action::await_change());
    ctx.reconciles
        .ended(cached.namespace(), cached.name(), requeued);
    result
}

/// The controller's error policy: log, and retry as the core's policy says.
pub fn error_policy(job: Arc<CachedJob>, error: &Error, ctx: Arc<Context>) -> Action {
    tracing::warn!(job = job.name(), %error, "reconcile failed; retrying");
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
        let advanced = advance_phase(&job, ctx, now).await?;
        wake.after(advanced.requeue);
        if let Some(status) = advanced.status {
            if upstream_order {
                job.status = Some(status.clone());
                unwritten = Some(status);
            } else {
                job = write_status(&jobs, &job, &status).await?;
            }
        }
        announce_refusals(ctx, &job, &advanced.announce).await;
    }

    // 2. The plan, from the persisted status and what this process wrote recently.
    let entry = JobEntry::of(&job, &ctx.tracking).ok_or(Error::Identity)?;
    let parent = parent_condition_of(ctx, &entry, &namespace).await;
    let plan = plan_of(&mut job, &entry, ctx, now);
    let mut settlement = Settlement::new(&plan);
    if let Some(parent) = parent {
        settlement.report(parent);
    }
    // A sync that waits for the Role in Argo CD's namespace says so on the job.
    let conditions = job.status.as_ref().and_then(|s| s.conditions.as_deref());
    let access = ctx.executor.argocd_access();
    if let Some(reported) = access_condition(&plan, &access, conditions.unwrap_or_default()) {
        settlement.report(reported);
    }

    // 3. Carry it out.
    for planned in &plan.effects {
        let carried = carry_out(ctx, &mut job, planned, now).await;
        if let Some(error) = carried.failure() {
            tracing::warn!(job = %key, effect = %planned.key, %error, "effect failed");
        }
        if let Some(report) = settlement.record(planned, carried, now, &ctx.effect_retry) {
            create_report(ctx, &job, &report, now).await;
        }
    }

    // 4. Persist: the ledger and the conditions in one status patch.
    // A deliberate bug the simulation may inject (the `Tamper` hook; never in
    // production): forget what was carried out.
    let forget = upstream_order || matches!(&ctx.tamper, Some(t) if t.forget_ledger());
    let persisted = observed.status.as_ref().and_then(|s| s.effects.as_ref());
    let before = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let write = settlement
        .status_write(persisted, &before, now, job.metadata.generation)
        .map(|mut write| {
            if forget {
                write.ledger = None;
            }
            write
        })
        .filter(|write| write.ledger.is_some() || write.conditions.is_some());
    // A view from before this process's last status write (the watch events of the
    // versions that write replaced arrive after it) on which nothing was carried out:
    // what it would write, that write wrote, and the event of that write follows.
    let uid = observed_uid(observed);
    let version = observed.metadata.resource_version.as_deref();
    let stale = plan.carries_out_nothing() && ctx.recent.predates_last_write(&uid, version);
    if let Some(write) = write.filter(|_| !stale) {
        if let Some(ledger) = &write.ledger {
            ctx.recent.remember(&uid, ledger);
        }
        // With the version this reconcile last wrote or read (the wave patch's, when it
        // made one): the conditions are shared with the phase machine.
        let patch = write.patch(job.metadata.resource_version.as_deref());
        match patch_status(&jobs, &key, &patch).await {
            Ok(_) => {
                let replaced = [version, job.metadata.resource_version.as_deref()];
                ctx.recent.wrote(
                    &uid,
                    replaced.into_iter().flatten().map(str::to_owned).collect(),
                );
                for report in write.announce() {
                    create_report(ctx, &job, report, now).await;
                }
            }
            // Someone wrote the job meanwhile: the ledger is recorded all the same (a
            // restart must not repeat what it records), and the next reconcile sees the
            // new version and writes the conditions.
            Err(Error::Status { source, .. }) if is_conflict(&source) => {
                wake.conflicted();
                if let Some(ledger) = write.ledger_patch() {
                    patch_status(&jobs, &key, &ledger).await?;
                }
            }
            Err(e) => return Err(e),
        }
    }
    if let Some(status) = unwritten {
        write_status(&jobs, observed, &status).await?;
    }
    wake.merge(settlement.wake());
    // With nothing due sooner, the resync's sweep looks at the job again.
    Ok(wake
        .due(now, &ctx.config.requeue)
        .map_or_else(Action::await_change, Action::requeue))
}

/// Creates the `PodRefused` Events of a reconcile, once the status that records the
/// refusals is written. Each has a name of its own (the attempt, the kind, the first
/// refusal's time), so one created already is found, not repeated; one that cannot
/// be created is logged: the `PodAdmitted` condition tells the same.
async fn announce_refusals(
    ctx: &Context,
    job: &NotebookValidationJob,
    events: &[nbv_core::events::NotificationEvent],
) {
    for event in events {
        if let Err(error) = ctx.executor.create_notification(job, event).await {
            tracing::warn!(job = ?job.metadata.name, event = %event.name, %error, "creating the PodRefused Event failed");
        }
    }
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
    let mut plan = ctx.parsed_triggers.plan(job, &plan_ctx, now);
    plan.diagnostics
        .extend(parent_diagnostics(&entry.lookup.problems));
    plan
}

/// The `ApplicationStatus` condition, when the watch cache holds the job's parent
/// Application (once it has listed, and has read an Application named a moment ago).
async fn parent_condition_of(ctx: &Context, entry: &JobEntry, namespace: &str) -> Option<Reported> {
    let parent = entry.lookup.parent.as_ref()?;
    let object = ctx.applications.find_read(&parent.app, [namespace]).await?;
    Some(parent_condition(&object.to_json()))
}
