//! Two controllers this control plane lacks, for a model server with a
//! PodDisruptionBudget:
//!
//! - [`DisruptionController`]: kube-controller-manager's disruption controller, which
//!   keeps each `policy/v1beta1` PodDisruptionBudget's status up to date. The API
//!   server's eviction reads that status (it refuses while `observedGeneration` lags
//!   the budget's generation, or `disruptionsAllowed` is 0) and spends it. As the real
//!   controller does (`pkg/controller/disruption`): the pods the selector selects are
//!   `expectedPods`; `currentHealthy` counts those Ready, not being deleted and not
//!   listed in `disruptedPods` (an eviction the controller has not seen through yet);
//!   `desiredHealthy` is an integer `minAvailable`, or `expectedPods` less an integer
//!   `maxUnavailable`; `disruptionsAllowed` is what `currentHealthy` exceeds it by.
//!   Entries of `disruptedPods` whose pod is gone or being deleted, or older than two
//!   minutes, are dropped. It writes with `PUT .../status` at the version read, so an
//!   eviction in between makes it read again.
//! - [`Replicas`]: the ReplicaSet behind a KServe predictor: a real ReplicaSet object
//!   (which no controller acts on here) that this stand-in plays: it adopts the pods
//!   with the InferenceService's label, keeps `replicas` of them, creating a
//!   replacement `create_after` a pod went missing (and confirming the deletion of a
//!   pod being deleted, as a kubelet would), and marks a replacement Ready
//!   `ready_after` it was created.
//!
//! Both poll (every 100 ms) rather than watch: a stand-in, as simple as it can be.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::kubelet::NODE;

const POLL: Duration = Duration::from_millis(100);

/// How long an eviction stays in `disruptedPods` before the controller forgets it.
const DISRUPTION_TIMEOUT: chrono::Duration = chrono::Duration::minutes(2);

/// `policy/v1beta1` PodDisruptionBudgets, as Kubernetes 1.20 serves them.
pub fn budgets(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("policy", "v1beta1", "PodDisruptionBudget");
    Api::namespaced_with(client.clone(), namespace, &ApiResource::from_gvk(&gvk))
}

fn is_ready(pod: &Pod) -> bool {
    nbv_core::actions::restart::is_ready(pod)
}

/// The stand-in disruption controller of one namespace; stops when dropped.
pub struct DisruptionController {
    task: JoinHandle<()>,
}

impl DisruptionController {
    /// Starts keeping the status of the budgets of `namespace`.
    pub fn start(client: kube::Client, namespace: &str) -> DisruptionController {
        let namespace = namespace.to_owned();
        let task = tokio::spawn(async move {
            loop {
                sync_all(&client, &namespace).await;
                tokio::time::sleep(POLL).await;
            }
        });
        DisruptionController { task }
    }
}

impl Drop for DisruptionController {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn sync_all(client: &kube::Client, namespace: &str) {
    let api = budgets(client, namespace);
    let Ok(list) = api.list(&ListParams::default()).await else {
        return;
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    for mut budget in list.items {
        let labels = budget.data["spec"]["selector"]["matchLabels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default();
        if labels.is_empty() {
            continue; // policy/v1beta1: an empty selector selects nothing
        }
        let Ok(selected) = pods.list(&ListParams::default().labels(&labels)).await else {
            continue;
        };
        let status = computed(
            &budget.data,
            &selected.items,
            chrono::Utc::now(),
            budget.metadata.generation,
        );
        if budget.data["status"] == status {
            continue;
        }
        budget.data["status"] = status;
        let name = budget.metadata.name.clone().unwrap_or_default();
        // At the version read: an eviction meanwhile is a conflict, read again.
        let _ = api
            .replace_status(&name, &PostParams::default(), &budget)
            .await;
    }
}

/// The status the disruption controller computes for `budget` selecting `pods`.
fn computed(
    budget: &Value,
    pods: &[Pod],
    now: chrono::DateTime<chrono::Utc>,
    generation: Option<i64>,
) -> Value {
    let live = |name: &str| {
        pods.iter().any(|p| {
            p.metadata.name.as_deref() == Some(name) && p.metadata.deletion_timestamp.is_none()
        })
    };
    let mut disrupted = serde_json::Map::new();
    for (pod, at) in budget["status"]["disruptedPods"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let recent = at
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .is_some_and(|t| now - t.with_timezone(&chrono::Utc) < DISRUPTION_TIMEOUT);
        if recent && live(pod) {
            disrupted.insert(pod.clone(), at.clone());
        }
    }
    let expected = i64::try_from(pods.len()).unwrap_or(i64::MAX);
    let healthy = pods
        .iter()
        .filter(|p| {
            is_ready(p)
                && p.metadata.deletion_timestamp.is_none()
                && !disrupted.contains_key(p.metadata.name.as_deref().unwrap_or_default())
        })
        .count();
    let healthy = i64::try_from(healthy).unwrap_or(i64::MAX);
    let spec = &budget["spec"];
    let desired = match (
        spec["minAvailable"].as_i64(),
        spec["maxUnavailable"].as_i64(),
    ) {
        (Some(min), _) => min,
        (None, Some(max)) => (expected - max).max(0),
        // Percentages are not played here.
        (None, None) => expected,
    };
    json!({
        "observedGeneration": generation.unwrap_or(0),
        "disruptedPods": disrupted,
        "disruptionsAllowed": (healthy - desired).max(0),
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
    })
}

/// The stand-in ReplicaSet of a predictor; stops when dropped.
pub struct Replicas {
    task: JoinHandle<()>,
}

/// What [`Replicas`] keeps.
pub struct Predictor {
    /// The InferenceService whose label the pods carry.
    pub isvc: String,
    /// The ReplicaSet's `spec.replicas`.
    pub replicas: usize,
    /// How long a pod is missing before its replacement is created.
    pub create_after: Duration,
    /// How long a replacement takes to become Ready.
    pub ready_after: Duration,
}

/// One predictor pod bound to the stand-in node (deleted at once, grace period 0).
pub fn predictor_pod(isvc: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name,
                        "labels": {"serving.kserve.io/inferenceservice": isvc}},
           "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "kserve-container",
                                    "image": "kserve/sklearnserver:v0.15.0"}]}})
}

