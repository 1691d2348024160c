//! Manifests for tests and scenarios: jobs, their trigger targets, Argo CD
//! Applications and namespaces, as JSON values ready for
//! [`FakeCluster::apply_object`](crate::FakeCluster::apply_object).
//!
//! The builders write what a user or another controller would write. Fields the API
//! server owns (`uid`, `creationTimestamp`, `generation`, `resourceVersion`) are only
//! kept by pure uses of the value: the in-memory cluster assigns its own when it stores
//! the object.
//!
//! # Examples
//!
//! ```
//! use nbv_core::api::Phase;
//! use nbv_testkit::FakeCluster;
//! use nbv_testkit::fixtures::{JobBuilder, application, namespace};
//!
//! let cluster = FakeCluster::default();
//! cluster.apply_object(namespace("ml"))?;
//! cluster.apply_object(application("argocd", "models", "ml"))?;
//! let job = JobBuilder::new("ml", "train")
//!     .sync_wave(3)
//!     .tracking_id("models")
//!     .phase(Phase::ValidationRunning)
//!     .build();
//! let stored = cluster.apply_object(job)?;
//! assert_eq!(stored["status"]["phase"], "ValidationRunning");
//! assert_eq!(stored["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"], "3");
//! # Ok::<(), nbv_testkit::cluster::ClusterError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt::Display;

use chrono::{DateTime, Utc};
use nbv_core::annotations::{
    APP_INSTANCE, APP_PART_OF, ARGOCD_SYNC_WAVE, ARGOCD_TRACKING_ID, BLOCK_WAVE,
    KSERVE_INFERENCESERVICE, ON_SUCCESS_TRIGGER,
};
use nbv_core::api::{API_VERSION, GROUP, KIND, NotebookValidationJob, Phase};
use nbv_core::models::{ModelSettings, Protocol, ServedModel};
use nbv_core::time::rfc3339;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Builds a `NotebookValidationJob` manifest.
///
/// The spec is a minimal valid one (a notebook from Git, a container image); the
/// builder sets the annotations and labels nbv reads and, optionally, a status as the
/// controller that runs the job would write it.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::Phase;
/// use nbv_testkit::fixtures::JobBuilder;
///
/// let start = Utc.with_ymd_and_hms(2026, 1, 24, 22, 29, 0).unwrap();
/// let end = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let job = JobBuilder::new("ml", "train")
///     .sync_wave(3)
///     .block_wave(4)
///     .on_success_trigger("- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}")
///     .part_of("models")
///     .generation(2)
///     .phase(Phase::Succeeded)
///     .started_at(start)
///     .completed_at(end)
///     .typed()?;
/// assert_eq!(job.metadata.generation, Some(2));
/// assert_eq!(job.status.unwrap().completion_time, Some(end));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct JobBuilder {
    namespace: String,
    name: String,
    annotations: BTreeMap<String, String>,
    labels: BTreeMap<String, String>,
    generation: Option<i64>,
    uid: Option<String>,
    resource_version: Option<String>,
    spec: Value,
    status: Value,
}

