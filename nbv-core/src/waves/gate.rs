//! The `mlops.dev/block-wave` gate: may wave N proceed?

use std::collections::BTreeMap;
use std::fmt;

use super::wave::{Wave, WaveAnnotationError, block_wave, effective_wave, wave_complete};
use crate::annotations::{ARGOCD_SYNC_WAVE, WAVE_FAILED};
use crate::api::JobPhase;

/// One job as the gate sees it: its name, its annotations and the phase of its run.
///
/// Everything comes from the job's `metadata` and `status.phase`, so a shell can build
/// it straight from a list call.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{gate, GateJob, Wave};
/// use nbv_core::api::JobPhase;
///
/// // A job without mlops.dev/block-wave never blocks anything.
/// let annotations = BTreeMap::new();
/// let job = GateJob { name: "lint", annotations: &annotations, phase: JobPhase::Failed };
/// assert_eq!(gate(Wave::new(4), [job]).to_string(), "wave 4 is open: no job blocks it");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateJob<'a> {
    /// The job's `metadata.name`.
    pub name: &'a str,
    /// The job's `metadata.annotations`.
    pub annotations: &'a BTreeMap<String, String>,
    /// The phase of the job's current run.
    pub phase: JobPhase,
}

/// Why a job closes a gate for good (until someone acts).
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{gate, FailureReason, GateDecision, GateJob, Wave};
/// use nbv_core::api::JobPhase;
///
/// let annotations = BTreeMap::from([("mlops.dev/block-wave".to_string(), "4".to_string())]);
/// let job = GateJob { name: "train", annotations: &annotations, phase: JobPhase::Running };
/// let GateDecision::Failed { failed, .. } = gate(Wave::new(4), [job]) else { panic!() };
/// assert_eq!(failed[0].reason, FailureReason::NoSyncWave);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureReason {
    /// The job's last run failed: its phase is `Failed` or it carries
    /// `mlops.dev/wave-failed`.
    RunFailed,
    /// A wave annotation the gate needs cannot be read. For `mlops.dev/block-wave` this
    /// means nobody can tell which wave the job blocks, so it fails every gate rather
    /// than none: a gate fails safe.
    Unreadable(WaveAnnotationError),
    /// The job blocks the wave but declares no wave (no `argocd.argoproj.io/sync-wave`
    /// nor `helm.sh/hook-weight`), so nbv never records that it completed a wave and
    /// the gate could never open.
    NoSyncWave,
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureReason::RunFailed => {
                f.write_str("its last run failed; the gate stays closed until a new run succeeds")
            }
            FailureReason::Unreadable(error) => write!(f, "{error}"),
            FailureReason::NoSyncWave => write!(
                f,
                "it has {} but no {ARGOCD_SYNC_WAVE} annotation, so its wave completion is \
                 never recorded; add {ARGOCD_SYNC_WAVE} to the job",
                crate::annotations::BLOCK_WAVE
            ),
        }
    }
}

/// A job that makes the gate fail, and why.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{gate, GateDecision, GateJob, Wave};
/// use nbv_core::api::JobPhase;
///
/// let annotations = BTreeMap::from([("mlops.dev/block-wave".to_string(), "four".to_string())]);
/// let job = GateJob { name: "train", annotations: &annotations, phase: JobPhase::Running };
/// let GateDecision::Failed { failed, .. } = gate(Wave::new(4), [job]) else { panic!() };
/// assert_eq!(failed[0].job, "train");
/// assert!(failed[0].to_string().starts_with("train (annotation mlops.dev/block-wave: \"four\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GateFailure {
    /// The job's name.
    pub job: String,
    /// Why it fails the gate.
    pub reason: FailureReason,
}

impl fmt::Display for GateFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.job, self.reason)
    }
}

