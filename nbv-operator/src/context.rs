//! What every reconcile shares.

use std::sync::Arc;

use nbv_core::aggregate::JobKey;
use nbv_core::api::NotebookValidationJob;
use nbv_core::phase::RetryPolicy;
use nbv_core::plan::EffectRetryPolicy;

use crate::clock::Clock;
use crate::config::OperatorConfig;
use crate::effects::Executor;
use crate::metrics::Metrics;
use crate::pods::PodRunner;
use crate::publisher::Publisher;
use crate::reconcile::RecentLedgers;

/// The shared state of the controller.
pub struct Context {
    /// The Kubernetes client.
    pub client: kube::Client,
    /// The controller's configuration.
    pub config: OperatorConfig,
    /// Carries out effects.
    pub executor: Executor,
    /// Publishes Application status.
    pub publisher: Arc<Publisher>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// Retries of notebook runs.
    pub retry_policy: RetryPolicy,
    /// Retries of failed effects.
    pub effect_retry: EffectRetryPolicy,
    /// Starts and observes validation Pods (default mode).
    pub pods: PodRunner,
    /// Ledgers written recently (see [`RecentLedgers`]).
    pub recent: RecentLedgers,
}

impl Context {
    /// Forgets a job the watch reports deleted. A job deleted without a finalizer is
    /// never reconciled again, so this is the only place its Application learns of
    /// it and its recent ledger is dropped.
    pub fn job_deleted(&self, job: &NotebookValidationJob) {
        if let (Some(namespace), Some(name)) = (&job.metadata.namespace, &job.metadata.name) {
            self.publisher
                .job_removed(&JobKey::new(namespace.clone(), name.clone()));
        }
        if let Some(uid) = &job.metadata.uid {
            self.recent.forget(uid);
        }
    }
}
