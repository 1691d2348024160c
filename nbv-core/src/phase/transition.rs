//! What [`step`](super::step) returns: the new status and what the shell does next.

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::api::{NotebookValidationJobStatus, Phase};
use crate::time::rfc3339;

use super::{Attempt, Failure};

/// The outcome of one [`step`](super::step).
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_core::api::Phase;
/// use nbv_core::phase::{step, Next, PhaseEvent, RetryPolicy};
///
/// let observe = PhaseEvent::Observe { generation: 1, build_requested: false, rerun: None };
/// let t = step(None, &observe, Utc::now(), &RetryPolicy::default());
/// assert!(t.changed && t.run_started);
/// assert_eq!(t.entered, Some(Phase::Initializing));
/// assert!(matches!(t.next, Next::StartPod(_)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The status to write to the status subresource (when [`changed`](Self::changed)).
    pub status: NotebookValidationJobStatus,
    /// Whether [`status`](Self::status) differs from the status given to `step`.
    pub changed: bool,
    /// The phase the job entered, when it differs from the one it was in (migrating a
    /// legacy phase enters nothing) or a run started.
    pub entered: Option<Phase>,
    /// Whether this step started a new run (first run, or the spec changed).
    pub run_started: bool,
    /// The retry this step scheduled, if any.
    pub retry_scheduled: Option<ScheduledRetry>,
    /// What the shell does next.
    pub next: Next,
    /// When the shell should reconcile again even if nothing it watches changes: set
    /// exactly when [`next`](Self::next) is [`Next::WaitUntil`].
    pub requeue_after: Option<Duration>,
    /// Why the event was not applied, when it was not; the status is then returned
    /// unchanged.
    pub ignored: Option<Ignored>,
}

/// A retry scheduled after a transient failure.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::phase::{Failure, Reason, ScheduledRetry};
///
/// let retry = ScheduledRetry {
///     retry: 1,
///     max_retries: 3,
///     at: Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).unwrap(),
///     failure: Failure::transient(Reason::new("Evicted")?, "node drained"),
/// };
/// assert_eq!(retry.to_string(), "retry 1/3 at 2026-01-24T22:31:00Z after Evicted: node drained");
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledRetry {
    /// Number of the retry (1 for the first), the new `status.retryCount`.
    pub retry: u32,
    /// Retries the policy allows.
    pub max_retries: u32,
    /// When the retry may start.
    pub at: DateTime<Utc>,
    /// The failure that caused it.
    pub failure: Failure,
}

impl fmt::Display for ScheduledRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "retry {}/{} at {} after {}",
            self.retry,
            self.max_retries,
            rfc3339(self.at),
            self.failure.reason
        )?;
        if !self.failure.message.is_empty() {
            write!(f, ": {}", self.failure.message)?;
        }
        Ok(())
    }
}

/// What the shell does after a step, read from the new status alone.
///
/// "Start" means "make sure it exists": the shell creates the object when it is
/// missing, under a name derived from the run or attempt so that a second reconcile
/// finds it instead of creating another, then reports what it observes of it.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::phase::{Attempt, Next};
///
/// let next = Next::StartPod(Attempt::new(2, 0));
/// assert_eq!(next.to_string(), "start the validation pod of attempt g2-r0");
/// assert!(!next.is_done());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// No run or an unadopted status: deliver [`PhaseEvent::Observe`](super::PhaseEvent::Observe).
    Observe,
    /// Make sure the run's image build exists, then report it.
    StartBuild {
        /// Generation of the run; label the build with it.
        generation: i64,
    },
    /// The build runs: report it when it ends.
    WatchBuild {
        /// Generation of the run.
        generation: i64,
    },
    /// Make sure the attempt's validation Pod exists (labelled with the attempt), then
    /// report it.
    StartPod(Attempt),
    /// The Pod runs: report it when it ends (a Pod that vanished is a transient failure).
    WatchPod(Attempt),
    /// A retry is scheduled: create nothing before this time, then deliver
    /// [`PhaseEvent::Observe`](super::PhaseEvent::Observe).
    WaitUntil(DateTime<Utc>),
    /// The run has ended; nothing happens until the spec changes.
    Done,
}

