//! The typed state of a job's run: what the phase machine decides on.
//!
//! The wire status ([`NotebookValidationJobStatus`]) is all `Option`s and can say
//! contradictory things: a legacy phase, a negative retry count, a completion time on a
//! running job, a build that still runs while the pod validates. [`RunState`] is read
//! from it at the edge ([`RunState::read`], which repairs what contradicts) and written
//! back at the edge ([`RunState::write`]); in between, the machine matches on variants
//! that hold only what the phase can have.

use chrono::{DateTime, Utc};

use crate::api::{BuildPhase, BuildStatus, NotebookValidationJobStatus, Phase, RerunRecord};

use super::record::add;
use super::{Attempt, RerunRequest, RetryPolicy};

type Status = NotebookValidationJobStatus;

/// Where a run's image build stands (`status.buildStatus.phase`).
///
/// # Examples
///
/// ```
/// use nbv_core::phase::BuildStage;
///
/// assert!(BuildStage::Running.is_underway());
/// assert!(!BuildStage::NotRequested.is_underway());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BuildStage {
    /// The run builds no image (no build status, or one without a phase).
    #[default]
    NotRequested,
    /// The build is requested and not started.
    Pending,
    /// The build runs.
    Running,
    /// The image is built.
    Complete,
    /// The build failed.
    Failed,
}

impl BuildStage {
    /// The stage `status.buildStatus` records.
    fn of(status: &Status) -> Self {
        match status.build_status.as_ref().and_then(|b| b.phase) {
            None => BuildStage::NotRequested,
            Some(BuildPhase::Pending) => BuildStage::Pending,
            Some(BuildPhase::Running) => BuildStage::Running,
            Some(BuildPhase::Complete) => BuildStage::Complete,
            Some(BuildPhase::Failed) => BuildStage::Failed,
        }
    }

    /// `status.buildStatus.phase` of the stage.
    const fn phase(self) -> Option<BuildPhase> {
        match self {
            BuildStage::NotRequested => None,
            BuildStage::Pending => Some(BuildPhase::Pending),
            BuildStage::Running => Some(BuildPhase::Running),
            BuildStage::Complete => Some(BuildPhase::Complete),
            BuildStage::Failed => Some(BuildPhase::Failed),
        }
    }

    /// Whether the build is requested or runs: it has not ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::BuildStage;
    ///
    /// assert!(BuildStage::Pending.is_underway());
    /// assert!(!BuildStage::Complete.is_underway());
    /// ```
    pub const fn is_underway(self) -> bool {
        matches!(self, BuildStage::Pending | BuildStage::Running)
    }
}

/// A run's image build: where it stands, and the names that tell one build and its
/// image from another (`status.buildStatus`).
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{Build, BuildStage};
///
/// let build = Build::requested();
/// assert_eq!(build.stage, BuildStage::Pending);
/// assert_eq!(Build::default().stage, BuildStage::NotRequested);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Build {
    /// Where the build stands (`buildStatus.phase`).
    pub stage: BuildStage,
    /// The build object (`buildStatus.buildName`); `None` until the build started, or
    /// for a build adopted from another operator without one.
    pub name: Option<String>,
    /// The built image (`buildStatus.imageReference`).
    pub image: Option<String>,
}

impl Build {
    /// A build that is requested and not started.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::Build;
    ///
    /// assert_eq!(Build::requested().name, None);
    /// ```
    pub const fn requested() -> Self {
        Build {
            stage: BuildStage::Pending,
            name: None,
            image: None,
        }
    }

    /// The build `status.buildStatus` records.
    fn of(status: &Status) -> Self {
        let build = status.build_status.as_ref();
        Build {
            stage: BuildStage::of(status),
            name: build.and_then(|b| b.build_name.clone()),
            image: build.and_then(|b| b.image_reference.clone()),
        }
    }

    /// Writes the build into `status.buildStatus`, keeping the build's other fields
    /// (message, times, strategy), which are its record.
    fn write(&self, status: &mut Status) {
        let phase = self.stage.phase();
        match status.build_status.as_mut() {
            Some(build) => {
                build.phase = phase;
                build.build_name.clone_from(&self.name);
                build.image_reference.clone_from(&self.image);
            }
            None if *self != Build::default() => {
                status.build_status = Some(BuildStatus {
                    phase,
                    build_name: self.name.clone(),
                    image_reference: self.image.clone(),
                    ..BuildStatus::default()
                });
            }
            None => {}
        }
    }
}

