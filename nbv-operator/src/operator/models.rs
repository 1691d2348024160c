//! Model validation on the cluster: the watch of InferenceServices the gate reads, and
//! the gate carried out before a job's validation Pod starts.
//!
//! The watch starts with the first job that asks for model validation, so an operator
//! whose jobs never do (or a cluster without KServe) neither lists nor watches
//! InferenceServices. Its cache keeps only what the gate reads of each
//! ([`trim_inference_service`]).
//! A job that waits for a model is woken when that model changes, or when the watch
//! learns something about the platform: nothing is polled.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use kube::api::{Api, DynamicObject};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use nbv_core::aggregate::JobKey;
use nbv_core::io::{ApiAnswer, Response};
use nbv_core::models::ModelRef;
use tokio::sync::watch;

use crate::operator::projection::CachedJob;
use crate::operator::projection::{inference_service_json, trim_inference_service};
use crate::operator::resources::inference_service_resource;
use crate::runtime::api_error::{ApiErrorClass, classify_status};
use crate::runtime::backoff::WatchBackoff;

/// How long a gate waits for the watch's first answer before it reports the platform
/// as not known yet (and the job waits, woken when the answer comes).
const FIRST_ANSWER_PATIENCE: Duration = Duration::from_secs(5);

/// What the watch knows about the platform.
#[derive(Clone, Debug, PartialEq, Eq)]
enum WatchState {
    /// The first listing has not answered.
    Listing,
    /// Listed: the cache holds every InferenceService.
    Listed,
    /// The API server does not serve InferenceServices (404).
    NotServed,
    /// nbv's role may not list or watch them (403): the API server's message.
    Unreadable(String),
}

/// The InferenceService watch, started on first use.
pub struct ModelWatch {
    client: kube::Client,
    namespace: Option<String>,
    wake: UnboundedSender<ObjectRef<CachedJob>>,
    waiting: Arc<Waiting>,
    started: OnceLock<Started>,
}

struct Started {
    store: Store<DynamicObject>,
    state: watch::Receiver<WatchState>,
    task: tokio::task::AbortHandle,
}

impl Drop for ModelWatch {
    fn drop(&mut self) {
        if let Some(started) = self.started.get() {
            started.task.abort();
        }
    }
}

/// The jobs waiting for each model, to wake when it changes. A job is taken off when
/// it is woken; it registers again if it still waits.
#[derive(Default)]
struct Waiting {
    jobs: Mutex<HashMap<ModelRef, HashSet<ObjectRef<CachedJob>>>>,
}

impl Waiting {
    fn register(&self, models: &[ModelRef], job: ObjectRef<CachedJob>) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        for model in models {
            jobs.entry(model.clone()).or_default().insert(job.clone());
        }
    }

    /// Keeps `job` waiting for `models` only.
    fn keep_only(&self, job: &ObjectRef<CachedJob>, models: &[ModelRef]) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.retain(|model, waiting| {
            if !models.contains(model) {
                waiting.remove(job);
            }
            !waiting.is_empty()
        });
    }

    /// The jobs waiting for `model` (every waiting job when `None`), taken off.
    fn take(&self, model: Option<&ModelRef>) -> Vec<ObjectRef<CachedJob>> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let taken: HashSet<_> = match model {
            Some(model) => jobs.remove(model).unwrap_or_default(),
            None => jobs.drain().flat_map(|(_, waiting)| waiting).collect(),
        };
        taken.into_iter().collect()
    }
}

impl ModelWatch {
    /// A watch of the InferenceServices in `namespace` (every namespace when `None`)
    /// through `client`, not started yet. Jobs to reconcile again are sent to `wake`.
    pub fn new(
        client: kube::Client,
        namespace: Option<String>,
        wake: UnboundedSender<ObjectRef<CachedJob>>,
    ) -> Self {
        ModelWatch {
            client,
            namespace,
            wake,
            waiting: Arc::default(),
            started: OnceLock::new(),
        }
    }

    fn started(&self) -> &Started {
        self.started.get_or_init(|| self.start())
    }