/// Marks `pod` Running and Ready, as its kubelet would.
pub async fn mark_ready(pods: &Api<Pod>, pod: &str) {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let status = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": now}]}});
    let _ = pods
        .patch_status(pod, &PatchParams::default(), &Patch::Merge(&status))
        .await;
}

/// Creates the ReplicaSet `<isvc>-predictor` wanting `replicas` pods; returns the
/// `ownerReferences` entry its pods carry.
async fn replica_set(client: &kube::Client, namespace: &str, isvc: &str, replicas: usize) -> Value {
    let api = super::objects::api_for(client, "apps/v1", "ReplicaSet", Some(namespace)).await;
    let labels = json!({"serving.kserve.io/inferenceservice": isvc});
    let body: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": format!("{isvc}-predictor")},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "kserve-container",
                                                       "image": "kserve/sklearnserver:v0.15.0"}]}}}
    }))
    .expect("a ReplicaSet");
    // A clean slate for a second run of the suite on the same cluster.
    let _ = api
        .delete(&format!("{isvc}-predictor"), &DeleteParams::default())
        .await;
    let created = api
        .create(&PostParams::default(), &body)
        .await
        .expect("create the predictor's ReplicaSet");
    json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
           "name": created.metadata.name, "uid": created.metadata.uid, "controller": true})
}

impl Replicas {
    /// Creates the predictor's ReplicaSet in `namespace` and keeps its pods.
    pub async fn start(client: kube::Client, namespace: &str, predictor: Predictor) -> Replicas {
        let controller = replica_set(&client, namespace, &predictor.isvc, predictor.replicas).await;
        let pods: Api<Pod> = Api::namespaced(client, namespace);
        let created: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
        let task = tokio::spawn(async move {
            let Predictor {
                isvc,
                replicas,
                create_after,
                ready_after,
            } = predictor;
            let selector = format!("serving.kserve.io/inferenceservice={isvc}");
            let mut next = 0;
            let mut missing_since: Option<Instant> = None;
            loop {
                if let Ok(list) = pods.list(&ListParams::default().labels(&selector)).await {
                    let mut live = 0;
                    for pod in &list.items {
                        let name = pod.metadata.name.clone().unwrap_or_default();
                        if pod.metadata.deletion_timestamp.is_some() {
                            // The kubelet's confirmation of a deletion.
                            let _ = pods
                                .delete(&name, &DeleteParams::default().grace_period(0))
                                .await;
                            continue;
                        }
                        live += 1;
                        let ours = pod
                            .metadata
                            .owner_references
                            .iter()
                            .flatten()
                            .any(|r| Some(r.uid.as_str()) == controller["uid"].as_str());
                        if !ours {
                            let adopt = json!({"metadata": {"ownerReferences": [controller]}});
                            let _ = pods
                                .patch(&name, &PatchParams::default(), &Patch::Merge(&adopt))
                                .await;
                        }
                        let due = created
                            .lock()
                            .expect("created")
                            .get(&name)
                            .is_some_and(|at| at.elapsed() >= ready_after);
                        if due && !is_ready(pod) {
                            mark_ready(&pods, &name).await;
                        }
                    }
                    if live >= replicas {
                        missing_since = None;
                    } else if missing_since.get_or_insert_with(Instant::now).elapsed()
                        >= create_after
                    {
                        missing_since = None;
                        for _ in live..replicas {
                            next += 1;
                            let name = format!("{isvc}-predictor-r{next}");
                            let mut body = predictor_pod(&isvc, &name);
                            body["metadata"]["ownerReferences"] = json!([controller]);
                            let body: Pod = serde_json::from_value(body).expect("a pod");
                            if pods.create(&PostParams::default(), &body).await.is_ok() {
                                created
                                    .lock()
                                    .expect("created")
                                    .insert(name, Instant::now());
                            }
                        }
                    }
                }
                tokio::time::sleep(POLL).await;
            }
        });
        Replicas { task }
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, ready: bool) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name},
            "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}}))
        .unwrap()
    }

    #[test]
    fn the_budget_allows_what_healthy_pods_exceed_min_available_by() {
        let now = chrono::Utc::now();
        let budget = json!({"spec": {"minAvailable": 2}, "status": {"disruptedPods": {
            "c": now.to_rfc3339(), "gone": now.to_rfc3339()}}});
        let pods = [
            pod("a", true),
            pod("b", true),
            pod("c", true),
            pod("d", false),
        ];
        let status = computed(&budget, &pods, now, Some(3));
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["expectedPods"], 4);
        // c's eviction is not seen through: not healthy; gone's pod is gone: dropped.
        assert_eq!(status["currentHealthy"], 2);
        assert_eq!(status["disruptionsAllowed"], 0);
        assert_eq!(status["disruptedPods"].as_object().unwrap().len(), 1);
        let status = computed(&json!({"spec": {"maxUnavailable": 1}}), &pods, now, Some(1));
        assert_eq!(
            (
                status["desiredHealthy"].as_i64(),
                status["disruptionsAllowed"].as_i64()
            ),
            (Some(3), Some(0))
        );
    }
}
