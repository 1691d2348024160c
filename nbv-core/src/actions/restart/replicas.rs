//! How many pods the controllers of a target's pods want: what keeps a restart by
//! eviction from evicting the next pod before the last one evicted is replaced.
//!
//! Without a PodDisruptionBudget nothing else says that a pod is missing: once an
//! evicted pod is gone and before its controller creates the replacement, the pods
//! as listed look like a smaller workload that needs no replacement.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use serde_json::Value;

use super::MAX_OWNER_LOOKUPS;
use crate::pod::controller_of;

/// The controllers whose `spec.replicas` a restart reads when a pod names one as its
/// controller: the workloads that keep a count of interchangeable pods (a KServe
/// predictor's pods belong to a ReplicaSet). Others are not read; their pods are
/// paced by what the pods show.
const SCALED: [(&str, &str); 2] = [("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")];

/// One controller: what it is called, and how many pods it wants (`None`: it has no
/// `spec.replicas`, or it is gone).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Controller {
    kind: String,
    name: String,
    replicas: Option<u64>,
}

/// The desired pod count of the controllers of a target's pods, learnt one read at a
/// time, as [`Owners`](super::Owners) learns ownership.
///
/// The shell asks for [`Replicas::next_lookup`] when [`pace`](super::pace) would
/// evict, reads that object, hands it to [`Replicas::learn`], and asks again; with
/// every controller known, `pace` waits while any of them has fewer pods than it
/// wants. Any object read for the restart anyway (the target, an intermediate owner)
/// is learnt too, so it is not read twice. At most [`MAX_OWNER_LOOKUPS`] controllers
/// are read.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use nbv_core::actions::restart::Replicas;
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "p-1",
///     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "p-7f",
///                          "uid": "rs1", "controller": true}]}})).unwrap();
/// let mut replicas = Replicas::default();
/// let reference = replicas.next_lookup(std::slice::from_ref(&pod)).unwrap();
/// assert_eq!(reference.name, "p-7f");
/// replicas.learn(&reference.uid, Some(&serde_json::json!({
///     "kind": "ReplicaSet", "metadata": {"name": "p-7f", "uid": "rs1"}, "spec": {"replicas": 2}})));
/// assert!(replicas.next_lookup(std::slice::from_ref(&pod)).is_none());
/// assert_eq!(replicas.shortfall(std::slice::from_ref(&pod)).unwrap(),
///            "ReplicaSet p-7f has 1 of its 2 pods");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Replicas {
    /// By uid.
    known: BTreeMap<String, Controller>,
    lookups: usize,
}

impl Replicas {
    /// The next controller of `pods` to read: a ReplicaSet or StatefulSet not known
    /// yet. `None` once all are known or the bound is reached.
    pub fn next_lookup(&self, pods: &[Pod]) -> Option<OwnerReference> {
        if self.lookups >= MAX_OWNER_LOOKUPS {
            return None;
        }
        pods.iter()
            .filter_map(controller_of)
            .find(|r| {
                SCALED.contains(&(r.api_version.as_str(), r.kind.as_str()))
                    && !self.known.contains_key(&r.uid)
            })
            .cloned()
    }

    /// Records what reading the object with `uid` for [`Replicas::next_lookup`] found
    /// (`None`: it is gone); it spends one of the reads the bound allows. A namesake
    /// with another uid counts as gone.
    pub fn learn(&mut self, uid: &str, found: Option<&Value>) {
        if self.record(uid, found) {
            self.lookups += 1;
        }
    }

    /// Records an object read for another reason (the target, an intermediate owner),
    /// without spending a lookup.
    pub fn learn_object(&mut self, object: &Value) {
        if let Some(uid) = object["metadata"]["uid"].as_str() {
            self.record(uid, Some(object));
        }
    }

    /// Records what was found for `uid`; whether it was not known before.
    fn record(&mut self, uid: &str, found: Option<&Value>) -> bool {
        let found = found.filter(|o| o["metadata"]["uid"].as_str() == Some(uid));
        let text = |o: Option<&Value>, pointer: &str| {
            o.and_then(|o| o.pointer(pointer))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let controller = Controller {
            kind: text(found, "/kind"),
            name: text(found, "/metadata/name"),
            replicas: found.and_then(|o| o["spec"]["replicas"].as_u64()),
        };
        self.known.insert(uid.to_owned(), controller).is_none()
    }

    /// The first controller of `pods` that has fewer active pods than it wants, in
    /// words; `None` when each has all its pods. A pod counts as its controller counts
    /// it (not ended, not being deleted), Ready or not: what is missing is a pod not
    /// created yet. Only controllers that some pod names count, so an object that
    /// owns pods through another (a Rollout through its ReplicaSets) is not compared
    /// with pods it does not control.
    pub fn shortfall(&self, pods: &[Pod]) -> Option<String> {
        let mut present: BTreeMap<&str, u64> = BTreeMap::new();
        for pod in pods {
            if let Some(reference) = controller_of(pod) {
                *present.entry(reference.uid.as_str()).or_default() += u64::from(active(pod));
            }
        }
        present.into_iter().find_map(|(uid, present)| {
            let controller = self.known.get(uid)?;
            let wanted = controller.replicas?;
            (present < wanted).then(|| {
                format!(
                    "{} {} has {present} of its {wanted} pods",
                    controller.kind, controller.name
                )
            })
        })
    }
}

/// Whether the pod's controller counts it: not ended and not being deleted.
fn active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    pod.metadata.deletion_timestamp.is_none() && !matches!(phase, Some("Succeeded" | "Failed"))
}