impl JobBuilder {
    /// A job `namespace/name` with a minimal spec, no annotations and no status.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").build();
    /// assert_eq!(job["kind"], "NotebookValidationJob");
    /// assert!(job.get("status").is_none());
    /// ```
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        JobBuilder {
            namespace: namespace.into(),
            name: name.into(),
            annotations: BTreeMap::new(),
            labels: BTreeMap::new(),
            generation: None,
            uid: None,
            resource_version: None,
            spec: json!({
                "notebook": {
                    "git": {"url": "https://github.com/example/models", "ref": "main"},
                    "path": "notebooks/train.ipynb"
                },
                "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:2026-01-05"}
            }),
            status: Value::Null,
        }
    }

    /// Sets an annotation (any key, any value: hostile values are welcome).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").annotation("mlops.dev/block-wave", "four").build();
    /// assert_eq!(job["metadata"]["annotations"]["mlops.dev/block-wave"], "four");
    /// ```
    #[must_use]
    pub fn annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.annotations.insert(key.into(), value.into());
        self
    }

    /// Sets a label.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").label("team", "fraud").build();
    /// assert_eq!(job["metadata"]["labels"]["team"], "fraud");
    /// ```
    #[must_use]
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// `argocd.argoproj.io/sync-wave`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").sync_wave(-1).build();
    /// assert_eq!(job["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"], "-1");
    /// ```
    #[must_use]
    pub fn sync_wave(self, wave: impl Display) -> Self {
        self.annotation(ARGOCD_SYNC_WAVE, wave.to_string())
    }

    /// `mlops.dev/block-wave`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").block_wave(4).build();
    /// assert_eq!(job["metadata"]["annotations"]["mlops.dev/block-wave"], "4");
    /// ```
    #[must_use]
    pub fn block_wave(self, wave: impl Display) -> Self {
        self.annotation(BLOCK_WAVE, wave.to_string())
    }

    /// `mlops.dev/on-success-trigger`, the YAML list as written.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let value = "- {apiVersion: v1, kind: ConfigMap, name: cfg, action: refresh}";
    /// let job = JobBuilder::new("ml", "train").on_success_trigger(value).build();
    /// assert_eq!(job["metadata"]["annotations"]["mlops.dev/on-success-trigger"], value);
    /// ```
    #[must_use]
    pub fn on_success_trigger(self, yaml: impl Into<String>) -> Self {
        self.annotation(ON_SUCCESS_TRIGGER, yaml)
    }

    /// Label `app.kubernetes.io/part-of` (the seed's way to name the Application).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").part_of("models").build();
    /// assert_eq!(job["metadata"]["labels"]["app.kubernetes.io/part-of"], "models");
    /// ```
    #[must_use]
    pub fn part_of(self, application: impl Into<String>) -> Self {
        self.label(APP_PART_OF, application)
    }

    /// Label `app.kubernetes.io/instance` (Argo CD's label tracking).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").instance("models").build();
    /// assert_eq!(job["metadata"]["labels"]["app.kubernetes.io/instance"], "models");
    /// ```
    #[must_use]
    pub fn instance(self, application: impl Into<String>) -> Self {
        self.label(APP_INSTANCE, application)
    }

    /// Annotation `argocd.argoproj.io/tracking-id` naming this job, as Argo CD 3 writes
    /// it: `<application>:mlops.mlops.dev/NotebookValidationJob:<namespace>/<name>`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").tracking_id("models").build();
    /// assert_eq!(job["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
    ///            "models:mlops.mlops.dev/NotebookValidationJob:ml/train");
    /// ```
    #[must_use]
    pub fn tracking_id(self, application: impl Into<String>) -> Self {
        let value = format!(
            "{}:{GROUP}/{KIND}:{}/{}",
            application.into(),
            self.namespace,
            self.name
        );
        self.annotation(ARGOCD_TRACKING_ID, value)
    }

    /// `metadata.generation` (kept by pure uses; the cluster assigns its own).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// assert_eq!(JobBuilder::new("ml", "t").generation(3).build()["metadata"]["generation"], 3);
    /// ```
    #[must_use]
    pub fn generation(mut self, generation: i64) -> Self {
        self.generation = Some(generation);
        self
    }

    /// `metadata.uid` (kept by pure uses; the cluster assigns its own).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// assert_eq!(JobBuilder::new("ml", "t").uid("uid-t").build()["metadata"]["uid"], "uid-t");
    /// ```
    #[must_use]
    pub fn uid(mut self, uid: impl Into<String>) -> Self {
        self.uid = Some(uid.into());
        self
    }

    /// `metadata.resourceVersion`, as a list or watch answer carries it (kept by pure
    /// uses; the cluster assigns its own).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "t").resource_version("1").build();
    /// assert_eq!(job["metadata"]["resourceVersion"], "1");
    /// ```
    #[must_use]
    pub fn resource_version(mut self, version: impl Into<String>) -> Self {
        self.resource_version = Some(version.into());
        self
    }

    /// Sets one field of the spec, keeping the others (`spec` replaces them all).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    /// use serde_json::json;
    ///
    /// let job = JobBuilder::new("ml", "t").spec_field("timeout", json!("45m")).build();
    /// assert_eq!(job["spec"]["timeout"], "45m");
    /// assert_eq!(job["spec"]["notebook"]["path"], "notebooks/train.ipynb");
    /// ```
    #[must_use]
    pub fn spec_field(mut self, field: impl Into<String>, value: Value) -> Self {
        if !self.spec.is_object() {
            self.spec = Value::Object(Map::new());
        }
        self.spec[field.into()] = value;
        self
    }

    /// Sets every field of the object `fields` in the spec, keeping the others.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    /// use serde_json::json;
    ///
    /// let job = JobBuilder::new("ml", "t").spec_fields(json!({"timeout": "1m", "x": 1})).build();
    /// assert_eq!((&job["spec"]["timeout"], &job["spec"]["x"]), (&json!("1m"), &json!(1)));
    /// assert!(job["spec"]["podConfig"].is_object());
    /// ```
    #[must_use]
    pub fn spec_fields(self, fields: Value) -> Self {
        match fields {
            Value::Object(fields) => fields
                .into_iter()
                .fold(self, |job, (field, value)| job.spec_field(field, value)),
            // Not an object: there are no fields to set, so the spec becomes it.
            other => self.spec(other),
        }
    }

    /// The container image that runs the notebook (`spec.podConfig.containerImage`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "t").image("quay.io/ml/sklearn-notebook:1").build();
    /// assert_eq!(job["spec"]["podConfig"]["containerImage"], "quay.io/ml/sklearn-notebook:1");
    /// ```
    #[must_use]
    pub fn image(self, image: impl Into<String>) -> Self {
        let mut pod_config = self
            .spec
            .get("podConfig")
            .cloned()
            .unwrap_or_else(|| json!({}));
        pod_config["containerImage"] = Value::String(image.into());
        self.spec_field("podConfig", pod_config)
    }

    /// The notebook at `path` in the Git repository `url` at `ref`
    /// (`spec.notebook`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "t").notebook("https://example.com/r.git", "main", "t.ipynb").build();
    /// assert_eq!(job["spec"]["notebook"]["git"]["url"], "https://example.com/r.git");
    /// assert_eq!(job["spec"]["notebook"]["path"], "t.ipynb");
    /// ```
    #[must_use]
    pub fn notebook(self, url: &str, git_ref: &str, path: &str) -> Self {
        self.spec_field(
            "notebook",
            json!({"git": {"url": url, "ref": git_ref}, "path": path}),
        )
    }

    /// Replaces the status with `status`: a typed `NotebookValidationJobStatus` or any
    /// JSON (hostile values included: a status that is not an object is written as it is).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    /// use serde_json::json;
    ///
    /// let job = JobBuilder::new("ml", "t").status(json!({"phase": "Failed"})).build();
    /// assert_eq!(job["status"], json!({"phase": "Failed"}));
    /// ```
    #[must_use]
    pub fn status(mut self, status: impl Serialize) -> Self {
        // Serializing a `Value` or a typed status cannot fail: their maps have string keys.
        self.status = serde_json::to_value(status).unwrap_or(Value::Null);
        self
    }

    /// Replaces the spec.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    /// use serde_json::json;
    ///
    /// let job = JobBuilder::new("ml", "t").spec(json!({"timeout": "1h"})).build();
    /// assert_eq!(job["spec"], json!({"timeout": "1h"}));
    /// ```
    #[must_use]
    pub fn spec(mut self, spec: Value) -> Self {
        self.spec = spec;
        self
    }

    /// `status.phase`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::Phase;
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "t").phase(Phase::Running).build();
    /// assert_eq!(job["status"]["phase"], "Running");
    /// ```
    #[must_use]
    pub fn phase(self, phase: Phase) -> Self {
        self.status_field("phase", Value::String(phase.as_str().to_owned()))
    }

    /// `status.startTime`.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let job = JobBuilder::new("ml", "t").started_at(at).build();
    /// assert_eq!(job["status"]["startTime"], "2026-01-24T22:00:00Z");
    /// ```
    #[must_use]
    pub fn started_at(self, at: DateTime<Utc>) -> Self {
        self.status_field("startTime", Value::String(rfc3339(at)))
    }

    /// `status.completionTime`.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let job = JobBuilder::new("ml", "t").completed_at(at).build();
    /// assert_eq!(job["status"]["completionTime"], "2026-01-24T22:30:00Z");
    /// ```
    #[must_use]
    pub fn completed_at(self, at: DateTime<Utc>) -> Self {
        self.status_field("completionTime", Value::String(rfc3339(at)))
    }

    /// Sets any `status` field (hostile values included).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    /// use serde_json::json;
    ///
    /// let job = JobBuilder::new("ml", "t").status_field("retryCount", json!(0)).build();
    /// assert_eq!(job["status"]["retryCount"], 0);
    /// ```
    #[must_use]
    pub fn status_field(mut self, field: impl Into<String>, value: Value) -> Self {
        if !self.status.is_object() {
            self.status = Value::Object(Map::new());
        }
        self.status[field.into()] = value;
        self
    }

    /// The manifest.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    ///
    /// let job = JobBuilder::new("ml", "train").build();
    /// assert_eq!(job["apiVersion"], "mlops.mlops.dev/v1alpha1");
    /// assert_eq!(job["metadata"]["namespace"], "ml");
    /// ```
    pub fn build(&self) -> Value {
        let mut metadata = Map::new();
        metadata.insert("name".into(), Value::String(self.name.clone()));
        metadata.insert("namespace".into(), Value::String(self.namespace.clone()));
        if !self.annotations.is_empty() {
            metadata.insert("annotations".into(), json!(self.annotations));
        }
        if !self.labels.is_empty() {
            metadata.insert("labels".into(), json!(self.labels));
        }
        if let Some(generation) = self.generation {
            metadata.insert("generation".into(), json!(generation));
        }
        if let Some(uid) = &self.uid {
            metadata.insert("uid".into(), Value::String(uid.clone()));
        }
        if let Some(version) = &self.resource_version {
            metadata.insert("resourceVersion".into(), Value::String(version.clone()));
        }
        let mut job = json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": metadata,
            "spec": self.spec,
        });
        if !self.status.is_null() {
            job["status"] = self.status.clone();
        }
        job
    }

    /// The manifest as the typed job nbv-core works on.
    ///
    /// # Errors
    ///
    /// When a field set with [`JobBuilder::status_field`] or [`JobBuilder::spec`] does
    /// not have the type the API declares.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::fixtures::JobBuilder;
    /// use serde_json::json;
    ///
    /// assert!(JobBuilder::new("ml", "t").typed().is_ok());
    /// assert!(JobBuilder::new("ml", "t").status_field("phase", json!("Done")).typed().is_err());
    /// ```
    pub fn typed(&self) -> Result<NotebookValidationJob, serde_json::Error> {
        serde_json::from_value(self.build())
    }
}

