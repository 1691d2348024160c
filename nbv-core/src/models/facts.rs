//! What the shell observes of the serving platform and of the models a job names.

use std::fmt;

/// A model a job names in `spec.modelValidation.targetModels`: an InferenceService,
/// `name` in the job's namespace or `namespace/name`.
///
/// # Examples
///
/// ```
/// use nbv_core::models::ModelRef;
///
/// let model = ModelRef::new("serving", "fraud");
/// assert_eq!(model.to_string(), "serving/fraud");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelRef {
    /// Namespace of the InferenceService.
    pub namespace: String,
    /// Name of the InferenceService.
    pub name: String,
}

impl ModelRef {
    /// The model `name` in `namespace`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ModelRef {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// KServe's inference protocols, which decide the prediction request's path and body.
///
/// # Examples
///
/// ```
/// use nbv_core::models::Protocol;
/// assert_eq!(Protocol::default(), Protocol::V1);
/// ```
// `v1`/`v2` in NBV_MODELS, which nbv-core writes and `nbv pod run` reads.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// `POST /v1/models/<name>:predict` (KServe's default).
    #[default]
    V1,
    /// `POST /v2/models/<name>/infer` (the open inference protocol).
    V2,
}

/// The state of a status condition: `True`, `False`, or `Unknown` or absent.
///
/// # Examples
///
/// ```
/// use nbv_core::models::Readiness;
/// assert!(!Readiness::default().is_ready());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Readiness {
    /// `Some(true)` for `True`, `Some(false)` for `False`, `None` for `Unknown` or a
    /// condition not reported yet.
    pub status: Option<bool>,
    /// The condition's `reason`.
    pub reason: Option<String>,
    /// The condition's `message`.
    pub message: Option<String>,
}

impl Readiness {
    /// Whether the condition is `True`.
    pub fn is_ready(&self) -> bool {
        self.status == Some(true)
    }
}

/// What nbv keeps of one InferenceService: only what model validation reads, so the
/// watch cache holds a few hundred bytes per model, not the object.
///
/// Built from the object by [`InferenceService::from_object`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InferenceService {
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// `status.observedGeneration`: the controller's view is current when it equals
    /// `generation`.
    pub observed_generation: Option<i64>,
    /// The `Ready` condition.
    pub ready: Readiness,
    /// The `PredictorReady` condition.
    pub predictor_ready: Readiness,
    /// `status.url`: the external URL.
    pub url: Option<String>,
    /// `status.address.url`: the cluster-local URL, which the validation Pod prefers.
    pub address_url: Option<String>,
    /// The protocol the predictor speaks (`spec.predictor.model.protocolVersion`, or
    /// the older `spec.predictor.<framework>.protocolVersion`; V1 when unset).
    pub protocol: Protocol,
    /// The predictor's latest ready revision, reported as the model's version.
    pub version: Option<String>,
}

/// Whether the serving platform's API can be used: the clean-environment check of
/// `phase: clean` and `both`.
///
/// # Examples
///
/// ```
/// use nbv_core::models::Platform;
/// assert!(!Platform::default().served);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Platform {
    /// The API server serves `serving.kserve.io/v1beta1` `inferenceservices`
    /// (discovery found the resource).
    pub served: bool,
    /// `None` when nbv's watch of InferenceServices lists and watches; otherwise why
    /// it cannot (the API server's answer, a 403 when nbv's role lacks the verbs).
    pub unreadable: Option<String>,
}

/// What the shell answers about the platform and the models, from its watch cache and
/// discovery. The core asks only about the models a job names.
pub trait ModelFacts {
    /// The serving platform's state; `None` while it is not known yet (the watch's
    /// first listing has not answered).
    fn platform(&self) -> Option<Platform>;
    /// The InferenceService `model` names, `None` when the cache holds none. Only
    /// meaningful once the cache has synced ([`ModelFacts::synced`]).
    fn inference_service(&self, model: &ModelRef) -> Option<InferenceService>;
    /// Whether the watch cache has listed every InferenceService at least once: until
    /// then an absent model is not known to be absent.
    fn synced(&self) -> bool;
    /// The value of `mlops.dev/accept-triggers-from` on `namespace`'s `Namespace`
    /// object: the confused-deputy rule triggers follow, which only a model outside the
    /// job's namespace depends on. Asked for each target's namespace, so answer from a
    /// cache. `None` when absent or not readable.
    fn namespace_accepts(&self, namespace: &str) -> Option<String>;
}

