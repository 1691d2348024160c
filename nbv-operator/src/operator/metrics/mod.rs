//! Prometheus metrics of the operator, served as OpenMetrics text on `GET /metrics`.
//!
//! The three families of ADR-049 keep their names so that existing dashboards work:
//! `notebook_validation_total{phase}`, `notebook_validation_duration_seconds{phase}` and
//! `argocd_triggers_total{action,status}`. The operator adds its own health:
//! `nbv_reconcile_total{outcome}`, `nbv_reconcile_duration_seconds`,
//! `nbv_reconcile_queue_depth` (see [`ReconcileQueue`]), `nbv_reconcile_errors_total{kind}`
//! and `nbv_application_status_patches_total{result}`.
//!
//! Every label has a bounded set of values, because each distinct label set is a time
//! series that Prometheus keeps for as long as the process runs:
//!
//! - the validation duration is *not* labelled with the job's name by default, unlike
//!   ADR-049's sketch `{job_name, phase}`: job names are chosen by users, every job
//!   would add a histogram of 17 series (14 buckets, `+Inf`, `_sum`, `_count`) per final
//!   phase, and the job's duration is already in its Event and status.
//!   [`MetricsOptions::job_name_label`] (`nbv run --metrics-job-name-label`) restores the
//!   seed's shape as `{namespace, job_name, phase}`; a deleted job's series go with it
//!   ([`Metrics::job_deleted`]), so the cost is bounded by the jobs that exist;
//! - labels taken from a `&str` (`action`, `kind`, `result`) accept at most
//!   [`Metrics::MAX_LABEL_VALUES`] distinct values per label, and no empty value or value
//!   of more than [`Metrics::MAX_LABEL_LEN`] bytes; anything else is counted under
//!   [`Metrics::OVERFLOW_LABEL`], so a bug that passes free text cannot exhaust memory.
//!
//! Next to them: upstream's `notebookvalidationjob_*` families (see [`upstream`]'s
//! table), labelled by the job's namespace through [`JobScope`]; gauges of the watch
//! caches computed at each scrape ([`ClusterView`], [`Census`]); `nbv_leader`, 1
//! while this replica runs the controller; and what every operator exposes: the
//! `process_*` family (read from `/proc/self` at each scrape), `nbv_build_info` and
//! client-go's `rest_client_requests_total{code,host,method}`.

mod cluster;
mod process;
mod queue;
mod scope;
pub mod upstream;

pub use cluster::{Census, ClusterView, NO_PHASE};
pub use queue::ReconcileQueue;
pub use scope::JobScope;

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use nbv_core::api::{NotebookValidationJob, Phase};

use crate::runtime::requests::ApiRequests;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Upper bounds, in seconds, of the validation duration histogram: from a one-second
/// smoke notebook to a four-hour training run.
const VALIDATION_BUCKETS: [f64; 14] = [
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 5400.0, 7200.0, 14400.0,
];

/// Upper bounds, in seconds, of the reconcile duration histogram: a reconcile is a few
/// API calls, so it should take milliseconds; the top buckets reveal a slow API server.
const RECONCILE_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// How a trigger ended, as the `status` label of `argocd_triggers_total`.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::metrics::TriggerStatus;
///
/// assert_eq!(TriggerStatus::Succeeded.as_str(), "success");
/// assert_eq!(TriggerStatus::Deferred.as_str(), "deferred");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerStatus {
    /// The trigger's action was carried out (`success`).
    Succeeded,
    /// The action failed (`failure`).
    Failed,
    /// The trigger was refused before any request, for example because it targets
    /// another namespace (`refused`).
    Refused,
    /// The action was postponed, for example a sync while an operation runs
    /// (`deferred`).
    Deferred,
}

impl TriggerStatus {
    /// Every status, in the order of the `status` label's documentation.
    pub const ALL: [TriggerStatus; 4] = [
        TriggerStatus::Succeeded,
        TriggerStatus::Failed,
        TriggerStatus::Refused,
        TriggerStatus::Deferred,
    ];

    /// The label value.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::metrics::TriggerStatus;
    ///
    /// assert_eq!(TriggerStatus::Failed.as_str(), "failure");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            TriggerStatus::Succeeded => "success",
            TriggerStatus::Failed => "failure",
            TriggerStatus::Refused => "refused",
            TriggerStatus::Deferred => "deferred",
        }
    }
}