/// Whether wave N may proceed, with the jobs that decided it. Names are sorted.
///
/// [`Display`](fmt::Display) gives the message `nbv wait` prints, for example
/// `wave 4 is waiting on 2 jobs: a, b`; it lists at most [`GateDecision::MAX_LISTED`]
/// jobs and says how many more there are.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{gate, GateDecision, GateJob, Wave};
/// use nbv_core::api::JobPhase;
///
/// let annotations = BTreeMap::from([
///     ("argocd.argoproj.io/sync-wave".to_string(), "3".to_string()),
///     ("mlops.dev/block-wave".to_string(), "4".to_string()),
/// ]);
/// let jobs = ["b", "a"].map(|name| GateJob { name, annotations: &annotations, phase: JobPhase::Running });
/// let decision = gate(Wave::new(4), jobs);
/// assert_eq!(
///     decision,
///     GateDecision::Waiting { wave: Wave::new(4), on: vec!["a".into(), "b".into()] }
/// );
/// assert_eq!(decision.to_string(), "wave 4 is waiting on 2 jobs: a, b");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GateDecision {
    /// Every job that blocks the wave has completed its own wave. `satisfied` is empty
    /// when no job blocks the wave at all: a gate nobody holds is open.
    Open {
        /// The gated wave.
        wave: Wave,
        /// The blocking jobs, all completed.
        satisfied: Vec<String>,
    },
    /// No blocking job failed, but these have not completed their wave yet.
    Waiting {
        /// The gated wave.
        wave: Wave,
        /// The blocking jobs still to complete.
        on: Vec<String>,
    },
    /// At least one blocking job failed or is misconfigured: waiting would not help.
    Failed {
        /// The gated wave.
        wave: Wave,
        /// The failing jobs, with reasons.
        failed: Vec<GateFailure>,
    },
}

impl GateDecision {
    /// How many jobs a message names before it says "and N more".
    pub const MAX_LISTED: usize = 10;

    /// The gated wave.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::waves::{gate, Wave};
    ///
    /// assert_eq!(gate(Wave::new(4), []).wave(), Wave::new(4));
    /// ```
    pub fn wave(&self) -> Wave {
        match self {
            GateDecision::Open { wave, .. }
            | GateDecision::Waiting { wave, .. }
            | GateDecision::Failed { wave, .. } => *wave,
        }
    }

    /// Whether the wave may proceed.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::waves::{gate, Wave};
    ///
    /// assert!(gate(Wave::new(4), []).is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        matches!(self, GateDecision::Open { .. })
    }
}

/// Writes "a, b, c, and 2 more".
fn list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T], sep: &str) -> fmt::Result {
    for (i, item) in items.iter().take(GateDecision::MAX_LISTED).enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write!(f, "{item}")?;
    }
    let rest = items.len().saturating_sub(GateDecision::MAX_LISTED);
    if rest > 0 {
        write!(f, "{sep}and {rest} more")?;
    }
    Ok(())
}

fn jobs(n: usize) -> &'static str {
    if n == 1 { "job" } else { "jobs" }
}

impl fmt::Display for GateDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateDecision::Open { wave, satisfied } if satisfied.is_empty() => {
                write!(f, "wave {wave} is open: no job blocks it")
            }
            GateDecision::Open { wave, satisfied } => {
                let n = satisfied.len();
                let (has, wave_s) = if n == 1 {
                    ("has", "its wave")
                } else {
                    ("have", "their waves")
                };
                write!(
                    f,
                    "wave {wave} is open: {n} blocking {} {has} completed {wave_s}: ",
                    jobs(n)
                )?;
                list(f, satisfied, ", ")
            }
            GateDecision::Waiting { wave, on } => {
                write!(
                    f,
                    "wave {wave} is waiting on {} {}: ",
                    on.len(),
                    jobs(on.len())
                )?;
                list(f, on, ", ")
            }
            GateDecision::Failed { wave, failed } => {
                write!(
                    f,
                    "wave {wave} cannot proceed: {} blocking {} failed: ",
                    failed.len(),
                    jobs(failed.len())
                )?;
                list(f, failed, "; ")
            }
        }
    }
}

