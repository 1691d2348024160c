//! The world a reconcile runs against: the cluster (one call, or one read of a watch
//! cache, per request of the job machine) and what this process remembers of its own
//! writes. The simulation wraps it to inject its faults; nothing else does.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use nbv_core::aggregate::JobKey;
use nbv_core::io::{ObjectRef, Request, Response};
use nbv_core::job::Memory;

use crate::operator::applications::Applications;
use crate::operator::effects::Executor;
use crate::operator::models::ModelWatch;
use crate::operator::projection::PodCache;

/// What a reconcile reads and writes through: [`Cluster`] in production, wrapped by
/// the simulation's deliberate bugs.
pub trait JobIo: Send + Sync {
    /// Carries `request` of the reconcile of `job` out.
    fn run<'a>(&'a self, job: &'a JobKey, request: Request) -> BoxFuture<'a, Response>;

    /// The reconcile of `job` is done (a wrapper may still act).
    fn finished<'a>(&'a self, job: &'a JobKey) -> BoxFuture<'a, ()> {
        let _ = job;
        Box::pin(async {})
    }

    /// What this process remembers of the job with `uid` (taken: it is given back
    /// with [`keep`](Self::keep) when the reconcile ends).
    fn recall(&self, uid: &str) -> Memory;

    /// Keeps `memory` of the job with `uid` until its next reconcile.
    fn keep(&self, uid: &str, memory: Memory);
}

/// The memories of the jobs, by uid. Only jobs with something to remember have one:
/// an entry lives from a write until the job's watch shows it.
#[derive(Default)]
pub struct Memories(Mutex<HashMap<String, Memory>>);

impl Memories {
    /// Takes what is remembered of `uid`.
    pub fn recall(&self, uid: &str) -> Memory {
        self.lock().remove(uid).unwrap_or_default()
    }

    /// Keeps `memory` of `uid`; an empty one is not kept.
    pub fn keep(&self, uid: &str, memory: Memory) {
        if memory.is_empty() {
            self.lock().remove(uid);
        } else {
            self.lock().insert(uid.to_owned(), memory);
        }
    }

    /// How many jobs something is remembered of.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Memory>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The cluster as a reconcile sees it: the executor's calls, and the watch caches of
/// nbv's Pods, the Applications and the InferenceServices.
pub struct Cluster {
    executor: Executor,
    pods: Option<PodCache>,
    applications: Applications,
    models: Arc<ModelWatch>,
    memories: Memories,
}

impl Cluster {
    /// The cluster behind `executor`, read through these caches.
    pub fn new(
        executor: Executor,
        pods: Option<PodCache>,
        applications: Applications,
        models: Arc<ModelWatch>,
    ) -> Self {
        Cluster {
            executor,
            pods,
            applications,
            models,
            memories: Memories::default(),
        }
    }

    async fn cached(&self, job: &JobKey, object: &ObjectRef) -> Response {
        let namespace = object.namespace.as_deref().unwrap_or_default();
        match (object.group(), object.kind.as_str()) {
            ("", "Pod") => match &self.pods {
                Some(store) => {
                    let Some(pod) = store.pod_json(namespace, &object.name) else {
                        return Response::Object(None);
                    };
                    match pod {
                        Ok(pod) => Response::Object(Some(pod)),
                        // A defect of nbv; the machine reads the Pod from the API server.
                        Err(error) => {
                            tracing::warn!(pod = %object.name, %namespace, %error,
                                "the cached Pod could not be read back");
                            Response::NotCached
                        }
                    }
                }
                None => Response::NotCached,
            },
            ("argoproj.io", "Application") => {
                self.applications.cached(namespace, &object.name).await
            }
            ("serving.kserve.io", "InferenceService") => {
                self.models.cached(job, namespace, &object.name).await
            }
            _ => self.executor.run(Request::Cached(object.clone())).await,
        }
    }
}

impl JobIo for Cluster {
    fn run<'a>(&'a self, job: &'a JobKey, request: Request) -> BoxFuture<'a, Response> {
        Box::pin(async move {
            match request {
                Request::Cached(object) => self.cached(job, &object).await,
                request => self.executor.run(request).await,
            }
        })
    }

    fn recall(&self, uid: &str) -> Memory {
        self.memories.recall(uid)
    }

    fn keep(&self, uid: &str, memory: Memory) {
        self.memories.keep(uid, memory);
    }
}
