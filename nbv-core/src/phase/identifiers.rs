//! Condition reasons and types, checked against the CRD's patterns when they are
//! built: a status write with one bad condition is rejected as a whole, so a bad value
//! must be impossible to write rather than discovered as a failed write.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// Longest `reason` the CRD accepts.
const MAX_REASON_BYTES: usize = 1024;
/// Longest `type` the CRD accepts.
const MAX_TYPE_BYTES: usize = 316;

/// A condition `reason`: CamelCase, matching the CRD pattern
/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, at most 1024 bytes.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::Reason;
///
/// let reason = Reason::new("ImagePullBackOff")?;
/// assert_eq!(reason.as_str(), "ImagePullBackOff");
/// assert_eq!(Reason::RETRY_SCHEDULED.as_str(), "RetryScheduled");
/// assert!(Reason::new("image pull failed").is_err());
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reason(Cow<'static, str>);

impl Reason {
    /// `Ready` is `True`: the notebook validated.
    pub const VALIDATION_SUCCEEDED: Reason = Reason::known("ValidationSucceeded");
    /// `Ready` is `False` and no more specific reason is known.
    pub const VALIDATION_FAILED: Reason = Reason::known("ValidationFailed");
    /// A build failed and the shell gave no more specific reason.
    pub const BUILD_FAILED: Reason = Reason::known("BuildFailed");
    /// The job asks for an image build, which nbv does not carry out: no build was
    /// attempted.
    pub const BUILD_NOT_SUPPORTED: Reason = Reason::known("BuildNotSupported");
    /// `Retrying` is `True`: a retry waits for its backoff to elapse.
    pub const RETRY_SCHEDULED: Reason = Reason::known("RetryScheduled");
    /// `Retrying` is `True`: the backoff elapsed and the retry attempt runs.
    pub const RETRY_STARTED: Reason = Reason::known("RetryStarted");
    /// `Retrying` is `False`: a retry attempt succeeded.
    pub const RETRY_SUCCEEDED: Reason = Reason::known("RetrySucceeded");
    /// `Retrying` is `False`: every retry was used and the last attempt failed too.
    pub const RETRIES_EXHAUSTED: Reason = Reason::known("RetriesExhausted");
    /// `Retrying` is `False`: a retry attempt failed in a way no retry can fix.
    pub const PERMANENT_FAILURE: Reason = Reason::known("PermanentFailure");
    /// `AnnotationsValid` is `True`: every nbv annotation of the job is well-formed.
    pub const ANNOTATIONS_VALID: Reason = Reason::known("AnnotationsValid");
    /// `AnnotationsValid` is `False`: an annotation is malformed and ignored.
    pub const INVALID_ANNOTATION: Reason = Reason::known("InvalidAnnotation");
    /// `AnnotationsValid` is `True` with warnings (for example unknown fields).
    pub const ANNOTATION_WARNINGS: Reason = Reason::known("AnnotationWarnings");
    /// `EffectsApplied` is `True`: every effect of the run took effect.
    pub const EFFECTS_APPLIED: Reason = Reason::known("EffectsApplied");
    /// `EffectsApplied` is `Unknown`: effects are still being carried out or retried.
    pub const EFFECTS_PENDING: Reason = Reason::known("EffectsPending");
    /// `EffectsApplied` is `False`: nbv gave up on at least one effect.
    pub const EFFECT_ABANDONED: Reason = Reason::known("EffectAbandoned");

    /// A reason, checked against the CRD pattern.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::Reason;
    ///
    /// assert!(Reason::new("OOMKilled").is_ok());
    /// assert_eq!(Reason::new("").unwrap_err().problem, "it is empty");
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidReason`] when `value` is empty, longer than 1024 bytes, or does not
    /// match the pattern.
    pub fn new(value: impl Into<String>) -> Result<Self, InvalidReason> {
        let value = value.into();
        match reason_problem(value.as_bytes()) {
            None => Ok(Reason(Cow::Owned(value))),
            Some(problem) => Err(InvalidReason { value, problem }),
        }
    }

    /// A reason known at compile time; an invalid one does not compile, because this is
    /// only ever evaluated in `const` items.
    const fn known(value: &'static str) -> Self {
        assert!(
            reason_problem(value.as_bytes()).is_none(),
            "invalid built-in reason"
        );
        Reason(Cow::Borrowed(value))
    }

    /// The reason of a [`Phase`](crate::api::Phase), its name (phase names are valid
    /// reasons).
    pub(crate) const fn of_phase(phase: crate::api::Phase) -> Self {
        Reason(Cow::Borrowed(phase.as_str()))
    }

    /// The reason as written in the condition.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::Reason;
    ///
    /// assert_eq!(Reason::RETRIES_EXHAUSTED.as_str(), "RetriesExhausted");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for Reason {
    type Err = InvalidReason;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Reason::new(s)
    }
}

/// A condition `reason` the CRD would reject.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::Reason;
///
/// let err = Reason::new("9Lives").unwrap_err();
/// assert_eq!(err.value, "9Lives");
/// assert_eq!(err.problem, "it must start with a letter");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid condition reason {value:?}: {problem}; use CamelCase letters and digits \
     (pattern ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, at most 1024 bytes), e.g. \"ImagePullBackOff\""
)]
pub struct InvalidReason {
    /// The rejected value.
    pub value: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// Why `reason` breaks the CRD's rules, or `None` when it is valid.
const fn reason_problem(reason: &[u8]) -> Option<&'static str> {
    if reason.is_empty() {
        return Some("it is empty");
    }
    if reason.len() > MAX_REASON_BYTES {
        return Some("it is longer than 1024 bytes");
    }
    if !reason[0].is_ascii_alphabetic() {
        return Some("it must start with a letter");
    }
    let last = reason.len() - 1;
    let mut i = 1;
    while i < reason.len() {
        let c = reason[i];
        let word = c.is_ascii_alphanumeric() || c == b'_';
        if !(word || (i < last && (c == b',' || c == b':'))) {
            return Some(if i == last && (c == b',' || c == b':') {
                "it must end with a letter, digit or '_'"
            } else {
                "it may only contain letters, digits, '_', ',' and ':'"
            });
        }
        i += 1;
    }
    None
}

/// A condition `type`: `CamelCase` or `example.com/CamelCase`, matching the CRD pattern,
/// at most 316 bytes.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::ConditionType;
///
/// assert_eq!(ConditionType::READY.as_str(), "Ready");
/// assert!(ConditionType::new("mlops.dev/TriggersFailed").is_ok());
/// assert!(ConditionType::new("Triggers Failed").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConditionType(Cow<'static, str>);

impl ConditionType {
    /// `True` when the run succeeded, `False` when it failed, `Unknown` while it runs.
    pub const READY: ConditionType = ConditionType::known("Ready");
    /// Present once a run has scheduled a retry: `True` while a retry waits or runs,
    /// `False` once the run has ended.
    pub const RETRYING: ConditionType = ConditionType::known("Retrying");
    /// Whether nbv's annotations on the job (`on-success-trigger`, `sync-wave`,
    /// `block-wave`) are well-formed; the message names the annotation and the field.
    pub const ANNOTATIONS_VALID: ConditionType = ConditionType::known("AnnotationsValid");
    /// Whether the GitOps effects of the run (wave annotations, triggers, the
    /// notification) took effect; the message names any that nbv gave up on.
    pub const EFFECTS_APPLIED: ConditionType = ConditionType::known("EffectsApplied");

    /// A condition type, checked against the CRD pattern.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::ConditionType;
    ///
    /// assert!(ConditionType::new("InvalidAnnotation").is_ok());
    /// assert!(ConditionType::new("mlops.dev/").is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidConditionType`] when `value` is longer than 316 bytes or does not match
    /// `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`.
    pub fn new(value: impl Into<String>) -> Result<Self, InvalidConditionType> {
        let value = value.into();
        match type_problem(value.as_bytes()) {
            None => Ok(ConditionType(Cow::Owned(value))),
            Some(problem) => Err(InvalidConditionType { value, problem }),
        }
    }

    /// A type known at compile time (see [`Reason::known`]).
    const fn known(value: &'static str) -> Self {
        assert!(
            type_problem(value.as_bytes()).is_none(),
            "invalid built-in condition type"
        );
        ConditionType(Cow::Borrowed(value))
    }

    /// The type as written in the condition.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::ConditionType;
    ///
    /// assert_eq!(ConditionType::RETRYING.as_str(), "Retrying");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConditionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ConditionType {
    type Err = InvalidConditionType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ConditionType::new(s)
    }
}

