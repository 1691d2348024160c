//! What every reconcile shares.

use std::sync::Arc;

use nbv_core::api::NotebookValidationJob;
use nbv_core::job::Settings;
use nbv_core::plan::PlanContext;

use super::io::JobIo;
use super::parsed::ParsedTriggers;
use crate::operator::applications::Applications;
use crate::operator::config::OperatorConfig;
use crate::operator::effects::Executor;
use crate::operator::metrics::Metrics;
use crate::operator::models::ModelWatch;
use crate::operator::resync::Reconciles;
use crate::runtime::clock::Clock;

/// The shared state of the controller.
pub struct Context {
    /// The controller's configuration.
    pub config: OperatorConfig,
    /// What every reconcile's job machine runs with.
    pub settings: Arc<Settings>,
    /// Carries out effects (and publishes the Applications' status).
    pub executor: Executor,
    /// What the reconciles read and write through.
    pub io: Arc<dyn JobIo>,
    /// The Argo CD Applications, from the watch cache (read-only).
    pub applications: Applications,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// The InferenceServices the model gate reads (started by the first job that
    /// validates models).
    pub models: Arc<ModelWatch>,
    /// The jobs' trigger annotations, parsed (see [`ParsedTriggers`]).
    pub parsed_triggers: ParsedTriggers,
    /// The reconciles that ended, for the resync's sweep (see [`crate::operator::resync`]).
    pub reconciles: Arc<Reconciles>,
}

impl Context {
    /// Forgets a deleted job's memory, parsed annotation and requeue. Called when the
    /// watch reports the deletion (a job deleted without a finalizer is never
    /// reconciled again) and when a reconcile finds the job being deleted.
    pub fn job_deleted(&self, job: &NotebookValidationJob) {
        if let Some(uid) = &job.metadata.uid {
            self.io.keep(uid, Default::default());
            self.parsed_triggers.forget(uid);
        }
        if let (Some(namespace), Some(name)) = (&job.metadata.namespace, &job.metadata.name) {
            self.reconciles.forget(namespace, name);
        }
    }

    /// What a plan is made with, as far as parsing the trigger annotation needs.
    pub fn plan_context(&self) -> PlanContext {
        PlanContext {
            argocd_namespace: self.settings.argocd_namespace.clone(),
            max_retries: self.settings.max_retries,
            retry: self.settings.effect_retry.clone(),
            application: None,
        }
    }
}
