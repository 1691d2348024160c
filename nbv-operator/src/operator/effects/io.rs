//! The one place where the requests of nbv-core's machines meet the cluster: each
//! [`Request`] is exactly one call (or one read of a watch cache), and each answer is
//! given back as the core reads it ([`crate::runtime::api_error::answer`]).

use futures::FutureExt;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions,
};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::reflector::{self, Store};
use nbv_core::carry::Machine;
use nbv_core::io::{ObjectRef, Request, Response, Step, Subresource};
use nbv_core::reconcile::AnswerClass;
use serde_json::Value;

use super::{CACHE_PATIENCE, Executor};
use crate::operator::resources::{application_resource, appproject_resource};
use crate::runtime::api_error::answer;

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

    /// Carries `request` out with one call, or one read of a watch cache.
    pub async fn run(&self, request: Request) -> Response {
        let result = match request {
            Request::Cached(object) => return self.cached(&object).await,
            Request::Get(object) => match self.api(&object).get(&object.name).await {
                Ok(found) => Ok(Response::Object(Some(json(&found)))),
                Err(error) => {
                    let answer = answer(&error);
                    if answer.class() == AnswerClass::NotFound {
                        Ok(Response::Object(None))
                    } else {
                        Err(answer)
                    }
                }
            },
            Request::List {
                kind,
                label_selector,
            } => self
                .api(&kind)
                .list(&ListParams::default().labels(&label_selector))
                .await
                .map(|list| Response::Objects(list.items.iter().map(json).collect()))
                .map_err(|e| answer(&e)),
            Request::Create { object, body } => match serde_json::from_value::<DynamicObject>(body)
            {
                Ok(body) => self
                    .api(&object)
                    .create(&self.post_params(), &body)
                    .await
                    .map(|created| Response::Object(Some(json(&created))))
                    .map_err(|e| answer(&e)),
                Err(e) => Err(nbv_core::reconcile::ApiAnswer::no_answer(format!(
                    "the object to create cannot be sent: {e}"
                ))),
            },
            Request::Patch {
                object,
                subresource,
                patch,
            } => {
                let api = self.api(&object);
                let params = self.patch_params();
                let patch = Patch::Merge(&patch);
                match subresource {
                    Subresource::Object => api.patch(&object.name, &params, &patch).await,
                    Subresource::Status => api.patch_status(&object.name, &params, &patch).await,
                }
                .map(|stored| Response::Object(Some(json(&stored))))
                .map_err(|e| answer(&e))
            }
            Request::Delete { object, uid } => {
                let params = match uid {
                    Some(uid) => DeleteParams::default().preconditions(Preconditions {
                        uid: Some(uid),
                        resource_version: None,
                    }),
                    None => DeleteParams::default(),
                };
                self.api(&object)
                    .delete(&object.name, &params)
                    .await
                    .map(|_| Response::Deleted)
                    .map_err(|e| answer(&e))
            }
            Request::DeleteAll {
                kind,
                label_selector,
            } => self
                .api(&kind)
                .delete_collection(
                    &DeleteParams::background(),
                    &ListParams::default().labels(&label_selector),
                )
                .await
                .map(|deleted| {
                    let items = deleted.left().map(|list| list.items).unwrap_or_default();
                    Response::Objects(items.iter().map(json).collect())
                })
                .map_err(|e| answer(&e)),
        };
        result.unwrap_or_else(Response::Failed)
    }

    /// The API of `object`'s kind, with the resource name guessed from the kind (see
    /// the module documentation of [`crate::operator::effects`] for the rule).
    fn api(&self, object: &ObjectRef) -> Api<DynamicObject> {
        let gvk = GroupVersionKind::gvk(object.group(), object.version(), &object.kind);
        let resource = ApiResource::from_gvk(&gvk);
        match &object.namespace {
            Some(namespace) => Api::namespaced_with(self.client.clone(), namespace, &resource),
            None => Api::all_with(self.client.clone(), &resource),
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

    /// Parameters of every create: nbv's field manager, as for patches.
    fn post_params(&self) -> PostParams {
        PostParams {
            dry_run: false,
            field_manager: Some(self.config.field_manager.clone()),
        }
    }

    /// Parameters of every patch: nbv's field manager, so that `managedFields` show
    /// which fields nbv wrote.
    fn patch_params(&self) -> PatchParams {
        PatchParams {
            field_manager: Some(self.config.field_manager.clone()),
            ..PatchParams::default()
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
