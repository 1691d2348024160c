//! The incremental per-Application index of job outcomes.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::custody::Custody;
use super::keys::{AppId, AppRef, JobKey};
use crate::api::JobPhase;

/// The outcome counts of one Application's jobs.
///
/// `total` and `failed` are derived, so `total = succeeded + failed + running` and
/// `failed` = the number of failed jobs hold by construction.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::Aggregate;
///
/// let empty = Aggregate::default();
/// assert_eq!(empty.total(), 0);
/// assert_eq!(empty.summary(), "No notebook validation jobs");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Aggregate {
    /// Jobs that succeeded or run, per namespace: what an Application answers for is
    /// decided per namespace ([`Aggregate::within`]).
    counts: BTreeMap<String, Counts>,
    failed_jobs: BTreeSet<String>,
}

/// The jobs of one namespace that succeeded or run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Counts {
    succeeded: u64,
    running: u64,
}

/// Returned for Applications the index does not know: they have no jobs.
static EMPTY: Aggregate = Aggregate {
    counts: BTreeMap::new(),
    failed_jobs: BTreeSet::new(),
};

impl Aggregate {
    /// Number of jobs.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::Aggregate;
    ///
    /// assert_eq!(Aggregate::default().total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.succeeded() + self.running() + self.failed()
    }

    /// Number of jobs whose run succeeded.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::Aggregate;
    ///
    /// assert_eq!(Aggregate::default().succeeded(), 0);
    /// ```
    pub fn succeeded(&self) -> u64 {
        self.counts.values().map(|c| c.succeeded).sum()
    }

    /// Number of jobs whose run failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::Aggregate;
    ///
    /// assert_eq!(Aggregate::default().failed(), 0);
    /// ```
    pub fn failed(&self) -> u64 {
        // A set of at most usize elements always fits in u64 on supported targets.
        u64::try_from(self.failed_jobs.len()).unwrap_or(u64::MAX)
    }

    /// Number of jobs whose run has not ended.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::Aggregate;
    ///
    /// assert_eq!(Aggregate::default().running(), 0);
    /// ```
    pub fn running(&self) -> u64 {
        self.counts.values().map(|c| c.running).sum()
    }

    /// The failed jobs as `namespace/name`, sorted, each once.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
    ///
    /// let app = AppId::new(None, "ml")?;
    /// let parent = AppRef { app: app.clone(), source: ParentSource::InstanceLabel };
    /// let mut index = AggregateIndex::new();
    /// index.upsert(JobKey::new("ml", "b"), Some(parent.clone()), JobPhase::Failed);
    /// index.upsert(JobKey::new("ml", "a"), Some(parent), JobPhase::Failed);
    /// assert!(index.aggregate(&app).failed_jobs().eq(["ml/a", "ml/b"]));
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn failed_jobs(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator {
        self.failed_jobs.iter().map(String::as_str)
    }

    /// The jobs of this aggregate whose namespace `custody` covers: what the
    /// Application answers for, whichever jobs name it.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, Custody, JobKey, JobPhase, ParentSource};
    /// use serde_json::json;
    ///
    /// let app = AppId::new(Some("argocd"), "fraud")?;
    /// let parent = AppRef { app: app.clone(), source: ParentSource::PartOfLabel };
    /// let mut index = AggregateIndex::new();
    /// index.upsert(JobKey::new("ml", "train"), Some(parent.clone()), JobPhase::Succeeded);
    /// index.upsert(JobKey::new("team-b", "paint"), Some(parent), JobPhase::Failed);
    /// let fraud = json!({"metadata": {"namespace": "argocd"}, "spec": {"destination": {
    ///     "server": "https://kubernetes.default.svc", "namespace": "ml"}}});
    /// let answered = index.aggregate(&app).within(&Custody::of(&fraud));
    /// assert_eq!((answered.succeeded(), answered.failed()), (1, 0));
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn within(&self, custody: &Custody) -> Aggregate {
        let covered = |job: &str| {
            job.split_once('/')
                .is_some_and(|(ns, _)| custody.covers(ns))
        };
        Aggregate {
            counts: self
                .counts
                .iter()
                .filter(|(namespace, _)| custody.covers(namespace))
                .map(|(namespace, counts)| (namespace.clone(), *counts))
                .collect(),
            failed_jobs: self
                .failed_jobs
                .iter()
                .filter(|job| covered(job))
                .cloned()
                .collect(),
        }
    }

    fn add(&mut self, job: &JobKey, phase: JobPhase) {
        if let JobPhase::Failed = phase {
            self.failed_jobs.insert(job.to_string());
            return;
        }
        let counts = self.counts.entry(job.namespace().to_owned()).or_default();
        match phase {
            JobPhase::Running => counts.running += 1,
            _ => counts.succeeded += 1,
        }
    }

    fn subtract(&mut self, job: &JobKey, phase: JobPhase) {
        // Saturating: the index only subtracts what it added, but it must not panic if
        // that ever stopped being true.
        if let JobPhase::Failed = phase {
            self.failed_jobs.remove(&job.to_string());
            return;
        }
        let Some(counts) = self.counts.get_mut(job.namespace()) else {
            return;
        };
        match phase {
            JobPhase::Running => counts.running = counts.running.saturating_sub(1),
            _ => counts.succeeded = counts.succeeded.saturating_sub(1),
        }
        if *counts == Counts::default() {
            self.counts.remove(job.namespace());
        }
    }

    fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.failed_jobs.is_empty()
    }
}