/// A condition `type` the CRD would reject.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::ConditionType;
///
/// let err = ConditionType::new("Triggers Failed").unwrap_err();
/// assert_eq!(err.problem, "the name may only contain letters, digits, '-', '_' and '.'");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid condition type {value:?}: {problem}; use CamelCase, optionally prefixed by a \
     DNS subdomain and '/', e.g. \"Ready\" or \"mlops.dev/TriggersFailed\" (at most 316 bytes)"
)]
pub struct InvalidConditionType {
    /// The rejected value.
    pub value: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// Why `type_` breaks the CRD's rules, or `None` when it is valid.
const fn type_problem(type_: &[u8]) -> Option<&'static str> {
    if type_.len() > MAX_TYPE_BYTES {
        return Some("it is longer than 316 bytes");
    }
    // The prefix ends at the first '/'; the name after it may not contain another.
    let mut slash = 0;
    let mut has_prefix = false;
    while slash < type_.len() {
        if type_[slash] == b'/' {
            has_prefix = true;
            break;
        }
        slash += 1;
    }
    let name_start = if has_prefix { slash + 1 } else { 0 };
    if has_prefix && !is_dns_subdomain(type_, 0, slash) {
        return Some("the part before '/' must be a lowercase DNS subdomain such as example.com");
    }
    if name_start == type_.len() {
        return Some("the name is empty");
    }
    let last = type_.len() - 1;
    if !type_[name_start].is_ascii_alphanumeric() || !type_[last].is_ascii_alphanumeric() {
        return Some("the name must start and end with a letter or digit");
    }
    let mut i = name_start;
    while i <= last {
        let c = type_[i];
        if !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.') {
            return Some("the name may only contain letters, digits, '-', '_' and '.'");
        }
        i += 1;
    }
    None
}