/// How a reconcile ended, as the `outcome` label of `nbv_reconcile_total`.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::metrics::ReconcileOutcome;
///
/// assert_eq!(ReconcileOutcome::Error.as_str(), "error");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReconcileOutcome {
    /// The reconcile returned an action (`ok`).
    Ok,
    /// The reconcile returned an error and will be retried (`error`).
    Error,
}

impl ReconcileOutcome {
    /// The label value.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::metrics::ReconcileOutcome;
    ///
    /// assert_eq!(ReconcileOutcome::Ok.as_str(), "ok");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ReconcileOutcome::Ok => "ok",
            ReconcileOutcome::Error => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PhaseLabels {
    phase: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TriggerLabels {
    action: String,
    status: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ResultLabels {
    result: String,
}

/// The labels of `notebook_validation_duration_seconds`: `phase`, and with
/// [`MetricsOptions::job_name_label`] also `namespace` and `job_name`.
type DurationLabels = Vec<(&'static str, String)>;

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Choices about what the metrics expose.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::api::{NotebookValidationJob, Phase};
/// use nbv_operator::operator::metrics::{JobScope, Metrics, MetricsOptions};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let metrics = Metrics::with_options(MetricsOptions { job_name_label: true });
/// JobScope::new("ml", "train")
///     .run(async { metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(42))) })
///     .await;
/// assert!(metrics.encode().contains(
///     "notebook_validation_duration_seconds_count{phase=\"Succeeded\",namespace=\"ml\",job_name=\"train\"} 1"
/// ));
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricsOptions {
    /// Label `notebook_validation_duration_seconds` with the job's `namespace` and
    /// `job_name` (ADR-049's shape): one histogram per job and final phase.
    pub job_name_label: bool,
}

fn validation_histogram() -> Histogram {
    Histogram::new(VALIDATION_BUCKETS)
}

/// The operator's metrics: a registry and the handles that update it.
///
/// Cheap to update from any task (atomic counters behind read locks); share one
/// instance behind an `Arc`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::api::{NotebookValidationJob, Phase};
/// use nbv_operator::operator::metrics::{Metrics, TriggerStatus};
///
/// let metrics = Metrics::new();
/// metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(42)));
/// metrics.trigger("restart", TriggerStatus::Succeeded);
/// let text = metrics.encode();
/// assert!(text.contains("notebook_validation_total{phase=\"Succeeded\"} 1"));
/// assert!(text.contains("argocd_triggers_total{action=\"restart\",status=\"success\"} 1"));
/// assert!(text.ends_with("# EOF\n"));
/// ```
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    validations: Family<PhaseLabels, Counter>,
    validation_duration: HistogramFamily<DurationLabels>,
    job_name_label: bool,
    triggers: Family<TriggerLabels, Counter>,
    reconciles: Family<OutcomeLabels, Counter>,
    reconcile_duration: Histogram,
    queue: ReconcileQueue,
    reconcile_errors: Family<KindLabels, Counter>,
    application_patches: Family<ResultLabels, Counter>,
    trigger_actions: LabelBudget,
    error_kinds: LabelBudget,
    patch_results: LabelBudget,
    upstream: upstream::Upstream,
    cluster: cluster::ClusterGauges,
    leader: Gauge,
    requests: ApiRequests,
    /// The caches the gauges are read from, set once the controller runs; the lock
    /// also keeps two scrapes from interleaving their updates of the gauges.
    view: Mutex<Option<ClusterView>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// How many distinct values a label taken from a `&str` may have.
    pub const MAX_LABEL_VALUES: usize = 32;
    /// The longest label value accepted from a `&str`, in bytes.
    pub const MAX_LABEL_LEN: usize = 63;
    /// The label value counted instead of one beyond the limits above.
    pub const OVERFLOW_LABEL: &'static str = "other";

    /// A registry with every family registered.
    ///
    /// Every series whose labels are known in advance starts at zero: the outcomes
    /// that alerts divide by (`phase` `Succeeded` and `Failed`, reconcile `ok` and
    /// `error`), and `argocd_triggers_total` for every action and status. A series
    /// that appeared with its first event would hide that event from `increase()`, so
    /// an alert on it would miss the first failure of each process. The families
    /// labelled by free-form values (`nbv_reconcile_errors_total`,
    /// `nbv_application_status_patches_total`) appear with their first series.
    ///
    /// # Examples
    ///
    /// ```
    /// let text = nbv_operator::operator::metrics::Metrics::new().encode();
    /// assert!(text.contains("# TYPE notebook_validation_duration_seconds histogram"));
    /// assert!(text.contains("nbv_reconcile_total{outcome=\"error\"} 0"));
    /// assert!(text.contains("argocd_triggers_total{action=\"restart\",status=\"failure\"} 0"));
    /// ```
    pub fn new() -> Self {
        Self::with_options(MetricsOptions::default())
    }

    /// A registry with every family registered, shaped by `options`.
    pub fn with_options(options: MetricsOptions) -> Self {
        let mut registry = Registry::default();
        let validations = Family::<PhaseLabels, Counter>::default();
        registry.register(
            "notebook_validation",
            "Notebook validation runs that ended, by final phase",
            validations.clone(),
        );
        let validation_duration: HistogramFamily<DurationLabels> =
            Family::new_with_constructor(validation_histogram);
        registry.register_with_unit(
            "notebook_validation_duration",
            "Duration of notebook validation runs from start to completion, by final phase",
            Unit::Seconds,
            validation_duration.clone(),
        );
        let triggers = Family::<TriggerLabels, Counter>::default();
        registry.register(
            "argocd_triggers",
            "Post-success triggers, by action and status (success, failure, refused, deferred)",
            triggers.clone(),
        );
        let reconciles = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "nbv_reconcile",
            "Reconciles of NotebookValidationJobs, by outcome",
            reconciles.clone(),
        );
        let reconcile_duration = Histogram::new(RECONCILE_BUCKETS);
        registry.register_with_unit(
            "nbv_reconcile_duration",
            "Time spent in one reconcile of a NotebookValidationJob",
            Unit::Seconds,
            reconcile_duration.clone(),
        );
        let queue = ReconcileQueue::register(&mut registry);
        let reconcile_errors = Family::<KindLabels, Counter>::default();
        registry.register(
            "nbv_reconcile_errors",
            "Reconcile errors, by kind",
            reconcile_errors.clone(),
        );
        let application_patches = Family::<ResultLabels, Counter>::default();
        registry.register(
            "nbv_application_status_patches",
            "Patches of the notebook status annotations of Argo CD Applications, by result",
            application_patches.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "nbv_leader",
            "1 while this replica runs the controller (holds the leader Lease), else 0",
            leader.clone(),
        );
        let requests = ApiRequests::default();
        registry.register(
            "rest_client_requests",
            "Requests to the API server, by status code, host and method (client-go's family)",
            requests.family(),
        );
        let build_info = Family::<Vec<(&'static str, &'static str)>, Gauge>::default();
        registry.register(
            "nbv_build_info",
            "Always 1; the labels say which build of nbv runs",
            build_info.clone(),
        );
        build_info
            .get_or_create(&vec![("version", env!("CARGO_PKG_VERSION"))])
            .set(1);
        registry.register_collector(Box::new(process::ProcessCollector));
        let upstream = upstream::Upstream::register(&mut registry);
        let cluster = cluster::ClusterGauges::register(&mut registry);

        for phase in [Phase::Succeeded, Phase::Failed] {
            let labels = PhaseLabels {
                phase: phase.as_str(),
            };
            // Creating the series is the point; the returned guard is dropped at once.
            drop(validations.get_or_create(&labels));
            if !options.job_name_label {
                drop(
                    validation_duration.get_or_create(&vec![("phase", phase.as_str().to_owned())]),
                );
            }
        }
        for outcome in [ReconcileOutcome::Ok, ReconcileOutcome::Error] {
            drop(reconciles.get_or_create(&OutcomeLabels {
                outcome: outcome.as_str(),
            }));
        }
        let trigger_actions = LabelBudget::default();
        for action in nbv_core::triggers::Action::ALL {
            let action = trigger_actions.admit(action.as_str());
            for status in TriggerStatus::ALL {
                drop(triggers.get_or_create(&TriggerLabels {
                    action: action.clone(),
                    status: status.as_str(),
                }));
            }
        }

        Metrics {
            registry,
            validations,
            validation_duration,
            job_name_label: options.job_name_label,
            triggers,
            reconciles,
            reconcile_duration,
            queue,
            reconcile_errors,
            application_patches,
            trigger_actions,
            error_kinds: LabelBudget::default(),
            patch_results: LabelBudget::default(),
            upstream,
            cluster,
            leader,
            requests,
            view: Mutex::new(None),
        }
    }

    /// Counts a run that ended in `phase` and records how long it took, when known.
    ///
    /// Call it once per run, on the transition to a terminal phase; `duration` is the
    /// time from `status.startTime` to `status.completionTime`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::api::{NotebookValidationJob, Phase};
    /// use nbv_operator::operator::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.validation_finished(Phase::Failed, Some(Duration::from_secs(90)));
    /// metrics.validation_finished(Phase::Failed, None);
    /// let text = metrics.encode();
    /// assert!(text.contains("notebook_validation_total{phase=\"Failed\"} 2"));
    /// assert!(text.contains("notebook_validation_duration_seconds_count{phase=\"Failed\"} 1"));
    /// ```
    pub fn validation_finished(&self, phase: Phase, duration: Option<Duration>) {
        let scope = JobScope::current();
        self.validations
            .get_or_create(&PhaseLabels {
                phase: phase.as_str(),
            })
            .inc();
        let namespace = scope.as_ref().map_or("", |s| s.namespace.as_str());
        self.upstream.validation_finished(namespace, phase);
        if let Some(duration) = duration {
            self.validation_duration
                .get_or_create(&self.duration_labels(phase, scope.as_ref()))
                .observe(duration.as_secs_f64());
        }
    }

    /// The duration's labels for a run of the job `scope` that ended in `phase`.
    fn duration_labels(&self, phase: Phase, scope: Option<&JobScope>) -> DurationLabels {
        let mut labels = vec![("phase", phase.as_str().to_owned())];
        if let (true, Some(scope)) = (self.job_name_label, scope) {
            labels.push(("namespace", scope.namespace.clone()));
            labels.push(("job_name", scope.name.clone()));
        }
        labels
    }

    /// Forgets the per-job series of `job` (only [`MetricsOptions::job_name_label`]
    /// has any), so that deleted jobs do not accumulate.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_core::api::{NotebookValidationJob, Phase};
    /// use nbv_operator::operator::metrics::{JobScope, Metrics, MetricsOptions};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let metrics = Metrics::with_options(MetricsOptions { job_name_label: true });
    /// let mut job = NotebookValidationJob::new("train", Default::default());
    /// job.metadata.namespace = Some("ml".to_owned());
    /// JobScope::of(&job)
    ///     .run(async { metrics.validation_finished(Phase::Failed, Some(Duration::from_secs(3))) })
    ///     .await;
    /// assert!(metrics.encode().contains("job_name=\"train\""));
    /// metrics.job_deleted(&job);
    /// assert!(!metrics.encode().contains("job_name=\"train\""));
    /// # }
    /// ```
    pub fn job_deleted(&self, job: &NotebookValidationJob) {
        if !self.job_name_label {
            return;
        }
        let scope = JobScope::of(job);
        for phase in [Phase::Succeeded, Phase::Failed] {
            self.validation_duration
                .remove(&self.duration_labels(phase, Some(&scope)));
        }
    }

    /// Counts one trigger of `action` (`restart`, `sync`, `refresh`) that ended with
    /// `status`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::metrics::{Metrics, TriggerStatus};
    ///
    /// let metrics = Metrics::new();
    /// metrics.trigger("sync", TriggerStatus::Deferred);
    /// assert!(metrics.encode().contains("argocd_triggers_total{action=\"sync\",status=\"deferred\"} 1"));
    /// ```
    pub fn trigger(&self, action: &str, status: TriggerStatus) {
        let action = self.trigger_actions.admit(action);
        self.triggers
            .get_or_create(&TriggerLabels {
                action,
                status: status.as_str(),
            })
            .inc();
    }

    /// Counts one reconcile and records how long it took.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use nbv_operator::operator::metrics::{Metrics, ReconcileOutcome};
    ///
    /// let metrics = Metrics::new();
    /// metrics.reconciled(ReconcileOutcome::Ok, Duration::from_millis(20));
    /// let text = metrics.encode();
    /// assert!(text.contains("nbv_reconcile_total{outcome=\"ok\"} 1"));
    /// assert!(text.contains("nbv_reconcile_duration_seconds_bucket{le=\"0.025\"} 1"));
    /// ```
    pub fn reconciled(&self, outcome: ReconcileOutcome, duration: Duration) {
        self.reconciles
            .get_or_create(&OutcomeLabels {
                outcome: outcome.as_str(),
            })
            .inc();
        self.reconcile_duration.observe(duration.as_secs_f64());
        self.upstream.reconciled(
            &current_namespace(),
            outcome == ReconcileOutcome::Ok,
            duration.as_secs_f64(),
        );
    }

    /// The controller's queue, whose depth `nbv_reconcile_queue_depth` shows.
    pub fn queue(&self) -> &ReconcileQueue {
        &self.queue
    }

    /// Follows the controller's queue until the returned guard is dropped; then the
    /// queue is forgotten and its depth is 0. A replica that stops leading has no
    /// queue any more.
    ///
    /// # Examples
    ///
    /// ```
    /// let metrics = nbv_operator::operator::metrics::Metrics::new();
    /// let queueing = metrics.queueing();
    /// metrics.queue().requested("ml", "train");
    /// assert!(metrics.encode().contains("\nnbv_reconcile_queue_depth 1\n"));
    /// drop(queueing);
    /// assert!(metrics.encode().contains("\nnbv_reconcile_queue_depth 0\n"));
    /// ```
    #[must_use = "the queue is forgotten when the guard is dropped"]
    pub fn queueing(&self) -> Queueing<'_> {
        self.queue.clear();
        Queueing(self)
    }

    /// Counts one reconcile error of the given `kind` (a short, fixed word chosen by the
    /// caller, such as `conflict`, `transient` or `invalid`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.reconcile_error("conflict");
    /// assert!(metrics.encode().contains("nbv_reconcile_errors_total{kind=\"conflict\"} 1"));
    /// ```
    pub fn reconcile_error(&self, kind: &str) {
        let kind = self.error_kinds.admit(kind);
        self.upstream
            .reconcile_error(&current_namespace(), kind.clone());
        self.reconcile_errors
            .get_or_create(&KindLabels { kind })
            .inc();
    }

    /// Counts one request to create a validation Pod in `namespace`, by whether the
    /// API server created it (or it existed already).
    ///
    /// # Examples
    ///
    /// ```
    /// let metrics = nbv_operator::operator::metrics::Metrics::new();
    /// metrics.pod_created("ml", false);
    /// assert!(metrics
    ///     .encode()
    ///     .contains("notebookvalidationjob_pod_creations_total{namespace=\"ml\",result=\"failed\"} 1"));
    /// ```
    pub fn pod_created(&self, namespace: &str, ok: bool) {
        self.upstream.pod_created(namespace, ok);
    }

    /// Where the clients count their requests to the API server
    /// (`rest_client_requests_total`; see [`crate::runtime::client::ClientOptions`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.api_requests().count(&http::Method::GET, "10.0.0.1:6443", Some(200));
    /// assert!(metrics.encode().contains(
    ///     "rest_client_requests_total{code=\"200\",host=\"10.0.0.1:6443\",method=\"GET\"} 1"
    /// ));
    /// ```
    pub fn api_requests(&self) -> ApiRequests {
        self.requests.clone()
    }

    /// Marks this replica as running the controller until the returned guard is
    /// dropped (`nbv_leader` 1, then 0).
    ///
    /// # Examples
    ///
    /// ```
    /// let metrics = nbv_operator::operator::metrics::Metrics::new();
    /// let leading = metrics.leading();
    /// assert!(metrics.encode().contains("\nnbv_leader 1\n"));
    /// drop(leading);
    /// assert!(metrics.encode().contains("\nnbv_leader 0\n"));
    /// ```
    #[must_use = "nbv_leader returns to 0 when the guard is dropped"]
    pub fn leading(&self) -> Leading {
        self.leader.set(1);
        Leading(self.leader.clone())
    }

    /// Reads the cluster gauges from `view` at each scrape until the returned guard is
    /// dropped; then they are removed. A replica that stops leading keeps caches that
    /// nothing updates any more: it must not go on reporting them.
    #[must_use = "the gauges are removed when the guard is dropped"]
    pub fn observe(&self, view: ClusterView) -> Observing<'_> {
        *self.view.lock().unwrap_or_else(PoisonError::into_inner) = Some(view);
        Observing(self)
    }

