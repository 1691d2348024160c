//! The validation Pod on the cluster: create the Pod of an attempt, read what it says,
//! and remove the Pods of earlier attempts. Every decision (the Pod's spec, what its
//! status means) is `nbv_core::pod`'s; this module only makes the API calls.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, PostParams, Preconditions};
use kube::runtime::reflector::{ObjectRef, Store};
use nbv_core::api::NotebookValidationJob;
use nbv_core::models::ServedModel;
use nbv_core::phase::{Attempt, Failure, PhaseEvent};
use nbv_core::pod::{
    ATTEMPT_LABEL, InvalidValidationPod, JOB_LABEL, MANAGED_BY, MANAGED_BY_LABEL, PodDefaults,
    PodRefusal, PodSpecError, is_controlled_by, job_label_value, observe_pod, pod_name,
    pod_vanished, validation_pod,
};

use crate::api_error::{ApiErrorClass, answer, classify};
use crate::effects::FIELD_MANAGER;
use crate::metrics::Metrics;

/// Creates and observes validation Pods.
///
/// Every call is idempotent: the Pod of an attempt has a name derived from the job and
/// the attempt, so creating it twice finds the first, and observing it is a read.
/// With a watch cache of nbv's Pods ([`with_cache`](Self::with_cache)), both read the
/// cache first and call the API server only for a Pod the cache does not hold yet.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use http::{Request, Response};
/// # use kube::client::Body;
/// # let (service, mut server) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
/// # tokio::spawn(async move {
/// #     let (_, reply) = server.next_request().await.expect("a request");
/// #     reply.send_response(Response::builder().status(409).body(Body::from(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"AlreadyExists","code":409,"message":"exists"}"#.to_vec())).unwrap());
/// # });
/// # let client = kube::Client::new(service, "ml");
/// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
/// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
/// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"}, "path": "t.ipynb"},
/// #              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}}))?;
/// use nbv_core::phase::Attempt;
/// use nbv_core::pod::PodDefaults;
/// use nbv_operator::validation_pod::PodRunner;
///
/// // The API server answers that the Pod already exists: it is the attempt's Pod.
/// let runner = PodRunner::new(client, PodDefaults::default());
/// let name = runner.ensure_started(&job, Attempt { generation: 1, retry: 0 }, None, None).await?;
/// assert_eq!(name, "train-g1-r0");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PodRunner {
    client: kube::Client,
    defaults: PodDefaults,
    cache: Option<Store<Pod>>,
    metrics: Option<Arc<Metrics>>,
}

impl PodRunner {
    /// A runner that talks to the cluster through `client` and builds Pods with
    /// `defaults`.
    pub fn new(client: kube::Client, defaults: PodDefaults) -> Self {
        PodRunner {
            client,
            defaults,
            cache: None,
            metrics: None,
        }
    }