/// What every recorded run has, whatever its phase.
///
/// [`RunState::read`] gives only runs that keep these rules:
/// `retries ≤ max_retries` of the policy it read with; no `last_retry_at` without a
/// retry; `started_at ≤ last_retry_at`; and the build agrees with the phase (a run
/// that has retried, or is past its build, has no build underway; `Initializing` has
/// no running build).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::phase::{Attempt, Run};
///
/// let started = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let run = Run { retries: 1, ..Run::new(Some(2), started) };
/// assert_eq!(run.attempt(), Some(Attempt::new(2, 1)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Run {
    /// The `metadata.generation` the run validates (`status.observedGeneration`);
    /// `None` for a run recorded by another operator and not adopted yet.
    pub generation: Option<i64>,
    /// When the run started (`status.startTime`).
    pub started_at: DateTime<Utc>,
    /// Retries made so far (`status.retryCount`).
    pub retries: u32,
    /// When the last retry was scheduled (`status.lastRetryTime`).
    pub last_retry_at: Option<DateTime<Utc>>,
    /// The run's image build.
    pub build: Build,
    /// The validation Pod of the current attempt, or of the last one when the run
    /// waits for a retry's backoff or has ended (`status.validationPodName`).
    pub pod: Option<String>,
    /// Reruns of the generation up to this run (`status.rerun.count`): 0 for the
    /// generation's first run.
    pub reruns: u32,
    /// The request to run again that this run answers (`status.rerun.request`).
    pub rerun_request: Option<RerunRequest>,
}

impl Run {
    /// A run of `generation` started at `started_at`, before anything happened in it:
    /// no retry, no build, no pod.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::phase::{BuildStage, Run};
    ///
    /// let run = Run::new(Some(1), Utc::now());
    /// assert_eq!((run.retries, run.build.stage, run.pod), (0, BuildStage::NotRequested, None));
    /// ```
    pub const fn new(generation: Option<i64>, started_at: DateTime<Utc>) -> Self {
        Run {
            generation,
            started_at,
            retries: 0,
            last_retry_at: None,
            build: Build {
                stage: BuildStage::NotRequested,
                name: None,
                image: None,
            },
            pod: None,
            reruns: 0,
            rerun_request: None,
        }
    }

    /// The attempt the run is at, once its generation is known.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::phase::Run;
    ///
    /// assert_eq!(Run::new(None, Utc::now()).attempt(), None);
    /// ```
    pub const fn attempt(&self) -> Option<Attempt> {
        match self.generation {
            Some(generation) => Some(Attempt {
                generation,
                rerun: self.reruns,
                retry: self.retries,
            }),
            None => None,
        }
    }

    /// `now`, or the run's latest recorded time if that is later: a run never ends or
    /// retries before its own earlier times, even when this replica's clock is behind
    /// the one that recorded them.
    pub(super) fn not_before(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        [Some(self.started_at), self.last_retry_at]
            .into_iter()
            .flatten()
            .fold(now, DateTime::max)
    }

    /// `retries` as `status.retryCount` writes it.
    pub(super) fn retry_count(&self) -> i32 {
        i32::try_from(self.retries).unwrap_or(i32::MAX)
    }
}

/// The state of a job's run, as the phase machine sees it: one variant per phase, each
/// with only what that phase can have (a completion time exactly when the run ended).
///
/// Read from the wire status with [`read`](Self::read), written back with
/// [`write`](Self::write). What the state does not hold (the message, the conditions,
/// the results, the build's message and times) stays the status's record.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::{NotebookValidationJobStatus, Phase};
/// use nbv_core::phase::{RetryPolicy, RunState};
///
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// // A legacy status from another operator: `Running`, a retry count out of range.
/// let status = NotebookValidationJobStatus {
///     phase: Some(Phase::Running),
///     retry_count: Some(9),
///     ..Default::default()
/// };
/// let state = RunState::read(&status, now, &RetryPolicy::default());
/// let RunState::ValidationRunning(run) = &state else { panic!("{state:?}") };
/// assert_eq!((run.retries, run.started_at, run.generation), (3, now, None));
///
/// let mut written = NotebookValidationJobStatus::default();
/// state.write(&mut written);
/// assert_eq!(written.phase, Some(Phase::ValidationRunning));
/// assert_eq!(RunState::read(&written, now, &RetryPolicy::default()), state);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RunState {
    /// No run recorded (`status.phase` unset).
    NotStarted,
    /// Waiting for the build or the pod to start, or for a scheduled retry.
    Initializing(Run),
    /// The image build runs.
    Building(Run),
    /// The image is built; the pod is about to start.
    BuildComplete(Run),
    /// The validation pod runs the notebook.
    ValidationRunning(Run),
    /// The run ended successfully.
    Succeeded {
        /// The run.
        run: Run,
        /// When it ended (`status.completionTime`).
        completed_at: DateTime<Utc>,
    },
    /// The run ended in failure.
    Failed {
        /// The run.
        run: Run,
        /// When it ended (`status.completionTime`).
        completed_at: DateTime<Utc>,
    },
}

