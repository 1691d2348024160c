//! The Application board: what every Application should show and when to publish it,
//! fed only by the jobs' watch.
//!
//! The board is an index in the manner of a Kubernetes watch consumer: one call per
//! watch event ([`Board::apply`], [`Board::delete`], and [`Board::reset`] when the
//! watch lists every job again), each O(1) in the number of jobs except the relist.
//! It holds no I/O: the shell asks it what is [`due`](Board::due), publishes, and says
//! how that went ([`Board::published`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, TimeDelta, Utc};

use super::custody::Custody;
use super::entry::JobEntry;
use super::index::{Aggregate, AggregateIndex};
use super::keys::{AppId, AppRef, JobKey};
use super::parent::TrackingSettings;
use super::publish::{MIN_INTERVAL, PublishDecision, decide_publish};
use super::status::{NotebookStatus, StatusLimit};
use crate::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use crate::api::{JobPhase, NotebookValidationJob};

/// A publication that failed is tried again no sooner than this.
pub const RETRY_INTERVAL: TimeDelta = TimeDelta::seconds(30);

/// The publication schedule of one Application.
#[derive(Clone, Debug, Default)]
struct Schedule {
    /// The last time a patch was sent (or a publish found nothing to send before any
    /// patch): the once-a-minute limit counts from here.
    last_sent: Option<DateTime<Utc>>,
    /// The last time the Application was known to show its status: the resync counts
    /// from here.
    last_synced: Option<DateTime<Utc>>,
    /// How many changes the Application's aggregate went through.
    changes: u64,
    /// How many of them the Application shows.
    shown: u64,
    /// A failed publication is tried again no sooner than this.
    retry_at: Option<DateTime<Utc>>,
}

impl Schedule {
    fn pending(&self) -> bool {
        self.changes != self.shown
    }

    /// What to do about this Application at `now`.
    fn decide(&self, now: DateTime<Utc>) -> PublishDecision {
        if let Some(retry_at) = self.retry_at.filter(|retry_at| *retry_at > now) {
            return PublishDecision::At(retry_at);
        }
        if self.pending() {
            decide_publish(self.last_sent, None, now, true)
        } else {
            decide_publish(self.last_synced, None, now, false)
        }
    }
}

/// One Application's status to publish now, from [`Board::due`].
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::aggregate::{Board, Custody, TrackingSettings};
///
/// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml",
///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
///     "status": {"phase": "Failed"}
/// }))?;
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let mut board = Board::new(TrackingSettings::default());
/// board.apply(&job);
/// let due = board.due(now);
/// assert_eq!(due.publish[0].app.name(), "fraud");
/// // An Application in `ml` answers for the jobs of `ml`.
/// let fraud = Custody::of(&serde_json::json!({"metadata": {"namespace": "ml"}}));
/// assert_eq!(board.status(&due.publish[0], &fraud, now).failed_jobs(), ["ml/train"]);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    /// The Application, as its jobs name it. What it is made to show is
    /// [`Board::status`]: only the jobs it answers for.
    pub app: AppId,
    /// The number of changes of the aggregate this status includes.
    changes: u64,
}

/// What [`Board::due`] asks of the shell.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::aggregate::{Board, TrackingSettings};
///
/// let due = Board::new(TrackingSettings::default()).due(Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// assert!(due.publish.is_empty());
/// assert_eq!(due.next, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Due {
    /// The Applications to publish now, sorted.
    pub publish: Vec<Publication>,
    /// When the next Application not in `publish` is due (`None`: none is, until a job
    /// changes).
    pub next: Option<DateTime<Utc>>,
}

/// How publishing one [`Publication`] went, for [`Board::published`].
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::PublishOutcome;
///
/// assert!(PublishOutcome::Patched.sent());
/// assert!(!PublishOutcome::NotFound.sent());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublishOutcome {
    /// The patch was applied.
    Patched,
    /// The Application already showed the status: no call was made.
    Unchanged,
    /// The Application was not found (not in the watch cache): nothing was sent.
    NotFound,
    /// The patch was sent and failed. The API server may have applied it before the
    /// answer was lost, so it counts against the once-a-minute limit.
    Failed,
}

