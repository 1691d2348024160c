//! Reading statuses that nbv did not write: legacy phases, and fields that are missing
//! or contradict each other (a status written by the upstream operator, an older nbv,
//! or by hand).
//!
//! The phase machine only ever writes consistent statuses, but it must accept any
//! status the API server stores: rejecting one would leave the job stuck forever.
//! [`normalize`] repairs a status into the nearest consistent one, and is a no-op on
//! every status [`step`](super::step) returns.

use chrono::{DateTime, Utc};

use crate::api::{BuildPhase, NotebookValidationJobStatus, Phase, UnknownPhase};

use super::conditions::dedupe_conditions;
use super::record::{default_message, ready_status, set_ready};
use super::{ConditionType, Reason, RetryPolicy, find_condition, truncate_message};

/// Reads a phase given as a string (from a `DynamicObject`, a label, a command-line
/// argument) and migrates legacy phases: `Pending` reads as `Initializing`, `Running`
/// as `ValidationRunning`.
///
/// # Errors
///
/// [`UnknownPhase`], naming the value and listing the phases that exist.
///
/// # Examples
///
/// ```
/// use nbv_core::api::Phase;
/// use nbv_core::phase::parse_phase;
///
/// assert_eq!(parse_phase("Running"), Ok(Phase::ValidationRunning));
/// assert_eq!(parse_phase("Succeeded"), Ok(Phase::Succeeded));
/// assert!(parse_phase("Done").unwrap_err().to_string().contains("\"Done\""));
/// ```
pub fn parse_phase(value: &str) -> Result<Phase, UnknownPhase> {
    value.parse::<Phase>().map(Phase::migrated)
}

/// Makes `status` consistent, in place. A status without a phase records no run and is
/// left alone.
///
/// - a legacy phase becomes its current equivalent;
/// - `retryCount` is set and clamped into `0..=max_retries` (a count recorded under a
///   larger policy counts as exhausted); without retries there is no `lastRetryTime`;
/// - the build agrees with the phase: a run that is past its build or has retried has
///   a complete build, and `Initializing` with a running build becomes `Building`;
/// - `startTime` is set (to the earliest time the status records, or `now`), and the
///   run's times are ordered: `startTime ≤ lastRetryTime ≤ completionTime`;
/// - `completionTime` is set exactly when the phase is terminal;
/// - `message` is set and bounded;
/// - conditions hold one per type, nbv's carry the run's generation, and `Ready`
///   agrees with the phase.
pub(super) fn normalize(
    status: &mut NotebookValidationJobStatus,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) {
    let Some(mut phase) = status.phase.map(Phase::migrated) else {
        return;
    };
    status.phase = Some(phase);

    let max = i32::try_from(policy.max_retries()).unwrap_or(i32::MAX);
    let retries = status.retry_count.unwrap_or(0).clamp(0, max);
    status.retry_count = Some(retries);
    if retries == 0 {
        status.last_retry_time = None;
    }

    // The build and the phase tell the same story: a run that has had a pod (it is
    // past `BuildComplete`, or it has retried) has its image; a build that runs
    // runs in `Building`.
    if let Some(build) = status.build_status.as_mut() {
        let underway = matches!(build.phase, Some(BuildPhase::Pending | BuildPhase::Running));
        let past_build =
            matches!(phase, Phase::BuildComplete | Phase::ValidationRunning) || retries > 0;
        if underway && past_build {
            build.phase = Some(BuildPhase::Complete);
        } else if phase == Phase::Initializing && build.phase == Some(BuildPhase::Running) {
            phase = Phase::Building;
            status.phase = Some(phase);
        }
    }

    let start = status.start_time.unwrap_or_else(|| {
        [status.last_retry_time, status.completion_time]
            .into_iter()
            .flatten()
            .fold(now, DateTime::min)
    });
    status.start_time = Some(start);
    status.last_retry_time = status.last_retry_time.map(|t| t.max(start));
    let floor = status.last_retry_time.unwrap_or(start);
    status.completion_time = phase
        .is_terminal()
        .then(|| status.completion_time.unwrap_or(now).max(floor));

    let message = match status.message.as_deref() {
        Some(message) if !message.trim().is_empty() => truncate_message(message).into_owned(),
        _ => default_message(phase, status),
    };
    status.message = Some(message);

    let generation = status.observed_generation;
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    dedupe_conditions(conditions);
    for condition in conditions.iter_mut() {
        let ours = condition.type_ == ConditionType::READY.as_str()
            || condition.type_ == ConditionType::RETRYING.as_str();
        if ours {
            condition.observed_generation = generation;
        }
    }
    let ready_agrees = find_condition(conditions, &ConditionType::READY)
        .is_some_and(|ready| ready.status == ready_status(phase).as_str());
    if !ready_agrees {
        let reason = match phase {
            Phase::Succeeded => Reason::VALIDATION_SUCCEEDED,
            Phase::Failed => Reason::VALIDATION_FAILED,
            other => Reason::of_phase(other),
        };
        set_ready(status, &reason, now);
    }
}