/// What the index remembers about one job.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tracked {
    /// The key of the Application's entry in `apps`, shared by all its jobs: the index
    /// keeps each Application's name once, not once per job.
    app: Option<Arc<AppId>>,
    phase: JobPhase,
}

/// Per-Application job counts, kept up to date one watch event at a time.
///
/// Feed it every job event: [`AggregateIndex::upsert`] for an add or update (with the
/// job's parent from [`parent_application`](super::parent_application) and its phase),
/// [`AggregateIndex::remove`] for a delete. Each call costs O(1) amortised hash-map work,
/// plus O(log F) when a job enters or leaves the sorted failed set (F failed jobs of
/// that Application), and returns the Applications whose aggregate changed: those are
/// the ones to publish. Nothing ever scans all jobs.
///
/// Jobs without a parent are remembered (so that a later update that adds a tracking
/// label is counted correctly) but belong to no aggregate. An Application whose last job
/// leaves is forgotten; [`AggregateIndex::aggregate`] then reports it as empty, which
/// is what must be published to it one last time.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
///
/// let a = AppId::new(None, "a")?;
/// let b = AppId::new(None, "b")?;
/// let in_app = |app: &AppId| Some(AppRef { app: app.clone(), source: ParentSource::InstanceLabel });
/// let job = JobKey::new("ml", "train");
///
/// let mut index = AggregateIndex::new();
/// assert_eq!(index.upsert(job.clone(), in_app(&a), JobPhase::Running), vec![a.clone()]);
/// // Same facts again: nothing to publish.
/// assert!(index.upsert(job.clone(), in_app(&a), JobPhase::Running).is_empty());
/// // Moving to another Application changes both.
/// assert_eq!(index.upsert(job.clone(), in_app(&b), JobPhase::Succeeded), vec![a.clone(), b.clone()]);
/// assert_eq!(index.aggregate(&a).total(), 0);
/// assert_eq!(index.aggregate(&b).succeeded(), 1);
/// assert_eq!(index.remove(&job), vec![b]);
/// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct AggregateIndex {
    jobs: HashMap<JobKey, Tracked>,
    apps: HashMap<Arc<AppId>, Aggregate>,
}

impl AggregateIndex {
    /// An empty index.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::AggregateIndex;
    ///
    /// assert_eq!(AggregateIndex::new().applications().count(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `job` exists with this parent and phase. Returns the Applications
    /// whose aggregate changed (none, one, or the old and the new parent), sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
    ///
    /// let app = AppId::new(None, "ml")?;
    /// let parent = AppRef { app: app.clone(), source: ParentSource::TrackingId };
    /// let mut index = AggregateIndex::new();
    /// let job = JobKey::new("ml", "train");
    /// index.upsert(job.clone(), Some(parent.clone()), JobPhase::Running);
    /// assert_eq!(index.upsert(job, Some(parent), JobPhase::Failed), vec![app.clone()]);
    /// assert_eq!(index.aggregate(&app).failed(), 1);
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn upsert(&mut self, job: JobKey, parent: Option<AppRef>, phase: JobPhase) -> Vec<AppId> {
        let new = Tracked {
            app: parent.map(|parent| self.shared(parent.app)),
            phase,
        };
        let old = match self.jobs.get_mut(&job) {
            Some(slot) if *slot == new => return Vec::new(),
            Some(slot) => Some(std::mem::replace(slot, new.clone())),
            None => {
                self.jobs.insert(job.clone(), new.clone());
                None
            }
        };
        if let Some(old) = &old {
            self.subtract(&job, old);
        }
        self.add(&job, &new);
        let mut changed: Vec<AppId> = old
            .and_then(|old| old.app)
            .into_iter()
            .chain(new.app)
            .map(Arc::unwrap_or_clone)
            .collect();
        changed.sort_unstable();
        changed.dedup();
        changed
    }