impl PublishOutcome {
    /// Whether the Application shows the status now.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::PublishOutcome;
    ///
    /// assert!(PublishOutcome::Unchanged.succeeded());
    /// assert!(!PublishOutcome::Failed.succeeded());
    /// ```
    pub const fn succeeded(self) -> bool {
        matches!(self, PublishOutcome::Patched | PublishOutcome::Unchanged)
    }

    /// Whether a request reached (or may have reached) the API server.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::PublishOutcome;
    ///
    /// assert!(PublishOutcome::Failed.sent());
    /// assert!(!PublishOutcome::Unchanged.sent());
    /// ```
    pub const fn sent(self) -> bool {
        matches!(self, PublishOutcome::Patched | PublishOutcome::Failed)
    }
}

/// Every Application's notebook status and its publication schedule, fed by the jobs'
/// watch.
///
/// - [`Board::apply`] for a job added or changed, [`Board::delete`] for a job deleted,
///   [`Board::reset`] when the watch listed every job (at start, or after it was
///   lost): each returns the Applications whose aggregate changed. A job counts in
///   exactly the Application its tracking names, and a deleted job counts nowhere.
/// - [`Board::due`] says which Applications to publish now, with their status, and
///   when to ask again; [`Board::published`] records how it went. The policy is
///   [`decide_publish`]'s: at most one patch per Application per minute, the final
///   state always published (a trailing update), a resync every 5 minutes; a failed
///   publication is retried after [`RETRY_INTERVAL`].
/// - After a relist, [`Board::sweep`] finds the Applications that show a status but
///   have no job left (their jobs were deleted while nbv was not watching) so that
///   they are told.
///
/// An Application whose last job is gone is published once more (it then shows that
/// it has no job) and forgotten a minute later.
///
/// # Examples
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use nbv_core::aggregate::{Board, Custody, PublishOutcome, TrackingSettings};
/// use nbv_core::api::NotebookValidationJob;
///
/// let fraud = Custody::of(&serde_json::json!({"metadata": {"namespace": "ml"}}));
/// let job = |phase: &str| -> NotebookValidationJob {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": "train", "namespace": "ml",
///                      "labels": {"app.kubernetes.io/part-of": "fraud"}},
///         "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                               "path": "t.ipynb"},
///                  "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
///         "status": {"phase": phase}
///     })).unwrap()
/// };
/// let start = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let mut board = Board::new(TrackingSettings::default());
/// board.reset([&job("ValidationRunning")]);
///
/// let due = board.due(start);
/// let shown = board.status(&due.publish[0], &fraud, start);
/// assert_eq!(shown.summary(), "0/1 succeeded (0% success rate)");
/// board.published(&due.publish[0], start, PublishOutcome::Patched);
///
/// // The run ends 10 s later: published a minute after the previous patch.
/// let ended = start + TimeDelta::seconds(10);
/// board.apply(&job("Succeeded"));
/// let due = board.due(ended);
/// assert!(due.publish.is_empty());
/// assert_eq!(due.next, Some(start + TimeDelta::minutes(1)));
/// let minute = start + TimeDelta::minutes(1);
/// let due = board.due(minute);
/// let shown = board.status(&due.publish[0], &fraud, minute);
/// assert_eq!(shown.summary(), "1/1 succeeded (100% success rate)");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Board {
    tracking: TrackingSettings,
    index: AggregateIndex,
    schedules: HashMap<AppId, Schedule>,
    /// Namespaces of the jobs seen for each Application: where an Application named
    /// without a namespace may live besides the configured namespaces.
    homes: HashMap<AppId, BTreeSet<String>>,
    /// The jobs were listed: Applications that show a status but have no job left are
    /// to be found.
    sweep_due: bool,
}

