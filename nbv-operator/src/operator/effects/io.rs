//! The one place where the requests of nbv-core's machines meet the cluster: each
//! [`Request`] is exactly one call (or one read of a watch cache), and each answer is
//! given back as the core reads it ([`crate::runtime::api_error::answer`]).

use futures::FutureExt;
use kube::api::DynamicObject;
use kube::runtime::reflector::{self, Store};
use nbv_core::carry::Machine;
use nbv_core::io::{ObjectRef, Request, Response, Step};
use serde_json::Value;

use super::{CACHE_PATIENCE, Executor};
use crate::operator::resources::{application_resource, appproject_resource};

/// How often [`cache_ready`] looks whether a cache has listed.
const READY_POLL: std::time::Duration = std::time::Duration::from_millis(50);

impl Executor {
    /// Runs `machine` to its end, carrying out each request it makes.
    pub(super) async fn drive<M: Machine>(&self, machine: &mut M) -> M::Output {
        loop {
            match machine.next() {
                Step::Io(request) => {
                    let response = self.run(request).await;
                    machine.answer(response);
                }
                Step::Done(output) => return output,
            }
        }
    }

    /// Carries `request` out with one call ([`nbv_kube::KubeIo`]), or one read of a
    /// watch cache.
    pub async fn run(&self, request: Request) -> Response {
        match request {
            Request::Cached(object) => self.cached(&object).await,
            request => self.kube.run(request).await,
        }
    }

    /// `object` from the watch cache of its kind: an Application from the
    /// Applications' cache when it watches the Application's namespace and has listed
    /// (waiting at most [`CACHE_PATIENCE`]), an AppProject from the AppProjects'
    /// cache once it has listed. The Applications' cache keeps only those jobs name
    /// ([`crate::operator::projection::AppInterest`]), so one it does not hold is still read.
    async fn cached(&self, object: &ObjectRef) -> Response {
        let (group, kind) = (object.group(), object.kind.as_str());
        let namespace = object.namespace.as_deref().unwrap_or_default();
        match (group, kind) {
            ("argoproj.io", "Application") => {
                let Some((store, namespaces)) = &self.caches.applications else {
                    return Response::NotCached;
                };
                if !namespaces.iter().any(|ns| ns == namespace) || !cache_ready(store).await {
                    return Response::NotCached;
                }
                let key = reflector::ObjectRef::new_with(&object.name, application_resource())
                    .within(namespace);
                Response::Object(store.get(&key).map(|app| json(&app.to_object())))
            }
            ("argoproj.io", "AppProject") => {
                let Some(store) = &self.caches.projects else {
                    return Response::NotCached;
                };
                if !cache_ready(store).await {
                    return Response::NotCached;
                }
                let key = reflector::ObjectRef::new_with(&object.name, appproject_resource())
                    .within(namespace);
                Response::Object(store.get(&key).map(|project| json(&project)))
            }
            _ => Response::NotCached,
        }
    }
}

/// An object as the core reads it.
fn json(object: &DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or_default()
}

/// Whether `store` has listed its objects, waiting for it at most [`CACHE_PATIENCE`]:
/// before its first listing a cache knows nothing, and "absent" would be a lie.
///
/// The store is looked at every [`READY_POLL`] rather than awaited: kube-runtime's
/// `Store::wait_until_ready` wakes only the last of several tasks waiting on it (a
/// oneshot channel), so at a start with many triggers due all but one would wait out
/// the patience and fall back to a GET.
async fn cache_ready<K>(store: &Store<K>) -> bool
where
    K: reflector::Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    let deadline = tokio::time::Instant::now() + CACHE_PATIENCE;
    loop {
        if let Some(listed) = store.wait_until_ready().now_or_never() {
            return listed.is_ok();
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(READY_POLL).await;
    }
}
