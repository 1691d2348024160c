//! What a shell observes and reports to the phase machine.

use std::fmt;
use std::str::FromStr;

use crate::api::{CellResult, ComparisonResult, NotebookValidationJob};
use crate::checks::Finding;

use super::{Reason, RerunRequest};

/// One attempt of a run: the job generation the run validates, which run of that
/// generation it belongs to (0 for the first, one more for each time the job was asked
/// to run again), and how many retries preceded the attempt in its run (0 for the
/// first attempt).
///
/// The shell labels what it creates for an attempt (the validation Pod) with it and
/// reports it back in [`PodRef`], so that the phase machine can tell the Pod of the
/// current attempt from the failed Pod of an earlier one or from a previous run's Pod,
/// which a re-reconcile keeps observing. [`Display`](fmt::Display) gives a form that is
/// a valid label value (`g3-r1`, or `g3-rerun2-r1` in the second rerun); [`FromStr`]
/// reads it back.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::Attempt;
///
/// let attempt = Attempt::new(3, 1);
/// assert_eq!(attempt.to_string(), "g3-r1");
/// assert_eq!("g3-r1".parse::<Attempt>()?, attempt);
/// assert!("3-1".parse::<Attempt>().is_err());
///
/// let rerun = Attempt { rerun: 2, ..attempt };
/// assert_eq!(rerun.to_string(), "g3-rerun2-r1");
/// assert_eq!("g3-rerun2-r1".parse::<Attempt>()?, rerun);
/// # Ok::<(), nbv_core::phase::InvalidAttempt>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Attempt {
    /// `metadata.generation` of the job the run validates.
    pub generation: i64,
    /// Reruns of the generation before this attempt's run (`status.rerun.count`).
    pub rerun: u32,
    /// Retries made before this attempt in its run.
    pub retry: u32,
}

impl Attempt {
    /// The attempt after `retry` retries in the first run of `generation`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::Attempt;
    ///
    /// assert_eq!(Attempt::new(2, 1), Attempt { generation: 2, rerun: 0, retry: 1 });
    /// ```
    pub const fn new(generation: i64, retry: u32) -> Self {
        Attempt {
            generation,
            rerun: 0,
            retry,
        }
    }
}

impl fmt::Display for Attempt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first run keeps the short form, so Pods created before reruns existed
        // keep matching their attempt.
        match self.rerun {
            0 => write!(f, "g{}-r{}", self.generation, self.retry),
            rerun => write!(f, "g{}-rerun{rerun}-r{}", self.generation, self.retry),
        }
    }
}

/// A string that is not an [`Attempt`] as [`Attempt`]'s `Display` writes it.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::Attempt;
///
/// let err = "attempt-1".parse::<Attempt>().unwrap_err();
/// assert_eq!(err.value, "attempt-1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid attempt {value:?}: expected g<generation>-r<retry> or \
     g<generation>-rerun<rerun>-r<retry>, e.g. \"g3-r1\""
)]
pub struct InvalidAttempt {
    /// The rejected value.
    pub value: String,
}

impl FromStr for Attempt {
    type Err = InvalidAttempt;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidAttempt {
            value: s.to_owned(),
        };
        let (run, retry) = s
            .strip_prefix('g')
            .and_then(|rest| rest.rsplit_once("-r"))
            .ok_or_else(invalid)?;
        let (generation, rerun) = match run.rsplit_once("-rerun") {
            // `rerun0` is never written: one attempt has one label.
            Some((_, "0")) => return Err(invalid()),
            Some((generation, rerun)) => (generation, Some(rerun)),
            None => (run, None),
        };
        let digits = |t: &str| !t.is_empty() && !t.starts_with('+');
        if !digits(generation) || !digits(retry) || rerun.is_some_and(|r| !digits(r)) {
            return Err(invalid());
        }
        Ok(Attempt {
            generation: generation.parse().map_err(|_| invalid())?,
            rerun: match rerun {
                Some(rerun) => rerun.parse().map_err(|_| invalid())?,
                None => 0,
            },
            retry: retry.parse().map_err(|_| invalid())?,
        })
    }
}

/// A validation Pod as the shell observed it: its name and the attempt it was created
/// for (read from the label the shell gave it).
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{Attempt, PodRef};
///
/// let pod = PodRef::new("train-g3-r0", Attempt::new(3, 0));
/// assert_eq!(pod.name, "train-g3-r0");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodRef {
    /// `metadata.name` of the Pod.
    pub name: String,
    /// The attempt the Pod was created for.
    pub attempt: Attempt,
}

impl PodRef {
    /// A Pod named `name`, created for `attempt`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::{Attempt, PodRef};
    ///
    /// let attempt = Attempt::new(1, 2);
    /// assert_eq!(PodRef::new("train-g1-r2", attempt).attempt.retry, 2);
    /// ```
    pub fn new(name: impl Into<String>, attempt: Attempt) -> Self {
        PodRef {
            name: name.into(),
            attempt,
        }
    }
}