/// A `v1` Namespace.
///
/// # Examples
///
/// ```
/// let ns = nbv_testkit::fixtures::namespace("ml");
/// assert_eq!(ns["kind"], "Namespace");
/// assert_eq!(ns["metadata"]["name"], "ml");
/// ```
pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

/// An Argo CD Application `namespace/name` deploying into `destination_namespace`, whose
/// last operation succeeded (so a `sync` trigger may start one).
///
/// # Examples
///
/// ```
/// let app = nbv_testkit::fixtures::application("argocd", "models", "ml");
/// assert_eq!(app["spec"]["destination"]["namespace"], "ml");
/// assert_eq!(app["status"]["operationState"]["phase"], "Succeeded");
/// ```
pub fn application(namespace: &str, name: &str, destination_namespace: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://github.com/example/ml-platform",
                       "targetRevision": "main", "path": "manifests"},
            "destination": {"server": "https://kubernetes.default.svc",
                            "namespace": destination_namespace},
            "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}
        },
        "status": {
            "sync": {"status": "Synced"},
            "health": {"status": "Healthy"},
            "operationState": {"phase": "Succeeded", "message": "successfully synced"}
        }
    })
}

/// A KServe InferenceService `namespace/name` serving a model from a PVC.
///
/// # Examples
///
/// ```
/// let isvc = nbv_testkit::fixtures::inference_service("ml", "predictive-analytics");
/// assert_eq!(isvc["apiVersion"], "serving.kserve.io/v1beta1");
/// ```
pub fn inference_service(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"predictor": {"model": {
            "modelFormat": {"name": "sklearn"},
            "storageUri": format!("pvc://model-storage/{name}")
        }}}
    })
}