impl RunState {
    /// Reads the run `status` records, repairing what contradicts, so that a status
    /// written by the upstream operator, an older nbv or by hand is accepted (rejecting
    /// one would leave the job stuck). `now` stands in for times the status lacks;
    /// `policy` bounds the retry count.
    ///
    /// - a legacy phase reads as its current equivalent;
    /// - `retryCount` is clamped into `0..=max_retries` (a count recorded under a
    ///   larger policy counts as exhausted); without retries there is no
    ///   `lastRetryTime`;
    /// - the build agrees with the phase: a run that is past its build or has retried
    ///   has a complete build, and `Initializing` with a running build is `Building`;
    /// - `startTime` defaults to the earliest time the status records, or `now`, and
    ///   the times are ordered: `startTime ≤ lastRetryTime ≤ completionTime`;
    /// - a completion time exists exactly when the phase is terminal (`now` when
    ///   missing).
    ///
    /// Reading what [`write`](Self::write) wrote gives the state back, for every state
    /// whose run keeps the rules of [`Run`] under `policy` (every state `read` gives).
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::{BuildPhase, BuildStatus, NotebookValidationJobStatus, Phase};
    /// use nbv_core::phase::{BuildStage, RetryPolicy, RunState};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let status = NotebookValidationJobStatus {
    ///     phase: Some(Phase::Pending),
    ///     build_status: Some(BuildStatus { phase: Some(BuildPhase::Running), ..Default::default() }),
    ///     ..Default::default()
    /// };
    /// let state = RunState::read(&status, now, &RetryPolicy::default());
    /// assert_eq!(state.phase(), Some(Phase::Building));
    /// assert_eq!(state.run().map(|run| run.build.stage), Some(BuildStage::Running));
    /// ```
    pub fn read(status: &Status, now: DateTime<Utc>, policy: &RetryPolicy) -> Self {
        let Some(mut phase) = status.phase.map(Phase::migrated) else {
            return RunState::NotStarted;
        };

        let max = i32::try_from(policy.max_retries()).unwrap_or(i32::MAX);
        let retries = status.retry_count.unwrap_or(0).clamp(0, max);
        let last_retry = status.last_retry_time.filter(|_| retries > 0);

        // The build and the phase tell the same story: a run that has had a pod (it is
        // past `BuildComplete`, or it has retried) has its image; a build that runs
        // runs in `Building`.
        let mut build = Build::of(status);
        let past_build =
            matches!(phase, Phase::BuildComplete | Phase::ValidationRunning) || retries > 0;
        if build.stage.is_underway() && past_build {
            build.stage = BuildStage::Complete;
        } else if phase == Phase::Initializing && build.stage == BuildStage::Running {
            phase = Phase::Building;
        }

        let started_at = status.start_time.unwrap_or_else(|| {
            [last_retry, status.completion_time]
                .into_iter()
                .flatten()
                .fold(now, DateTime::min)
        });
        let last_retry_at = last_retry.map(|t| t.max(started_at));
        let floor = last_retry_at.unwrap_or(started_at);
        let completed_at = status.completion_time.unwrap_or(now).max(floor);

        let run = Run {
            generation: status.observed_generation,
            started_at,
            retries: u32::try_from(retries).unwrap_or(0),
            last_retry_at,
            build,
            pod: status.validation_pod_name.clone(),
            reruns: status.rerun.as_ref().map_or(0, |r| r.count),
            rerun_request: status
                .rerun
                .as_ref()
                .and_then(|r| RerunRequest::new(&r.request)),
        };
        match phase {
            Phase::Building => RunState::Building(run),
            Phase::BuildComplete => RunState::BuildComplete(run),
            Phase::ValidationRunning | Phase::Running => RunState::ValidationRunning(run),
            Phase::Succeeded => RunState::Succeeded { run, completed_at },
            Phase::Failed => RunState::Failed { run, completed_at },
            Phase::Initializing | Phase::Pending => RunState::Initializing(run),
        }
    }

