//! What must hold after any simulation, whatever faults and restarts happened: five
//! invariants, checked over the in-memory cluster's change history and request log.
//!
//! | # | invariant |
//! |---|---|
//! | 1 | Each trigger of each successful run takes effect exactly once: one rolling-restart value per run on the workload's template, one refresh value per run, one sync operation per run, pods of an InferenceService deleted only if created before the run ended and none of those left running; nothing nbv writes matches no successful run; a trigger that does not take effect is recorded as failed in the job's status, and the status of a run holds no record of an earlier run. |
//! | 2 | Wave annotations match the last terminal phase of each job (`wave-complete` or `wave-failed` and `completion-time`); a new run clears them. |
//! | 3 | Every Application shows the true aggregate of its jobs, and no Application is patched more than once per minute by one operator. |
//! | 4 | Exactly one notification Event per terminal transition, and none for anything else. |
//! | 5 | nbv changes no field it does not own, creates only Events (and validation Pods, Leases), deletes only Pods; a job with a malformed annotation gets its `InvalidAnnotation` Event and a `False` `AnnotationsValid` condition, and a job without one never does. |
//!
//! # Time allowed
//!
//! "Eventually" needs a bound. An effect owed at time *t* must be in place once the
//! operator has run for [`Settings::react_within`] since *t* (an operator that is down
//! cannot act; a restart starts the wait again), and an Application must show a change
//! once the operator has run for [`Settings::publish_within`]. When the simulation
//! disturbs the operator (faults, dropped watches, restarts), each bound grows by
//! [`Settings::disturbed_slack`]: retries back off (10 s doubling for effects, 30 s for
//! Application patches, kube-runtime's watcher backoff up to 30 s), and a fault may hit
//! the same request several times. Whatever did not have that long before the
//! simulation ended, or before the next change made it moot, is checked only for
//! "at most once".
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_testkit::FakeCluster;
//! use nbv_testkit::invariants::{Observation, Settings, Uptime, check_all};
//! use nbv_testkit::scenario::Mode;
//!
//! let cluster = FakeCluster::default();
//! cluster.apply_object(nbv_testkit::fixtures::namespace("ml"))?;
//! let start = cluster.now();
//! let history = cluster.history();
//! let requests = cluster.requests();
//! let uptimes = [Uptime { started: start, stopped: None }];
//! let observation = Observation {
//!     history: &history,
//!     requests: &requests,
//!     end: start,
//!     mode: Mode::GitopsOnly,
//!     uptimes: &uptimes,
//!     disturbed: false,
//!     settings: Settings::default(),
//! };
//! assert!(check_all(&observation).is_empty());
//! # Ok::<(), nbv_testkit::cluster::ClusterError>(())
//! ```

mod applications;
mod diff;
mod notifications;
mod ownership;
mod replay;
mod runs;
mod triggers;
mod waves;

use std::fmt;

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;

use crate::cluster::{Change, RequestRecord};
use crate::scenario::Mode;
use nbv_core::api::Phase;

pub use applications::applications_show_their_aggregate;
pub use notifications::one_notification_per_terminal_transition;
pub use ownership::nbv_changes_only_what_it_owns;
pub use triggers::triggers_take_effect_once;
pub use waves::wave_annotations_follow_the_phase;

/// When an operator ran: from `started` until `stopped` (`None`: still running at the
/// end of the simulation).
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_testkit::invariants::Uptime;
///
/// let now = Utc::now();
/// let uptime = Uptime { started: now, stopped: None };
/// assert!(uptime.stopped.is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uptime {
    /// When the operator started.
    pub started: DateTime<Utc>,
    /// When it stopped.
    pub stopped: Option<DateTime<Utc>>,
}

