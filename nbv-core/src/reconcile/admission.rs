//! What a shell does when the API server refuses the attempt's validation Pod.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::api::{NotebookValidationJob, NotebookValidationJobStatus};
use crate::events::{NotificationEvent, pod_refused_event};
use crate::phase::{Attempt, PhaseEvent, first_refusal, record_refusal};
use crate::pod::{Admission, PodRefusal, admission_after, admission_timeout, refusal_message};

use super::{Wake, pod_refused};

/// What to do about a refused Pod ([`pod_refused_at`]).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::reconcile::RefusalWork;
///
/// assert_ne!(RefusalWork::Retry(Duration::from_secs(5)), RefusalWork::Retry(Duration::from_secs(10)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum RefusalWork {
    /// The attempt fails: step the phase machine with this event.
    Fail(Box<PhaseEvent>),
    /// Create the Pod again after this wait (it never reaches past the deadline).
    Retry(Duration),
}

impl RefusalWork {
    /// When to look at the job again: for a retry, after its wait; a failed attempt
    /// asks for nothing (the phase machine's next step says).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::reconcile::{RefusalWork, Wake};
    ///
    /// let retry = RefusalWork::Retry(Duration::from_secs(5));
    /// assert_eq!(retry.wake(), Wake::within(Duration::from_secs(5)));
    /// ```
    pub fn wake(&self) -> Wake {
        match self {
            RefusalWork::Retry(after) => Wake::within(*after),
            RefusalWork::Fail(_) => Wake::default(),
        }
    }
}

/// The decision about a refused Pod, and the Event that announces a new refusal
/// (see [`pod_refused_at`] for an example).
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    /// Fail the attempt, or try again.
    pub work: RefusalWork,
    /// The `PodRefused` Event to create once the status is written: `Some` for the
    /// attempt's first refusal and for each refusal of another kind.
    pub announce: Option<NotificationEvent>,
}

/// Records the API server's `refusal` of the Pod of `attempt` at `now` in `status` (the
/// status the phase machine is about to write), and says what to do.
///
/// The `PodAdmitted` condition turns `False` on the first refusal, for every kind, its
/// reason naming the kind and its message the policy and the API server's answer; its
/// `lastTransitionTime` keeps the first refusal's time. A permanent refusal fails the
/// attempt at once; any other is retried with backoff until the job's pod admission
/// timeout (`default_timeout` unless its `mlops.dev/pod-admission-timeout` says
/// otherwise; an invalid annotation fails the attempt) has passed since that first
/// refusal, then fails the attempt with the refusal's reason.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use chrono::{TimeZone, Utc};
/// use nbv_core::phase::{step, Attempt, PhaseEvent, RetryPolicy};
/// use nbv_core::pod::PodRefusal;
/// use nbv_core::api_answer::ApiAnswer;
/// use nbv_core::reconcile::{pod_refused_at, RefusalWork};
/// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
/// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
/// #     "metadata": {"name": "train", "namespace": "ml", "generation": 1},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
/// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// # })).unwrap();
///
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let policy = RetryPolicy::default();
/// let mut status = step(None, &PhaseEvent::observe(&job), t0, &policy).status;
/// let attempt = Attempt::new(1, 0);
/// let quota = PodRefusal::of(&ApiAnswer::status(403, "Forbidden",
///     "pods \"train-g1-r0\" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=3, limited: limits.cpu=4")).unwrap();
///
/// // The first refusal: the condition at once, an Event, and a retry.
/// let refused = pod_refused_at(&job, attempt, &mut status, &quota, Duration::from_secs(600), t0);
/// assert_eq!(refused.work, RefusalWork::Retry(Duration::from_secs(5)));
/// assert!(refused.announce.is_some());
/// let condition = &status.conditions.as_ref().unwrap().iter().find(|c| c.type_ == "PodAdmitted").unwrap();
/// assert_eq!((condition.status.as_str(), condition.reason.as_str()), ("False", "QuotaExceeded"));
///
/// // Ten minutes later, still refused: the attempt fails.
/// let later = t0 + chrono::Duration::minutes(10);
/// let refused = pod_refused_at(&job, attempt, &mut status, &quota, Duration::from_secs(600), later);
/// let RefusalWork::Fail(event) = refused.work else { panic!() };
/// let failed = step(Some(&status), &event, later, &policy);
/// assert_eq!(failed.status.phase, Some(nbv_core::api::Phase::Failed));
/// assert!(refused.announce.is_none(), "the same kind of refusal is announced once");
/// ```
pub fn pod_refused_at(
    job: &NotebookValidationJob,
    attempt: Attempt,
    status: &mut NotebookValidationJobStatus,
    refusal: &PodRefusal,
    default_timeout: Duration,
    now: DateTime<Utc>,
) -> Refused {
    let timeout = match admission_timeout(job, default_timeout) {
        Ok(timeout) => timeout,
        Err(invalid) => {
            return Refused {
                work: RefusalWork::Fail(Box::new(pod_refused(job, attempt, invalid.failure()))),
                announce: None,
            };
        }
    };
    let first = first_refusal(status).unwrap_or(now);
    let (work, message) = match admission_after(refusal, first, timeout, now) {
        Admission::Fail(failure) => {
            let message = failure.message.clone();
            let event = pod_refused(job, attempt, failure);
            (RefusalWork::Fail(Box::new(event)), message)
        }
        Admission::Retry { after, deadline } => (
            RefusalWork::Retry(after),
            refusal_message(refusal, Some(deadline)),
        ),
    };
    let news = record_refusal(status, &refusal.kind.cause().reason(), &message, now);
    let recorded = first_refusal(status).unwrap_or(now);
    Refused {
        work,
        announce: news.then(|| pod_refused_event(job, attempt, refusal, &message, recorded)),
    }
}
