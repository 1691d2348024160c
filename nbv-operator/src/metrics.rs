//! Prometheus metrics of the operator, served as OpenMetrics text on `GET /metrics`.
//!
//! The three families of ADR-049 keep their names so that existing dashboards work:
//! `notebook_validation_total{phase}`, `notebook_validation_duration_seconds{phase}` and
//! `argocd_triggers_total{action,status}`. The operator adds its own health:
//! `nbv_reconcile_total{outcome}`, `nbv_reconcile_duration_seconds`,
//! `nbv_reconcile_errors_total{kind}` and `nbv_application_status_patches_total{result}`.
//!
//! Every label has a bounded set of values, because each distinct label set is a time
//! series that Prometheus keeps for as long as the process runs:
//!
//! - the validation duration is *not* labelled with the job's name, unlike ADR-049's
//!   sketch: job names are chosen by users, every run of a generated name would add a
//!   histogram of 16 series, and the job's duration is already in its Event and status;
//! - labels taken from a `&str` (`action`, `kind`, `result`) accept at most
//!   [`Metrics::MAX_LABEL_VALUES`] distinct values per label, and no empty value or value
//!   of more than [`Metrics::MAX_LABEL_LEN`] bytes; anything else is counted under
//!   [`Metrics::OVERFLOW_LABEL`], so a bug that passes free text cannot exhaust memory.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use nbv_core::api::Phase;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
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
/// use nbv_operator::metrics::TriggerStatus;
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
    /// The label value.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::metrics::TriggerStatus;
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
/// use nbv_operator::metrics::ReconcileOutcome;
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
    /// use nbv_operator::metrics::ReconcileOutcome;
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

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

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
/// use nbv_core::api::Phase;
/// use nbv_operator::metrics::{Metrics, TriggerStatus};
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
    validation_duration: HistogramFamily<PhaseLabels>,
    triggers: Family<TriggerLabels, Counter>,
    reconciles: Family<OutcomeLabels, Counter>,
    reconcile_duration: Histogram,
    reconcile_errors: Family<KindLabels, Counter>,
    application_patches: Family<ResultLabels, Counter>,
    trigger_actions: LabelBudget,
    error_kinds: LabelBudget,
    patch_results: LabelBudget,
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
    /// The outcomes that alerts divide by (`phase` `Succeeded` and `Failed`, reconcile
    /// `ok` and `error`) start at zero, so a ratio exists before the first event. The
    /// families labelled by callers (`argocd_triggers_total`,
    /// `nbv_reconcile_errors_total`, `nbv_application_status_patches_total`) appear in
    /// the exposition with their first series.
    ///
    /// # Examples
    ///
    /// ```
    /// let text = nbv_operator::metrics::Metrics::new().encode();
    /// assert!(text.contains("# TYPE notebook_validation_duration_seconds histogram"));
    /// assert!(text.contains("nbv_reconcile_total{outcome=\"error\"} 0"));
    /// ```
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let validations = Family::<PhaseLabels, Counter>::default();
        registry.register(
            "notebook_validation",
            "Notebook validation runs that ended, by final phase",
            validations.clone(),
        );
        let validation_duration: HistogramFamily<PhaseLabels> =
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

        for phase in [Phase::Succeeded, Phase::Failed] {
            let labels = PhaseLabels {
                phase: phase.as_str(),
            };
            // Creating the series is the point; the returned guard is dropped at once.
            drop(validations.get_or_create(&labels));
            drop(validation_duration.get_or_create(&labels));
        }
        for outcome in [ReconcileOutcome::Ok, ReconcileOutcome::Error] {
            drop(reconciles.get_or_create(&OutcomeLabels {
                outcome: outcome.as_str(),
            }));
        }

        Metrics {
            registry,
            validations,
            validation_duration,
            triggers,
            reconciles,
            reconcile_duration,
            reconcile_errors,
            application_patches,
            trigger_actions: LabelBudget::default(),
            error_kinds: LabelBudget::default(),
            patch_results: LabelBudget::default(),
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
    /// use nbv_core::api::Phase;
    /// use nbv_operator::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.validation_finished(Phase::Failed, Some(Duration::from_secs(90)));
    /// metrics.validation_finished(Phase::Failed, None);
    /// let text = metrics.encode();
    /// assert!(text.contains("notebook_validation_total{phase=\"Failed\"} 2"));
    /// assert!(text.contains("notebook_validation_duration_seconds_count{phase=\"Failed\"} 1"));
    /// ```
    pub fn validation_finished(&self, phase: Phase, duration: Option<Duration>) {
        let labels = PhaseLabels {
            phase: phase.as_str(),
        };
        self.validations.get_or_create(&labels).inc();
        if let Some(duration) = duration {
            self.validation_duration
                .get_or_create(&labels)
                .observe(duration.as_secs_f64());
        }
    }

    /// Counts one trigger of `action` (`restart`, `sync`, `refresh`) that ended with
    /// `status`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::metrics::{Metrics, TriggerStatus};
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
    /// use nbv_operator::metrics::{Metrics, ReconcileOutcome};
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
    }

    /// Counts one reconcile error of the given `kind` (a short, fixed word chosen by the
    /// caller, such as `conflict`, `transient` or `invalid`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::metrics::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.reconcile_error("conflict");
    /// assert!(metrics.encode().contains("nbv_reconcile_errors_total{kind=\"conflict\"} 1"));
    /// ```
    pub fn reconcile_error(&self, kind: &str) {
        let kind = self.error_kinds.admit(kind);
        self.reconcile_errors
            .get_or_create(&KindLabels { kind })
            .inc();
    }

    /// Counts one attempt to patch an Application's notebook status, by `result` (a
    /// short, fixed word such as `patched`, `unchanged` or `failed`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::metrics::Metrics;
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
    /// let text = nbv_operator::metrics::Metrics::new().encode();
    /// // OpenMetrics names a counter family without the `_total` of its samples.
    /// assert!(text.starts_with("# HELP notebook_validation Notebook validation runs"));
    /// assert!(text.contains("\nnotebook_validation_total{phase=\"Failed\"} 0\n"));
    /// ```
    pub fn encode(&self) -> String {
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
