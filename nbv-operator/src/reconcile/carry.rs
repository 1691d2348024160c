//! Carrying a planned effect out: the API calls, and what they came to.

use chrono::{DateTime, Utc};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::carry::TriggerStatus as Fired;
use nbv_core::events::Report;
use nbv_core::plan::{Effect, PlannedEffect};
use nbv_core::reconcile::Carried;

use crate::context::Context;
use crate::metrics::TriggerStatus;

/// Carries `planned` out with the smallest API calls (nbv-core's
/// [`Carry`](nbv_core::carry::Carry), driven by the executor), and says what it came
/// to. A write of the job's own metadata leaves `job` as the API server stored it (its
/// `resourceVersion` and conditions), the base of the status write that follows.
pub(super) async fn carry_out(
    ctx: &Context,
    job: &mut NotebookValidationJob,
    planned: &PlannedEffect,
    now: DateTime<Utc>,
) -> Carried {
    let (carried, carry) = ctx.executor.carry(job, planned, now).await;
    carry.follow(job);
    if let (Effect::Trigger { trigger, .. }, Some(fired)) =
        (&planned.effect, carry.trigger_status())
    {
        let status = match fired {
            Fired::Succeeded => TriggerStatus::Succeeded,
            Fired::Deferred => TriggerStatus::Deferred,
            Fired::Refused => TriggerStatus::Refused,
            Fired::Failed => TriggerStatus::Failed,
        };
        ctx.metrics.trigger(trigger.action().as_str(), status);
    }
    if carry.notified() {
        validation_finished(ctx, job);
    }
    carried
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

/// Creates the Event of `report`; one that cannot be created is only logged.
pub(super) async fn create_report(
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