    /// Sets the cluster gauges from the caches, when they are known.
    fn refresh(&self, view: &ClusterView) {
        let jobs = view.jobs.state();
        let census = Census::of(jobs.iter().map(|j| j.as_ref()), view.clock.now());
        self.cluster.set(&census);
        if let Some(pods) = &view.pods {
            self.upstream.set_active_pods(&cluster::active_pods(pods));
        }
    }

    /// Counts one attempt to patch an Application's notebook status, by `result` (a
    /// short, fixed word such as `patched`, `unchanged` or `failed`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.application_published("patched");
    /// assert!(metrics
    ///     .encode()
    ///     .contains("nbv_application_status_patches_total{result=\"patched\"} 1"));
    /// ```
    pub fn application_published(&self, result: &str) {
        let result = self.patch_results.admit(result);
        self.application_patches
            .get_or_create(&ResultLabels { result })
            .inc();
    }

    /// The registry in the OpenMetrics text format, ending with `# EOF`.
    ///
    /// # Examples
    ///
    /// ```
    /// let text = nbv_operator::operator::metrics::Metrics::new().encode();
    /// // OpenMetrics names a counter family without the `_total` of its samples.
    /// assert!(text.starts_with("# HELP notebook_validation Notebook validation runs"));
    /// assert!(text.contains("\nnotebook_validation_total{phase=\"Failed\"} 0\n"));
    /// ```
    pub fn encode(&self) -> String {
        let view = self.view.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(view) = view.as_ref() {
            self.refresh(view);
        }
        self.queue.refresh();
        let mut text = String::new();
        // Encoding into a String fails only if a metric's own encoder fails, and the
        // built-in counters and histograms used here never do; should that change, a
        // scrape gets what was encoded and the log says why.
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "encoding the metrics failed; the scrape is incomplete");
        }
        text
    }
}