impl InferenceService {
    /// Trims an InferenceService object (as JSON) to what model validation reads.
    /// Missing or mistyped fields read as absent: a status not written yet is a model
    /// not ready, never an error.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::models::{InferenceService, Protocol};
    /// use serde_json::json;
    ///
    /// let isvc = InferenceService::from_object(&json!({
    ///     "metadata": {"generation": 2},
    ///     "spec": {"predictor": {"model": {"protocolVersion": "v2"}}},
    ///     "status": {
    ///         "observedGeneration": 2,
    ///         "conditions": [{"type": "Ready", "status": "True"}],
    ///         "address": {"url": "http://fraud.serving.svc.cluster.local"}
    ///     }
    /// }));
    /// assert!(isvc.ready.is_ready());
    /// assert_eq!(isvc.protocol, Protocol::V2);
    /// assert_eq!(isvc.generation, isvc.observed_generation);
    /// ```
    pub fn from_object(object: &serde_json::Value) -> InferenceService {
        let status = &object["status"];
        let text = |v: &serde_json::Value| v.as_str().map(str::to_owned);
        InferenceService {
            generation: object["metadata"]["generation"].as_i64(),
            observed_generation: status["observedGeneration"].as_i64(),
            ready: condition(status, "Ready"),
            predictor_ready: condition(status, "PredictorReady"),
            url: text(&status["url"]),
            address_url: text(&status["address"]["url"]),
            protocol: protocol(&object["spec"]["predictor"]),
            version: text(&status["components"]["predictor"]["latestReadyRevision"]),
        }
    }
}

impl InferenceService {
    /// The part of an InferenceService object (as JSON) that [`from_object`](Self::from_object)
    /// reads, for a watch cache to keep instead of the whole object: the generation,
    /// the predictor's protocol declarations, and the status fields read. Reading the
    /// projection gives what reading the object gives.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::models::InferenceService;
    /// use serde_json::json;
    ///
    /// let object = json!({
    ///     "metadata": {"generation": 3, "labels": {"team": "fraud"}},
    ///     "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"},
    ///                                      "storageUri": "s3://models/fraud",
    ///                                      "protocolVersion": "v2"}}},
    ///     "status": {"url": "http://fraud.ml.example.com", "modelStatus": {"states": {}},
    ///                "conditions": [{"type": "Ready", "status": "True"},
    ///                               {"type": "IngressReady", "status": "True"}]}
    /// });
    /// let kept = InferenceService::projection(&object);
    /// assert_eq!(InferenceService::from_object(&kept), InferenceService::from_object(&object));
    /// assert!(kept["status"].get("modelStatus").is_none());
    /// assert!(kept["spec"]["predictor"]["model"].get("storageUri").is_none());
    /// ```
    pub fn projection(object: &serde_json::Value) -> serde_json::Value {
        use serde_json::{Map, Value};
        let status = &object["status"];
        let mut kept = Map::new();
        let mut copy = |key: &str, value: &Value| {
            if !value.is_null() {
                kept.insert(key.to_owned(), value.clone());
            }
        };
        copy("observedGeneration", &status["observedGeneration"]);
        copy("url", &status["url"]);
        copy(
            "address",
            &serde_json::json!({"url": status["address"]["url"]}),
        );
        if let Some(conditions) = status["conditions"].as_array() {
            let read: Vec<Value> = conditions
                .iter()
                .filter(|c| matches!(c["type"].as_str(), Some("Ready" | "PredictorReady")))
                .cloned()
                .collect();
            copy("conditions", &Value::Array(read));
        }
        let revision = &status["components"]["predictor"]["latestReadyRevision"];
        if !revision.is_null() {
            copy(
                "components",
                &serde_json::json!({"predictor": {"latestReadyRevision": revision}}),
            );
        }
        // Every object of the predictor that declares a protocol, with that alone: the
        // `model` form and the older per-framework forms.
        let predictor: Map<String, Value> = object["spec"]["predictor"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(key, value)| {
                let declared = value.get("protocolVersion")?;
                Some((
                    key.clone(),
                    serde_json::json!({"protocolVersion": declared}),
                ))
            })
            .collect();
        serde_json::json!({
            "metadata": {"generation": object["metadata"]["generation"]},
            "spec": {"predictor": predictor},
            "status": kept,
        })
    }
}

/// The condition of `kind` in `status.conditions`; absent reads as unknown.
fn condition(status: &serde_json::Value, kind: &str) -> Readiness {
    let found = status["conditions"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["type"].as_str() == Some(kind)));
    let Some(found) = found else {
        return Readiness::default();
    };
    Readiness {
        status: match found["status"].as_str() {
            Some("True") => Some(true),
            Some("False") => Some(false),
            _ => None,
        },
        reason: found["reason"].as_str().map(str::to_owned),
        message: found["message"].as_str().map(str::to_owned),
    }
}

/// The predictor's protocol: the `model` form first, then the older per-framework form
/// (`spec.predictor.sklearn.protocolVersion`, ...), whichever object carries one.
fn protocol(predictor: &serde_json::Value) -> Protocol {
    let declared = predictor["model"]["protocolVersion"].as_str().or_else(|| {
        predictor
            .as_object()?
            .values()
            .find_map(|framework| framework.get("protocolVersion")?.as_str())
    });
    match declared {
        Some("v2" | "grpc-v2") => Protocol::V2,
        _ => Protocol::V1,
    }
}
