//! Reading and writing a run's record in the status: the current attempt, when a
//! retry is due, the run's conditions (`Ready`, `Reconciling`, `Stalled`) and message.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::api::{BuildPhase, CellResult, NotebookValidationJobStatus, Phase};

use super::{
    Attempt, ConditionStatus, ConditionType, Ignored, Reason, RetryPolicy, find_condition,
    messages, set_condition, truncate_message,
};

type Status = NotebookValidationJobStatus;

/// Moves to a non-terminal `phase` with `message`.
pub(super) fn enter(s: &mut Status, phase: Phase, message: String, now: DateTime<Utc>) {
    s.phase = Some(phase);
    s.message = Some(truncate_message(&message).into_owned());
    set_ready(s, &Reason::of_phase(phase), now);
}

/// The attempt the run is at: its generation, its reruns and the retries made so far.
pub(super) fn current_attempt(s: &Status) -> Option<Attempt> {
    Some(Attempt {
        generation: s.observed_generation?,
        rerun: s.rerun.as_ref().map_or(0, |r| r.count),
        retry: u32::try_from(s.retry_count.unwrap_or(0)).unwrap_or(0),
    })
}

/// When the scheduled retry may start: while the job waits in `Initializing` after a
/// retry was scheduled, `lastRetryTime + backoff(retryCount)`.
pub(super) fn retry_due(s: &Status, policy: &RetryPolicy) -> Option<DateTime<Utc>> {
    if s.phase != Some(Phase::Initializing) {
        return None;
    }
    let retry = u32::try_from(s.retry_count?).ok().filter(|r| *r > 0)?;
    Some(add(s.last_retry_time?, policy.backoff(retry)))
}

/// `time + duration`, saturating at the latest representable time.
pub(super) fn add(time: DateTime<Utc>, duration: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(duration)
        .ok()
        .and_then(|delta| time.checked_add_signed(delta))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

pub(super) fn build_phase(s: &Status) -> Option<BuildPhase> {
    s.build_status.as_ref().and_then(|b| b.phase)
}

pub(super) fn non_empty(results: &[CellResult]) -> Option<Vec<CellResult>> {
    (!results.is_empty()).then(|| results.to_vec())
}

pub(super) fn out_of_phase(event: &'static str, phase: Phase) -> Ignored {
    Ignored::OutOfPhase { event, phase }
}

pub(super) fn has_retrying(s: &Status) -> bool {
    s.conditions
        .as_deref()
        .is_some_and(|c| find_condition(c, &ConditionType::RETRYING).is_some())
}

/// `Ready`'s status for a phase: `True` when succeeded, `False` when failed,
/// `Unknown` while the run is in progress.
pub(super) fn ready_status(phase: Phase) -> ConditionStatus {
    match phase.migrated() {
        Phase::Succeeded => ConditionStatus::True,
        Phase::Failed => ConditionStatus::False,
        _ => ConditionStatus::Unknown,
    }
}

/// The conditions that say where the run stands, and their status in `phase`: `Ready`,
/// and kstatus's `Reconciling` and `Stalled`, so that `kubectl wait` and kstatus-based
/// tools (Flux, kpt, cli-utils) tell a run in progress from a failed one.
pub(super) fn run_conditions(phase: Phase) -> [(ConditionType, ConditionStatus); 3] {
    let phase = phase.migrated();
    let ended = phase.is_terminal();
    [
        (ConditionType::READY, ready_status(phase)),
        (ConditionType::RECONCILING, holds(!ended)),
        (ConditionType::STALLED, holds(phase == Phase::Failed)),
    ]
}

fn holds(holds: bool) -> ConditionStatus {
    if holds {
        ConditionStatus::True
    } else {
        ConditionStatus::False
    }
}

/// Whether `conditions` hold the run conditions of `phase`, each with its status.
pub(super) fn run_conditions_agree(conditions: &[Condition], phase: Phase) -> bool {
    run_conditions(phase).iter().all(|(type_, status)| {
        find_condition(conditions, type_).is_some_and(|c| c.status == status.as_str())
    })
}

/// Sets the run conditions from the phase, with `reason` and the status message.
pub(super) fn set_ready(s: &mut Status, reason: &Reason, now: DateTime<Utc>) {
    let phase = s.phase.unwrap_or(Phase::Initializing);
    let message = s.message.clone().unwrap_or_default();
    let generation = s.observed_generation;
    let conditions = s.conditions.get_or_insert_with(Vec::new);
    for (type_, status) in run_conditions(phase) {
        set_condition(
            conditions, &type_, status, reason, &message, now, generation,
        );
    }
}

pub(super) fn set_retrying(
    s: &mut Status,
    status: ConditionStatus,
    reason: &Reason,
    message: &str,
    now: DateTime<Utc>,
) {
    let generation = s.observed_generation;
    let conditions = s.conditions.get_or_insert_with(Vec::new);
    set_condition(
        conditions,
        &ConditionType::RETRYING,
        status,
        reason,
        message,
        now,
        generation,
    );
}

/// The message of a phase when the status has none.
pub(super) fn default_message(phase: Phase, s: &Status) -> String {
    match phase {
        Phase::Building => messages::building(
            s.build_status
                .as_ref()
                .and_then(|b| b.build_name.as_deref())
                .unwrap_or("unnamed"),
        ),
        Phase::BuildComplete => messages::built(
            s.build_status
                .as_ref()
                .and_then(|b| b.image_reference.as_deref())
                .unwrap_or("image unknown"),
        ),
        Phase::ValidationRunning => {
            messages::validating(s.validation_pod_name.as_deref().unwrap_or("unknown"))
        }
        Phase::Succeeded => messages::SUCCEEDED.to_owned(),
        Phase::Failed => messages::FAILED.to_owned(),
        _ if build_phase(s) == Some(BuildPhase::Pending) => messages::WAITING_FOR_BUILD.to_owned(),
        _ => messages::WAITING_FOR_POD.to_owned(),
    }
}