/// A running predictor Pod of InferenceService `isvc`, labelled as KServe labels them
/// (`serving.kserve.io/inferenceservice: <isvc>`), with `creationTimestamp`
/// `created_at` (kept by pure uses; the cluster sets its own when it stores the Pod).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
///
/// let at = Utc.with_ymd_and_hms(2026, 1, 24, 21, 0, 0).unwrap();
/// let pod = nbv_testkit::fixtures::predictor_pod("ml", "predictive-analytics", "predictive-analytics-predictor-1", at);
/// assert_eq!(pod["metadata"]["labels"]["serving.kserve.io/inferenceservice"], "predictive-analytics");
/// assert_eq!(pod["metadata"]["creationTimestamp"], "2026-01-24T21:00:00Z");
/// assert_eq!(pod["status"]["phase"], "Running");
/// ```
pub fn predictor_pod(namespace: &str, isvc: &str, name: &str, created_at: DateTime<Utc>) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "creationTimestamp": rfc3339(created_at),
            "labels": {
                KSERVE_INFERENCESERVICE: isvc,
                "component": "predictor"
            }
        },
        "spec": {"containers": [{"name": "kserve-container", "image": "kserve/sklearnserver:v0.15.0"}]},
        "status": {"phase": "Running"}
    })
}

/// A Deployment `namespace/name` with one replica, selecting `app: <name>`.
///
/// # Examples
///
/// ```
/// let deploy = nbv_testkit::fixtures::deployment("ml", "model-gateway");
/// assert_eq!(deploy["spec"]["selector"]["matchLabels"]["app"], "model-gateway");
/// ```
pub fn deployment(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "server", "image": "example/model-gateway:1"}]}
            }
        }
    })
}

