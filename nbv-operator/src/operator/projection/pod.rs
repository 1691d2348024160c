//! A validation Pod as the Pods' cache keeps it: what nbv reads of it, packed.
//!
//! nbv keeps a finished Pod (its logs stay readable) until the job is deleted or
//! starts another attempt, so the cache holds one Pod per job for as long as the job
//! exists. A decoded Pod costs several KiB whatever it holds (the `Pod` struct is over
//! 2 KiB inline, a `Container` over 2 KiB, a container status 750 bytes) and its spec
//! carries the Pod's scripts, so [`CachedPod`] keeps only
//! [`observed_part`](nbv_core::pod::observed_part) of it, as JSON deflated against a
//! dictionary of what validation Pods share (`pod_dictionary.json`): a few hundred
//! bytes, most of them the notebook's report. A reconcile reads the one Pod of its
//! attempt; the metrics read each Pod's phase, kept beside the packed text.
//!
//! The name, namespace and owner references are kept apart, in the metadata the
//! controller reads (the cache's key, the job a Pod event wakes); the uid and
//! resourceVersion stay in the packed text, since kube-runtime copies the metadata's
//! into every reference it keeps to an object, where nothing reads them.

use std::borrow::Cow;
use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use kube::Resource;
use kube::api::ObjectMeta;
use kube::core::NamespaceResourceScope;
use nbv_core::pod::observed_part;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::packed::Packed;

/// What validation Pods have in common (field names, nbv's labels and containers, the
/// report's keys), primed into the compressor's window. Only the packed size depends
/// on it.
const DICTIONARY: &[u8] = include_bytes!("pod_dictionary.json");

/// A validation Pod in the Pods' cache: its name, namespace, owners and phase, and the
/// rest of what nbv reads of it packed.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use nbv_operator::operator::projection::CachedPod;
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train-g1-r0", "namespace": "ml", "resourceVersion": "42",
///                  "labels": {"mlops.dev/attempt": "g1-r0", "team": "risk"},
///                  "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
///     "spec": {"containers": [{"name": "notebook", "image": "quay.io/example/papermill:1",
///                              "command": ["python3", "-c", "print('a long script')"]}]},
///     "status": {"phase": "Succeeded", "podIP": "10.0.0.7"}
/// }))?;
/// let cached = CachedPod::pack(&pod);
/// assert_eq!((cached.namespace(), cached.name(), cached.phase()), ("ml", "train-g1-r0", Some("Succeeded")));
///
/// let read = cached.pod_json().expect("unpacked");
/// assert_eq!(read["metadata"]["name"], "train-g1-r0");
/// assert_eq!(read["metadata"]["resourceVersion"], "42");
/// assert_eq!(read["metadata"]["labels"], serde_json::json!({"mlops.dev/attempt": "g1-r0"}));
/// assert_eq!(read["status"], serde_json::json!({"phase": "Succeeded"}));
/// assert!(read["spec"]["containers"][0]["command"].is_null());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct CachedPod {
    /// Name, namespace and owner references; the rest is packed.
    metadata: ObjectMeta,
    phase: Option<Box<str>>,
    packed: Packed,
}

impl CachedPod {
    /// Keeps what nbv reads of `pod` ([`observed_part`]).
    pub fn pack(pod: &Pod) -> CachedPod {
        let mut kept = observed_part(pod);
        let source = &mut kept.metadata;
        let metadata = ObjectMeta {
            name: source.name.take(),
            namespace: source.namespace.take(),
            owner_references: source.owner_references.take(),
            ..ObjectMeta::default()
        };
        let phase = kept
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .map(Box::from);
        CachedPod {
            metadata,
            phase,
            packed: Packed::of(&kept, DICTIONARY),
        }
    }

    /// What nbv reads of the Pod, as JSON (a Pod's, with the fields nbv does not read
    /// left out).
    ///
    /// # Errors
    ///
    /// What went wrong, if the packed text cannot be read back (a defect of nbv).
    pub fn pod_json(&self) -> Result<Value, String> {
        let text = self.packed.text(DICTIONARY).map_err(str::to_owned)?;
        let mut pod: Value = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
        let metadata = &mut pod["metadata"];
        if !metadata.is_object() {
            *metadata = Value::Object(serde_json::Map::new());
        }
        let identity = serde_json::to_value(&self.metadata).map_err(|e| e.to_string())?;
        if let (Some(metadata), Value::Object(identity)) = (metadata.as_object_mut(), identity) {
            metadata.extend(identity);
        }
        Ok(pod)
    }

    /// The Pod's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The Pod's namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// `status.phase`.
    pub fn phase(&self) -> Option<&str> {
        self.phase.as_deref()
    }

    /// The bytes the packed text takes.
    pub fn packed_size(&self) -> usize {
        self.packed.size()
    }
}

impl fmt::Debug for CachedPod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedPod")
            .field("namespace", &self.namespace())
            .field("name", &self.name())
            .field("phase", &self.phase())
            .field("packed_size", &self.packed_size())
            .finish()
    }
}