    /// Forgets `job`. Returns the Application whose aggregate changed, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, JobKey, JobPhase};
    ///
    /// let mut index = AggregateIndex::new();
    /// let job = JobKey::new("ml", "orphan");
    /// index.upsert(job.clone(), None, JobPhase::Running);
    /// assert!(index.remove(&job).is_empty());
    /// assert!(index.remove(&job).is_empty());
    /// ```
    pub fn remove(&mut self, job: &JobKey) -> Vec<AppId> {
        match self.jobs.remove_entry(job) {
            Some((key, old)) => {
                self.subtract(&key, &old);
                old.app.into_iter().map(Arc::unwrap_or_clone).collect()
            }
            None => Vec::new(),
        }
    }

    /// Forgets every job for which `keep` is false: how a watch that lists the jobs
    /// again (after a restart or a lost watch) drops jobs deleted while it was not
    /// looking. Returns the Applications whose aggregate changed, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
    ///
    /// let app = AppId::new(None, "ml")?;
    /// let parent = || Some(AppRef { app: app.clone(), source: ParentSource::PartOfLabel });
    /// let mut index = AggregateIndex::new();
    /// index.upsert(JobKey::new("ml", "train"), parent(), JobPhase::Succeeded);
    /// index.upsert(JobKey::new("ml", "gone"), parent(), JobPhase::Failed);
    /// assert_eq!(index.retain(|job| job.name() != "gone"), vec![app.clone()]);
    /// assert_eq!((index.aggregate(&app).total(), index.aggregate(&app).failed()), (1, 0));
    /// // Nothing more to forget.
    /// assert!(index.retain(|job| job.name() != "gone").is_empty());
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(&JobKey) -> bool) -> Vec<AppId> {
        let gone: Vec<JobKey> = self.jobs.keys().filter(|job| !keep(job)).cloned().collect();
        let mut changed: Vec<AppId> = gone.iter().flat_map(|job| self.remove(job)).collect();
        changed.sort_unstable();
        changed.dedup();
        changed
    }

    /// The current aggregate of `app` (empty when the index knows no job of it).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId};
    ///
    /// let index = AggregateIndex::new();
    /// assert_eq!(index.aggregate(&AppId::new(None, "ml")?).total(), 0);
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn aggregate(&self, app: &AppId) -> &Aggregate {
        self.apps.get(app).unwrap_or(&EMPTY)
    }

    /// The Applications that have at least one job, in no particular order (for the
    /// periodic resync).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
    ///
    /// let app = AppId::new(None, "ml")?;
    /// let mut index = AggregateIndex::new();
    /// let parent = AppRef { app: app.clone(), source: ParentSource::PartOfLabel };
    /// index.upsert(JobKey::new("ml", "train"), Some(parent), JobPhase::Running);
    /// assert!(index.applications().eq([&app]));
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn applications(&self) -> impl Iterator<Item = &AppId> {
        self.apps.keys().map(|app| &**app)
    }

    /// `app` as the index keeps it: the key of its entry, if it has one.
    fn shared(&self, app: AppId) -> Arc<AppId> {
        match self.apps.get_key_value(&app) {
            Some((key, _)) => Arc::clone(key),
            None => Arc::new(app),
        }
    }

    fn add(&mut self, job: &JobKey, tracked: &Tracked) {
        if let Some(app) = &tracked.app {
            self.apps
                .entry(Arc::clone(app))
                .or_default()
                .add(job, tracked.phase);
        }
    }

    fn subtract(&mut self, job: &JobKey, tracked: &Tracked) {
        let Some(app) = &tracked.app else { return };
        if let Entry::Occupied(mut entry) = self.apps.entry(Arc::clone(app)) {
            entry.get_mut().subtract(job, tracked.phase);
            // Forget empty Applications so that the map never grows with apps that
            // once had jobs.
            if entry.get().is_empty() {
                entry.remove();
            }
        }
    }
}
