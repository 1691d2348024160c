//! The validation Pod of an attempt: running, succeeded, or failed (and retried).

use chrono::{DateTime, Utc};

use crate::api::{CellResult, NotebookValidationJobStatus, Phase};
use crate::checks::Finding;

use super::record::{add, enter, has_retrying, non_empty, set_ready, set_retrying};
use super::{
    ConditionStatus, ConditionType, Failure, FailureKind, Ignored, PodRef, Reason, RetryPolicy,
    Run, RunState, ScheduledRetry, messages, truncate_message,
};

type Status = NotebookValidationJobStatus;

/// Whether a Pod event is about the current attempt of `run` and may apply in `state`.
pub(super) fn admit_pod(state: &RunState, run: &Run, pod: &PodRef) -> Result<(), Ignored> {
    let current = run.attempt();
    if current != Some(pod.attempt) {
        return Err(Ignored::OtherAttempt {
            event: pod.attempt,
            current: current.unwrap_or(pod.attempt),
        });
    }
    match state {
        RunState::Building(_) => Err(Ignored::BuildNotComplete),
        RunState::Initializing(run) if run.build.stage.is_underway() => {
            Err(Ignored::BuildNotComplete)
        }
        RunState::ValidationRunning(run) => match run.pod.as_deref() {
            Some(current) if current != pod.name => Err(Ignored::OtherPod {
                event: pod.name.clone(),
                current: current.to_owned(),
            }),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// The attempt's Pod runs: the run enters `ValidationRunning`.
pub(super) fn pod_running(
    state: &RunState,
    run: &Run,
    s: &mut Status,
    pod: &PodRef,
    now: DateTime<Utc>,
) -> RunState {
    if matches!(state, RunState::ValidationRunning(_)) && run.pod.as_deref() == Some(&pod.name) {
        return state.clone();
    }
    let next = RunState::ValidationRunning(with_pod(run, pod));
    next.write(s);
    s.results = None;
    enter(
        s,
        Phase::ValidationRunning,
        messages::validating(&pod.name),
        now,
    );
    next
}

/// The attempt's Pod validated the notebook: the run succeeds.
pub(super) fn pod_succeeded(
    run: &Run,
    s: &mut Status,
    pod: &PodRef,
    results: &[CellResult],
    summary: Option<&str>,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> RunState {
    let retries = run.retry_count();
    let next = RunState::Succeeded {
        run: with_pod(run, pod),
        completed_at: run.not_before(now),
    };
    next.write(s);
    s.results = non_empty(results);
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
    next
}

/// Fails the run or schedules a retry; returns the new state and the retry scheduled.
pub(super) fn pod_failed(
    run: &Run,
    s: &mut Status,
    pod: &PodRef,
    failure: &Failure,
    results: &[CellResult],
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> (RunState, Option<ScheduledRetry>) {
    let retries = run.retry_count();
    let max = policy.max_retries();
    let run = &with_pod(run, pod);
    s.results = non_empty(results);
    let retries_left = run.retries < max;
    let next = match failure.kind {
        FailureKind::Transient if retries_left => {
            let (next, retry) = schedule_retry(run, s, failure, now, policy);
            return (next, Some(retry));
        }
        FailureKind::Transient if max == 0 => {
            fail(run, s, failure, messages::failed(failure), None, now)
        }
        FailureKind::Transient => {
            let retrying = (Reason::RETRIES_EXHAUSTED, messages::retry_gave_up(retries));
            let text = messages::retries_exhausted(retries, failure);
            fail(run, s, failure, text, Some(retrying), now)
        }
        FailureKind::Permanent => {
            let retrying = (
                Reason::PERMANENT_FAILURE,
                messages::retry_stopped(retries, max),
            );
            fail(
                run,
                s,
                failure,
                messages::failed(failure),
                Some(retrying),
                now,
            )
        }
    };
    (next, None)
}

/// Schedules the next retry of `run` (which has retries left): the run waits in
/// `Initializing` until the backoff has elapsed.
fn schedule_retry(
    run: &Run,
    s: &mut Status,
    failure: &Failure,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> (RunState, ScheduledRetry) {
    let retry_number = run.retries.saturating_add(1);
    // Never before the run's earlier times, even when this replica's clock is behind
    // the one that recorded them.
    let scheduled = run.not_before(now);
    let at = add(scheduled, policy.backoff(retry_number));
    let next = RunState::Initializing(Run {
        retries: retry_number,
        last_retry_at: Some(scheduled),
        ..run.clone()
    });
    next.write(s);
    let retry = next.run().map_or(0, Run::retry_count);
    let message = messages::retry_scheduled(retry, policy.max_retries(), at, failure);
    s.message = Some(truncate_message(&message).into_owned());
    set_retrying(
        s,
        ConditionStatus::True,
        &Reason::RETRY_SCHEDULED,
        &message,
        now,
    );
    set_ready(s, &Reason::of_phase(Phase::Initializing), now);
    let scheduled = ScheduledRetry {
        retry: retry_number,
        max_retries: policy.max_retries(),
        at,
        failure: failure.clone(),
    };
    (next, scheduled)
}

/// Ends `run` in `Failed`. `retrying` is the reason and message with which a
/// `Retrying` condition, if the run has one, turns `False`.
pub(super) fn fail(
    run: &Run,
    s: &mut Status,
    failure: &Failure,
    message: String,
    retrying: Option<(Reason, String)>,
    now: DateTime<Utc>,
) -> RunState {
    let next = RunState::Failed {
        run: run.clone(),
        completed_at: run.not_before(now),
    };
    next.write(s);
    s.message = Some(truncate_message(&message).into_owned());
    set_ready(s, &failure.reason, now);
    if let Some((reason, message)) = retrying.filter(|_| has_retrying(s)) {
        set_retrying(s, ConditionStatus::False, &reason, &message, now);
    }
    next
}

/// `run` with `pod` as the attempt's Pod.
fn with_pod(run: &Run, pod: &PodRef) -> Run {
    Run {
        pod: Some(pod.name.clone()),
        ..run.clone()
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