impl Resource for CachedPod {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(dt: &()) -> Cow<'_, str> {
        Pod::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        Pod::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        Pod::version(dt)
    }

    fn api_version(dt: &()) -> Cow<'_, str> {
        Pod::api_version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        Pod::plural(dt)
    }

    /// The name, namespace and owner references only.
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A Pod decoded and packed ([`CachedPod::pack`]).
impl<'de> Deserialize<'de> for CachedPod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Pod::deserialize(deserializer).map(|pod| CachedPod::pack(&pod))
    }
}

#[cfg(test)]
mod tests {
    use nbv_core::api::NotebookValidationJob;
    use nbv_core::phase::Attempt;
    use nbv_core::pod::{PodDefaults, validation_pod};
    use serde_json::json;

    use super::*;

    /// The Pod of a job with credentials and a golden notebook, ended as a run of ten
    /// cells ends, as the API server serves it.
    fn succeeded() -> Pod {
        let job: NotebookValidationJob = serde_json::from_value(json!({
            "metadata": {"name": "churn-features", "namespace": "retail-ml",
                         "uid": "7d0c9a4e-3b1f-4c55-9a57-6f0e2b8d1c3a"},
            "spec": {
                "notebook": {"git": {"url": "https://git.example.com/ml/models.git", "ref": "main",
                                     "credentialsSecret": "git-credentials"},
                             "path": "notebooks/churn/features.ipynb"},
                "goldenNotebook": {"git": {"url": "https://git.example.com/ml/models.git", "ref": "main"},
                                   "path": "notebooks/churn/features-golden.ipynb"},
                "podConfig": {"containerImage": "quay.io/jupyter/minimal-notebook:2026-01-05"},
                "timeout": "30m"
            }
        }))
        .expect("a job");
        let attempt = Attempt {
            generation: 1,
            retry: 0,
        };
        let pod =
            validation_pod(&job, attempt, None, None, &PodDefaults::default()).expect("a pod");
        let cells: Vec<_> = (0..10)
            .map(|i| json!({"i": i, "s": "ok", "t": 0.25 + f64::from(i)}))
            .collect();
        let report = json!({"cells": cells, "cmp": {"result": "matched", "strategy": "normalized",
            "total": 10, "matched": 10, "mismatched": 0, "diffs": []}})
        .to_string();
        let terminated = |name: &str, image: &str, message: &str| {
            json!({"name": name, "image": image, "imageID": format!("{image}@sha256:0f1e2d"),
                   "containerID": "containerd://4f6c1d0e9b", "ready": false, "restartCount": 0,
                   "started": false,
                   "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": message,
                       "startedAt": "2026-12-07T00:00:05Z", "finishedAt": "2026-12-07T00:00:40Z",
                       "containerID": "containerd://4f6c1d0e9b"}}})
        };
        let mut value = serde_json::to_value(&pod).expect("JSON");
        value["metadata"]["resourceVersion"] = json!("184467");
        value["metadata"]["creationTimestamp"] = json!("2026-12-07T00:00:00Z");
        value["metadata"]["managedFields"] = json!([{"manager": "nbv", "operation": "Apply"},
            {"manager": "kubelet", "operation": "Update", "subresource": "status"}]);
        value["status"] = json!({
            "phase": "Succeeded", "hostIP": "10.0.0.3", "podIP": "10.128.2.17", "qosClass": "Burstable",
            "startTime": "2026-12-07T00:00:01Z",
            "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted"},
                           {"type": "PodScheduled", "status": "True"}],
            "initContainerStatuses": [terminated("clone", "alpine/git:2.47.2", ""),
                                      terminated("clone-golden", "alpine/git:2.47.2", "")],
            "containerStatuses": [terminated("notebook", "quay.io/jupyter/minimal-notebook:2026-01-05", &report)]
        });
        serde_json::from_value(value).expect("a pod")
    }

    #[test]
    fn what_is_read_back_is_the_observed_part() {
        let pod = succeeded();
        let cached = CachedPod::pack(&pod);
        let read: Pod =
            serde_json::from_value(cached.pod_json().expect("unpacked")).expect("a pod");
        assert_eq!(read, observed_part(&pod));
        assert_eq!(cached.phase(), Some("Succeeded"));
        assert_eq!(
            cached.meta().owner_references,
            pod.metadata.owner_references
        );
        // kube-runtime copies these into its references to the Pod: not kept there.
        assert!(cached.meta().uid.is_none() && cached.meta().resource_version.is_none());
    }

    #[test]
    fn a_finished_pod_is_kept_in_a_few_hundred_bytes() {
        let pod = succeeded();
        let served = serde_json::to_vec(&pod).expect("JSON").len();
        let cached = CachedPod::pack(&pod);
        assert!(
            cached.packed_size() < 512,
            "{} bytes packed of {served} served",
            cached.packed_size()
        );
    }

    #[test]
    fn a_pod_decodes_into_its_packed_form() {
        let pod = succeeded();
        let decoded: CachedPod =
            serde_json::from_value(serde_json::to_value(&pod).expect("JSON")).expect("decoded");
        assert_eq!(
            decoded.pod_json().expect("unpacked"),
            CachedPod::pack(&pod).pod_json().expect("unpacked")
        );
    }

    #[test]
    fn a_damaged_text_is_an_error() {
        let mut cached = CachedPod::pack(&succeeded());
        cached.packed = Packed::Deflated {
            bytes: vec![0xff; 8].into_boxed_slice(),
            len: 100,
        };
        assert!(cached.pod_json().is_err());
    }
}
