//! Carrying a planned effect out: the API calls, and what they came to.

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::DynamicObject;
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::events::Report;
use nbv_core::plan::{Effect, Outcome, PlannedEffect};
use nbv_core::reconcile::{Carried, abandonment};

use crate::context::Context;
use crate::effects::{Delivery, EffectError, TriggerOutcome};
use crate::metrics::TriggerStatus;

/// Carries `planned` out with the smallest API calls, and says what it came to. A
/// write of the job's own metadata leaves `job` as the API server stored it (its
/// `resourceVersion` and conditions), the base of the status write that follows.
pub(super) async fn carry_out(
    ctx: &Context,
    job: &mut NotebookValidationJob,
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
            let stored = ex.patch_job_metadata(namespace, name, patch).await;
            if let Ok(stored) = &stored {
                follow(job, stored);
            }
            written(stored.map(drop))
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

/// Takes the `resourceVersion` and the conditions of the job as `stored` after a
/// write: the conditions are written next with that version as a precondition, so
/// they must be computed from what that version holds (someone else may have changed
/// them meanwhile), not from the version read before.
fn follow(job: &mut NotebookValidationJob, stored: &DynamicObject) {
    job.metadata.resource_version = stored.metadata.resource_version.clone();
    if let Some(status) = job.status.as_mut() {
        status.conditions = stored
            .data
            .pointer("/status/conditions")
            .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok());
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
