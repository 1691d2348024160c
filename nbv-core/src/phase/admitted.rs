//! The `PodAdmitted` condition: whether the API server admitted the attempt's
//! validation Pod, and since when it refuses it.

use chrono::{DateTime, Utc};

use crate::api::{NotebookValidationJobStatus, Phase};

use super::record::{default_message, enter};
use super::{ConditionStatus, ConditionType, Reason, find_condition, messages, set_condition};

type Status = NotebookValidationJobStatus;

/// When the API server first refused the current attempt's Pod: the
/// `lastTransitionTime` of a `PodAdmitted` condition that is `False`. It survives
/// reconciles and restarts, being in the job's status.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::NotebookValidationJobStatus;
/// use nbv_core::phase::{first_refusal, record_refusal, Reason};
///
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let mut status = NotebookValidationJobStatus::default();
/// assert_eq!(first_refusal(&status), None);
/// record_refusal(&mut status, &Reason::new("QuotaExceeded")?, "ResourceQuota \"compute\" is used up", t0);
/// record_refusal(&mut status, &Reason::new("QuotaExceeded")?, "still", t0 + chrono::Duration::minutes(1));
/// assert_eq!(first_refusal(&status), Some(t0));
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
pub fn first_refusal(s: &Status) -> Option<DateTime<Utc>> {
    let condition = find_condition(s.conditions.as_deref()?, &ConditionType::POD_ADMITTED)?;
    (condition.status == ConditionStatus::False.as_str())
        .then(|| DateTime::from_timestamp(condition.last_transition_time.0.as_second(), 0))
        .flatten()
}

/// Records that the API server refused the attempt's Pod at `now`: `PodAdmitted`
/// becomes `False` with `reason` and `message` (its `lastTransitionTime` stays that of
/// the first refusal), and the status message (and `Ready`'s) of the run waiting for
/// its Pod says so. Returns whether this is news: the first refusal, or one of another
/// kind (another reason) than the refusal recorded.
pub fn record_refusal(s: &mut Status, reason: &Reason, message: &str, now: DateTime<Utc>) -> bool {
    let generation = s.observed_generation;
    let conditions = s.conditions.get_or_insert_with(Vec::new);
    let news = find_condition(conditions, &ConditionType::POD_ADMITTED)
        .is_none_or(|c| c.status != ConditionStatus::False.as_str() || c.reason != reason.as_str());
    set_condition(
        conditions,
        &ConditionType::POD_ADMITTED,
        ConditionStatus::False,
        reason,
        message,
        now,
        generation,
    );
    if let Some(phase) = waiting_for_pod(s) {
        let text = messages::waiting_for_admission(reason.as_str(), message);
        if s.message.as_deref() != Some(text.as_str()) {
            enter(s, phase, text, now);
        }
    }
    news
}

/// The phase of a run that waits for its Pod to be created, if it does.
fn waiting_for_pod(s: &Status) -> Option<Phase> {
    s.phase
        .map(Phase::migrated)
        .filter(|p| matches!(p, Phase::Initializing | Phase::BuildComplete))
}

/// Records that the attempt's Pod `pod` was created: a `PodAdmitted` condition turns
/// `True`. A job that carries none gets none (that a Pod was created says nothing the
/// phase does not); returns whether the status changed.
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_core::api::NotebookValidationJobStatus;
/// use nbv_core::phase::{record_admitted, record_refusal, Reason};
///
/// let mut status = NotebookValidationJobStatus::default();
/// assert!(!record_admitted(&mut status, "train-g1-r0", Utc::now()));
/// record_refusal(&mut status, &Reason::new("QuotaExceeded")?, "used up", Utc::now());
/// assert!(record_admitted(&mut status, "train-g1-r0", Utc::now()));
/// assert_eq!(status.conditions.unwrap()[0].status, "True");
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
pub fn record_admitted(s: &mut Status, pod: &str, now: DateTime<Utc>) -> bool {
    let generation = s.observed_generation;
    let Some(conditions) = s.conditions.as_mut() else {
        return false;
    };
    if find_condition(conditions, &ConditionType::POD_ADMITTED).is_none() {
        return false;
    }
    let changed = set_condition(
        conditions,
        &ConditionType::POD_ADMITTED,
        ConditionStatus::True,
        &Reason::POD_CREATED,
        &format!("The validation pod {pod} was created"),
        now,
        generation,
    );
    // The run no longer waits for admission: its message is the phase's again.
    let waited = s
        .message
        .as_deref()
        .is_some_and(|m| m.starts_with(messages::WAITING_FOR_ADMISSION));
    if let Some(phase) = waiting_for_pod(s).filter(|_| waited) {
        let text = default_message(phase, s);
        enter(s, phase, text, now);
    }
    changed
}
