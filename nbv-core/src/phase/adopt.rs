//! Reading statuses that nbv did not write: legacy phases, and fields that are missing
//! or contradict each other (a status written by the upstream operator, an older nbv,
//! or by hand).
//!
//! The phase machine only ever writes consistent statuses, but it must accept any
//! status the API server stores: rejecting one would leave the job stuck forever.
//! [`normalize`] repairs a status into the nearest consistent one, and is a no-op on
//! every status [`step`](super::step) returns: the run's fields by reading them as a
//! [`RunState`] and writing it back, the message and conditions around them here.

use chrono::{DateTime, Utc};

use crate::api::{NotebookValidationJobStatus, Phase, UnknownPhase};

#[cfg(test)]
use super::RetryPolicy;
use super::conditions::dedupe_conditions;
use super::record::{
    default_message, ready_status, run_conditions, run_conditions_agree, set_ready,
};
use super::{ConditionType, Reason, RunState, find_condition, truncate_message};

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
/// The run's fields are repaired by reading them ([`RunState::read`]: legacy phases,
/// retry count, build against phase, times and their order) and writing them back;
/// then the record that goes with them:
///
/// - `message` is set and bounded;
/// - conditions hold one per type, nbv's carry the run's generation, and `Ready`
///   agrees with the phase.
#[cfg(test)]
pub(super) fn normalize(
    status: &mut NotebookValidationJobStatus,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) {
    let state = RunState::read(status, now, policy);
    settle(status, &state, now);
}

/// Writes `state` (read from `status`, or from it with a newer generation) into
/// `status` and repairs the record around it: what [`normalize`] does once the state
/// is read.
pub(super) fn settle(
    status: &mut NotebookValidationJobStatus,
    state: &RunState,
    now: DateTime<Utc>,
) {
    let Some(phase) = state.phase() else {
        return;
    };
    state.write(status);

    let message = match status.message.as_deref() {
        Some(message) if !message.trim().is_empty() => truncate_message(message).into_owned(),
        _ => default_message(phase, status),
    };
    status.message = Some(message);

    let generation = status.observed_generation;
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    dedupe_conditions(conditions);
    for condition in conditions.iter_mut() {
        let ours = run_conditions(phase)
            .iter()
            .map(|(type_, _)| type_)
            .chain([&ConditionType::RETRYING])
            .any(|type_| condition.type_ == type_.as_str());
        if ours {
            condition.observed_generation = generation;
        }
    }
    if !run_conditions_agree(conditions, phase) {
        // A `Ready` that agrees keeps its reason (a status written before `Reconciling`
        // and `Stalled` existed gets them with it).
        let reason = find_condition(conditions, &ConditionType::READY)
            .filter(|ready| ready.status == ready_status(phase).as_str())
            .and_then(|ready| Reason::new(&ready.reason).ok())
            .unwrap_or(match phase {
                Phase::Succeeded => Reason::VALIDATION_SUCCEEDED,
                Phase::Failed => Reason::VALIDATION_FAILED,
                other => Reason::of_phase(other),
            });
        set_ready(status, &reason, now);
    }
}
