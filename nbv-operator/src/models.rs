//! Model validation on the cluster: the watch of InferenceServices the gate reads, and
//! the gate carried out before a job's validation Pod starts.
//!
//! The watch starts with the first job that asks for model validation, so an operator
//! whose jobs never do (or a cluster without KServe) neither lists nor watches
//! InferenceServices. Its cache keeps only what the gate reads of each
//! ([`trim_inference_service`]).
//! A job that waits for a model is woken when that model changes, or when the watch
//! learns something about the platform: nothing is polled.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedSender;
use kube::api::{Api, DynamicObject};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use nbv_core::api::{ModelValidationResult, NotebookValidationJob};
use nbv_core::models::{
    InferenceService, ModelFacts, ModelGate, ModelRef, ModelSettings, Platform, ServedModel, gate,
};
use nbv_core::triggers::TriggerAccess;
use tokio::sync::watch;

use crate::api_error::{ApiErrorClass, classify_status};
use crate::projection::CachedJob;
use crate::projection::{inference_service_of, trim_inference_service};
use crate::resources::inference_service_resource;

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

    fn forget(&self, models: &[ModelRef], job: &ObjectRef<CachedJob>) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        for model in models {
            if let Some(waiting) = jobs.get_mut(model) {
                waiting.remove(job);
                if waiting.is_empty() {
                    jobs.remove(model);
                }
            }
        }
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
        let stream = watcher(api, watcher::Config::default())
            .default_backoff()
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

    /// Runs the gate of `job` (its resolved `settings`) at `now`, with `access` the
    /// rule for models outside the job's namespace. `accepts` answers the opt-in
    /// annotation of each namespace the gate asks about (read by the caller, which
    /// holds the client that reads Namespaces). A job that is told to wait is woken
    /// when one of its models, or the platform, changes.
    pub async fn gate(
        &self,
        job: &NotebookValidationJob,
        settings: &ModelSettings,
        access: &TriggerAccess,
        accepts: &HashMap<String, Option<String>>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> ModelGate {
        // Registered before anything is read, so that a change between the reading and
        // the registration still wakes the job.
        let key = ObjectRef::new(job.metadata.name.as_deref().unwrap_or_default())
            .within(job.metadata.namespace.as_deref().unwrap_or_default());
        self.waiting.register(&settings.targets, key.clone());
        let started = self.started();
        let mut state = started.state.clone();
        // The first gate after the start waits a moment for the first answer; later
        // ones find it there.
        let _ = tokio::time::timeout(
            FIRST_ANSWER_PATIENCE,
            state.wait_for(|s| *s != WatchState::Listing),
        )
        .await;
        let facts = Facts {
            state: state.borrow().clone(),
            store: &started.store,
            accepts,
        };
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let run_started = job
            .status
            .as_ref()
            .and_then(|s| s.start_time)
            .unwrap_or(now);
        let decision = gate(settings, namespace, access, &facts, run_started, now);
        if !matches!(decision, ModelGate::Wait { .. }) {
            self.waiting.forget(&settings.targets, &key);
        }
        decision
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

/// The gate's facts, from the watch.
struct Facts<'a> {
    state: WatchState,
    store: &'a Store<DynamicObject>,
    accepts: &'a HashMap<String, Option<String>>,
}

impl ModelFacts for Facts<'_> {
    fn platform(&self) -> Option<Platform> {
        match &self.state {
            WatchState::Listing => None,
            WatchState::Listed => Some(Platform {
                served: true,
                unreadable: None,
            }),
            WatchState::NotServed => Some(Platform {
                served: false,
                unreadable: None,
            }),
            WatchState::Unreadable(why) => Some(Platform {
                served: true,
                unreadable: Some(why.clone()),
            }),
        }
    }

    fn inference_service(&self, model: &ModelRef) -> Option<InferenceService> {
        let key =
            ObjectRef::new_with(&model.name, inference_service_resource()).within(&model.namespace);
        self.store
            .get(&key)
            .map(|object| inference_service_of(&object))
    }

    fn synced(&self) -> bool {
        self.state == WatchState::Listed
    }

    fn namespace_accepts(&self, namespace: &str) -> Option<String> {
        self.accepts.get(namespace).cloned().flatten()
    }
}

/// The namespaces of `settings`' models whose opt-in annotation the gate may ask
/// about: outside the job's namespace and not allowed by the operator's flag.
pub fn namespaces_to_ask(
    settings: &ModelSettings,
    job_namespace: &str,
    access: &TriggerAccess,
) -> BTreeSet<String> {
    settings
        .targets
        .iter()
        .map(|model| model.namespace.as_str())
        .filter(|ns| *ns != job_namespace && !access.allows_namespace(ns))
        .map(str::to_owned)
        .collect()
}

/// What the gate decided, for the phase machine: the models the Pod is told about, or
/// why it does not start.
#[derive(Debug)]
pub enum Admission {
    /// No model validation, or the gate is open: start the Pod with these models and
    /// record `result`.
    Start {
        /// The models the gate opened for; `None` when it did not run (no model
        /// validation, or the attempt's Pod exists already).
        models: Option<Vec<ServedModel>>,
        /// `status.modelValidationResult`, when the job validates models.
        result: Option<ModelValidationResult>,
    },
    /// Wait, saying why, until `until` at the latest.
    Wait {
        /// What the job waits for.
        message: String,
        /// When to look again at the latest.
        until: chrono::DateTime<chrono::Utc>,
    },
    /// The job fails.
    Fail {
        /// Why, naming the model or the platform.
        message: String,
        /// `status.modelValidationResult`.
        result: ModelValidationResult,
    },
}

impl From<ModelGate> for Admission {
    fn from(decision: ModelGate) -> Self {
        match decision {
            ModelGate::Open { models, result } => Admission::Start {
                models: Some(models),
                result: Some(result),
            },
            ModelGate::Wait { message, until } => Admission::Wait { message, until },
            ModelGate::Fail { message, result } => Admission::Fail { message, result },
        }
    }
}