/// Whether `bytes[start..end]` is a non-empty sequence of `.`-separated labels
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
const fn is_dns_subdomain(bytes: &[u8], start: usize, end: usize) -> bool {
    let mut label_start = start;
    let mut i = start;
    while i <= end {
        if i == end || bytes[i] == b'.' {
            if i == label_start {
                return false;
            }
            if !is_lower_alnum(bytes[label_start]) || !is_lower_alnum(bytes[i - 1]) {
                return false;
            }
            label_start = i + 1;
        } else {
            let c = bytes[i];
            if !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-') {
                return false;
            }
        }
        i += 1;
    }
    true
}

const fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_follow_the_crd_pattern() {
        for ok in ["A", "Ready", "Image_Pull", "a:b,c_", "X9"] {
            assert!(Reason::new(ok).is_ok(), "{ok}");
        }
        for bad in ["", "9A", "A:", "A,", "A B", "Á", "A-B", "_A"] {
            assert!(Reason::new(bad).is_err(), "{bad}");
        }
        assert!(Reason::new("A".repeat(1024)).is_ok());
        assert!(Reason::new("A".repeat(1025)).is_err());
    }

    #[test]
    fn every_phase_name_is_a_valid_reason() {
        for phase in crate::api::Phase::ALL {
            assert_eq!(Reason::new(phase.as_str()), Ok(Reason::of_phase(phase)));
        }
    }

    #[test]
    fn condition_types_follow_the_crd_pattern() {
        for ok in [
            "Ready",
            "a",
            "9",
            "a.b-c_d",
            "example.com/Ready",
            "a/B",
            "x-1.y/Z",
        ] {
            assert!(ConditionType::new(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "-a", "a-", "/a", "a/", "A.com/x", "a..b/x", ".a/x", "a-/x", "a/b/c", "a b",
        ] {
            assert!(ConditionType::new(bad).is_err(), "{bad}");
        }
        assert!(ConditionType::new("A".repeat(316)).is_ok());
        assert!(ConditionType::new("A".repeat(317)).is_err());
    }
}
