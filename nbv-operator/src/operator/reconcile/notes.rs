//! What a reconcile noted on the way, counted and logged.

use nbv_core::aggregate::JobKey;
use nbv_core::carry::TriggerStatus as Fired;
use nbv_core::job::Note;

use super::context::Context;
use crate::operator::metrics::TriggerStatus;

/// Counts and logs `notes` of the reconcile of `job`.
pub(super) fn record(ctx: &Context, job: &JobKey, notes: Vec<Note>) {
    for note in notes {
        match note {
            Note::PodCreated { namespace, ok } => ctx.metrics.pod_created(&namespace, ok),
            Note::PodRefusedRetrying {
                pod,
                reason,
                retry_in,
            } => {
                tracing::info!(%job, %pod, %reason, ?retry_in, "validation pod refused; retrying");
            }
            Note::EarlierPodsKept(failure) => {
                tracing::warn!(%job, %failure, "deleting earlier validation pods failed");
            }
            Note::EventNotCreated(error) => {
                // The outcome it describes is recorded in the job's status regardless.
                tracing::warn!(%job, %error, "creating an Event failed");
            }
            Note::EffectFailed { effect, error } => {
                tracing::warn!(%job, %effect, %error, "effect failed");
            }
            Note::Triggered {
                trigger,
                action,
                status,
                grant,
            } => {
                let counted = match status {
                    Fired::Succeeded => TriggerStatus::Succeeded,
                    Fired::Deferred => TriggerStatus::Deferred,
                    Fired::Refused => TriggerStatus::Refused,
                    Fired::Failed => TriggerStatus::Failed,
                };
                ctx.metrics.trigger(action, counted);
                let grant = grant.unwrap_or_default();
                tracing::info!(%job, %trigger, %grant, status = status.as_str(), "trigger carried out");
            }
            Note::RunEnded { phase, duration } => {
                ctx.metrics.validation_finished(phase, duration);
            }
            Note::Warning(warning) => tracing::warn!(%job, "{warning}"),
        }
    }
}
