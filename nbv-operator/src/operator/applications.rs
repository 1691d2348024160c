//! The Argo CD Applications as the watch cache holds them: what the reconciles and the
//! publisher read them through.

use std::sync::{Arc, OnceLock};

use kube::runtime::reflector::{ObjectRef, Store};
use nbv_core::aggregate::AppId;
use nbv_core::io::Response;

use crate::operator::effects::CACHE_PATIENCE;
use crate::operator::projection::CachedApplication;
use crate::operator::resources::application_resource;

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
    /// Applications being read into it (see [`crate::operator::application_watch`]).
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
        let resource = application_resource();
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
