//! The phase machine and the validation Pod: what the core's steps ask, carried out.

use std::time::Duration;

use chrono::{DateTime, Utc};
use nbv_core::aggregate::JobKey;
use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus};
use nbv_core::phase::{Attempt, PhaseEvent, step};
use nbv_core::reconcile::{MAX_PHASE_STEPS, PodWork, pod_refused};

use crate::context::Context;
use crate::validation_pod::PodError;

use super::Error;

/// Steps the phase machine from what is observed: starts a run, starts or observes
/// the attempt's validation Pod, and fails a run that asks for an image build. Returns
/// the new status (when it changed) and when to look again. Only observations move
/// the machine; every decision is the core's ([`step`], [`PodWork`]).
pub(super) async fn advance_phase(
    job: &NotebookValidationJob,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Result<(Option<NotebookValidationJobStatus>, Option<Duration>), Error> {
    let policy = &ctx.retry_policy;
    let mut transition = step(job.status.as_ref(), &PhaseEvent::observe(job), now, policy);
    let mut changed = transition.changed;
    for _ in 0..MAX_PHASE_STEPS {
        let event = match PodWork::of(job, &transition) {
            PodWork::Step(event) => *event,
            PodWork::Start {
                attempt,
                clear_earlier,
            } => {
                if clear_earlier
                    && let Err(error) = ctx.pods.delete_other_attempts(job, attempt).await
                {
                    tracing::warn!(job = ?job.metadata.name, %error, "deleting earlier validation pods failed");
                }
                match ctx.pods.ensure_started(job, attempt, None, &[]).await {
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
