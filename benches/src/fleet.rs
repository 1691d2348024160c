//! N jobs of one Application, a stream of phase changes for them, and the baseline that
//! recomputes the aggregate from a full listing.
//!
//! The index ([`AggregateIndex`]) and the baseline ([`recount`]) are driven by the same
//! [`Changes`]: job `i` starts in phase `PHASES[i % 3]` and every change moves one job
//! to the next phase of the cycle Running → Succeeded → Failed → Running, so every
//! change is a real one (the index never short-cuts an unchanged job) and a third of the
//! jobs are failed at any time.

use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
use nbv_core::api::{NotebookValidationJob, Phase};

/// The phase cycle the jobs go through.
const PHASES: [JobPhase; 3] = [JobPhase::Running, JobPhase::Succeeded, JobPhase::Failed];

/// The namespace of every job of the fleet.
pub const NAMESPACE: &str = "ml-platform";

/// The Application every job of the fleet belongs to.
pub const APPLICATION: &str = "fraud-detection";

/// The name of job `i`: zero-padded so that listing order is name order, as the API
/// server lists.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_benches::fleet::job_key(7).to_string(), "ml-platform/notebook-00007");
/// ```
pub fn job_key(i: usize) -> JobKey {
    JobKey::new(NAMESPACE, format!("notebook-{i:05}"))
}

/// The fleet's Application as the aggregate names it.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_benches::fleet::application().name(), "fraud-detection");
/// ```
pub fn application() -> AppId {
    // A constant, valid name: failing here is a bug of this crate, not bad input.
    AppId::new(None, APPLICATION).expect("the fleet's Application name is valid")
}

/// The fleet's parent reference, as `parent_application` returns it for a job with an
/// Argo CD tracking id.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::ParentSource;
///
/// assert_eq!(nbv_benches::fleet::parent().source, ParentSource::TrackingId);
/// ```
pub fn parent() -> AppRef {
    AppRef {
        app: application(),
        source: ParentSource::TrackingId,
    }
}

/// One job as a full listing shows it: what the recount baseline reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedJob {
    /// Namespace and name.
    pub key: JobKey,
    /// The Application it belongs to.
    pub app: Option<AppId>,
    /// Its phase.
    pub phase: JobPhase,
}

/// The aggregate as the baseline computes it: counts, and failed jobs in listing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recount {
    /// Jobs whose run succeeded.
    pub succeeded: u64,
    /// Jobs whose run has not ended.
    pub running: u64,
    /// The failed jobs, as `namespace/name`.
    pub failed_jobs: Vec<String>,
}

/// Recomputes `app`'s aggregate from every listed job: what an operator that lists all
/// jobs on each completion does. O(N) in the listed jobs.
///
/// The listing is assumed to be in name order already (the API server lists in key
/// order), so the baseline does not sort: it is the cheapest form of a full recount.
///
/// # Examples
///
/// ```
/// use nbv_benches::fleet::{application, recount, Fleet};
///
/// let fleet = Fleet::new(6);
/// let counted = recount(&fleet.listing(), &application());
/// assert_eq!((counted.succeeded, counted.running, counted.failed_jobs.len()), (2, 2, 2));
/// ```
pub fn recount(jobs: &[ListedJob], app: &AppId) -> Recount {
    let mut counted = Recount::default();
    for job in jobs.iter().filter(|job| job.app.as_ref() == Some(app)) {
        match job.phase {
            JobPhase::Running => counted.running += 1,
            JobPhase::Succeeded => counted.succeeded += 1,
            JobPhase::Failed => counted.failed_jobs.push(job.key.to_string()),
        }
    }
    counted
}

/// `n` jobs of [`APPLICATION`] in their initial phases.
///
/// # Examples
///
/// ```
/// use nbv_benches::fleet::{application, Fleet};
///
/// let fleet = Fleet::new(1_000);
/// assert_eq!(fleet.len(), 1_000);
/// assert_eq!(fleet.index().aggregate(&application()).total(), 1_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fleet {
    keys: Vec<JobKey>,
}

impl Fleet {
    /// A fleet of `n` jobs.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(nbv_benches::fleet::Fleet::new(0).is_empty());
    /// ```
    pub fn new(n: usize) -> Self {
        Fleet {
            keys: (0..n).map(job_key).collect(),
        }
    }

    /// Number of jobs.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nbv_benches::fleet::Fleet::new(3).len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the fleet has no job.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!nbv_benches::fleet::Fleet::new(1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key of job `i`.
    ///
    /// # Panics
    ///
    /// When `i` is not below [`Fleet::len`].
    ///
    /// # Examples
    ///
    /// ```
    /// let fleet = nbv_benches::fleet::Fleet::new(2);
    /// assert_eq!(fleet.key(1).name(), "notebook-00001");
    /// ```
    pub fn key(&self, i: usize) -> &JobKey {
        &self.keys[i]
    }

    /// An index that has seen every job in its initial phase.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_benches::fleet::{application, Fleet};
    ///
    /// let index = Fleet::new(9).index();
    /// assert_eq!(index.aggregate(&application()).failed(), 3);
    /// ```
    pub fn index(&self) -> AggregateIndex {
        let parent = parent();
        let mut index = AggregateIndex::new();
        for (i, key) in self.keys.iter().enumerate() {
            index.upsert(key.clone(), Some(parent.clone()), PHASES[i % PHASES.len()]);
        }
        index
    }