    /// Counts each Pod creation in `metrics` (upstream's
    /// `notebookvalidationjob_pod_creations_total`).
    #[must_use]
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Reads Pods from `cache` (a watch cache of nbv's Pods) before asking the API
    /// server: in steady state, observing a Pod costs no request.
    #[must_use]
    pub fn with_cache(mut self, cache: Store<Pod>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The Pod `namespace/name` as the watch cache holds it.
    fn cached(&self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        self.cache
            .as_ref()?
            .get(&ObjectRef::new(name).within(namespace))
    }

    /// What the Pod `name` of `job` reported of the prediction check, from the watch
    /// cache ([`reported_predictions`](nbv_core::pod::reported_predictions)).
    pub fn reported_predictions(
        &self,
        job: &NotebookValidationJob,
        name: &str,
    ) -> Option<Vec<nbv_core::models::ReportedPrediction>> {
        let (namespace, _) = identity(job).ok()?;
        nbv_core::pod::reported_predictions(self.cached(namespace, name)?.as_ref())
    }

    /// Whether the watch cache holds the Pod of `attempt` (`false` without a cache:
    /// nothing is known, and creating the Pod finds out).
    pub fn exists(&self, job: &NotebookValidationJob, attempt: Attempt) -> bool {
        let Ok((namespace, name)) = identity(job) else {
            return false;
        };
        self.cached(namespace, &pod_name(name, attempt)).is_some()
    }

    /// The settings Pods are built and observed with.
    pub fn defaults(&self) -> &PodDefaults {
        &self.defaults
    }

    /// Makes sure the Pod of `attempt` exists; returns its name (what
    /// `status.validationPodName` holds). `image` is a built image, if any; otherwise
    /// the Pod runs `spec.podConfig.containerImage`. `models` are the models the
    /// model-validation gate opened for (`None` when it did not run; a job without
    /// `spec.modelValidation` needs none).
    ///
    /// # Errors
    ///
    /// [`PodError::Spec`] when the job cannot become a Pod (nothing is sent), and
    /// [`PodError::Refused`] when the API server does not create it (the core
    /// classifies why: [`PodError::refusal`]). A Pod that already exists is not an
    /// error.
    pub async fn ensure_started(
        &self,
        job: &NotebookValidationJob,
        attempt: Attempt,
        image: Option<&str>,
        models: Option<&[ServedModel]>,
    ) -> Result<String, PodError> {
        let (namespace, job_name) = identity(job)?;
        let name = pod_name(job_name, attempt);
        if self.cached(namespace, &name).is_some() {
            // Already created: whose it is, `observe` finds out. (Built again, it might
            // not be the same: the models it was told about may have changed since.)
            return Ok(name);
        }
        let pod = validation_pod(job, attempt, image, models, &self.defaults)?;
        let params = PostParams {
            dry_run: false,
            field_manager: Some(FIELD_MANAGER.to_owned()),
        };
        let result = match self.api(namespace).create(&params, &pod).await {
            Ok(_) => Ok(name),
            Err(source) => match PodRefusal::of(&answer(&source)) {
                // Created by an earlier reconcile (or another replica): the name is
                // the attempt's, so it is this Pod.
                None => Ok(name),
                Some(refusal) => Err(PodError::Refused {
                    pod: format!("{namespace}/{name}"),
                    refusal: Box::new(refusal),
                }),
            },
        };
        if let Some(metrics) = &self.metrics {
            metrics.pod_created(namespace, result.is_ok());
        }
        result
    }

    /// What the Pod of `attempt` says, as the event for the phase machine: `None`
    /// while there is nothing to report; a transient [`FailureCause::PodDeleted`](nbv_core::pod::FailureCause::PodDeleted)
    /// failure when the Pod does not exist (call this only for an attempt whose Pod
    /// was started).
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use http::{Request, Response};
    /// # use kube::client::Body;
    /// # let (service, mut server) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    /// # tokio::spawn(async move {
    /// #     let (_, reply) = server.next_request().await.expect("a request");
    /// #     reply.send_response(Response::builder().status(404).body(Body::from(br#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404,"message":"not found"}"#.to_vec())).unwrap());
    /// # });
    /// # let client = kube::Client::new(service, "ml");
    /// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    /// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    /// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
    /// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"}, "path": "t.ipynb"},
    /// #              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}}))?;
    /// use nbv_core::phase::{Attempt, PhaseEvent};
    /// use nbv_core::pod::PodDefaults;
    /// use nbv_operator::validation_pod::PodRunner;
    ///
    /// // The API server has no such Pod: it was deleted, a transient failure.
    /// let runner = PodRunner::new(client, PodDefaults::default());
    /// let event = runner.observe(&job, Attempt { generation: 1, retry: 0 }, chrono::Utc::now()).await?;
    /// let Some(PhaseEvent::PodFailed { failure, .. }) = event else { panic!("{event:?}") };
    /// assert_eq!(failure.reason.as_str(), "PodDeleted");
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`PodError::Api`] when the Pod cannot be read; [`PodError::LeftOver`] when the
    /// Pod of that name belongs to an earlier job of the same name (it is deleted, and
    /// the next reconcile creates the attempt's own); [`PodError::InvalidValidationPod`]
    /// when the Pod lacks nbv's labels.
    pub async fn observe(
        &self,
        job: &NotebookValidationJob,
        attempt: Attempt,
        now: DateTime<Utc>,
    ) -> Result<Option<PhaseEvent>, PodError> {
        let (namespace, job_name) = identity(job)?;
        let name = pod_name(job_name, attempt);
        let api = self.api(namespace);
        // The cache lags the API server: a Pod it does not hold may have just been
        // created, so only the API server can say it is gone.
        let read = match self.cached(namespace, &name) {
            Some(pod) => Ok(Some(Pod::clone(&pod))),
            None => api.get_opt(&name).await,
        };
        let pod = match read {
            Ok(Some(pod)) => pod,
            Ok(None) => return Ok(Some(pod_vanished(job_name, attempt))),
            Err(source) => {
                return Err(PodError::Api {
                    request: format!("get Pod {namespace}/{name}"),
                    source,
                });
            }
        };
        if !is_controlled_by(&pod, job) {
            self.delete_left_over(&api, &pod, namespace).await?;
            return Err(PodError::LeftOver {
                pod: format!("{namespace}/{name}"),
            });
        }
        Ok(observe_pod(&pod, now, self.defaults.start_grace)?)
    }

    /// Deletes the Pods of every other attempt and run of `job` than `keep`, found by
    /// their labels; returns how many deletions were requested. Used when a new run or
    /// retry starts, so that a job keeps at most its current Pod.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # use http::{Request, Response};
    /// # use kube::client::Body;
    /// # let (service, mut server) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    /// # tokio::spawn(async move {
    /// #     let (_, reply) = server.next_request().await.expect("a request");
    /// #     reply.send_response(Response::builder().status(200).body(Body::from(br#"{"apiVersion":"v1","kind":"PodList","metadata":{},"items":[{"metadata":{"name":"train-g1-r0"}}]}"#.to_vec())).unwrap());
    /// # });
    /// # let client = kube::Client::new(service, "ml");
    /// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    /// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    /// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
    /// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"}, "path": "t.ipynb"},
    /// #              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}}))?;
    /// use nbv_core::phase::Attempt;
    /// use nbv_core::pod::PodDefaults;
    /// use nbv_operator::validation_pod::PodRunner;
    ///
    /// // A retry starts: the failed Pod of the first attempt goes.
    /// let runner = PodRunner::new(client, PodDefaults::default());
    /// let deleted = runner.delete_other_attempts(&job, Attempt { generation: 1, retry: 1 }).await?;
    /// assert_eq!(deleted, 1);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`PodError::Api`] when the API server refuses or fails.
    pub async fn delete_other_attempts(
        &self,
        job: &NotebookValidationJob,
        keep: Attempt,
    ) -> Result<usize, PodError> {
        let (namespace, job_name) = identity(job)?;
        let selector = other_attempts_selector(job_name, keep);
        let deleted = self
            .api(namespace)
            .delete_collection(
                &DeleteParams::background(),
                &ListParams::default().labels(&selector),
            )
            .await
            .map_err(|source| PodError::Api {
                request: format!("delete Pods in {namespace} with labels {selector}"),
                source,
            })?;
        Ok(deleted.left().map_or(0, |list| list.items.len()))
    }

    async fn delete_left_over(
        &self,
        api: &Api<Pod>,
        pod: &Pod,
        namespace: &str,
    ) -> Result<(), PodError> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        // Only the Pod that was read: never one created meanwhile under that name.
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: pod.metadata.uid.clone(),
                resource_version: None,
            }),
            ..DeleteParams::background()
        };
        match api.delete(&name, &params).await {
            Ok(_) => Ok(()),
            Err(error)
                if matches!(
                    classify(&error),
                    ApiErrorClass::NotFound | ApiErrorClass::Conflict
                ) =>
            {
                Ok(())
            }
            Err(source) => Err(PodError::Api {
                request: format!("delete Pod {namespace}/{name}"),
                source,
            }),
        }
    }

    fn api(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }
}

