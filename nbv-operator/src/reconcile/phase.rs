//! The phase machine and the validation Pod: what the core's steps ask, carried out.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use nbv_core::aggregate::JobKey;
use nbv_core::api::Phase;
use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus};
use nbv_core::events::NotificationEvent;
use nbv_core::models::{
    ModelSettings, gate_failure, record_predictions, record_result, record_wait,
};
use nbv_core::phase::{Attempt, PhaseEvent, record_admitted, step};
use nbv_core::pod::pod_name;
use nbv_core::reconcile::{MAX_PHASE_STEPS, PodWork, RefusalWork, pod_refused, pod_refused_at};

use crate::context::Context;
use crate::models::{Admission, namespaces_to_ask};
use crate::validation_pod::PodError;

use super::Error;

/// What advancing the phase came to.
pub(super) struct Advanced {
    /// The new status, when it changed.
    pub status: Option<NotebookValidationJobStatus>,
    /// When to look again.
    pub requeue: Option<Duration>,
    /// Events to create once the status is written (a refused Pod's `PodRefused`).
    pub announce: Vec<NotificationEvent>,
}

/// Steps the phase machine from what is observed: starts a run, starts or observes
/// the attempt's validation Pod, and fails a run that asks for an image build. Returns
/// the new status (when it changed), when to look again, and the Events that announce
/// a refused Pod. Only observations move the machine; every decision is the core's
/// ([`step`], [`PodWork`], [`pod_refused_at`]).
pub(super) async fn advance_phase(
    job: &NotebookValidationJob,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Result<Advanced, Error> {
    let policy = &ctx.retry_policy;
    let mut transition = step(job.status.as_ref(), &PhaseEvent::observe(job), now, policy);
    let mut changed = transition.changed;
    let mut waits_until = None;
    let mut refused_retry = None;
    let mut announce = Vec::new();
    for _ in 0..MAX_PHASE_STEPS {
        let event = match PodWork::of(job, &transition) {
            PodWork::Step(event) => *event,
            PodWork::Start {
                attempt,
                clear_earlier,
            } => match admit(job, attempt, ctx, now).await? {
                Admission::Start { models, result } => {
                    if let Some(result) = result {
                        changed |= record_result(&mut transition.status, &result);
                    }
                    if clear_earlier
                        && let Err(error) = ctx.pods.delete_other_attempts(job, attempt).await
                    {
                        tracing::warn!(job = ?job.metadata.name, %error, "deleting earlier validation pods failed");
                    }
                    match ctx
                        .pods
                        .ensure_started(job, attempt, None, models.as_deref())
                        .await
                    {
                        Ok(pod) => {
                            changed |= record_admitted(&mut transition.status, &pod, now);
                            match observe_pod(job, attempt, ctx, now).await? {
                                Some(event) => event,
                                None => break,
                            }
                        }
                        Err(PodError::Refused { refusal, .. }) => {
                            let before = transition.status.clone();
                            let refused = pod_refused_at(
                                job,
                                attempt,
                                &mut transition.status,
                                &refusal,
                                ctx.config.pod_admission_timeout,
                                now,
                            );
                            changed |= transition.status != before;
                            announce.extend(refused.announce);
                            match refused.work {
                                RefusalWork::Fail(event) => *event,
                                RefusalWork::Retry(after) => {
                                    tracing::info!(job = ?job.metadata.name, pod = pod_name(job.metadata.name.as_deref().unwrap_or_default(), attempt), reason = refusal.kind.cause().as_str(), retry_in = ?after, "validation pod refused; retrying");
                                    refused_retry = Some(after);
                                    break;
                                }
                            }
                        }
                        Err(e) => pod_error_event(job, attempt, e)?,
                    }
                }
                Admission::Wait { message, until } => {
                    changed |= record_wait(&mut transition.status, &message, now);
                    waits_until = Some(until);
                    break;
                }
                Admission::Fail { message, result } => {
                    changed |= record_result(&mut transition.status, &result);
                    pod_refused(job, attempt, gate_failure(&message))
                }
            },
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
    if changed && transition.status.phase.is_some_and(Phase::is_terminal) {
        changed |= record_predictions_of(job, ctx, &mut transition.status);
    }
    let mut requeue = PodWork::requeue_after(&transition);
    if let Some(after) = refused_retry {
        // The refusal's backoff, which never reaches past its deadline.
        requeue = Some(after);
    }
    if let Some(until) = waits_until {
        // Woken when a model changes; at the latest, when the wait ends.
        let left = (until - now).to_std().unwrap_or_default();
        requeue = Some(requeue.map_or(left, |r| r.min(left)));
    }
    Ok(Advanced {
        status: changed.then_some(transition.status),
        requeue,
        announce,
    })
}

/// Records what the run's validation Pod reported of the prediction check into the
/// model check's result ([`record_predictions`]); whether the status changed.
fn record_predictions_of(
    job: &NotebookValidationJob,
    ctx: &Context,
    status: &mut NotebookValidationJobStatus,
) -> bool {
    let (Some(spec), Some(namespace)) = (
        job.spec.model_validation.as_ref(),
        job.metadata.namespace.as_deref(),
    ) else {
        return false;
    };
    let Ok(Some(ModelSettings {
        prediction: Some(prediction),
        ..
    })) = ModelSettings::resolve(spec, namespace)
    else {
        return false;
    };
    let (Some(pod), Some(result)) = (
        status.validation_pod_name.as_deref(),
        status.model_validation_result.as_mut(),
    ) else {
        return false;
    };
    let Some(reports) = ctx.pods.reported_predictions(job, pod) else {
        return false;
    };
    let before = result.clone();
    record_predictions(result, &prediction.expected_output, &reports);
    *result != before
}

/// The model gate of `job` ([`nbv_core::models::gate`]), with the opt-in annotations
/// of the namespaces it may ask about read first. A job without model validation, or
/// whose `modelValidation` the Pod builder refuses (naming the field), starts as it is;
/// so does an attempt whose Pod exists already (the gate opened for it: a model that
/// changes while it runs is the notebook's to find).
async fn admit(
    job: &NotebookValidationJob,
    attempt: Attempt,
    ctx: &Context,
    now: DateTime<Utc>,
) -> Result<Admission, Error> {
    let start = || Admission::Start {
        models: None,
        result: None,
    };
    let (Some(spec), Some(namespace)) = (
        job.spec.model_validation.as_ref(),
        job.metadata.namespace.as_deref(),
    ) else {
        return Ok(start());
    };
    let Ok(Some(settings)) = ModelSettings::resolve(spec, namespace) else {
        return Ok(start());
    };
    if ctx.pods.exists(job, attempt) {
        return Ok(start());
    }
    let access = &ctx.config.trigger_access;
    let mut accepts = HashMap::new();
    for asked in namespaces_to_ask(&settings, namespace, access) {
        let value = ctx
            .executor
            .namespace_opt_in(&asked)
            .await
            .map_err(|source| Error::Models {
                job: format!(
                    "{namespace}/{}",
                    job.metadata.name.as_deref().unwrap_or_default()
                ),
                source: Box::new(source),
            })?;
        accepts.insert(asked, value);
    }
    Ok(ctx
        .models
        .gate(job, &settings, access, &accepts, now)
        .await
        .into())
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

/// The phase event for a Pod that cannot be built or read: a spec nbv cannot build
/// fails the attempt; anything else is an API error the controller retries. (A Pod
/// the API server refuses to create is the core's to judge: [`pod_refused_at`].)
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
