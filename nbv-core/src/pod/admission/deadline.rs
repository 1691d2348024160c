//! How long a refused Pod is tried again, and what a refusal at a given time means
//! for the attempt.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

use crate::api::NotebookValidationJob;
use crate::duration::{InvalidDuration, format_go_seconds, parse_duration};
use crate::phase::Failure;
use crate::time::rfc3339;

use super::PodRefusal;
use crate::phase::FailureCause;

/// The annotation that sets a job's pod admission timeout (a duration such as `30m`),
/// overriding the operator's `--pod-admission-timeout`.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::pod::POD_ADMISSION_TIMEOUT_ANNOTATION, "mlops.dev/pod-admission-timeout");
/// ```
pub const POD_ADMISSION_TIMEOUT_ANNOTATION: &str = "mlops.dev/pod-admission-timeout";

/// The default pod admission timeout: long enough for a quota to free when a
/// competing run ends or for an administrator to grant a missing permission, short
/// enough that a wave waiting on the job fails while someone still looks at it.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::pod::DEFAULT_POD_ADMISSION_TIMEOUT.as_secs(), 600);
/// ```
pub const DEFAULT_POD_ADMISSION_TIMEOUT: Duration = Duration::from_secs(600);

/// The first wait before trying a refused Pod again; each wait is as long as the
/// refusals have lasted so far (so the waits double), up to [`MAX_RETRY_WAIT`].
const MIN_RETRY_WAIT: Duration = Duration::from_secs(5);
/// The longest wait between two tries of a refused Pod.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// A job's `mlops.dev/pod-admission-timeout` that is not a duration.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::pod::admission_timeout;
/// # let mut job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
/// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
/// #     "metadata": {"name": "train", "namespace": "ml",
/// #                  "annotations": {"mlops.dev/pod-admission-timeout": "ten minutes"}},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
/// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// # })).unwrap();
/// let err = admission_timeout(&job, Duration::from_secs(600)).unwrap_err();
/// assert!(err.to_string().starts_with("annotation mlops.dev/pod-admission-timeout: invalid duration \"ten minutes\""));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("annotation {POD_ADMISSION_TIMEOUT_ANNOTATION}: {source}")]
pub struct InvalidAdmissionTimeout {
    /// Why the value is not a duration.
    #[source]
    pub source: InvalidDuration,
}

impl InvalidAdmissionTimeout {
    /// The failure of an attempt of a job with this annotation: permanent, naming the
    /// annotation (the run cannot start until it is fixed; a spec change starts
    /// another run).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::pod::admission_timeout;
    /// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    /// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    /// #     "metadata": {"name": "train", "namespace": "ml",
    /// #                  "annotations": {"mlops.dev/pod-admission-timeout": "-1s"}},
    /// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    /// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// # })).unwrap();
    /// let failure = admission_timeout(&job, Duration::ZERO).unwrap_err().failure();
    /// assert_eq!(failure.reason.as_str(), "InvalidAnnotation");
    /// ```
    pub fn failure(&self) -> Failure {
        FailureCause::InvalidAnnotation.failure(self.to_string())
    }
}

/// How long a job's refused Pod is tried again: its `mlops.dev/pod-admission-timeout`,
/// else `default` (the operator's `--pod-admission-timeout`).
///
/// # Errors
///
/// [`InvalidAdmissionTimeout`] when the annotation is not a duration: never ignored,
/// the attempt fails naming it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::pod::admission_timeout;
/// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
/// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
/// #     "metadata": {"name": "train", "namespace": "ml",
/// #                  "annotations": {"mlops.dev/pod-admission-timeout": "30m"}},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
/// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// # })).unwrap();
/// assert_eq!(admission_timeout(&job, Duration::from_secs(600))?, Duration::from_secs(1800));
/// # Ok::<(), nbv_core::pod::InvalidAdmissionTimeout>(())
/// ```
pub fn admission_timeout(
    job: &NotebookValidationJob,
    default: Duration,
) -> Result<Duration, InvalidAdmissionTimeout> {
    let value = job
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_ADMISSION_TIMEOUT_ANNOTATION));
    match value {
        None => Ok(default),
        Some(text) => {
            parse_duration(text.trim()).map_err(|source| InvalidAdmissionTimeout { source })
        }
    }
}