    /// Writes the state into `status`: its phase, `observedGeneration`, the run's
    /// times and retry count, the build's phase, name and image, and the pod's name.
    /// The rest of the status (message, conditions, results, the build's message and
    /// times) is left as it is.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::{NotebookValidationJobStatus, Phase};
    /// use nbv_core::phase::{Run, RunState};
    ///
    /// let t = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let run = Run::new(Some(1), t);
    /// let mut status = NotebookValidationJobStatus { message: Some("kept".into()), ..Default::default() };
    /// RunState::Succeeded { run, completed_at: t }.write(&mut status);
    /// assert_eq!(status.phase, Some(Phase::Succeeded));
    /// assert_eq!((status.completion_time, status.retry_count), (Some(t), Some(0)));
    /// assert_eq!(status.message.as_deref(), Some("kept"));
    /// ```
    pub fn write(&self, status: &mut Status) {
        let (Some(phase), Some(run)) = (self.phase(), self.run()) else {
            status.phase = None;
            return;
        };
        status.phase = Some(phase);
        status.observed_generation = run.generation;
        status.start_time = Some(run.started_at);
        status.retry_count = Some(run.retry_count());
        status.last_retry_time = run.last_retry_at;
        status.completion_time = self.completed_at();
        status.validation_pod_name.clone_from(&run.pod);
        status.rerun = match (run.reruns, &run.rerun_request) {
            (0, None) => None,
            (count, request) => Some(RerunRecord {
                request: request
                    .as_ref()
                    .map(|r| r.as_str().to_owned())
                    .unwrap_or_default(),
                count,
            }),
        };
        run.build.write(status);
    }

    /// The phase written in `status.phase`; `None` when no run is recorded.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::RunState;
    ///
    /// assert_eq!(RunState::NotStarted.phase(), None);
    /// ```
    pub const fn phase(&self) -> Option<Phase> {
        match self {
            RunState::NotStarted => None,
            RunState::Initializing(_) => Some(Phase::Initializing),
            RunState::Building(_) => Some(Phase::Building),
            RunState::BuildComplete(_) => Some(Phase::BuildComplete),
            RunState::ValidationRunning(_) => Some(Phase::ValidationRunning),
            RunState::Succeeded { .. } => Some(Phase::Succeeded),
            RunState::Failed { .. } => Some(Phase::Failed),
        }
    }

    /// The recorded run; `None` when there is none.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::RunState;
    ///
    /// assert!(RunState::NotStarted.run().is_none());
    /// ```
    pub const fn run(&self) -> Option<&Run> {
        match self {
            RunState::NotStarted => None,
            RunState::Initializing(run)
            | RunState::Building(run)
            | RunState::BuildComplete(run)
            | RunState::ValidationRunning(run)
            | RunState::Succeeded { run, .. }
            | RunState::Failed { run, .. } => Some(run),
        }
    }

    /// When the run ended; `None` while it has not.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::RunState;
    ///
    /// assert_eq!(RunState::NotStarted.completed_at(), None);
    /// ```
    pub const fn completed_at(&self) -> Option<DateTime<Utc>> {
        match self {
            RunState::Succeeded { completed_at, .. } | RunState::Failed { completed_at, .. } => {
                Some(*completed_at)
            }
            _ => None,
        }
    }

    /// When the scheduled retry may start: while the run waits in `Initializing`
    /// after a retry was scheduled, `lastRetryTime + backoff(retryCount)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{Duration, TimeZone, Utc};
    /// use nbv_core::phase::{RetryPolicy, Run, RunState};
    ///
    /// let t = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let run = Run { retries: 2, last_retry_at: Some(t), ..Run::new(Some(1), t) };
    /// let due = RunState::Initializing(run).retry_due(&RetryPolicy::default());
    /// assert_eq!(due, Some(t + Duration::minutes(2)));
    /// ```
    pub fn retry_due(&self, policy: &RetryPolicy) -> Option<DateTime<Utc>> {
        let RunState::Initializing(run) = self else {
            return None;
        };
        let at = run.last_retry_at.filter(|_| run.retries > 0)?;
        Some(add(at, policy.backoff(run.retries)))
    }

