//! A model server restarted by a trigger keeps serving: nbv evicts its pods one at a
//! time through the real API server's Eviction API, which applies the server's
//! PodDisruptionBudget (kept up to date by a stand-in disruption controller); without
//! a budget, the pods' ReplicaSet tells nbv that an evicted pod is not replaced yet.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::support::disruption::{
    DisruptionController, Predictor, Replicas, budgets, mark_ready, predictor_pod,
};
use crate::support::{Operator, OperatorOptions, Scenario, condition};

const REPLICAS: usize = 3;
const SELECTOR: &str = "serving.kserve.io/inferenceservice=model";

/// The fewest Ready predictor pods (not being deleted) seen, polled every 50 ms: the
/// pod timeline's witness that the model server always served.
fn watch_ready(pods: Api<Pod>) -> (Arc<Mutex<usize>>, tokio::task::JoinHandle<()>) {
    let fewest = Arc::new(Mutex::new(usize::MAX));
    let seen = fewest.clone();
    let task = tokio::spawn(async move {
        loop {
            if let Ok(list) = pods.list(&ListParams::default().labels(SELECTOR)).await {
                let ready = list
                    .items
                    .iter()
                    .filter(|p| {
                        p.metadata.deletion_timestamp.is_none()
                            && nbv_core::actions::restart::is_ready(p)
                    })
                    .count();
                let mut fewest = seen.lock().expect("fewest");
                *fewest = (*fewest).min(ready);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    (fewest, task)
}

/// [`eventually`], showing the job's status, the pods and the budget when it times out.
async fn within<T, F, Fut>(
    s: &Scenario,
    job: &str,
    what: &str,
    timeout: Duration,
    mut check: F,
) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if tokio::time::Instant::now() > deadline {
            let status = serde_json::to_string_pretty(&s.job(job).await.status).unwrap_or_default();
            let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
            let pods: Vec<_> = pods
                .list(&ListParams::default().labels(SELECTOR))
                .await
                .map(|l| {
                    l.items
                        .into_iter()
                        .map(|p| (p.metadata.name, p.status.and_then(|s| s.conditions)))
                        .collect()
                })
                .unwrap_or_default();
            let budget = budgets(&s.client, &s.namespace)
                .get("model")
                .await
                .map(|b| b.data["status"].clone());
            panic!(
                "timed out after {timeout:?} waiting for {what}\njob status: {status}\npods: {pods:?}\nbudget: {budget:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The InferenceService `model` and its [`REPLICAS`] Ready predictor pods; their names.
async fn model_server(s: &Scenario, pods: &Api<Pod>) -> Vec<String> {
    s.apply(
        json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
               "metadata": {"name": "model"},
               "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}}),
    )
    .await;
    let originals: Vec<String> = (1..=REPLICAS)
        .map(|i| format!("model-predictor-{i}"))
        .collect();
    for name in &originals {
        s.apply(predictor_pod("model", name)).await;
        mark_ready(pods, name).await;
    }
    originals
}

/// Starts nbv, then has the job `train` succeed, with an on-success restart of the
/// InferenceService `model`; nbv and the job's name.
async fn train_succeeds(s: &Scenario) -> (Operator, &'static str) {
    let operator = s.operator(&OperatorOptions::gitops_only(&s.namespace));
    operator.metrics().await; // up and serving
    // The pods predate the run's end by at least a second (timestamps are in seconds).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let name = "train";
    s.succeeds_elsewhere(
        name,
        json!({"mlops.dev/on-success-trigger":
            "- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: model, action: restart}"}),
    )
    .await;
    (operator, name)
}

/// Waits up to `timeout` for the job's restart to be done.
async fn restart_done(s: &Scenario, name: &str, timeout: Duration) {
    let done = within(s, name, "the restart to finish", timeout, || async {
        condition(&s.job(name).await, "TargetsRestarted").filter(|(status, _, _)| status == "True")
    })
    .await;
    assert_eq!(done.1, "RestartDone", "{done:?}");
}

/// Asserts that no pod of `originals` is left.
async fn all_replaced(pods: &Api<Pod>, originals: &[String]) {
    let left: Vec<String> = pods
        .list(&ListParams::default().labels(SELECTOR))
        .await
        .expect("pods")
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert!(
        left.iter().all(|p| !originals.contains(p)),
        "every original pod was replaced: {left:?}"
    );
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_model_server_restart_waits_for_its_disruption_budget_and_always_serves() {
    let s = Scenario::new("e2e-pdb").await;
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let originals = model_server(&s, &pods).await;
    // minAvailable = replicas: no disruption allowed at first.
    s.apply(json!({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "model"},
                   "spec": {"minAvailable": REPLICAS,
                            "selector": {"matchLabels": {"serving.kserve.io/inferenceservice": "model"}}}}))
        .await;
    let _disruption = DisruptionController::start(s.client.clone(), &s.namespace);
    let _replicas = Replicas::start(
        s.client.clone(),
        &s.namespace,
        Predictor {
            isvc: "model".into(),
            replicas: REPLICAS,
            create_after: Duration::ZERO,
            ready_after: Duration::from_secs(2),
        },
    )
    .await;
    let (fewest_ready, timeline) = watch_ready(pods.clone());

    let (operator, name) = train_succeeds(&s).await;

    // The budget forbids: nbv waits, says so, and every original pod still runs.
    let waiting = within(
        &s,
        name,
        "the restart to wait for the budget",
        Duration::from_secs(30),
        || async {
            condition(&s.job(name).await, "TargetsRestarted").filter(|(_, reason, message)| {
                reason == "RestartWaiting" && message.contains("PodDisruptionBudget")
            })
        },
    )
    .await;
    assert_eq!(waiting.0, "Unknown");
    assert!(
        waiting
            .2
            .contains("The disruption budget model needs 3 healthy pods and has 3 currently"),
        "the condition names the budget: {}",
        waiting.2
    );
    assert!(
        !s.events(name, "RestartWaiting").await.is_empty(),
        "a RestartWaiting Event"
    );
    let listed = pods
        .list(&ListParams::default().labels(SELECTOR))
        .await
        .expect("pods");
    assert_eq!(
        listed.items.len(),
        REPLICAS,
        "nothing evicted or deleted while the budget forbids"
    );

    // minAvailable = replicas - 1: one disruption at a time.
    budgets(&s.client, &s.namespace)
        .patch(
            "model",
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"minAvailable": REPLICAS - 1}})),
        )
        .await
        .expect("relax the budget");
    restart_done(&s, name, Duration::from_secs(45)).await;
    timeline.abort();

    all_replaced(&pods, &originals).await;
    let fewest = *fewest_ready.lock().expect("fewest");
    assert!(
        fewest >= REPLICAS - 1,
        "the model server had {fewest} Ready pods at one moment: fewer than the budget's {}",
        REPLICAS - 1
    );
    if let Some(requests) = s.report_requests("a restart paced by a PodDisruptionBudget") {
        let evictions = |code: u16| {
            requests
                .0
                .iter()
                .filter(|r| {
                    r.verb == "create" && r.resource() == "pods/eviction" && r.code() == code
                })
                .count()
        };
        assert_eq!(
            evictions(201),
            REPLICAS,
            "each pod evicted once: {requests}"
        );
        assert!(evictions(429) > 0, "the budget refused some: {requests}");
        assert_eq!(
            requests.count("delete", "pods"),
            0,
            "nbv deleted no pod: {requests}"
        );
    }
    drop(operator);
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn without_a_budget_the_next_pod_waits_until_its_replica_set_replaced_the_last() {
    let s = Scenario::new("e2e-replicas").await;
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let originals = model_server(&s, &pods).await;
    // No PodDisruptionBudget, and a ReplicaSet slow to replace a pod: for 3 s after an
    // evicted pod is gone, nothing but the ReplicaSet says that one is missing.
    let _replicas = Replicas::start(
        s.client.clone(),
        &s.namespace,
        Predictor {
            isvc: "model".into(),
            replicas: REPLICAS,
            create_after: Duration::from_secs(3),
            ready_after: Duration::from_secs(1),
        },
    )
    .await;
    let (fewest_ready, timeline) = watch_ready(pods.clone());
    let (operator, name) = train_succeeds(&s).await;
    restart_done(&s, name, Duration::from_secs(90)).await;
    timeline.abort();
    all_replaced(&pods, &originals).await;
    let fewest = *fewest_ready.lock().expect("fewest");
    assert!(
        fewest >= REPLICAS - 1,
        "the model server had {fewest} Ready pods at one moment: more than one eviction \
         outstanding"
    );
    let waited: Vec<String> = s
        .events(name, "RestartWaiting")
        .await
        .into_iter()
        .filter_map(|e| e.message)
        .collect();
    assert!(
        waited
            .iter()
            .any(|m| m.contains("ReplicaSet model-predictor has 2 of its 3 pods")),
        "the wait for the ReplicaSet was announced: {waited:?}"
    );
    if let Some(requests) = s.report_requests("a restart paced by a ReplicaSet, no budget") {
        let evicted = requests
            .0
            .iter()
            .filter(|r| r.verb == "create" && r.resource() == "pods/eviction" && r.code() == 201)
            .count();
        assert_eq!(evicted, REPLICAS, "each pod evicted once: {requests}");
        assert_eq!(
            requests.count("delete", "pods"),
            0,
            "nbv deleted no pod: {requests}"
        );
    }
    drop(operator);
    s.clean_up().await;
}
