//! When a shell looks at a job again.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The intervals of a shell's requeue policy.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::reconcile::RequeuePolicy;
///
/// let policy = RequeuePolicy::default();
/// assert_eq!(policy.after_error(true), Duration::from_secs(1));
/// assert_eq!(policy.after_error(false), Duration::from_secs(15));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequeuePolicy {
    /// How long a trigger deferred by a running Argo CD operation (or a sync followed
    /// until it ends) waits.
    pub deferred_retry: Duration,
    /// How long a job with nothing to do waits, to catch what watches missed.
    pub resync: Duration,
}

impl Default for RequeuePolicy {
    fn default() -> Self {
        RequeuePolicy {
            deferred_retry: Duration::from_secs(15),
            resync: Duration::from_secs(300),
        }
    }
}

/// How soon a write that lost a race with another writer is tried again.
const AFTER_CONFLICT: Duration = Duration::from_secs(1);

/// How soon a reconcile that failed for any other reason is tried again.
const AFTER_ERROR: Duration = Duration::from_secs(15);

impl RequeuePolicy {
    /// When to try a failed reconcile again: a write that lost a race (a conflict)
    /// soon, anything else (an API error) after a pause.
    pub fn after_error(&self, conflict: bool) -> Duration {
        if conflict {
            AFTER_CONFLICT
        } else {
            AFTER_ERROR
        }
    }
}

/// The shortest wait a requeue asks for: a time already past is looked at almost at
/// once, without spinning.
const MIN_WAIT: Duration = Duration::from_millis(100);

/// Why a job is to be looked at again, gathered over one reconcile: the one answer
/// every decision gives to "when to look again" (the phase's [`PodWork::wake`], the
/// model gate's [`ModelGate::wake`], a refused Pod's [`RefusalWork::wake`], the
/// plan's [`Plan::wake`], a trigger's [`TriggerOutcome::wake`], a followed sync's
/// [`SyncReport::wake`]), folded together with
/// [`Wake::merge`] and turned into a wait only once, at the end of the job machine
/// ([`Done::requeue`]).
///
/// [`PodWork::wake`]: super::PodWork::wake
/// [`ModelGate::wake`]: crate::models::ModelGate::wake
/// [`RefusalWork::wake`]: super::RefusalWork::wake
/// [`Plan::wake`]: crate::plan::Plan::wake
/// [`TriggerOutcome::wake`]: crate::actions::TriggerOutcome::wake
/// [`SyncReport::wake`]: crate::actions::SyncReport::wake
/// [`Done::requeue`]: crate::job::Done::requeue
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use chrono::{TimeZone, Utc};
/// use nbv_core::reconcile::{RequeuePolicy, Wake};
///
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let policy = RequeuePolicy::default();
/// assert_eq!(Wake::default().requeue(now, &policy), policy.resync);
///
/// let mut wake = Wake::default();
/// wake.busy();
/// wake.at(now + chrono::Duration::seconds(5));
/// assert_eq!(wake.requeue(now, &policy), Duration::from_secs(5));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wake {
    after: Option<Duration>,
    busy: bool,
    at: Option<DateTime<Utc>>,
}

impl Wake {
    /// Look again after `wait` at the latest.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::reconcile::{RequeuePolicy, Wake};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let wake = Wake::within(Duration::from_secs(30));
    /// assert_eq!(wake.due(now, &RequeuePolicy::default()), Some(Duration::from_secs(30)));
    /// ```
    pub fn within(wait: Duration) -> Wake {
        let mut wake = Wake::default();
        wake.after(Some(wait));
        wake
    }

    /// Look again at `at` at the latest.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::reconcile::{RequeuePolicy, Wake};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let wake = Wake::by(now + chrono::Duration::minutes(1));
    /// assert_eq!(wake.due(now, &RequeuePolicy::default()), Some(Duration::from_secs(60)));
    /// ```
    pub fn by(at: DateTime<Utc>) -> Wake {
        let mut wake = Wake::default();
        wake.at(at);
        wake
    }

    /// Something nbv follows is in progress: look again after the policy's deferred
    /// retry ([`Wake::busy`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::reconcile::{RequeuePolicy, Wake};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let policy = RequeuePolicy::default();
    /// assert_eq!(Wake::followed().due(now, &policy), Some(policy.deferred_retry));
    /// ```
    pub fn followed() -> Wake {
        let mut wake = Wake::default();
        wake.busy();
        wake
    }

    /// This and `other`: the earliest of both ([`Wake::merge`], by value).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::reconcile::Wake;
    ///
    /// let soon = Wake::within(Duration::from_secs(5));
    /// assert_eq!(soon.and(Wake::within(Duration::from_secs(60))), soon);
    /// assert_eq!(Wake::default().and(soon), soon);
    /// ```
    #[must_use]
    pub fn and(mut self, other: Wake) -> Wake {
        self.merge(other);
        self
    }

    /// Look again after `wait` at the latest, when there is one.
    pub fn after(&mut self, wait: Option<Duration>) {
        if let Some(wait) = wait {
            self.after = Some(self.after.map_or(wait, |a| a.min(wait)));
        }
    }

    /// Something is in progress that nbv follows (an Argo CD operation): look again
    /// after the policy's deferred retry.
    pub fn busy(&mut self) {
        self.busy = true;
    }

    /// Look again at `at` at the latest.
    pub fn at(&mut self, at: DateTime<Utc>) {
        self.at = Some(self.at.map_or(at, |a| a.min(at)));
    }

    /// A write lost a race with another writer: look again at once.
    pub fn conflicted(&mut self) {
        self.after(Some(AFTER_CONFLICT));
    }

    /// Folds `other` in: the earliest of both.
    pub fn merge(&mut self, other: Wake) {
        self.after(other.after);
        self.busy |= other.busy;
        if let Some(at) = other.at {
            self.at(at);
        }
    }

    /// How long to wait, from `now`: the earliest reason, or `None` when there is
    /// none and only the periodic resync is due. A shell that resyncs every job on
    /// its own schedule (`nbv run` does, paced, so that its queue does not keep an
    /// entry per job) asks for nothing then.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::reconcile::{RequeuePolicy, Wake};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let policy = RequeuePolicy::default();
    /// assert_eq!(Wake::default().due(now, &policy), None);
    ///
    /// let mut wake = Wake::default();
    /// wake.busy();
    /// assert_eq!(wake.due(now, &policy), Some(policy.deferred_retry));
    /// ```
    pub fn due(&self, now: DateTime<Utc>, policy: &RequeuePolicy) -> Option<Duration> {
        let mut wait = self.after;
        let mut sooner = |d: Duration| wait = Some(wait.map_or(d, |w| w.min(d)));
        if self.busy {
            sooner(policy.deferred_retry);
        }
        if let Some(at) = self.at {
            sooner((at - now).to_std().unwrap_or(Duration::ZERO).max(MIN_WAIT));
        }
        wait
    }

    /// How long to wait, from `now`: [`Wake::due`], or the policy's resync.
    pub fn requeue(&self, now: DateTime<Utc>, policy: &RequeuePolicy) -> Duration {
        self.due(now, policy).unwrap_or(policy.resync)
    }
}