    /// Every job in its initial phase, in name order, as a full listing returns them.
    ///
    /// # Examples
    ///
    /// ```
    /// let listing = nbv_benches::fleet::Fleet::new(4).listing();
    /// assert!(listing.is_sorted_by(|a, b| a.key < b.key));
    /// ```
    pub fn listing(&self) -> Vec<ListedJob> {
        let app = application();
        self.keys
            .iter()
            .enumerate()
            .map(|(i, key)| ListedJob {
                key: key.clone(),
                app: Some(app.clone()),
                phase: PHASES[i % PHASES.len()],
            })
            .collect()
    }

    /// The endless stream of phase changes for this fleet, starting from the initial
    /// phases.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_benches::fleet::{application, recount, Fleet};
    ///
    /// // Index and recount agree after any number of changes.
    /// let fleet = Fleet::new(5);
    /// let (mut index, mut listing) = (fleet.index(), fleet.listing());
    /// for change in fleet.changes().take(12) {
    ///     index.upsert(fleet.key(change.job).clone(), Some(nbv_benches::fleet::parent()), change.phase);
    ///     listing[change.job].phase = change.phase;
    /// }
    /// let counted = recount(&listing, &application());
    /// let aggregate = index.aggregate(&application());
    /// assert_eq!(counted.succeeded, aggregate.succeeded());
    /// assert_eq!(counted.running, aggregate.running());
    /// assert!(aggregate.failed_jobs().eq(counted.failed_jobs.iter().map(String::as_str)));
    /// ```
    pub fn changes(&self) -> Changes {
        Changes {
            jobs: self.keys.len(),
            step: 0,
        }
    }
}

/// One job moving to a new phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// Which job (its index in the fleet).
    pub job: usize,
    /// Its new phase, always different from its current one.
    pub phase: JobPhase,
}

/// The phase changes of a fleet: job 0, 1, …, N-1, then again, each to the next phase
/// of the cycle. Endless for a non-empty fleet, empty for an empty one.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::JobPhase;
/// use nbv_benches::fleet::Fleet;
///
/// let mut changes = Fleet::new(2).changes();
/// let first = changes.next().unwrap();
/// assert_eq!((first.job, first.phase), (0, JobPhase::Succeeded));
/// assert_eq!(changes.nth(1).unwrap().job, 0);
/// assert_eq!(Fleet::new(0).changes().next(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    jobs: usize,
    step: usize,
}

impl Iterator for Changes {
    type Item = Change;

    fn next(&mut self) -> Option<Change> {
        if self.jobs == 0 {
            return None;
        }
        let job = self.step % self.jobs;
        let round = self.step / self.jobs + 1;
        self.step = self.step.wrapping_add(1);
        Some(Change {
            job,
            phase: PHASES[(job + round) % PHASES.len()],
        })
    }
}

/// Job objects of the fleet as the watch delivers them: what [`Board`] reads.
///
/// Each object is a copy of one small template (the fleet's `part-of` label, a spec,
/// a phase) under the job's name, so that building one costs a clone, not a parse.
///
/// [`Board`]: nbv_core::aggregate::Board
///
/// # Examples
///
/// ```
/// use nbv_benches::fleet::{job_key, Objects};
/// use nbv_core::aggregate::{Board, JobPhase, TrackingSettings};
///
/// let objects = Objects::new();
/// let mut board = Board::new(TrackingSettings::default());
/// let changed = board.apply(&objects.job(&job_key(3), JobPhase::Failed));
/// assert_eq!(changed[0].name(), "fraud-detection");
/// assert!(board.aggregate(&changed[0]).failed_jobs().eq(["ml-platform/notebook-00003"]));
/// ```
#[derive(Debug, Clone)]
pub struct Objects {
    template: NotebookValidationJob,
}

impl Default for Objects {
    fn default() -> Self {
        Self::new()
    }
}

impl Objects {
    /// The template: a job of [`APPLICATION`] by its `app.kubernetes.io/part-of` label.
    pub fn new() -> Self {
        let job = serde_json::json!({
            "apiVersion": "mlops.mlops.dev/v1alpha1",
            "kind": "NotebookValidationJob",
            "metadata": {
                "name": "notebook-00000",
                "namespace": NAMESPACE,
                "labels": {"app.kubernetes.io/part-of": APPLICATION},
            },
            "spec": {
                "notebook": {
                    "git": {"url": "https://example.com/ml/notebooks.git", "ref": "main"},
                    "path": "train.ipynb"
                },
                "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:latest"}
            },
            "status": {"phase": "ValidationRunning"}
        });
        Objects {
            // A fixed, valid manifest: failing here is a bug of this crate, not bad input.
            template: serde_json::from_value(job)
                .expect("the fleet's job template is a valid NotebookValidationJob"),
        }
    }

    /// The object of job `key` in `phase`.
    pub fn job(&self, key: &JobKey, phase: JobPhase) -> NotebookValidationJob {
        let mut job = self.template.clone();
        job.metadata.name = Some(key.name().to_owned());
        job.metadata.namespace = Some(key.namespace().to_owned());
        if let Some(status) = job.status.as_mut() {
            status.phase = Some(match phase {
                JobPhase::Running => Phase::ValidationRunning,
                JobPhase::Succeeded => Phase::Succeeded,
                JobPhase::Failed => Phase::Failed,
            });
        }
        job
    }

    /// The phase job `i` of a fleet starts in (as [`Fleet::index`] counts it).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::JobPhase;
    ///
    /// assert_eq!(nbv_benches::fleet::Objects::initial_phase(2), JobPhase::Failed);
    /// ```
    pub fn initial_phase(i: usize) -> JobPhase {
        PHASES[i % PHASES.len()]
    }
}