/// The time bounds of the invariants (see the [module documentation](self)).
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::Settings;
///
/// let settings = Settings::default();
/// assert_eq!(settings.publish_interval.num_seconds(), 60);
/// assert_eq!(settings.application_namespaces, ["argocd"]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// How long a running operator may take to carry out what a change owes (trigger,
    /// wave annotations, notification). Default 60 s.
    pub react_within: TimeDelta,
    /// How long a running operator may take to publish an Application's new aggregate.
    /// Default 65 s: the 60 s rate limit plus the time to see the change.
    pub publish_within: TimeDelta,
    /// Added to both bounds when the simulation disturbs the operator. Default 5 min.
    pub disturbed_slack: TimeDelta,
    /// The least time between two status patches of one Application by one operator.
    /// Default 60 s.
    pub publish_interval: TimeDelta,
    /// Where Applications named without a namespace are looked up, in order, before the
    /// jobs' own namespaces (the operator's `--application-namespaces`).
    pub application_namespaces: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            react_within: TimeDelta::seconds(60),
            publish_within: TimeDelta::seconds(65),
            disturbed_slack: TimeDelta::minutes(5),
            publish_interval: TimeDelta::seconds(60),
            application_namespaces: vec!["argocd".to_owned()],
        }
    }
}

/// Everything a simulation observed.
///
/// The history must start with the cluster (the in-memory cluster keeps its last 100 000
/// changes; a longer simulation would lose its beginning).
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::{Observation, Settings, Uptime};
/// use nbv_testkit::scenario::Mode;
///
/// let end = chrono::Utc::now();
/// let uptimes = [Uptime { started: end, stopped: None }];
/// let observation = Observation {
///     history: &[], requests: &[], end, mode: Mode::Default, uptimes: &uptimes,
///     disturbed: true, settings: Settings::default(),
/// };
/// assert!(nbv_testkit::invariants::check_all(&observation).is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Observation<'a> {
    /// Every committed change, oldest first ([`FakeCluster::history`](crate::FakeCluster::history)).
    pub history: &'a [Change],
    /// Every request ([`FakeCluster::requests`](crate::FakeCluster::requests)).
    pub requests: &'a [RequestRecord],
    /// When the simulation ended.
    pub end: DateTime<Utc>,
    /// Who runs the phases: in [`Mode::Default`] nbv owns the whole job status.
    pub mode: Mode,
    /// When an operator ran, in order.
    pub uptimes: &'a [Uptime],
    /// Whether faults, dropped watches or restarts disturbed the operator.
    pub disturbed: bool,
    /// The time bounds.
    pub settings: Settings,
}

impl Observation<'_> {
    /// The time by which an operator has run for `within` since `from`, counting only
    /// time it was up and starting again after each restart; `None` when that never
    /// happened before the end of the simulation.
    fn deadline(&self, from: DateTime<Utc>, within: TimeDelta) -> Option<DateTime<Utc>> {
        self.uptimes.iter().find_map(|uptime| {
            let start = from.max(uptime.started);
            let due = start.checked_add_signed(within)?;
            let until = uptime.stopped.unwrap_or(self.end).min(self.end);
            (due <= until).then_some(due)
        })
    }

    /// [`Settings::react_within`], with the slack when disturbed.
    fn react_within(&self) -> TimeDelta {
        self.slack(self.settings.react_within)
    }

    /// [`Settings::publish_within`], with the slack when disturbed.
    fn publish_within(&self) -> TimeDelta {
        self.slack(self.settings.publish_within)
    }

    fn slack(&self, bound: TimeDelta) -> TimeDelta {
        if self.disturbed {
            bound + self.settings.disturbed_slack
        } else {
            bound
        }
    }

    /// Whether an operator started in `(after, until]`.
    fn restarted_between(&self, after: DateTime<Utc>, until: DateTime<Utc>) -> bool {
        self.uptimes
            .iter()
            .any(|u| u.started > after && u.started <= until)
    }
}

/// A broken invariant: its number (1 to 5), when it was seen broken, and what is wrong.
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::Violation;
///
/// let v = Violation { invariant: 4, at: None, message: "two notifications".into() };
/// assert_eq!(v.to_string(), "invariant 4: two notifications");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Violation {
    /// Which invariant (1 to 5, as in the [module documentation](self)).
    pub invariant: u8,
    /// When it was seen broken, if at a point in time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<DateTime<Utc>>,
    /// What is wrong, naming the objects and values.
    pub message: String,
}