/// A ConfigMap `namespace/name` (a `refresh` target).
///
/// # Examples
///
/// ```
/// let cm = nbv_testkit::fixtures::config_map("ml", "model-config");
/// assert_eq!(cm["data"]["model"], "v1");
/// ```
pub fn config_map(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"model": "v1"}
    })
}

/// The models the model gate opens for when every model `job` names is ready at its
/// cluster-local address (`http://<name>.<namespace>.svc.cluster.local`, protocol V1):
/// what a test passes to [`validation_pod`](nbv_core::pod::validation_pod) in place of
/// the gate. `None` when the job has no `spec.modelValidation` nbv carries out (absent,
/// switched off, or refused by name), as when the gate does not run.
///
/// # Examples
///
/// ```
/// use nbv_testkit::fixtures::{JobBuilder, served_models};
/// use serde_json::json;
///
/// let job = JobBuilder::new("ml", "score")
///     .spec_field("modelValidation", json!({"platform": "kserve", "targetModels": ["fraud", "serving/iris"]}))
///     .typed()?;
/// let models = served_models(&job).expect("the gate opens");
/// assert_eq!(models[1].url, "http://iris.serving.svc.cluster.local");
/// assert!(served_models(&JobBuilder::new("ml", "train").typed()?).is_none());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn served_models(job: &NotebookValidationJob) -> Option<Vec<ServedModel>> {
    let namespace = job.metadata.namespace.as_deref()?;
    let spec = job.spec.model_validation.as_ref()?;
    let settings = ModelSettings::resolve(spec, namespace).ok()??;
    Some(
        settings
            .targets
            .into_iter()
            .map(|model| ServedModel {
                url: format!(
                    "http://{}.{}.svc.cluster.local",
                    model.name, model.namespace
                ),
                model,
                protocol: Protocol::V1,
                version: None,
            })
            .collect(),
    )
}
