//! What every reconcile shares.

use std::sync::Arc;

use nbv_core::aggregate::{JobKey, TrackingSettings};
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
use crate::tamper::Tamper;

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
    /// How jobs are tracked to their parent Application.
    pub tracking: TrackingSettings,
    /// A deliberate bug the simulation injects to prove its invariants catch it;
    /// `None` in production (see [`Tamper`]).
    pub tamper: Option<Arc<dyn Tamper>>,
}

impl Context {
    /// Forgets a deleted job: its Application stops counting it and its recent
    /// ledger is dropped. Called when the watch reports the deletion (a job deleted
    /// without a finalizer is never reconciled again) and when a reconcile finds the
    /// job being deleted.
    pub fn job_deleted(&self, job: &NotebookValidationJob) {
        if let Some(key) = JobKey::of(job) {
            self.publisher.job_removed(&key);
        }
        if let Some(uid) = &job.metadata.uid {
            self.recent.forget(uid);
        }
    }
}
