//! The validation Pod of an attempt: running, succeeded, or failed (and retried).

use chrono::{DateTime, Utc};

use crate::api::{BuildPhase, CellResult, NotebookValidationJobStatus, Phase};
use crate::checks::Finding;

use super::record::{
    add, after_run_times, build_phase, current_attempt, enter, has_retrying, non_empty, set_ready,
    set_retrying,
};
use super::{
    ConditionStatus, ConditionType, Failure, FailureKind, Ignored, PodRef, Reason, RetryPolicy,
    ScheduledRetry, messages, truncate_message,
};

type Status = NotebookValidationJobStatus;

/// Whether a Pod event is about the current attempt and may apply in `phase`.
pub(super) fn admit_pod(s: &Status, phase: Phase, pod: &PodRef) -> Result<(), Ignored> {
    let current = current_attempt(s);
    if current != Some(pod.attempt) {
        return Err(Ignored::OtherAttempt {
            event: pod.attempt,
            current: current.unwrap_or(pod.attempt),
        });
    }
    match phase {
        Phase::Building => Err(Ignored::BuildNotComplete),
        Phase::Initializing
            if matches!(
                build_phase(s),
                Some(BuildPhase::Pending | BuildPhase::Running)
            ) =>
        {
            Err(Ignored::BuildNotComplete)
        }
        Phase::ValidationRunning => match s.validation_pod_name.as_deref() {
            Some(current) if current != pod.name => Err(Ignored::OtherPod {
                event: pod.name.clone(),
                current: current.to_owned(),
            }),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

pub(super) fn pod_running(s: &mut Status, phase: Phase, pod: &PodRef, now: DateTime<Utc>) {
    if phase == Phase::ValidationRunning && s.validation_pod_name.as_deref() == Some(&pod.name) {
        return;
    }
    s.validation_pod_name = Some(pod.name.clone());
    s.results = None;
    enter(
        s,
        Phase::ValidationRunning,
        messages::validating(&pod.name),
        now,
    );
}

pub(super) fn pod_succeeded(
    s: &mut Status,
    pod: &PodRef,
    results: &[CellResult],
    summary: Option<&str>,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) {
    let retries = s.retry_count.unwrap_or(0);
    s.validation_pod_name = Some(pod.name.clone());
    s.results = non_empty(results);
    s.phase = Some(Phase::Succeeded);
    s.completion_time = Some(after_run_times(s, now));
    s.message = Some(truncate_message(&messages::succeeded(retries, summary)).into_owned());
    set_ready(s, &Reason::VALIDATION_SUCCEEDED, now);
    if has_retrying(s) {
        let message = messages::retry_succeeded(retries, policy.max_retries());
        set_retrying(
            s,
            ConditionStatus::False,
            &Reason::RETRY_SUCCEEDED,
            &message,
            now,
        );
    }
}

/// Fails the run or schedules a retry; returns the retry scheduled.
pub(super) fn pod_failed(
    s: &mut Status,
    pod: &PodRef,
    failure: &Failure,
    results: &[CellResult],
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> Option<ScheduledRetry> {
    let retries = s.retry_count.unwrap_or(0);
    let max = policy.max_retries();
    s.validation_pod_name = Some(pod.name.clone());
    s.results = non_empty(results);
    let retries_left = u32::try_from(retries).is_ok_and(|r| r < max);
    match failure.kind {
        FailureKind::Transient if retries_left => {
            return Some(schedule_retry(s, failure, now, policy));
        }
        FailureKind::Transient if max == 0 => {
            fail(s, failure, messages::failed(failure), None, now)
        }
        FailureKind::Transient => {
            let retrying = (Reason::RETRIES_EXHAUSTED, messages::retry_gave_up(retries));
            let text = messages::retries_exhausted(retries, failure);
            fail(s, failure, text, Some(retrying), now);
        }
        FailureKind::Permanent => {
            let retrying = (
                Reason::PERMANENT_FAILURE,
                messages::retry_stopped(retries, max),
            );
            fail(s, failure, messages::failed(failure), Some(retrying), now);
        }
    }
    None
}

pub(super) fn schedule_retry(
    s: &mut Status,
    failure: &Failure,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> ScheduledRetry {
    let retry = s.retry_count.unwrap_or(0).saturating_add(1);
    let retry_number = u32::try_from(retry).unwrap_or(0);
    // Never before the run's earlier times, even when this replica's clock is behind
    // the one that recorded them.
    let scheduled = after_run_times(s, now);
    let at = add(scheduled, policy.backoff(retry_number));
    let message = messages::retry_scheduled(retry, policy.max_retries(), at, failure);
    s.retry_count = Some(retry);
    s.last_retry_time = Some(scheduled);
    s.phase = Some(Phase::Initializing);
    s.message = Some(truncate_message(&message).into_owned());
    set_retrying(
        s,
        ConditionStatus::True,
        &Reason::RETRY_SCHEDULED,
        &message,
        now,
    );
    set_ready(s, &Reason::of_phase(Phase::Initializing), now);
    ScheduledRetry {
        retry: retry_number,
        max_retries: policy.max_retries(),
        at,
        failure: failure.clone(),
    }
}

/// Ends the run in `Failed`. `retrying` is the reason and message with which a
/// `Retrying` condition, if the run has one, turns `False`.
pub(super) fn fail(
    s: &mut Status,
    failure: &Failure,
    message: String,
    retrying: Option<(Reason, String)>,
    now: DateTime<Utc>,
) {
    s.phase = Some(Phase::Failed);
    s.completion_time = Some(after_run_times(s, now));
    s.message = Some(truncate_message(&message).into_owned());
    set_ready(s, &failure.reason, now);
    if let Some((reason, message)) = retrying.filter(|_| has_retrying(s)) {
        set_retrying(s, ConditionStatus::False, &reason, &message, now);
    }
}

/// Records the check warnings of the attempt that ended: the `ValidationWarnings`
/// condition lists them; an attempt without warnings leaves no such condition (an
/// earlier attempt's warnings do not describe this one).
pub(super) fn record_warnings(s: &mut Status, warnings: &[Finding], now: DateTime<Utc>) {
    let generation = s.observed_generation;
    let conditions = s.conditions.get_or_insert_with(Vec::new);
    if warnings.is_empty() {
        super::remove_condition(conditions, &ConditionType::VALIDATION_WARNINGS);
        return;
    }
    let message = crate::checks::warnings_message(warnings);
    super::set_condition(
        conditions,
        &ConditionType::VALIDATION_WARNINGS,
        ConditionStatus::True,
        &Reason::CHECK_WARNINGS,
        &message,
        now,
        generation,
    );
}