/// Whether a failure may go away by itself.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::FailureKind;
///
/// assert_ne!(FailureKind::Transient, FailureKind::Permanent);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// Worth retrying: the node went away, the image pull timed out, the Pod was evicted.
    Transient,
    /// Retrying cannot help: a cell raised, the notebook does not exist, the comparison
    /// with the golden notebook failed.
    Permanent,
}

/// Why an attempt failed, as the shell classified it.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{Failure, FailureKind, Reason};
///
/// let failure = Failure::transient(Reason::new("Evicted")?, "The node was low on memory");
/// assert_eq!(failure.kind, FailureKind::Transient);
/// assert_eq!(failure.reason.as_str(), "Evicted");
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Failure {
    /// Transient (retried while retries are left) or permanent (ends the run).
    pub kind: FailureKind,
    /// Machine-readable cause; becomes the `Ready` condition's reason when the run fails.
    pub reason: Reason,
    /// Human-readable detail; may be empty.
    pub message: String,
}

impl Failure {
    /// A failure worth retrying.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::{Failure, FailureKind, Reason};
    ///
    /// let failure = Failure::transient(Reason::new("NodeLost")?, "");
    /// assert_eq!(failure.kind, FailureKind::Transient);
    /// assert!(failure.message.is_empty());
    /// # Ok::<(), nbv_core::phase::InvalidReason>(())
    /// ```
    pub fn transient(reason: Reason, message: impl Into<String>) -> Self {
        Failure {
            kind: FailureKind::Transient,
            reason,
            message: message.into(),
        }
    }

    /// A failure no retry can fix.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::{Failure, FailureKind, Reason};
    ///
    /// let failure = Failure::permanent(Reason::new("CellFailed")?, "cell 4: KeyError");
    /// assert_eq!(failure.kind, FailureKind::Permanent);
    /// # Ok::<(), nbv_core::phase::InvalidReason>(())
    /// ```
    pub fn permanent(reason: Reason, message: impl Into<String>) -> Self {
        Failure {
            kind: FailureKind::Permanent,
            reason,
            message: message.into(),
        }
    }
}

/// Something the shell observed, fed to [`step`](super::step).
///
/// A reconcile starts with [`Observe`](Self::Observe), then reports what it sees of
/// the build and the Pod that [`Transition::next`](super::Transition::next) names.
/// Build events carry the generation of the run the build belongs to; Pod events the
/// [`Attempt`] the Pod was created for. Events about another run or attempt are
/// ignored, so a shell may report whatever it observes, as often as it observes it.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{Attempt, PhaseEvent, PodRef};
///
/// let event = PhaseEvent::PodRunning { pod: PodRef::new("train-g1-r0", Attempt::new(1, 0)) };
/// assert_eq!(event.name(), "PodRunning");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum PhaseEvent {
    /// A reconcile of the job: starts a run when there is none or when the spec changed
    /// (`generation` differs from `status.observedGeneration`), adopts and migrates a
    /// status written by another operator, and starts a retry whose backoff has elapsed.
    Observe {
        /// `metadata.generation` of the job.
        generation: i64,
        /// Whether the spec asks for an image build (`podConfig.buildConfig.enabled`);
        /// read when a run starts.
        build_requested: bool,
        /// The request to run again that the job's `mlops.dev/rerun` annotation makes:
        /// a finished run of the same generation whose record holds another request
        /// is followed by a new one.
        rerun: Option<RerunRequest>,
    },
    /// The run's image build exists and runs.
    BuildStarted {
        /// Generation of the run the build belongs to.
        generation: i64,
        /// Name of the build object.
        build_name: String,
    },
    /// The run's image build produced `image`.
    BuildSucceeded {
        /// Generation of the run the build belongs to.
        generation: i64,
        /// Reference of the built image.
        image: String,
    },
    /// The run's image build failed. Always permanent: the build ran to completion.
    BuildFailed {
        /// Generation of the run the build belongs to.
        generation: i64,
        /// Machine-readable cause ([`Reason::BUILD_FAILED`] when nothing better is known).
        reason: Reason,
        /// Human-readable detail.
        message: String,
    },
    /// The validation Pod runs.
    PodRunning {
        /// The Pod.
        pod: PodRef,
    },
    /// The validation Pod ended and the notebook validated.
    PodSucceeded {
        /// The Pod.
        pod: PodRef,
        /// Per-cell outcomes.
        results: Vec<CellResult>,
        /// Optional summary from the Pod, appended to the success message.
        message: Option<String>,
        /// The comparison with the golden notebook, when the job asks for one
        /// (`status.comparisonResult`).
        comparison: Option<ComparisonResult>,
        /// What the checks of `spec.validationConfig` found that only warns; recorded
        /// in the `ValidationWarnings` condition.
        warnings: Vec<Finding>,
    },
    /// The validation Pod ended in failure.
    PodFailed {
        /// The Pod.
        pod: PodRef,
        /// What went wrong and whether a retry may help.
        failure: Failure,
        /// Per-cell outcomes, as far as they are known.
        results: Vec<CellResult>,
        /// The comparison with the golden notebook, as far as it is known
        /// (`status.comparisonResult`).
        comparison: Option<ComparisonResult>,
        /// Check findings that only warn, as for [`PodSucceeded`](Self::PodSucceeded).
        warnings: Vec<Finding>,
    },
}

