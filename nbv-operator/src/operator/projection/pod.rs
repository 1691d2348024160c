//! The validation Pods as the Pods' cache keeps them: what nbv reads of each, packed.
//!
//! nbv keeps a finished Pod (its logs stay readable) until the job is deleted or
//! starts another attempt, which deletes the Pods of the earlier ones: the cache holds
//! one Pod per job for as long as the job exists. A decoded Pod costs several KiB
//! whatever it holds (the `Pod` struct is over 2 KiB inline, a `Container` over 2 KiB,
//! a container status 750 bytes) and its spec carries the Pod's scripts, so
//! [`CachedPod`] keeps only [`observed_part`] of it, as JSON deflated against a
//! dictionary of what validation Pods share (`pod_dictionary.json`): a few hundred
//! bytes, most of them the notebook's report, and its phase, which the metrics read.
//!
//! [`PodCache`] holds them by namespace and name, and nothing else: kube-runtime's
//! reflector keeps each object in an `Arc` with its whole `ObjectMeta` (360 bytes
//! inline) and a second copy of its name and namespace in its key, several times what
//! a packed Pod takes. A reconcile reads the one Pod of its attempt
//! ([`PodCache::pod_json`]); the controller is woken by the watch's events themselves,
//! which pass on after the cache is updated.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use k8s_openapi::api::core::v1::Pod;
use kube::runtime::watcher;
use nbv_core::pod::observed_part;
use serde_json::Value;

use super::packed::Packed;

/// What validation Pods have in common (field names, nbv's labels and containers, the
/// report's keys), primed into the compressor's window. Only the packed size depends
/// on it.
const DICTIONARY: &[u8] = include_bytes!("pod_dictionary.json");

/// The phases Kubernetes gives a Pod, kept without an allocation of their own.
const PHASES: [&str; 5] = ["Pending", "Running", "Succeeded", "Failed", "Unknown"];

/// A validation Pod as the cache keeps it: its phase, and what nbv reads of it
/// ([`observed_part`]) packed.
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
/// assert_eq!(cached.phase(), Some("Succeeded"));
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
    phase: Option<&'static str>,
    packed: Packed,
}

impl CachedPod {
    /// Keeps what nbv reads of `pod` ([`observed_part`]).
    pub fn pack(pod: &Pod) -> CachedPod {
        let kept = observed_part(pod);
        let phase = kept
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .and_then(|phase| PHASES.into_iter().find(|known| *known == phase));
        CachedPod {
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
        serde_json::from_slice(&text).map_err(|e| e.to_string())
    }

    /// `status.phase`, when it is one of the phases Kubernetes defines.
    pub fn phase(&self) -> Option<&'static str> {
        self.phase
    }

    /// The bytes the packed text takes.
    pub fn packed_size(&self) -> usize {
        self.packed.size()
    }
}

impl std::fmt::Debug for CachedPod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedPod")
            .field("phase", &self.phase)
            .field("packed_size", &self.packed_size())
            .finish()
    }
}

/// The Pods' cache: [`CachedPod`]s by namespace and name, updated from a Pod watch's
/// events as kube-runtime's reflector updates its store (a listing replaces the
/// whole content once it is complete). Clones share the cache.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use kube::runtime::watcher::Event;
/// use nbv_operator::operator::projection::PodCache;
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train-g1-r0", "namespace": "ml"},
///     "status": {"phase": "Running"}
/// }))?;
/// let cache = PodCache::default();
/// cache.apply(&Event::Apply(pod.clone()));
/// let read = cache.pod_json("ml", "train-g1-r0").expect("cached").expect("unpacked");
/// assert_eq!(read["status"]["phase"], "Running");
/// cache.apply(&Event::Delete(pod));
/// assert!(cache.pod_json("ml", "train-g1-r0").is_none());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct PodCache(Arc<RwLock<Pods>>);