/// The label selector of `job_name`'s validation Pods of attempts other than `keep`.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::Attempt;
/// use nbv_operator::validation_pod::other_attempts_selector;
///
/// assert_eq!(
///     other_attempts_selector("train", Attempt { generation: 2, retry: 1 }),
///     "app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt!=g2-r1"
/// );
/// ```
pub fn other_attempts_selector(job_name: &str, keep: Attempt) -> String {
    format!(
        "{MANAGED_BY_LABEL}={MANAGED_BY},{JOB_LABEL}={},{ATTEMPT_LABEL}!={keep}",
        job_label_value(job_name)
    )
}

fn identity(job: &NotebookValidationJob) -> Result<(&str, &str), PodError> {
    let field = |field| PodError::Spec(PodSpecError::Identity { field });
    let namespace = job
        .metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| field("metadata.namespace"))?;
    let name = job
        .metadata
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| field("metadata.name"))?;
    Ok((namespace, name))
}

/// Why a validation Pod could not be created or read.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::PodSpecError;
/// use nbv_operator::validation_pod::PodError;
///
/// let err = PodError::Spec(PodSpecError::EmptyImage);
/// assert_eq!(err.failure().map(|f| f.reason.to_string()).as_deref(), Some("PodSpecInvalid"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum PodError {
    /// The job cannot become a Pod; the message names the field to fix.
    #[error(transparent)]
    Spec(#[from] PodSpecError),
    /// The API server did not create the Pod; `refusal` says why, as the core reads
    /// the answer.
    #[error("create Pod {pod} refused: {}", refusal.answer)]
    Refused {
        /// `namespace/name` of the Pod.
        pod: String,
        /// The answer, classified (it carries the API server's message).
        refusal: Box<PodRefusal>,
    },
    /// An API request failed.
    #[error("{request} failed: {source}")]
    Api {
        /// The request, e.g. `create Pod ml/train-g1-r0`.
        request: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// The Pod with the attempt's name lacks nbv's labels.
    #[error(transparent)]
    InvalidValidationPod(#[from] InvalidValidationPod),
    /// The Pod with the attempt's name was left by an earlier job of the same name
    /// (deleted with `--cascade=orphan`). It has been deleted; the next reconcile
    /// creates the attempt's own Pod.
    #[error(
        "pod {pod} belongs to an earlier job of the same name; it was deleted and the \
         attempt's pod will be created on the next reconcile"
    )]
    LeftOver {
        /// `namespace/name` of the Pod.
        pod: String,
    },
}

impl PodError {
    /// The permanent failure to report for the attempt when the job cannot become a
    /// Pod (nbv refused to build it; nothing was sent). `None` for any other error:
    /// a refusal of the API server is the core's to judge ([`PodError::refusal`]), and
    /// a failed read is retried.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::validation_pod::PodError;
    ///
    /// let err = PodError::LeftOver { pod: "ml/train-g1-r0".into() };
    /// assert!(err.failure().is_none());
    /// ```
    pub fn failure(&self) -> Option<Failure> {
        match self {
            PodError::Spec(spec) => Some(spec.failure()),
            _ => None,
        }
    }

    /// The API server's refusal to create the Pod, classified by the core.
    pub fn refusal(&self) -> Option<&PodRefusal> {
        match self {
            PodError::Refused { refusal, .. } => Some(refusal),
            _ => None,
        }
    }
}