    fn start(&self) -> Started {
        let resource = inference_service_resource();
        let writer = reflector::store::Writer::<DynamicObject>::new(resource.clone());
        let store = writer.as_reader();
        let api: Api<DynamicObject> = match &self.namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &resource),
            None => Api::all_with(self.client.clone(), &resource),
        };
        let (state_tx, state) = watch::channel(WatchState::Listing);
        let waiting = self.waiting.clone();
        let wake = self.wake.clone();
        let stream = watcher(api, crate::runtime::watch::config())
            .patient_backoff()
            .modify(trim_inference_service)
            .reflect(writer)
            .for_each(move |event| {
                let woken = match &event {
                    Ok(watcher::Event::InitDone) => {
                        state_tx.send_replace(WatchState::Listed);
                        waiting.take(None)
                    }
                    Ok(watcher::Event::Apply(object) | watcher::Event::Delete(object)) => {
                        let model = ModelRef::new(
                            object.metadata.namespace.clone().unwrap_or_default(),
                            object.metadata.name.clone().unwrap_or_default(),
                        );
                        waiting.take(Some(&model))
                    }
                    Ok(_) => Vec::new(),
                    Err(error) => {
                        let learned = platform_error(error);
                        tracing::debug!(%error, "InferenceService watch error");
                        match learned {
                            Some(learned) if *state_tx.borrow() != learned => {
                                state_tx.send_replace(learned);
                                waiting.take(None)
                            }
                            _ => Vec::new(),
                        }
                    }
                };
                for job in woken {
                    // The controller is gone only when the operator stops.
                    let _ = wake.unbounded_send(job);
                }
                async {}
            });
        let task = tokio::spawn(stream).abort_handle();
        Started { store, state, task }
    }

    /// The InferenceService `namespace/name` as the watch knows it, for the reconcile
    /// of `job`, answered as its listing was: not served (404), not readable (403),
    /// not listed yet (not cached), or what the cache holds. The job is registered
    /// first, so that a change between the reading and the end of its reconcile
    /// still wakes it ([`waits`](Self::waits) keeps or drops it).
    pub async fn cached(&self, job: &JobKey, namespace: &str, name: &str) -> Response {
        let key = ObjectRef::new(job.name()).within(job.namespace());
        let model = ModelRef::new(namespace.to_owned(), name.to_owned());
        self.waiting.register(std::slice::from_ref(&model), key);
        let started = self.started();
        let mut state = started.state.clone();
        // The first read after the start waits a moment for the first answer; later
        // ones find it there.
        let _ = tokio::time::timeout(
            FIRST_ANSWER_PATIENCE,
            state.wait_for(|s| *s != WatchState::Listing),
        )
        .await;
        let state = state.borrow().clone();
        match state {
            WatchState::Listing => Response::NotCached,
            WatchState::NotServed => Response::Failed(ApiAnswer::status(
                404,
                "NotFound",
                "the server could not find the requested resource (inferenceservices.serving.kserve.io)",
            )),
            WatchState::Unreadable(why) => {
                Response::Failed(ApiAnswer::status(403, "Forbidden", why))
            }
            WatchState::Listed => {
                let key = ObjectRef::new_with(name, inference_service_resource()).within(namespace);
                Response::Object(started.store.get(&key).map(|o| inference_service_json(&o)))
            }
        }
    }

    /// The reconcile of `job` ended waiting for `models` (none: it does not wait): it
    /// is woken when one of them changes, and no longer for any other.
    pub fn waits(&self, job: &JobKey, models: &[ModelRef]) {
        let key = ObjectRef::new(job.name()).within(job.namespace());
        self.waiting.keep_only(&key, models);
    }
}

/// What an error of the watch says about the platform: a 404 that it is not served,
/// a 403 that nbv may not read it; anything else passes (the watch retries).
fn platform_error(error: &watcher::Error) -> Option<WatchState> {
    let (watcher::Error::InitialListFailed(kube::Error::Api(status))
    | watcher::Error::WatchStartFailed(kube::Error::Api(status))) = error
    else {
        return None;
    };
    match classify_status(status) {
        ApiErrorClass::NotFound => Some(WatchState::NotServed),
        ApiErrorClass::Forbidden => Some(WatchState::Unreadable(status.message.clone())),
        _ => None,
    }
}