/// What one job contributes to a gate.
enum Verdict {
    NotBlocking,
    Satisfied,
    Waiting,
    Failed(FailureReason),
}

fn verdict(wave: Wave, job: &GateJob<'_>) -> Verdict {
    match block_wave(job.annotations) {
        Ok(Some(blocked)) if blocked == wave => {}
        Ok(_) => return Verdict::NotBlocking,
        Err(error) => return Verdict::Failed(FailureReason::Unreadable(error)),
    }
    // The wave Argo CD puts the job in, the same one nbv records on it.
    let own_wave = match effective_wave(job.annotations).wave {
        Some(own) => own,
        None => return Verdict::Failed(FailureReason::NoSyncWave),
    };
    if job.phase == JobPhase::Failed || job.annotations.contains_key(WAVE_FAILED) {
        return Verdict::Failed(FailureReason::RunFailed);
    }
    // A wave-complete for another wave is the record of an older configuration, and an
    // unreadable one proves nothing: both mean "not completed yet", never "failed", since
    // nbv rewrites the record when the run ends.
    let completed = matches!(wave_complete(job.annotations), Ok(Some(done)) if done == own_wave);
    if completed && job.phase == JobPhase::Succeeded {
        Verdict::Satisfied
    } else {
        Verdict::Waiting
    }
}

/// Decides whether wave `wave` may proceed, given the jobs that may block it.
///
/// A job *blocks* wave N when its `mlops.dev/block-wave` is N. Then:
///
/// 1. **Failed** when a blocking job's last run failed (phase `Failed` or
///    `mlops.dev/wave-failed` present), when a blocking job has no readable
///    `argocd.argoproj.io/sync-wave`, or when any job's `mlops.dev/block-wave` cannot be
///    read (nobody can tell whether it blocks this wave, so the gate fails safe).
/// 2. **Waiting** when a blocking job has not completed its own wave: its phase is not
///    `Succeeded`, or `mlops.dev/wave-complete` is missing or names another wave than
///    its current sync-wave.
/// 3. **Open** otherwise, including when no job blocks the wave.
///
/// The result does not depend on the order of `jobs`: every list is sorted.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{gate, GateJob, Wave};
/// use nbv_core::api::JobPhase;
///
/// let train = BTreeMap::from([
///     ("argocd.argoproj.io/sync-wave".to_string(), "3".to_string()),
///     ("mlops.dev/block-wave".to_string(), "4".to_string()),
/// ]);
/// let running = GateJob { name: "train", annotations: &train, phase: JobPhase::Running };
/// let decision = gate(Wave::new(4), [running]);
/// assert_eq!(decision.to_string(), "wave 4 is waiting on 1 job: train");
///
/// let mut done = train.clone();
/// done.insert("mlops.dev/wave-complete".to_string(), "3".to_string());
/// let succeeded = GateJob { name: "train", annotations: &done, phase: JobPhase::Succeeded };
/// assert!(gate(Wave::new(4), [succeeded]).is_open());
/// ```
pub fn gate<'a>(wave: Wave, jobs: impl IntoIterator<Item = GateJob<'a>>) -> GateDecision {
    let mut satisfied = Vec::new();
    let mut waiting = Vec::new();
    let mut failed = Vec::new();
    for job in jobs {
        match verdict(wave, &job) {
            Verdict::NotBlocking => {}
            Verdict::Satisfied => satisfied.push(job.name.to_owned()),
            Verdict::Waiting => waiting.push(job.name.to_owned()),
            Verdict::Failed(reason) => failed.push(GateFailure {
                job: job.name.to_owned(),
                reason,
            }),
        }
    }
    if !failed.is_empty() {
        failed.sort_unstable();
        GateDecision::Failed { wave, failed }
    } else if !waiting.is_empty() {
        waiting.sort_unstable();
        GateDecision::Waiting { wave, on: waiting }
    } else {
        satisfied.sort_unstable();
        GateDecision::Open { wave, satisfied }
    }
}