impl Next {
    /// Whether the run has ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::Next;
    ///
    /// assert!(Next::Done.is_done());
    /// assert!(!Next::Observe.is_done());
    /// ```
    pub const fn is_done(&self) -> bool {
        matches!(self, Next::Done)
    }
}

impl fmt::Display for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Next::Observe => f.write_str("observe the job"),
            Next::StartBuild { generation } => {
                write!(f, "start the image build of generation {generation}")
            }
            Next::WatchBuild { generation } => {
                write!(f, "watch the image build of generation {generation}")
            }
            Next::StartPod(attempt) => write!(f, "start the validation pod of attempt {attempt}"),
            Next::WatchPod(attempt) => write!(f, "watch the validation pod of attempt {attempt}"),
            Next::WaitUntil(at) => write!(f, "wait until {} for the retry", rfc3339(*at)),
            Next::Done => f.write_str("nothing: the run has ended"),
        }
    }
}

/// Why an event was not applied. Ignoring is normal: a shell reports what it observes,
/// and it keeps observing objects of earlier attempts and runs, or reports an outcome
/// twice; none of that may change the status. The message is meant for a debug log.
///
/// # Examples
///
/// ```
/// use nbv_core::api::Phase;
/// use nbv_core::phase::Ignored;
///
/// let ignored = Ignored::RunEnded { phase: Phase::Succeeded };
/// assert_eq!(ignored.to_string(),
///     "the run has ended (Succeeded); only a change of the job's spec starts another");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ignored {
    /// The status records no run.
    NoRun,
    /// The status records a run but no `observedGeneration` (written by another
    /// operator): [`PhaseEvent::Observe`](super::PhaseEvent::Observe) adopts it first.
    NotObserved,
    /// The run has ended.
    RunEnded {
        /// Its terminal phase.
        phase: Phase,
    },
    /// The event belongs to the run of another generation.
    OtherRun {
        /// Generation named by the event.
        event: i64,
        /// Generation of the current run.
        current: i64,
    },
    /// The Pod belongs to another attempt of the run, such as the failed Pod of an
    /// earlier attempt.
    OtherAttempt {
        /// Attempt named by the event.
        event: Attempt,
        /// The current attempt.
        current: Attempt,
    },
    /// Another Pod already runs the current attempt.
    OtherPod {
        /// Pod named by the event.
        event: String,
        /// Pod recorded in `status.validationPodName`.
        current: String,
    },
    /// Another build is already recorded for the run.
    OtherBuild {
        /// Build named by the event.
        event: String,
        /// Build recorded in `status.buildStatus.buildName`.
        current: String,
    },
    /// The run did not request an image build.
    BuildNotRequested,
    /// The run's image is not built yet, so no Pod may run.
    BuildNotComplete,
    /// The event does not apply in the current phase.
    OutOfPhase {
        /// The event's name.
        event: &'static str,
        /// The current phase.
        phase: Phase,
    },
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ignored::NoRun => f.write_str("no run has started; deliver Observe first"),
            Ignored::NotObserved => f.write_str(
                "the status has no observedGeneration (written by another operator); \
                 deliver Observe first to adopt it",
            ),
            Ignored::RunEnded { phase } => write!(
                f,
                "the run has ended ({phase}); only a change of the job's spec starts another"
            ),
            Ignored::OtherRun { event, current } => write!(
                f,
                "the event is about the run of generation {event}, the current run is \
                 generation {current}"
            ),
            Ignored::OtherAttempt { event, current } => write!(
                f,
                "the pod belongs to attempt {event}, the current attempt is {current}"
            ),
            Ignored::OtherPod { event, current } => write!(
                f,
                "pod {event:?} is not the pod of the current attempt, {current:?}"
            ),
            Ignored::OtherBuild { event, current } => write!(
                f,
                "build {event:?} is not the build of the current run, {current:?}"
            ),
            Ignored::BuildNotRequested => f.write_str("the run did not request an image build"),
            Ignored::BuildNotComplete => {
                f.write_str("the run's image is not built yet, so no pod may run")
            }
            Ignored::OutOfPhase { event, phase } => {
                write!(f, "{event} does not apply in phase {phase}")
            }
        }
    }
}
