//! What a step of the phase machine asks of the shell about the build and the Pod.

use std::time::Duration;

use crate::api::NotebookValidationJob;
use crate::phase::{Attempt, Failure, Next, PhaseEvent, PodRef, Transition};
use crate::pod::{admission_timeout, pod_name};

use super::Wake;

/// Observations fed back to the phase machine in one reconcile, at most: a Pod found
/// already finished moves the machine twice (started, then ended), a retry once more.
pub const MAX_PHASE_STEPS: usize = 4;

/// How long a job whose Pod runs waits before it is looked at again although nothing
/// changed: Pod changes wake the controller (it watches nbv's Pods); this is a backstop.
const POD_BACKSTOP: Duration = Duration::from_secs(30);

/// What the shell does after a step of the phase machine.
#[derive(Clone, Debug, PartialEq)]
pub enum PodWork {
    /// Step the machine with this event next, without any request (an attempt that
    /// fails before its Pod exists).
    Step(Box<PhaseEvent>),
    /// Start the run's image build, or look at it ([`crate::build`]).
    Build {
        /// The run's generation.
        generation: i64,
    },
    /// Create the attempt's Pod (or find it created), then observe it. With
    /// `clear_earlier`, first delete the Pods of the job's earlier runs and attempts.
    Start {
        /// The attempt.
        attempt: Attempt,
        /// Whether Pods of earlier runs or attempts are to be deleted first.
        clear_earlier: bool,
    },
    /// Observe the attempt's Pod.
    Watch(Attempt),
    /// Nothing to do about Pods now.
    Rest,
}

impl PodWork {
    /// What `transition` of `job` asks for.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::phase::{step, PhaseEvent, RetryPolicy};
    /// use nbv_core::reconcile::PodWork;
    ///
    /// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    /// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    /// #     "metadata": {"name": "train", "namespace": "ml", "generation": 1},
    /// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    /// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// # })).unwrap();
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let first = step(None, &PhaseEvent::observe(&job), now, &RetryPolicy::default());
    /// let PodWork::Start { attempt, clear_earlier } = PodWork::of(&job, &first) else { panic!() };
    /// assert_eq!((attempt.generation, attempt.retry), (1, 0));
    /// assert!(clear_earlier, "a new run clears the Pods of earlier runs");
    /// ```
    pub fn of(job: &NotebookValidationJob, transition: &Transition) -> PodWork {
        match transition.next {
            Next::StartBuild { generation } | Next::WatchBuild { generation } => {
                PodWork::Build { generation }
            }
            // An invalid pod admission timeout is never ignored: the attempt fails,
            // naming the annotation, before any Pod is created.
            Next::StartPod(attempt) => match admission_timeout(job, Duration::ZERO) {
                Err(invalid) => {
                    PodWork::Step(Box::new(pod_refused(job, attempt, invalid.failure())))
                }
                Ok(_) => PodWork::Start {
                    attempt,
                    clear_earlier: transition.run_started || attempt.retry > 0,
                },
            },
            Next::WatchPod(attempt) => PodWork::Watch(attempt),
            Next::Observe | Next::WaitUntil(_) | Next::Done => PodWork::Rest,
        }
    }

    /// When to look at the job again after the last `transition` of a reconcile, for
    /// the phase's sake: soon while its Pod is started or runs (a backstop for the
    /// watch of Pods), when a scheduled retry is due, or only when the job changes.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::phase::{step, PhaseEvent, RetryPolicy};
    /// use nbv_core::reconcile::{PodWork, Wake};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let event = PhaseEvent::Observe { generation: 1, build_requested: false, rerun: None };
    /// let first = step(None, &event, now, &RetryPolicy::default());
    /// assert_eq!(PodWork::wake(&first), Wake::within(Duration::from_secs(30)));
    /// ```
    pub fn wake(transition: &Transition) -> Wake {
        match transition.next {
            Next::WatchPod(_) | Next::StartPod(_) => Wake::within(POD_BACKSTOP),
            _ => {
                let mut wake = Wake::default();
                wake.after(transition.requeue_after);
                wake
            }
        }
    }
}

/// The phase event for the Pod of `attempt` that the API server refused to create,
/// for a reason no retry of the request can fix (`failure`, as
/// [`crate::pod`] classifies the refusal): the attempt fails.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{Attempt, Failure, PhaseEvent, Reason};
/// use nbv_core::reconcile::pod_refused;
///
/// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
/// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
/// #     "metadata": {"name": "train", "namespace": "ml", "generation": 1},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
/// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// # })).unwrap();
/// let attempt = Attempt::new(1, 0);
/// let failure = Failure::permanent(Reason::new("PodSecurity")?, "violates PodSecurity \"restricted\"");
/// let PhaseEvent::PodFailed { pod, .. } = pod_refused(&job, attempt, failure) else { panic!() };
/// assert_eq!(pod.name, "train-g1-r0");
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
pub fn pod_refused(job: &NotebookValidationJob, attempt: Attempt, failure: Failure) -> PhaseEvent {
    let job_name = job.metadata.name.as_deref().unwrap_or_default();
    PhaseEvent::PodFailed {
        pod: PodRef::new(pod_name(job_name, attempt), attempt),
        failure,
        results: Vec::new(),
        comparison: None,
        warnings: Vec::new(),
    }
}
