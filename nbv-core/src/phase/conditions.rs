//! Standard Kubernetes conditions (`status.conditions`): their status, bounded
//! messages, and [`set_condition`] with the usual `lastTransitionTime` rule.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use super::{ConditionType, Reason};

/// Largest condition or status message nbv writes, in bytes.
///
/// The CRD limits `conditions[].message` to 32768 characters; a byte bound is never
/// looser than that, whatever the message's script.
pub const MAX_CONDITION_MESSAGE_BYTES: usize = 32 * 1024;

/// Appended to a message that [`truncate_message`] shortened.
pub const TRUNCATION_MARKER: &str = "… [truncated]";

/// A condition to set on the job, as [`set_condition`] takes it.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::phase::{set_condition, ConditionStatus, ConditionType, ConditionUpdate, Reason};
///
/// let update = ConditionUpdate {
///     type_: ConditionType::READY,
///     status: ConditionStatus::False,
///     reason: Reason::VALIDATION_FAILED,
///     message: "cell 4 raised KeyError".to_owned(),
/// };
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let mut conditions = Vec::new();
/// let ConditionUpdate { type_, status, reason, message } = &update;
/// assert!(set_condition(&mut conditions, type_, *status, reason, message, now, None));
/// assert_eq!(conditions[0].reason, "ValidationFailed");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionUpdate {
    /// Condition type.
    pub type_: ConditionType,
    /// Condition status.
    pub status: ConditionStatus,
    /// Machine-readable reason.
    pub reason: Reason,
    /// Human-readable message.
    pub message: String,
}

/// `message` cut to at most [`MAX_CONDITION_MESSAGE_BYTES`] bytes, on a character boundary,
/// ending with [`TRUNCATION_MARKER`] when something was cut.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{truncate_message, MAX_CONDITION_MESSAGE_BYTES, TRUNCATION_MARKER};
///
/// assert_eq!(truncate_message("cell 3 failed"), "cell 3 failed");
/// let long = "é".repeat(MAX_CONDITION_MESSAGE_BYTES);
/// let cut = truncate_message(&long);
/// assert!(cut.len() <= MAX_CONDITION_MESSAGE_BYTES);
/// assert!(cut.ends_with(TRUNCATION_MARKER));
/// ```
pub fn truncate_message(message: &str) -> Cow<'_, str> {
    crate::text::truncate(message, MAX_CONDITION_MESSAGE_BYTES, TRUNCATION_MARKER)
}

/// The status of a condition: `True`, `False` or `Unknown`.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::ConditionStatus;
///
/// assert_eq!(ConditionStatus::Unknown.as_str(), "Unknown");
/// assert_eq!("False".parse::<ConditionStatus>(), Ok(ConditionStatus::False));
/// assert!("false".parse::<ConditionStatus>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Not known yet.
    Unknown,
}

impl ConditionStatus {
    /// The value written in `status` (case-sensitive, as the CRD's enum requires).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::ConditionStatus;
    ///
    /// assert_eq!(ConditionStatus::True.as_str(), "True");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for ConditionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A condition `status` other than `True`, `False` or `Unknown`.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::ConditionStatus;
///
/// let err = "true".parse::<ConditionStatus>().unwrap_err();
/// assert_eq!(err.to_string(),
///     "condition status \"true\" is not one of True, False, Unknown (case-sensitive)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("condition status {0:?} is not one of True, False, Unknown (case-sensitive)")]
pub struct InvalidConditionStatus(pub String);

impl FromStr for ConditionStatus {
    type Err = InvalidConditionStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "True" => Ok(ConditionStatus::True),
            "False" => Ok(ConditionStatus::False),
            "Unknown" => Ok(ConditionStatus::Unknown),
            other => Err(InvalidConditionStatus(other.to_owned())),
        }
    }
}

/// The condition of type `type_`, if present (the first one, as Kubernetes' own
/// `meta.FindStatusCondition` does).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::phase::{find_condition, set_condition, ConditionStatus, ConditionType, Reason};
///
/// let mut conditions = Vec::new();
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// set_condition(&mut conditions, &ConditionType::READY, ConditionStatus::True,
///     &Reason::VALIDATION_SUCCEEDED, "ok", now, Some(1));
/// assert_eq!(find_condition(&conditions, &ConditionType::READY).unwrap().status, "True");
/// assert!(find_condition(&conditions, &ConditionType::RETRYING).is_none());
/// ```
pub fn find_condition<'a>(
    conditions: &'a [Condition],
    type_: &ConditionType,
) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_.as_str())
}