/// What a refusal of the attempt's Pod at `now` means, the refusals having started at
/// `first_refused` (the `PodAdmitted` condition's `lastTransitionTime`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use chrono::{TimeZone, Utc};
/// use nbv_core::pod::{Admission, PodRefusal, admission_after};
/// use nbv_core::api_answer::ApiAnswer;
///
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let quota = PodRefusal::of(&ApiAnswer::status(403, "Forbidden", "pods \"p\" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=4, limited: limits.cpu=4")).unwrap();
/// let timeout = Duration::from_secs(600);
/// let Admission::Retry { after, deadline } = admission_after(&quota, t0, timeout, t0) else { panic!() };
/// assert_eq!((after, deadline), (Duration::from_secs(5), t0 + chrono::Duration::minutes(10)));
/// let Admission::Fail(failure) = admission_after(&quota, t0, timeout, deadline) else { panic!() };
/// assert_eq!(failure.reason.as_str(), "QuotaExceeded");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The attempt fails: no retry can fix the refusal, or the deadline has passed.
    Fail(Failure),
    /// Try creating the Pod again after `after` (never past `deadline`).
    Retry {
        /// How long to wait.
        after: Duration,
        /// When the attempt fails if the Pod is still refused.
        deadline: DateTime<Utc>,
    },
}

/// What a refusal of the attempt's Pod at `now` means ([`Admission`]), the refusals
/// having started at `first_refused`: a permanent refusal fails at once; any other is
/// tried again after a wait as long as the refusals have lasted (5 s to 1 min, never
/// past `first_refused + timeout`), and fails once that deadline has come.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use chrono::{TimeZone, Utc};
/// use nbv_core::pod::{Admission, PodRefusal, admission_after};
/// use nbv_core::api_answer::ApiAnswer;
///
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let down = PodRefusal::of(&ApiAnswer::no_answer("connection refused")).unwrap();
/// let later = t0 + chrono::Duration::seconds(40);
/// let Admission::Retry { after, .. } = admission_after(&down, t0, Duration::from_secs(600), later) else { panic!() };
/// assert_eq!(after, Duration::from_secs(40));
/// ```
pub fn admission_after(
    refusal: &PodRefusal,
    first_refused: DateTime<Utc>,
    timeout: Duration,
    now: DateTime<Utc>,
) -> Admission {
    let cause = refusal.kind.cause();
    if refusal.kind.is_permanent() {
        return Admission::Fail(cause.failure(format!("{}: {}", refusal.kind, refusal.answer)));
    }
    let deadline = deadline(first_refused, timeout);
    if now >= deadline {
        return Admission::Fail(cause.failure(format!(
            "{} for {} (the pod admission timeout; {POD_ADMISSION_TIMEOUT_ANNOTATION} or \
             --pod-admission-timeout): {}",
            refusal.kind,
            format_go_seconds(timeout.as_secs()),
            refusal.answer
        )));
    }
    let so_far = (now - first_refused).to_std().unwrap_or_default();
    let left = (deadline - now).to_std().unwrap_or_default();
    Admission::Retry {
        after: so_far.clamp(MIN_RETRY_WAIT, MAX_RETRY_WAIT).min(left),
        deadline,
    }
}

/// The text of the `PodAdmitted` condition (and of the `PodRefused` Event) for
/// `refusal`: what refused the Pod, when nbv gives up (for a refusal retried until
/// `deadline`), and the API server's answer.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{PodRefusal, refusal_message};
/// use nbv_core::api_answer::ApiAnswer;
///
/// let denied = PodRefusal::of(&ApiAnswer::status(403, "Forbidden", "admission webhook \"policy.example.com\" denied the request: no")).unwrap();
/// assert_eq!(refusal_message(&denied, None),
///     "admission webhook \"policy.example.com\" denied the validation pod: 403 Forbidden: admission webhook \"policy.example.com\" denied the request: no");
/// ```
pub fn refusal_message(refusal: &PodRefusal, deadline: Option<DateTime<Utc>>) -> String {
    match deadline {
        Some(at) => format!(
            "{}; retrying until {}: {}",
            refusal.kind,
            rfc3339(at),
            refusal.answer
        ),
        None => format!("{}: {}", refusal.kind, refusal.answer),
    }
}

/// `first_refused + timeout`, saturating at the latest representable time.
fn deadline(first_refused: DateTime<Utc>, timeout: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(timeout)
        .ok()
        .and_then(|d| first_refused.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}