impl Violation {
    pub(crate) fn new(invariant: u8, at: Option<DateTime<Utc>>, message: String) -> Violation {
        Violation {
            invariant,
            at,
            message,
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some(at) => write!(
                f,
                "invariant {} at {}: {}",
                self.invariant,
                nbv_core::time::rfc3339(at),
                self.message
            ),
            None => write!(f, "invariant {}: {}", self.invariant, self.message),
        }
    }
}

/// Checks all five invariants; violations sorted by invariant, time and message.
///
/// # Examples
///
/// ```
/// use nbv_core::api::Phase;
/// use nbv_testkit::FakeCluster;
/// use nbv_testkit::fixtures::JobBuilder;
/// use nbv_testkit::invariants::{Observation, Settings, Uptime, check_all};
/// use nbv_testkit::scenario::Mode;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), nbv_testkit::cluster::ClusterError> {
/// let cluster = FakeCluster::default();
/// let start = cluster.now();
/// // A run that ended with nobody to notify about it.
/// cluster.apply_object(JobBuilder::new("ml", "train").phase(Phase::Failed).completed_at(start).build())?;
/// tokio::time::sleep(std::time::Duration::from_secs(120)).await;
/// let (history, requests) = (cluster.history(), cluster.requests());
/// let uptimes = [Uptime { started: start, stopped: None }];
/// let violations = check_all(&Observation {
///     history: &history, requests: &requests, end: cluster.now(), mode: Mode::GitopsOnly,
///     uptimes: &uptimes, disturbed: false, settings: Settings::default(),
/// });
/// assert_eq!(violations.len(), 1);
/// assert_eq!(violations[0].invariant, 4);
/// # Ok(()) }
/// ```
pub fn check_all(observation: &Observation<'_>) -> Vec<Violation> {
    let mut all = Vec::new();
    all.extend(triggers_take_effect_once(observation));
    all.extend(wave_annotations_follow_the_phase(observation));
    all.extend(applications_show_their_aggregate(observation));
    all.extend(one_notification_per_terminal_transition(observation));
    all.extend(nbv_changes_only_what_it_owns(observation));
    all.sort();
    all.dedup();
    all
}

/// A job's run reaching a terminal phase, as committed to the cluster.
///
/// # Examples
///
/// See [`terminal_transitions`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TerminalTransition {
    /// The job, `namespace/name`.
    pub job: String,
    /// `Succeeded` or `Failed`.
    pub phase: Phase,
    /// The run's `status.completionTime`.
    pub completed_at: DateTime<Utc>,
    /// When the terminal status was committed.
    pub committed_at: DateTime<Utc>,
    /// The run key (`g<generation>@<start>`), when the job reads as a typed job.
    pub run: Option<String>,
}

/// Every terminal transition in `history`: each time a job's status came to hold a
/// terminal phase with a completion time it did not hold just before. Ordered by job,
/// then time.
///
/// # Examples
///
/// ```
/// use nbv_core::api::Phase;
/// use nbv_testkit::FakeCluster;
/// use nbv_testkit::fixtures::JobBuilder;
/// use nbv_testkit::invariants::terminal_transitions;
///
/// let cluster = FakeCluster::default();
/// let at = cluster.now();
/// cluster.apply_object(JobBuilder::new("ml", "train").phase(Phase::Succeeded).completed_at(at).build())?;
/// let transitions = terminal_transitions(&cluster.history());
/// assert_eq!(transitions.len(), 1);
/// assert_eq!(transitions[0].job, "ml/train");
/// assert_eq!(transitions[0].phase, Phase::Succeeded);
/// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
/// ```
pub fn terminal_transitions(history: &[Change]) -> Vec<TerminalTransition> {
    let index = replay::Index::new(history);
    runs::transitions(&index)
        .into_iter()
        .map(|t| TerminalTransition {
            job: t.job.path(),
            phase: t.phase,
            completed_at: t.completed,
            committed_at: t.at,
            run: t.run,
        })
        .collect()
}
