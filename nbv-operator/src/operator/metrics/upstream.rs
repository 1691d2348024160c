//! The upstream operator's `notebookvalidationjob_*` families, with its names, labels
//! and label values, so that dashboards and alerts written for it keep working.
//!
//! Read from upstream's `internal/controller/metrics.go` and its call sites (v1.0.x):
//!
//! | family | labels | nbv counts |
//! |---|---|---|
//! | `notebookvalidationjob_reconciliation_duration_seconds` (histogram, upstream's buckets) | `namespace`, `result` = `success` \| `error` | every reconcile |
//! | `notebookvalidationjob_validations_total` | `namespace`, `status` = `succeeded` \| `failed` | every run that ended, once |
//! | `notebookvalidationjob_reconciliation_errors_total` | `namespace`, `error_type` | every failed reconcile, by nbv's error kind |
//! | `notebookvalidationjob_pod_creations_total` | `namespace`, `result` = `success` \| `failed` | every validation Pod nbv asked to create |
//! | `notebookvalidationjob_active_pods` (gauge) | `namespace`, `phase` = `pending` \| `running` | nbv's validation Pods in that phase, from the watch cache |
//!
//! Upstream's Git clone, model validation, model health check, prediction and platform
//! detection families are not exposed: nbv's operator does none of those itself (the
//! clone runs in the validation Pod, model validation is refused by name), and a family
//! that never moves would pass for "no failures". docs/operations.md lists them.

use std::collections::BTreeMap;

use nbv_core::api::Phase;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Upstream's reconciliation buckets, in seconds.
const RECONCILIATION_BUCKETS: [f64; 8] = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0];

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ResultLabels {
    namespace: String,
    result: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StatusLabels {
    namespace: String,
    status: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ErrorLabels {
    namespace: String,
    error_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PodPhaseLabels {
    namespace: String,
    phase: &'static str,
}

fn reconciliation_histogram() -> Histogram {
    Histogram::new(RECONCILIATION_BUCKETS)
}

/// Upstream's phase of a validation Pod, as the `phase` label of
/// `notebookvalidationjob_active_pods`: `Some` only for the two phases it counts.
pub(super) fn active_pod_phase(pod_phase: &str) -> Option<&'static str> {
    match pod_phase {
        "Pending" => Some("pending"),
        "Running" => Some("running"),
        _ => None,
    }
}

/// The handles of upstream's families.
#[derive(Debug)]
pub(super) struct Upstream {
    reconciliation_duration: Family<ResultLabels, Histogram, fn() -> Histogram>,
    validations: Family<StatusLabels, Counter>,
    reconciliation_errors: Family<ErrorLabels, Counter>,
    pod_creations: Family<ResultLabels, Counter>,
    active_pods: Family<PodPhaseLabels, Gauge>,
}

impl Upstream {
    /// Registers the families in `registry`.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let reconciliation_duration: Family<ResultLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(reconciliation_histogram);
        registry.register_with_unit(
            "notebookvalidationjob_reconciliation_duration",
            "Duration of NotebookValidationJob reconciliation in seconds (upstream's name)",
            Unit::Seconds,
            reconciliation_duration.clone(),
        );
        let validations = Family::<StatusLabels, Counter>::default();
        registry.register(
            "notebookvalidationjob_validations",
            "Total number of notebook validations, by namespace and status (upstream's name)",
            validations.clone(),
        );
        let reconciliation_errors = Family::<ErrorLabels, Counter>::default();
        registry.register(
            "notebookvalidationjob_reconciliation_errors",
            "Total number of reconciliation errors, by namespace and type (upstream's name)",
            reconciliation_errors.clone(),
        );
        let pod_creations = Family::<ResultLabels, Counter>::default();
        registry.register(
            "notebookvalidationjob_pod_creations",
            "Total number of validation pod creation attempts (upstream's name)",
            pod_creations.clone(),
        );
        let active_pods = Family::<PodPhaseLabels, Gauge>::default();
        registry.register(
            "notebookvalidationjob_active_pods",
            "Number of active validation pods, by namespace and phase (upstream's name)",
            active_pods.clone(),
        );
        Upstream {
            reconciliation_duration,
            validations,
            reconciliation_errors,
            pod_creations,
            active_pods,
        }
    }

    pub(super) fn reconciled(&self, namespace: &str, ok: bool, seconds: f64) {
        self.reconciliation_duration
            .get_or_create(&ResultLabels {
                namespace: namespace.to_owned(),
                result: if ok { "success" } else { "error" },
            })
            .observe(seconds);
    }

    /// Counts a run that ended in `phase`; other phases are not runs that ended.
    pub(super) fn validation_finished(&self, namespace: &str, phase: Phase) {
        let status = match phase {
            Phase::Succeeded => "succeeded",
            Phase::Failed => "failed",
            _ => return,
        };
        self.validations
            .get_or_create(&StatusLabels {
                namespace: namespace.to_owned(),
                status,
            })
            .inc();
    }

    pub(super) fn reconcile_error(&self, namespace: &str, error_type: String) {
        self.reconciliation_errors
            .get_or_create(&ErrorLabels {
                namespace: namespace.to_owned(),
                error_type,
            })
            .inc();
    }

    pub(super) fn pod_created(&self, namespace: &str, ok: bool) {
        self.pod_creations
            .get_or_create(&ResultLabels {
                namespace: namespace.to_owned(),
                result: if ok { "success" } else { "failed" },
            })
            .inc();
    }

    /// Replaces the active Pod counts with `counts` (namespace, phase label → Pods).
    pub(super) fn set_active_pods(&self, counts: &BTreeMap<(String, &'static str), i64>) {
        self.active_pods.clear();
        for ((namespace, phase), count) in counts {
            self.active_pods
                .get_or_create(&PodPhaseLabels {
                    namespace: namespace.clone(),
                    phase,
                })
                .set(*count);
        }
    }
}