impl PhaseEvent {
    /// The [`Observe`](Self::Observe) event of `job`: its generation (0 when the job
    /// has none, as an object that never went through an API server), whether its
    /// spec enables an image build, and the request to run again it makes.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::{BuildConfig, NotebookValidationJob, NotebookValidationJobSpec};
    /// use nbv_core::phase::PhaseEvent;
    ///
    /// let mut spec = NotebookValidationJobSpec::default();
    /// spec.pod_config.build_config = Some(BuildConfig { enabled: Some(true), ..Default::default() });
    /// let mut job = NotebookValidationJob::new("train", spec);
    /// job.metadata.generation = Some(4);
    /// assert_eq!(PhaseEvent::observe(&job),
    ///     PhaseEvent::Observe { generation: 4, build_requested: true, rerun: None });
    /// ```
    pub fn observe(job: &NotebookValidationJob) -> Self {
        PhaseEvent::Observe {
            generation: job.metadata.generation.unwrap_or(0),
            build_requested: job
                .spec
                .pod_config
                .build_config
                .as_ref()
                .and_then(|build| build.enabled)
                .unwrap_or(false),
            rerun: RerunRequest::of(job),
        }
    }

    /// The variant's name, for logs and [`Ignored`](super::Ignored).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::PhaseEvent;
    ///
    /// let event = PhaseEvent::BuildStarted { generation: 1, build_name: "b".to_owned() };
    /// assert_eq!(event.name(), "BuildStarted");
    /// ```
    pub const fn name(&self) -> &'static str {
        match self {
            PhaseEvent::Observe { .. } => "Observe",
            PhaseEvent::BuildStarted { .. } => "BuildStarted",
            PhaseEvent::BuildSucceeded { .. } => "BuildSucceeded",
            PhaseEvent::BuildFailed { .. } => "BuildFailed",
            PhaseEvent::PodRunning { .. } => "PodRunning",
            PhaseEvent::PodSucceeded { .. } => "PodSucceeded",
            PhaseEvent::PodFailed { .. } => "PodFailed",
        }
    }

    /// The generation of the run the event is about.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::{Attempt, PhaseEvent, PodRef};
    ///
    /// let pod = PodRef::new("p", Attempt::new(5, 0));
    /// assert_eq!(PhaseEvent::PodRunning { pod }.generation(), 5);
    /// ```
    pub const fn generation(&self) -> i64 {
        match self {
            PhaseEvent::Observe { generation, .. }
            | PhaseEvent::BuildStarted { generation, .. }
            | PhaseEvent::BuildSucceeded { generation, .. }
            | PhaseEvent::BuildFailed { generation, .. } => *generation,
            PhaseEvent::PodRunning { pod }
            | PhaseEvent::PodSucceeded { pod, .. }
            | PhaseEvent::PodFailed { pod, .. } => pod.attempt.generation,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_round_trip_through_their_label_form() {
        for attempt in [
            Attempt::new(0, 0),
            Attempt::new(-5, 2),
            Attempt::new(i64::MAX, u32::MAX),
            Attempt::new(i64::MIN, 0),
            Attempt {
                generation: -5,
                rerun: 1,
                retry: 2,
            },
            Attempt {
                generation: i64::MIN,
                rerun: u32::MAX,
                retry: u32::MAX,
            },
        ] {
            let label = attempt.to_string();
            assert!(label.len() <= 63, "{label}");
            assert_eq!(label.parse::<Attempt>(), Ok(attempt));
        }
    }

    #[test]
    fn malformed_attempts_are_rejected() {
        for bad in [
            "",
            "g",
            "g1",
            "g1-r",
            "g-r1",
            "1-r1",
            "g+1-r1",
            "g1-r+1",
            "g1-r-1",
            "g1-r1x",
            "g1-rerun0-r1",
            "g1-rerun-r1",
            "g1-rerun+2-r1",
            "g1-rerunx-r1",
            "g-rerun1-r1",
        ] {
            assert!(bad.parse::<Attempt>().is_err(), "{bad}");
        }
    }
}