    /// The same state, adopted for `generation`.
    pub(super) fn adopted(mut self, generation: i64) -> Self {
        if let Some(run) = self.run_mut() {
            run.generation = Some(generation);
        }
        self
    }

    fn run_mut(&mut self) -> Option<&mut Run> {
        match self {
            RunState::NotStarted => None,
            RunState::Initializing(run)
            | RunState::Building(run)
            | RunState::BuildComplete(run)
            | RunState::ValidationRunning(run)
            | RunState::Succeeded { run, .. }
            | RunState::Failed { run, .. } => Some(run),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::{TimeDelta, TimeZone};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
    use proptest::prelude::*;

    use super::super::adopt::normalize;
    use super::*;
    use crate::api::{CellResult, EffectLedger};

    /// 2026-01-24T22:00:00Z plus `minutes`.
    fn at(minutes: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap() + TimeDelta::minutes(minutes)
    }

    fn arb_time() -> impl Strategy<Value = DateTime<Utc>> {
        (-30i64..600, prop_oneof![Just(0u32), 0u32..1_000_000_000])
            .prop_map(|(minutes, nanos)| at(minutes) + TimeDelta::nanoseconds(i64::from(nanos)))
    }

    fn arb_policy() -> impl Strategy<Value = RetryPolicy> {
        (0u32..5, 1u64..300, 1u32..4, 0u64..3600).prop_map(|(max, base, factor, extra)| {
            RetryPolicy::new(
                max,
                Duration::from_secs(base),
                factor,
                Duration::from_secs(base + extra),
            )
            .unwrap()
        })
    }

    fn arb_build_phase() -> impl Strategy<Value = Option<BuildPhase>> {
        prop::option::of(prop::sample::select(vec![
            BuildPhase::Pending,
            BuildPhase::Running,
            BuildPhase::Complete,
            BuildPhase::Failed,
        ]))
    }

    fn arb_condition() -> impl Strategy<Value = Condition> {
        (
            prop::sample::select(vec!["Ready", "Retrying", "PodAdmitted", "TriggersFailed"]),
            prop::sample::select(vec!["True", "False", "Unknown"]),
            arb_time(),
            prop::option::of(1i64..=3),
        )
            .prop_map(|(type_, status, time, generation)| Condition {
                last_transition_time: Time(
                    k8s_openapi::jiff::Timestamp::from_second(time.timestamp()).unwrap(),
                ),
                message: "m".to_owned(),
                observed_generation: generation,
                reason: "Evicted".to_owned(),
                status: status.to_owned(),
                type_: type_.to_owned(),
            })
    }

    /// Any status the API server could hold: every phase (legacy ones too), counts out
    /// of range, times in any order, duplicated or disagreeing conditions.
    fn arb_status() -> impl Strategy<Value = Status> {
        (
            (
                prop::option::of(prop::sample::select(Phase::ALL.to_vec())),
                prop::option::of(-2i32..7),
                prop::option::of(arb_time()),
                prop::option::of(arb_time()),
                prop::option::of(arb_time()),
                prop::option::of(1i64..=3),
            ),
            (
                prop::option::of(prop::collection::vec(arb_condition(), 0..4)),
                prop::option::of(prop::sample::select(vec!["", "Validation pod running"])),
                prop::option::of(prop::sample::select(vec!["p0", "train-g1-r0"])),
                prop::option::of((
                    arb_build_phase(),
                    prop::option::of(Just("build-a".to_owned())),
                    prop::option::of(Just("img:a".to_owned())),
                )),
                any::<bool>(),
                any::<bool>(),
            ),
        )
            .prop_map(
                |(
                    (phase, retry_count, start_time, completion_time, last_retry_time, generation),
                    (conditions, message, pod_name, build, effects, results),
                )| Status {
                    phase,
                    conditions,
                    start_time,
                    completion_time,
                    message: message.map(str::to_owned),
                    retry_count,
                    last_retry_time,
                    validation_pod_name: pod_name.map(str::to_owned),
                    results: results.then(|| vec![CellResult::default()]),
                    build_status: build.map(|(phase, build_name, image_reference)| BuildStatus {
                        phase,
                        build_name,
                        image_reference,
                        ..BuildStatus::default()
                    }),
                    observed_generation: generation,
                    effects: effects.then(|| EffectLedger::for_run("g1/run")),
                    ..Status::default()
                },
            )
    }

    /// Every state [`RunState::read`] can give under `policy`: the run's rules hold.
    fn arb_state(policy: RetryPolicy) -> impl Strategy<Value = RunState> {
        let stages = vec![
            BuildStage::NotRequested,
            BuildStage::Pending,
            BuildStage::Running,
            BuildStage::Complete,
            BuildStage::Failed,
        ];
        let name = || prop::option::of(prop::sample::select(vec!["a", "b"]));
        (
            (
                0usize..7,
                prop::option::of(1i64..=3),
                arb_time(),
                0..=policy.max_retries(),
                prop::option::of(0i64..600),
                0i64..600,
            ),
            (prop::sample::select(stages), name(), name(), name()),
            (0u32..3, name()),
        )
            .prop_map(
                |(
                    (variant, generation, started_at, retries, retry_after, end_after),
                    (stage, build_name, image, pod),
                    (reruns, request),
                )| {
                    let last_retry_at = retry_after
                        .filter(|_| retries > 0)
                        .map(|m| started_at + TimeDelta::minutes(m));
                    // A run that has retried, or is past its build, has none underway.
                    let past_build = retries > 0 || matches!(variant, 3 | 4);
                    let stage = match stage {
                        stage if stage.is_underway() && past_build => BuildStage::Complete,
                        BuildStage::Running if variant == 1 => BuildStage::Complete,
                        stage => stage,
                    };
                    let run = Run {
                        generation,
                        started_at,
                        retries,
                        last_retry_at,
                        build: Build {
                            stage,
                            name: build_name.map(|n| format!("build-{n}")),
                            image: image.map(|i| format!("img:{i}")),
                        },
                        pod: pod.map(|p| format!("pod-{p}")),
                        reruns,
                        rerun_request: request.and_then(RerunRequest::new),
                    };
                    let completed_at =
                        last_retry_at.unwrap_or(started_at) + TimeDelta::minutes(end_after);
                    match variant {
                        0 => RunState::NotStarted,
                        1 => RunState::Initializing(run),
                        2 => RunState::Building(run),
                        3 => RunState::BuildComplete(run),
                        4 => RunState::ValidationRunning(run),
                        5 => RunState::Succeeded { run, completed_at },
                        _ => RunState::Failed { run, completed_at },
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Writing a state and reading it back gives the same state, whatever the
        /// status it was written into and whenever it is read.
        #[test]
        fn read_of_write_is_the_state(
            (policy, state) in arb_policy().prop_flat_map(|p| (Just(p), arb_state(p))),
            onto in prop_oneof![Just(Status::default()), arb_status()],
            now in arb_time(),
        ) {
            let mut status = onto.clone();
            state.write(&mut status);
            prop_assert_eq!(RunState::read(&status, now, &policy), state.clone());
            // Writing again changes nothing more.
            let mut again = status.clone();
            state.write(&mut again);
            prop_assert_eq!(again, status);
        }

        /// Whatever a status says, the state read from it, once written, is a fixed
        /// point: reading gives it back, normalizing changes nothing more, and
        /// normalizing the status gives the same state.
        #[test]
        fn a_read_state_written_is_a_fixed_point(
            status in arb_status(),
            policy in arb_policy(),
            now in arb_time(),
            later in arb_time(),
        ) {
            let state = RunState::read(&status, now, &policy);
            let mut written = status.clone();
            state.write(&mut written);
            prop_assert_eq!(RunState::read(&written, later, &policy), state.clone());

            let mut normalized = status.clone();
            normalize(&mut normalized, now, &policy);
            prop_assert_eq!(RunState::read(&normalized, later, &policy), state.clone());
            let mut twice = normalized.clone();
            normalize(&mut twice, later, &policy);
            prop_assert_eq!(&twice, &normalized);
            let mut rewritten = normalized.clone();
            state.write(&mut rewritten);
            prop_assert_eq!(&rewritten, &normalized);
            if state == RunState::NotStarted {
                prop_assert_eq!(&normalized, &status);
            }
        }
    }
}