/// Sets the condition of type `type_`, adding it if absent, and reports whether
/// `conditions` changed.
///
/// Standard Kubernetes semantics (`meta.SetStatusCondition`): `lastTransitionTime`
/// becomes `now` only when the condition is added or its `status` changes; a new
/// reason or message alone keeps it. The message is cut by [`truncate_message`]. Any
/// further condition of the same type (a list should hold one per type) is removed.
///
/// # Examples
///
/// ```
/// use chrono::{Duration, TimeZone, Utc};
/// use nbv_core::phase::{set_condition, ConditionStatus, ConditionType, Reason};
///
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let failed = Reason::new("TriggersFailed")?;
/// let type_ = nbv_core::phase::ConditionType::new("TriggersFailed")?;
/// let mut conditions = Vec::new();
/// assert!(set_condition(&mut conditions, &type_, ConditionStatus::True, &failed, "1 of 2 failed", t0, Some(2)));
/// let first = conditions[0].last_transition_time.clone();
///
/// // Same status, new message: the transition time stays.
/// let t1 = t0 + Duration::minutes(5);
/// assert!(set_condition(&mut conditions, &type_, ConditionStatus::True, &failed, "2 of 2 failed", t1, Some(2)));
/// assert_eq!(conditions[0].last_transition_time, first);
/// assert_eq!(conditions[0].message, "2 of 2 failed");
///
/// // Nothing new: nothing changes.
/// assert!(!set_condition(&mut conditions, &type_, ConditionStatus::True, &failed, "2 of 2 failed", t1, Some(2)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    type_: &ConditionType,
    status: ConditionStatus,
    reason: &Reason,
    message: &str,
    now: DateTime<Utc>,
    observed_generation: Option<i64>,
) -> bool {
    let mut changed = drop_duplicates(conditions, type_.as_str());
    let message = truncate_message(message);
    match conditions.iter_mut().find(|c| c.type_ == type_.as_str()) {
        Some(existing) => {
            if existing.status != status.as_str() {
                existing.status = status.as_str().to_owned();
                existing.last_transition_time = condition_time(now);
                changed = true;
            }
            changed |= replace(&mut existing.reason, reason.as_str());
            changed |= replace(&mut existing.message, &message);
            if existing.observed_generation != observed_generation {
                existing.observed_generation = observed_generation;
                changed = true;
            }
        }
        None => {
            conditions.push(Condition {
                last_transition_time: condition_time(now),
                message: message.into_owned(),
                observed_generation,
                reason: reason.as_str().to_owned(),
                status: status.as_str().to_owned(),
                type_: type_.as_str().to_owned(),
            });
            changed = true;
        }
    }
    changed
}

/// Removes every condition of type `type_`; reports whether there was one.
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_core::phase::{remove_condition, set_condition, ConditionStatus, ConditionType, Reason};
///
/// let mut conditions = Vec::new();
/// set_condition(&mut conditions, &ConditionType::RETRYING, ConditionStatus::True,
///     &Reason::RETRY_SCHEDULED, "retry 1/3", Utc::now(), Some(1));
/// assert!(remove_condition(&mut conditions, &ConditionType::RETRYING));
/// assert!(conditions.is_empty());
/// assert!(!remove_condition(&mut conditions, &ConditionType::RETRYING));
/// ```
pub fn remove_condition(conditions: &mut Vec<Condition>, type_: &ConditionType) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_.as_str());
    conditions.len() != before
}

/// Keeps only the first condition of each type; reports whether any was removed.
pub(crate) fn dedupe_conditions(conditions: &mut Vec<Condition>) -> bool {
    let before = conditions.len();
    let mut seen = std::collections::HashSet::new();
    conditions.retain(|c| seen.insert(c.type_.clone()));
    conditions.len() != before
}

/// Keeps only the first condition of type `type_`; reports whether any was removed.
fn drop_duplicates(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    let mut seen = false;
    conditions.retain(|c| c.type_ != type_ || !std::mem::replace(&mut seen, true));
    conditions.len() != before
}

fn replace(field: &mut String, value: &str) -> bool {
    if field == value {
        return false;
    }
    value.clone_into(field);
    true
}

/// `time` as a condition's `lastTransitionTime`.
///
/// The wire format has whole seconds (`%Y-%m-%dT%H:%M:%SZ`), so the fraction is dropped
/// here: a status read back from the API server then equals the one computed, and a
/// comparison of the two finds no spurious change. Times outside the wire format's range
/// (years before -9999 or after 9999) are clamped to its ends.
fn condition_time(time: DateTime<Utc>) -> Time {
    let seconds = time.timestamp();
    let clamped = Timestamp::from_second(seconds).unwrap_or(if seconds < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    });
    Time(clamped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condition_time_drops_the_fraction_and_clamps() {
        let t = DateTime::from_timestamp(1_700_000_000, 999_999_999).unwrap();
        assert_eq!(condition_time(t).0.as_second(), 1_700_000_000);
        assert_eq!(condition_time(t).0.subsec_nanosecond(), 0);
        assert_eq!(condition_time(DateTime::<Utc>::MAX_UTC).0, Timestamp::MAX);
        assert_eq!(condition_time(DateTime::<Utc>::MIN_UTC).0, Timestamp::MIN);
    }

    #[test]
    fn truncation_keeps_short_messages_and_cuts_on_a_char_boundary() {
        assert!(matches!(truncate_message("x"), Cow::Borrowed("x")));
        let exact = "x".repeat(MAX_CONDITION_MESSAGE_BYTES);
        assert_eq!(truncate_message(&exact), exact);
        let long = format!(
            "{}{}",
            "x".repeat(MAX_CONDITION_MESSAGE_BYTES - TRUNCATION_MARKER.len() - 1),
            "€".repeat(10)
        );
        let cut = truncate_message(&long);
        assert!(cut.len() <= MAX_CONDITION_MESSAGE_BYTES);
        assert!(cut.ends_with(TRUNCATION_MARKER));
        assert!(!cut.contains('€'));
    }
}
