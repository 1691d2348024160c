//! What every reconcile shares.

use std::sync::{Arc, OnceLock};

use kube::runtime::reflector::{ObjectRef, Store};
use nbv_core::aggregate::AppId;
use nbv_core::api::NotebookValidationJob;
use nbv_core::io::Response;
use nbv_core::job::Settings;
use nbv_core::plan::PlanContext;

use crate::clock::Clock;
use crate::config::OperatorConfig;
use crate::effects::{CACHE_PATIENCE, Executor};
use crate::metrics::Metrics;
use crate::models::ModelWatch;
use crate::projection::CachedApplication;
use crate::reconcile::{JobIo, ParsedTriggers};
use crate::resync::Reconciles;

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
    /// The reconciles that ended, for the resync's sweep (see [`crate::resync`]).
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

/// The Argo CD Applications nbv watches, read from the watch cache: no GET per lookup.
#[derive(Clone)]
pub struct Applications {
    store: Option<Store<CachedApplication>>,
    namespaces: Vec<String>,
    /// Whether the cache has listed.
    listed: tokio::sync::watch::Receiver<bool>,
    /// How many Applications named for the first time are being read into it.
    reading: tokio::sync::watch::Receiver<usize>,
    /// When waiting for the first listing ends ([`Applications::listed`]).
    patience_ends: Arc<OnceLock<tokio::time::Instant>>,
}

impl Applications {
    /// The Applications of `store` (`None`: none are watched), looking for an
    /// Application named without a namespace in `namespaces`, in order.
    /// `listed` turns true once the cache has listed; `reading` counts the
    /// Applications being read into it (see [`crate::application_watch`]).
    pub fn new(
        store: Option<Store<CachedApplication>>,
        namespaces: Vec<String>,
        listed: tokio::sync::watch::Receiver<bool>,
        reading: tokio::sync::watch::Receiver<usize>,
    ) -> Self {
        Applications {
            store,
            namespaces,
            listed,
            reading,
            patience_ends: Arc::default(),
        }
    }

    /// The Application object `app` names, for a job in one of `job_namespaces`: in
    /// its own namespace if it names one, else the first found among the configured
    /// namespaces, then `job_namespaces`.
    pub fn find<'a>(
        &'a self,
        app: &AppId,
        job_namespaces: impl IntoIterator<Item = &'a str>,
    ) -> Option<Arc<CachedApplication>> {
        let store = self.store.as_ref()?;
        let resource = crate::controller::application_resource();
        let lookup =
            |ns: &str| store.get(&ObjectRef::new_with(app.name(), resource.clone()).within(ns));
        match app.namespace() {
            Some(ns) => lookup(ns),
            None => self
                .namespaces
                .iter()
                .map(String::as_str)
                .chain(job_namespaces)
                .find_map(lookup),
        }
    }

    /// [`find`](Self::find) once the cache has [`listed`](Self::listed); when it
    /// lacks the Application while Applications named for the first time are being
    /// read into it, again once they are (waiting at most [`CACHE_PATIENCE`]): a job
    /// that names an Application the cache did not keep is seen before its
    /// Application arrives.
    pub async fn find_read<'a>(
        &'a self,
        app: &AppId,
        job_namespaces: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Option<Arc<CachedApplication>> {
        self.listed().await;
        if let Some(found) = self.find(app, job_namespaces.clone()) {
            return Some(found);
        }
        // The reads start once the cache has listed: before, there is none to wait for.
        let mut reading = self.reading.clone();
        if !self.ready() || *reading.borrow_and_update() == 0 {
            return None;
        }
        let _ = tokio::time::timeout(CACHE_PATIENCE, reading.wait_for(|n| *n == 0)).await;
        self.find(app, job_namespaces)
    }

    /// Waits for the cache's first listing: the cache starts once the jobs are listed,
    /// so the first reconciles may come before it. The wait ends at most
    /// [`CACHE_PATIENCE`] after the first call, for every caller: where Argo CD is not
    /// installed the cache never lists, and a reconcile must not wait for it each time.
    pub async fn listed(&self) {
        if self.store.is_none() {
            return;
        }
        let deadline = *self
            .patience_ends
            .get_or_init(|| tokio::time::Instant::now() + CACHE_PATIENCE);
        let mut listed = self.listed.clone();
        let _ = tokio::time::timeout_at(deadline, listed.wait_for(|listed| *listed)).await;
    }

    /// The Application `namespace/name` as [`find_read`](Self::find_read) reads it,
    /// as the job machine asks for it: not cached without a cache of Applications.
    pub async fn cached(&self, namespace: &str, name: &str) -> Response {
        if self.store.is_none() {
            return Response::NotCached;
        }
        let Ok(app) = AppId::new(Some(namespace), name) else {
            return Response::Object(None);
        };
        let found = self.find_read(&app, [namespace]).await;
        Response::Object(found.map(|app| app.to_json()))
    }

    /// Whether the cache holds the first listing (always true without a cache).
    pub fn ready(&self) -> bool {
        self.store.is_none() || *self.listed.borrow()
    }

    /// Every Application in the cache.
    pub fn all(&self) -> Vec<Arc<CachedApplication>> {
        self.store.as_ref().map(Store::state).unwrap_or_default()
    }
}