#[derive(Default)]
struct Pods {
    /// By `namespace/name`.
    kept: HashMap<Box<str>, CachedPod>,
    /// A listing under way, which takes the place of `kept` once complete.
    listing: Option<HashMap<Box<str>, CachedPod>>,
}

fn key(namespace: &str, name: &str) -> Box<str> {
    format!("{namespace}/{name}").into_boxed_str()
}

fn key_of(pod: &Pod) -> Box<str> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    key(namespace, pod.metadata.name.as_deref().unwrap_or_default())
}

impl PodCache {
    /// Applies a Pod watch's event: a change or a deletion at once, a listing once it
    /// is complete.
    pub fn apply(&self, event: &watcher::Event<Pod>) {
        let mut pods = self.0.write().unwrap_or_else(|e| e.into_inner());
        match event {
            watcher::Event::Apply(pod) => {
                pods.kept.insert(key_of(pod), CachedPod::pack(pod));
            }
            watcher::Event::Delete(pod) => {
                pods.kept.remove(&key_of(pod));
            }
            watcher::Event::Init => pods.listing = Some(HashMap::new()),
            watcher::Event::InitApply(pod) => {
                let packed = CachedPod::pack(pod);
                pods.listing
                    .get_or_insert_with(HashMap::new)
                    .insert(key_of(pod), packed);
            }
            watcher::Event::InitDone => {
                let listed = pods.listing.take().unwrap_or_default();
                pods.kept = listed;
            }
        }
    }

    /// What nbv reads of Pod `namespace/name` ([`CachedPod::pod_json`]), if cached.
    pub fn pod_json(&self, namespace: &str, name: &str) -> Option<Result<Value, String>> {
        let pods = self.0.read().unwrap_or_else(|e| e.into_inner());
        pods.kept
            .get(&key(namespace, name))
            .map(CachedPod::pod_json)
    }

    /// Calls `f` with the namespace and phase of every cached Pod.
    pub fn for_each_phase(&self, mut f: impl FnMut(&str, Option<&'static str>)) {
        let pods = self.0.read().unwrap_or_else(|e| e.into_inner());
        for (key, pod) in &pods.kept {
            let namespace = key.split_once('/').map_or("", |(namespace, _)| namespace);
            f(namespace, pod.phase());
        }
    }

    /// How many Pods are cached.
    pub fn len(&self) -> usize {
        self.0.read().unwrap_or_else(|e| e.into_inner()).kept.len()
    }

    /// Whether no Pod is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let attempt = Attempt::new(1, 0);
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
    }

    #[test]
    fn a_listing_replaces_the_cache_once_complete() {
        let pod = |name: &str, phase: &str| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ml"},
                                          "status": {"phase": phase}}))
            .expect("a pod")
        };
        let cache = PodCache::default();
        cache.apply(&watcher::Event::Apply(pod("a", "Running")));
        cache.apply(&watcher::Event::Init);
        cache.apply(&watcher::Event::InitApply(pod("b", "Pending")));
        // Until the listing is complete, the cache is what it was.
        assert!(cache.pod_json("ml", "a").is_some());
        assert!(cache.pod_json("ml", "b").is_none());
        cache.apply(&watcher::Event::InitDone);
        assert!(cache.pod_json("ml", "a").is_none());
        assert_eq!(cache.len(), 1);
        let mut phases = Vec::new();
        cache.for_each_phase(|namespace, phase| phases.push((namespace.to_owned(), phase)));
        assert_eq!(phases, [("ml".to_owned(), Some("Pending"))]);
        cache.apply(&watcher::Event::Delete(pod("b", "Pending")));
        assert!(cache.is_empty());
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
    fn a_damaged_text_is_an_error() {
        let mut cached = CachedPod::pack(&succeeded());
        cached.packed = Packed::Deflated {
            bytes: vec![0xff; 8].into_boxed_slice(),
            len: 100,
        };
        assert!(cached.pod_json().is_err());
    }
}
