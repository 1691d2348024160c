//! Gauges of what the watch caches hold, computed at each scrape: jobs by phase, the
//! outcome counts of each Application, jobs past their timeout, jobs with an abandoned
//! effect, and (upstream's family) the active validation Pods.
//!
//! They are read from the caches the controller keeps anyway, so a scrape costs no API
//! request, and they are the state *now*: a job that is deleted or run again leaves its
//! gauge at once, unlike a counter.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use kube::runtime::reflector::Store;
use nbv_core::aggregate::JobPhase;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::operator::projection::{CachedJob, PodCache};
use crate::runtime::clock::Clock;

/// The `phase` label of a job that has no `status.phase` yet.
pub const NO_PHASE: &str = "Unset";

/// Where the cluster gauges are read from: the controller's caches and its clock.
#[derive(Clone)]
pub struct ClusterView {
    /// The jobs' watch cache.
    pub jobs: Store<CachedJob>,
    /// The validation Pods' watch cache (`None` with `--gitops-only`: no Pods are
    /// watched, and `notebookvalidationjob_active_pods` is not exposed).
    pub pods: Option<PodCache>,
    /// The time "past its timeout" is measured against.
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for ClusterView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterView")
            .field("jobs", &self.jobs.state().len())
            .field("pods", &self.pods.as_ref().map(PodCache::len))
            .finish_non_exhaustive()
    }
}

/// What the gauges say about a set of jobs at one instant.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::aggregate::TrackingSettings;
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_operator::operator::metrics::Census;
/// use nbv_operator::operator::projection::CachedJob;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "annotations": {
///         "argocd.argoproj.io/tracking-id": "platform:mlops.mlops.dev/NotebookValidationJob:ml/train"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"},
///              "timeout": "10m"},
///     "status": {"phase": "ValidationRunning", "startTime": "2026-01-01T00:00:00Z"}
/// }))?;
/// let cached = CachedJob::pack(job, &TrackingSettings::default());
/// let now = Utc.with_ymd_and_hms(2026, 1, 1, 0, 11, 0).unwrap();
/// let census = Census::of([&cached], now);
/// assert_eq!(census.jobs[&("ml".to_owned(), "ValidationRunning")], 1);
/// assert_eq!(census.applications[&("platform".to_owned(), "running")], 1);
/// assert_eq!(census.past_timeout["ml"], 1);
/// assert!(census.effects_abandoned.is_empty());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Census {
    /// Jobs by namespace and `status.phase` ([`NO_PHASE`] when unset).
    pub jobs: BTreeMap<(String, &'static str), i64>,
    /// Jobs by parent Application (`namespace/name`, or `name` for Argo CD's own
    /// namespace) and outcome (`succeeded`, `failed`, `running`), found as the
    /// Application status finds them. Jobs without a parent are not counted.
    pub applications: BTreeMap<(String, &'static str), i64>,
    /// Jobs by namespace whose current attempt (since `status.lastRetryTime`, or
    /// `status.startTime`) has run longer than `spec.timeout` without ending.
    pub past_timeout: BTreeMap<String, i64>,
    /// Jobs by namespace whose `EffectsApplied` condition is `False`: nbv gave up on
    /// one of the run's effects.
    pub effects_abandoned: BTreeMap<String, i64>,
}

impl Census {
    /// The census of `jobs` at `now`, from the facts each cached job keeps: a scrape
    /// unpacks no job.
    pub fn of<'a>(jobs: impl IntoIterator<Item = &'a CachedJob>, now: DateTime<Utc>) -> Census {
        let mut census = Census::default();
        for job in jobs {
            let (namespace, facts) = (job.namespace(), job.facts());
            if namespace.is_empty() || job.name().is_empty() {
                continue;
            }
            let phase = facts.phase.map_or(NO_PHASE, |p| p.as_str());
            *census
                .jobs
                .entry((namespace.to_owned(), phase))
                .or_default() += 1;
            if let Some(parent) = &facts.parent {
                let outcome = match facts.outcome() {
                    JobPhase::Succeeded => "succeeded",
                    JobPhase::Failed => "failed",
                    JobPhase::Running => "running",
                };
                *census
                    .applications
                    .entry((parent.to_string(), outcome))
                    .or_default() += 1;
            }
            if facts.past_timeout(now) {
                *census.past_timeout.entry(namespace.to_owned()).or_default() += 1;
            }
            if facts.effects_abandoned {
                *census
                    .effects_abandoned
                    .entry(namespace.to_owned())
                    .or_default() += 1;
            }
        }
        census
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PhaseLabels {
    namespace: String,
    phase: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ApplicationLabels {
    application: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct NamespaceLabels {
    namespace: String,
}

/// The gauge families of the census.
#[derive(Debug)]
pub(super) struct ClusterGauges {
    jobs: Family<PhaseLabels, Gauge>,
    applications: Family<ApplicationLabels, Gauge>,
    past_timeout: Family<NamespaceLabels, Gauge>,
    effects_abandoned: Family<NamespaceLabels, Gauge>,
}

impl ClusterGauges {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let jobs = Family::<PhaseLabels, Gauge>::default();
        registry.register(
            "nbv_jobs",
            "NotebookValidationJobs in the watch cache, by namespace and status.phase",
            jobs.clone(),
        );
        let applications = Family::<ApplicationLabels, Gauge>::default();
        registry.register(
            "nbv_application_jobs",
            "NotebookValidationJobs by parent Argo CD Application and outcome (succeeded, failed, running)",
            applications.clone(),
        );
        let past_timeout = Family::<NamespaceLabels, Gauge>::default();
        registry.register(
            "nbv_jobs_past_timeout",
            "Jobs still in progress whose current attempt has run longer than spec.timeout",
            past_timeout.clone(),
        );
        let effects_abandoned = Family::<NamespaceLabels, Gauge>::default();
        registry.register(
            "nbv_jobs_effects_abandoned",
            "Jobs whose EffectsApplied condition is False: nbv gave up on an effect of the run",
            effects_abandoned.clone(),
        );
        ClusterGauges {
            jobs,
            applications,
            past_timeout,
            effects_abandoned,
        }
    }

    /// Replaces every gauge with what `census` says.
    pub(super) fn set(&self, census: &Census) {
        self.jobs.clear();
        for ((namespace, phase), n) in &census.jobs {
            self.jobs
                .get_or_create(&PhaseLabels {
                    namespace: namespace.clone(),
                    phase,
                })
                .set(*n);
        }
        self.applications.clear();
        for ((application, outcome), n) in &census.applications {
            self.applications
                .get_or_create(&ApplicationLabels {
                    application: application.clone(),
                    outcome,
                })
                .set(*n);
        }
        for (family, counts) in [
            (&self.past_timeout, &census.past_timeout),
            (&self.effects_abandoned, &census.effects_abandoned),
        ] {
            family.clear();
            for (namespace, n) in counts {
                family
                    .get_or_create(&NamespaceLabels {
                        namespace: namespace.clone(),
                    })
                    .set(*n);
            }
        }
    }
}

/// nbv's validation Pods in `pods` by namespace and upstream's phase label.
pub(super) fn active_pods(pods: &PodCache) -> BTreeMap<(String, &'static str), i64> {
    let mut counts = BTreeMap::new();
    pods.for_each_phase(|namespace, phase| {
        if let Some(phase) = phase.and_then(super::upstream::active_pod_phase) {
            *counts.entry((namespace.to_owned(), phase)).or_default() += 1;
        }
    });
    counts
}