impl Board {
    /// An empty board that finds each job's Application with `tracking`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// let board = Board::new(TrackingSettings::default());
    /// assert_eq!(board.applications().count(), 0);
    /// assert!(!board.sweep_due());
    /// ```
    pub fn new(tracking: TrackingSettings) -> Self {
        Board {
            tracking,
            ..Board::default()
        }
    }

    /// The tracking settings jobs are read with.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// assert!(Board::new(TrackingSettings::default()).tracking().part_of);
    /// ```
    pub fn tracking(&self) -> &TrackingSettings {
        &self.tracking
    }

    /// The watch saw `job` added or changed. Returns the Applications whose
    /// aggregate changed (none, one, or the old and the new parent), sorted. A job
    /// being deleted (with a `deletionTimestamp`) counts nowhere, as after
    /// [`delete`](Board::delete). A job without a namespace or a name (which no API
    /// server sends) is ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml",
    ///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    /// }))?;
    /// let mut board = Board::new(TrackingSettings::default());
    /// let changed = board.apply(&job);
    /// assert_eq!(changed[0].name(), "fraud");
    /// assert_eq!(board.aggregate(&changed[0]).running(), 1);
    /// // The same facts again change nothing.
    /// assert!(board.apply(&job).is_empty());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn apply(&mut self, job: &NotebookValidationJob) -> Vec<AppId> {
        if job.metadata.deletion_timestamp.is_some() {
            // Being deleted (a finalizer holds it): it already counts nowhere.
            return self.delete(job);
        }
        let Some(entry) = JobEntry::of(job, &self.tracking) else {
            return Vec::new();
        };
        self.record(entry.key, entry.lookup.parent, entry.phase)
    }

    /// The watch saw `job` deleted: it counts nowhere from now on. Returns the
    /// Application whose aggregate changed, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::aggregate::{Board, Custody, TrackingSettings};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml",
    ///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let mut board = Board::new(TrackingSettings::default());
    /// let app = board.apply(&job).remove(0);
    /// assert_eq!(board.delete(&job), vec![app.clone()]);
    /// assert_eq!(board.aggregate(&app).total(), 0);
    /// // Its Application is still to be told that no job is left.
    /// let due = board.due(now);
    /// let shown = board.status(&due.publish[0], &Custody::default(), now);
    /// assert_eq!(shown.summary(), "No notebook validation jobs");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn delete(&mut self, job: &NotebookValidationJob) -> Vec<AppId> {
        let Some(key) = JobKey::of(job) else {
            return Vec::new();
        };
        let changed = self.index.remove(&key);
        self.mark_pending(&changed);
        changed
    }

    /// The watch listed every job (at start, or again after it was lost):
    /// `jobs` is the whole listing. Jobs the listing no longer holds were deleted
    /// while the watch was not looking and are forgotten, as are jobs being deleted;
    /// a [`sweep`](Board::sweep)
    /// becomes due. Returns the Applications whose aggregate changed, sorted. Costs
    /// O(jobs listed + jobs known).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// let job = |name: &str| -> nbv_core::api::NotebookValidationJob {
    ///     serde_json::from_value(serde_json::json!({
    ///         "metadata": {"name": name, "namespace": "ml",
    ///                      "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///         "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                               "path": "t.ipynb"},
    ///                  "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    ///     })).unwrap()
    /// };
    /// let mut board = Board::new(TrackingSettings::default());
    /// let app = board.reset([&job("a"), &job("b")]).remove(0);
    /// assert_eq!(board.aggregate(&app).total(), 2);
    /// // "b" was deleted while the watch was down.
    /// board.reset([&job("a")]);
    /// assert_eq!(board.aggregate(&app).total(), 1);
    /// assert!(board.sweep_due());
    /// ```
    pub fn reset<'a>(
        &mut self,
        jobs: impl IntoIterator<Item = &'a NotebookValidationJob>,
    ) -> Vec<AppId> {
        let entries: Vec<JobEntry> = jobs.into_iter().filter_map(|job| self.entry(job)).collect();
        self.reset_entries(entries)
    }

    /// What the board keeps of `job` when it is listed: its [`JobEntry`] (a few hundred
    /// bytes), or `None` for a job being deleted or without a name. A shell that
    /// collects a listing before [`reset_entries`](Board::reset_entries) keeps these
    /// instead of the jobs.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "a", "namespace": "ml", "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    /// }))?;
    /// let mut board = Board::new(TrackingSettings::default());
    /// let listed: Vec<_> = board.entry(&job).into_iter().collect();
    /// let app = board.reset_entries(listed).remove(0);
    /// assert_eq!(board.aggregate(&app).total(), 1);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn entry(&self, job: &NotebookValidationJob) -> Option<JobEntry> {
        if job.metadata.deletion_timestamp.is_some() {
            return None;
        }
        JobEntry::of(job, &self.tracking)
    }

    /// [`reset`](Board::reset) from the [`entry`](Board::entry) of each listed job.
    pub fn reset_entries(&mut self, entries: Vec<JobEntry>) -> Vec<AppId> {
        let mut changed = {
            let listed: HashSet<&JobKey> = entries.iter().map(|entry| &entry.key).collect();
            self.index.retain(|job| listed.contains(job))
        };
        self.mark_pending(&changed);
        for entry in entries {
            changed.extend(self.record(entry.key, entry.lookup.parent, entry.phase));
        }
        changed.sort_unstable();
        changed.dedup();
        self.sweep_due = true;
        changed
    }

    /// Whether a [`sweep`](Board::sweep) is due (after each relist).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// let mut board = Board::new(TrackingSettings::default());
    /// board.reset([]);
    /// assert!(board.sweep_due());
    /// ```
    pub fn sweep_due(&self) -> bool {
        self.sweep_due
    }

    /// Finds the Applications that show a notebook status but that no job of the
    /// board belongs to, and schedules them for publication (they then show that no
    /// job is left). `applications` is every Application the shell can see, as its
    /// namespace and name and its annotations; `resolve` says which of them an
    /// Application named by a job is (`None`: not found), given the namespaces of
    /// its jobs ([`homes`](Board::homes)). Returns the Applications
    /// scheduled, sorted; the sweep is then no longer due.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::aggregate::{AppId, Board, Custody, TrackingSettings};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let mut board = Board::new(TrackingSettings::default());
    /// board.reset([]);
    /// let stale = AppId::new(Some("argocd"), "fraud")?;
    /// let shows = BTreeMap::from([("mlops.dev/notebook-summary".to_string(), "1/1 succeeded".to_string())]);
    /// let untouched = AppId::new(Some("argocd"), "web")?;
    /// let none = BTreeMap::new();
    /// let swept = board.sweep([(stale.clone(), &shows), (untouched, &none)], |_, _| None);
    /// assert_eq!(swept, vec![stale]);
    /// assert!(!board.sweep_due());
    /// let due = board.due(now);
    /// let shown = board.status(&due.publish[0], &Custody::default(), now);
    /// assert_eq!(shown.summary(), "No notebook validation jobs");
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn sweep<'a>(
        &mut self,
        applications: impl IntoIterator<Item = (AppId, &'a BTreeMap<String, String>)>,
        mut resolve: impl FnMut(&AppId, &[&str]) -> Option<AppId>,
    ) -> Vec<AppId> {
        let named: HashSet<&AppId> = self
            .schedules
            .keys()
            .chain(self.index.applications())
            .collect();
        let known: HashSet<AppId> = named
            .into_iter()
            .filter_map(|app| resolve(app, &self.homes(app).collect::<Vec<_>>()))
            .collect();
        let mut orphans: Vec<AppId> = applications
            .into_iter()
            .filter(|(app, annotations)| {
                (annotations.contains_key(NOTEBOOK_STATUS)
                    || annotations.contains_key(NOTEBOOK_SUMMARY))
                    && !known.contains(app)
            })
            .map(|(app, _)| app)
            .collect();
        orphans.sort_unstable();
        orphans.dedup();
        self.mark_pending(&orphans);
        self.sweep_due = false;
        orphans
    }

    /// The Applications to publish at `now`, with the status each should show, and
    /// when to ask again.
    ///
    /// # Examples
    ///
    /// See [`Board`].
    pub fn due(&self, now: DateTime<Utc>) -> Due {
        let mut due = Due::default();
        for (app, schedule) in &self.schedules {
            if !schedule.pending() && self.index.aggregate(app).total() == 0 {
                // It shows that no job is left; only a new job makes it due again.
                continue;
            }
            let at = match schedule.decide(now) {
                PublishDecision::Now => {
                    due.publish.push(Publication {
                        app: app.clone(),
                        changes: schedule.changes,
                    });
                    continue;
                }
                PublishDecision::At(at) => at,
                PublishDecision::Idle { resync_at } => resync_at,
            };
            due.next = Some(due.next.map_or(at, |next| next.min(at)));
        }
        due.publish.sort_unstable_by(|a, b| a.app.cmp(&b.app));
        due
    }

    /// Records that `publication` was published at `at` with `outcome`. A change that
    /// arrived since [`due`](Board::due) made it stays to be published. An Application
    /// with no job left is forgotten once it shows that and its last patch is a minute
    /// old.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeDelta, TimeZone, Utc};
    /// use nbv_core::aggregate::{Board, PublishOutcome, RETRY_INTERVAL, TrackingSettings};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml",
    ///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let mut board = Board::new(TrackingSettings::default());
    /// board.apply(&job);
    /// let publication = board.due(now).publish.remove(0);
    /// board.published(&publication, now, PublishOutcome::NotFound);
    /// assert_eq!(board.due(now).next, Some(now + RETRY_INTERVAL));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn published(
        &mut self,
        publication: &Publication,
        at: DateTime<Utc>,
        outcome: PublishOutcome,
    ) {
        let app = &publication.app;
        let schedule = self.schedules.entry(app.clone()).or_default();
        match outcome {
            PublishOutcome::Patched | PublishOutcome::Failed => schedule.last_sent = Some(at),
            // Finding the Application up to date costs no call and does not count
            // against the limit, except that the first publication starts it.
            PublishOutcome::Unchanged => schedule.last_sent = schedule.last_sent.or(Some(at)),
            PublishOutcome::NotFound => {}
        }
        if !outcome.succeeded() {
            schedule.retry_at = at.checked_add_signed(RETRY_INTERVAL);
            return;
        }
        schedule.retry_at = None;
        schedule.last_synced = Some(at);
        schedule.shown = schedule.shown.max(publication.changes);
        self.forget_settled(at);
    }

    /// Forgets the Applications that show that they have no job left, once their
    /// last patch is a minute old: a job that arrives for one sooner must still wait
    /// for the once-a-minute limit.
    fn forget_settled(&mut self, now: DateTime<Utc>) {
        let index = &self.index;
        let homes = &mut self.homes;
        self.schedules.retain(|app, schedule| {
            let settled = !schedule.pending()
                && index.aggregate(app).total() == 0
                && schedule.last_sent.is_none_or(|sent| {
                    sent.checked_add_signed(MIN_INTERVAL)
                        .is_none_or(|limit| limit <= now)
                });
            if settled {
                homes.remove(app);
            }
            !settled
        });
    }

    /// The merge patch that makes `publication`'s Application show its status at
    /// `now`, counting only the jobs it answers for (`custody`, read from the
    /// Application), given the annotations it has (`current`). `None` when it already
    /// shows that status, or when it answers for none of the jobs naming it and shows
    /// no status: a job cannot make nbv write to an Application that does not manage it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::aggregate::{Board, Custody, TrackingSettings};
    /// use serde_json::json;
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(json!({
    ///     "metadata": {"name": "paint", "namespace": "team-b",
    ///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
    ///     "status": {"phase": "Failed"}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let mut board = Board::new(TrackingSettings::default());
    /// board.apply(&job);
    /// let publication = board.due(now).publish.remove(0);
    /// // `fraud` deploys into `ml`: a job in `team-b` that names it changes nothing.
    /// let fraud = Custody::of(&json!({"metadata": {"namespace": "ml"}, "spec": {"destination": {
    ///     "server": "https://kubernetes.default.svc", "namespace": "ml"}}}));
    /// assert_eq!(board.patch(&publication, &fraud, &BTreeMap::new(), now), None);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn patch(
        &self,
        publication: &Publication,
        custody: &Custody,
        current: &BTreeMap<String, String>,
        now: DateTime<Utc>,
    ) -> Option<serde_json::Value> {
        let status = self.status(publication, custody, now);
        if status.total() == 0 && !current.contains_key(NOTEBOOK_STATUS) {
            return None;
        }
        status.application_patch(current)
    }

    /// The status `publication`'s Application is made to show at `now`: what the jobs
    /// it answers for (`custody`, read from the Application) add up to.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::aggregate::{Board, Custody, TrackingSettings};
    /// use serde_json::json;
    ///
    /// let job = |namespace: &str, phase: &str| -> nbv_core::api::NotebookValidationJob {
    ///     serde_json::from_value(json!({
    ///         "metadata": {"name": "train", "namespace": namespace,
    ///                      "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///         "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                               "path": "t.ipynb"},
    ///                  "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
    ///         "status": {"phase": phase}
    ///     })).unwrap()
    /// };
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let mut board = Board::new(TrackingSettings::default());
    /// board.apply(&job("ml", "Succeeded"));
    /// board.apply(&job("team-b", "Failed"));
    /// let publication = board.due(now).publish.remove(0);
    /// let fraud = Custody::of(&json!({"metadata": {"namespace": "argocd"}, "spec": {
    ///     "destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"}}}));
    /// let status = board.status(&publication, &fraud, now);
    /// assert_eq!(status.summary(), "1/1 succeeded (100% success rate)");
    /// ```
    pub fn status(
        &self,
        publication: &Publication,
        custody: &Custody,
        now: DateTime<Utc>,
    ) -> NotebookStatus {
        self.index
            .aggregate(&publication.app)
            .within(custody)
            .status(now, StatusLimit::DEFAULT)
    }

    /// The current aggregate of `app` (empty when it has no job).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AppId, Board, TrackingSettings};
    ///
    /// let board = Board::new(TrackingSettings::default());
    /// assert_eq!(board.aggregate(&AppId::new(None, "fraud")?).total(), 0);
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn aggregate(&self, app: &AppId) -> &Aggregate {
        self.index.aggregate(app)
    }

    /// The Applications that have at least one job, in no particular order.
    ///
    /// # Examples
    ///
    /// See [`Board::apply`].
    pub fn applications(&self) -> impl Iterator<Item = &AppId> {
        self.index.applications()
    }

    /// The namespaces of the jobs seen for `app`, sorted: where an Application named
    /// without a namespace may live besides the configured namespaces.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{Board, TrackingSettings};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml",
    ///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    /// }))?;
    /// let mut board = Board::new(TrackingSettings::default());
    /// let app = board.apply(&job).remove(0);
    /// assert!(board.homes(&app).eq(["ml"]));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn homes(&self, app: &AppId) -> impl Iterator<Item = &str> {
        self.homes
            .get(app)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    fn record(&mut self, job: JobKey, parent: Option<AppRef>, phase: JobPhase) -> Vec<AppId> {
        if let Some(parent) = &parent {
            self.homes
                .entry(parent.app.clone())
                .or_default()
                .insert(job.namespace().to_owned());
        }
        let changed = self.index.upsert(job, parent, phase);
        self.mark_pending(&changed);
        changed
    }

    fn mark_pending(&mut self, apps: &[AppId]) {
        for app in apps {
            self.schedules.entry(app.clone()).or_default().changes += 1;
        }
    }
}