/// The namespace of the job being reconciled, or empty outside a reconcile.
fn current_namespace() -> String {
    JobScope::current().map(|s| s.namespace).unwrap_or_default()
}

/// Keeps the cluster gauges read from a [`ClusterView`]; see [`Metrics::observe`].
#[derive(Debug)]
pub struct Observing<'a>(&'a Metrics);

impl Drop for Observing<'_> {
    fn drop(&mut self) {
        let mut view = self.0.view.lock().unwrap_or_else(PoisonError::into_inner);
        *view = None;
        self.0.cluster.set(&Census::default());
        self.0.upstream.set_active_pods(&Default::default());
    }
}

/// Follows the controller's queue; see [`Metrics::queueing`].
#[derive(Debug)]
pub struct Queueing<'a>(&'a Metrics);

impl Drop for Queueing<'_> {
    fn drop(&mut self) {
        self.0.queue.clear();
    }
}

/// Keeps `nbv_leader` at 1 while it lives; see [`Metrics::leading`].
#[derive(Debug)]
pub struct Leading(Gauge);

impl Drop for Leading {
    fn drop(&mut self) {
        self.0.set(0);
    }
}

/// The values admitted for one free-form label: at most [`Metrics::MAX_LABEL_VALUES`],
/// each non-empty and at most [`Metrics::MAX_LABEL_LEN`] bytes long.
#[derive(Debug, Default)]
struct LabelBudget(Mutex<BTreeSet<String>>);

impl LabelBudget {
    /// The label value to count `value` under: `value` itself when admitted (now or
    /// before), [`Metrics::OVERFLOW_LABEL`] otherwise.
    fn admit(&self, value: &str) -> String {
        // A poisoned lock only means another thread panicked between two set
        // operations; the set itself is still consistent.
        let mut admitted = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let fits = !value.is_empty() && value.len() <= Metrics::MAX_LABEL_LEN;
        if fits && (admitted.contains(value) || admitted.len() < Metrics::MAX_LABEL_VALUES) {
            admitted.insert(value.to_owned());
            value.to_owned()
        } else {
            Metrics::OVERFLOW_LABEL.to_owned()
        }
    }
}
