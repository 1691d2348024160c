//! What nbv's watch caches keep of each object: what its readers use, nothing more.
//!
//! kube-runtime's reflector stores whatever its watcher hands it, for as long as the
//! object exists, so the cost of every field is paid once per object for the life of
//! the process. Each watch therefore trims its objects before they reach the cache
//! (`.modify(...)` ahead of `.reflect(...)` in [`crate::operator::controller`]):
//!
//! - every object loses `metadata.managedFields` (the API server's record of which
//!   manager wrote which field, often as large as the object) and kubectl's
//!   `last-applied-configuration` annotation (a second copy of the object as a user
//!   applied it). No reader looks at either, and nbv never writes a cached object back
//!   whole (every write is a patch of the fields it owns), so nothing is lost;
//! - a job is kept packed ([`CachedJob`]): its JSON text deflated against what jobs
//!   share, a few hundred bytes instead of the 5 KiB of a decoded job, beside what
//!   must be read without unpacking it (its identity and the [`JobFacts`] the cluster
//!   gauges count). A reconcile unpacks the one job it works on;
//! - an Argo CD Application is decoded straight into a [`CachedApplication`], which
//!   keeps only what nbv reads of it, so its size no longer depends on how many
//!   resources it deploys or on its sync history; and only the Applications nbv acts
//!   on are kept ([`AppInterest`]): those its jobs name and those showing its status;
//! - a validation Pod is kept as [`CachedPod`]: only what nbv reads of it
//!   ([`observed_part`](nbv_core::pod::observed_part)), packed like a job, beside its
//!   phase, in a [`PodCache`] of nbv's own; its size no longer depends on the Pod's spec;
//! - the publisher's board needs only a job's identity, labels, annotations and phase
//!   ([`board_view`]), so the events handed to it carry nothing else.

mod application;
mod interest;
mod job;
mod metadata;
mod packed;
mod pod;

use std::collections::BTreeMap;

use kube::api::{DynamicObject, ObjectMeta};
use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus};
use nbv_core::models::InferenceService;

pub use application::CachedApplication;
pub use interest::{AppInterest, named_applications};
pub use job::{CachedJob, JobFacts, Parents, UnpackError};
pub use metadata::{LAST_APPLIED, trim_metadata};
pub use pod::{CachedPod, PodCache};

/// What the publisher's board reads of a job: its identity, labels and annotations
/// (the parent Application), deletion mark and `status.phase`. The spec is left at its
/// default and the rest of the status out.
///
/// # Examples
///
/// ```
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_operator::operator::projection::board_view;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml",
///                  "labels": {"app.kubernetes.io/part-of": "fraud"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
///     "status": {"phase": "Succeeded", "message": "Validation completed successfully"}
/// })).unwrap();
/// let view = board_view(&job);
/// assert_eq!(view.metadata.labels, job.metadata.labels);
/// assert_eq!(view.status.as_ref().and_then(|s| s.phase), job.status.as_ref().and_then(|s| s.phase));
/// assert!(view.status.unwrap().message.is_none());
/// assert!(view.spec.notebook.path.is_empty());
/// ```
pub fn board_view(job: &NotebookValidationJob) -> NotebookValidationJob {
    let metadata = &job.metadata;
    let kept = |map: &Option<BTreeMap<String, String>>| {
        map.as_ref().map(|map| {
            map.iter()
                .filter(|(key, _)| key.as_str() != LAST_APPLIED)
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
    };
    let mut view = NotebookValidationJob::new(
        metadata.name.as_deref().unwrap_or_default(),
        Default::default(),
    );
    view.metadata = ObjectMeta {
        name: metadata.name.clone(),
        namespace: metadata.namespace.clone(),
        uid: metadata.uid.clone(),
        labels: metadata.labels.clone(),
        annotations: kept(&metadata.annotations),
        deletion_timestamp: metadata.deletion_timestamp.clone(),
        ..ObjectMeta::default()
    };
    view.status = job
        .status
        .as_ref()
        .map(|status| NotebookValidationJobStatus {
            phase: status.phase,
            ..NotebookValidationJobStatus::default()
        });
    view
}

/// An InferenceService as the models' cache keeps it: its identity, generation and
/// resourceVersion, and the part of the object the model gate reads
/// ([`InferenceService::projection`](nbv_core::models::InferenceService::projection));
/// labels, annotations, the rest of the spec and of the status are dropped.
///
/// # Examples
///
/// ```
/// use kube::api::DynamicObject;
/// use nbv_operator::operator::projection::{inference_service_of, trim_inference_service};
///
/// let mut object: DynamicObject = serde_json::from_value(serde_json::json!({
///     "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
///     "metadata": {"name": "fraud", "namespace": "ml", "generation": 2,
///                  "labels": {"team": "risk"}},
///     "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"},
///                                      "storageUri": "s3://models/fraud"}}},
///     "status": {"observedGeneration": 1,
///                "conditions": [{"type": "Ready", "status": "True"}]}
/// })).unwrap();
/// trim_inference_service(&mut object);
/// assert!(object.metadata.labels.is_none());
/// let read = inference_service_of(&object);
/// // The controller has not caught up with generation 2 yet.
/// assert_eq!((read.generation, read.observed_generation), (Some(2), Some(1)));
/// ```
pub fn trim_inference_service(object: &mut DynamicObject) {
    let mut kept = InferenceService::projection(&inference_service_json(object));
    // The generation stays in the object's metadata, where the projection read it.
    if let Some(fields) = kept.as_object_mut() {
        fields.remove("metadata");
    }
    object.data = kept;
    let metadata = std::mem::take(&mut object.metadata);
    object.metadata = ObjectMeta {
        name: metadata.name,
        namespace: metadata.namespace,
        uid: metadata.uid,
        resource_version: metadata.resource_version,
        generation: metadata.generation,
        ..ObjectMeta::default()
    };
}

/// What the model gate reads of an InferenceService (whole, or as the cache keeps it).
///
/// # Examples
///
/// See [`trim_inference_service`].
pub fn inference_service_of(object: &DynamicObject) -> InferenceService {
    InferenceService::from_object(&inference_service_json(object))
}

/// The object as JSON the way [`InferenceService`] reads it: `data` (spec, status)
/// with the generation from the metadata, which `DynamicObject` keeps apart.
pub(crate) fn inference_service_json(object: &DynamicObject) -> serde_json::Value {
    let mut value = object.data.clone();
    if let Some(fields) = value.as_object_mut() {
        fields.insert(
            "metadata".to_owned(),
            serde_json::json!({"generation": object.metadata.generation}),
        );
    }
    value
}
