//! Pods' `eviction` subresource with PodDisruptionBudget semantics, as kube-apiserver
//! 1.20 serves it.

use nbv_testkit::cluster::FakeCluster;
use serde_json::{Value, json};

/// `POST`s an Eviction of `name`, guarded by `uid`, as `kubectl drain` does.
async fn evict(cluster: &FakeCluster, name: &str, uid: &str) -> Result<Value, kube::Error> {
    let body = json!({"apiVersion": "policy/v1beta1", "kind": "Eviction",
                      "metadata": {"name": name, "namespace": "ml"},
                      "deleteOptions": {"preconditions": {"uid": uid}}});
    let request = http::Request::post(format!("/api/v1/namespaces/ml/pods/{name}/eviction"))
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&body).unwrap())
        .unwrap();
    cluster.client().request::<Value>(request).await
}

fn running_pod(cluster: &FakeCluster, name: &str) -> String {
    let pod = cluster
        .apply_object(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "labels": {"app": "model"}},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}))
        .unwrap();
    pod["metadata"]["uid"].as_str().unwrap().to_owned()
}

fn budget(cluster: &FakeCluster, status: Value) {
    cluster
        .apply_object(
            json!({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "model", "namespace": "ml"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "model"}}}}),
        )
        .unwrap();
    cluster
        .set_status("poddisruptionbudgets", Some("ml"), "model", status)
        .unwrap();
}

fn status_of(error: kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => {
            let causes: Vec<String> = status
                .details
                .iter()
                .flat_map(|d| &d.causes)
                .map(|c| c.message.clone())
                .collect();
            (status.code, causes.join("; "))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_eviction_spends_a_disruption_the_budget_allows_and_records_the_pod() {
    let cluster = FakeCluster::default();
    let a = running_pod(&cluster, "a");
    running_pod(&cluster, "b");
    budget(
        &cluster,
        json!({"observedGeneration": 1, "disruptionsAllowed": 1,
                            "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}),
    );
    let answer = evict(&cluster, "a", &a).await.unwrap();
    assert_eq!(answer["status"], "Success");
    assert!(cluster.get("pods", Some("ml"), "a").unwrap().is_none());
    let pdb = cluster
        .get("poddisruptionbudgets", Some("ml"), "model")
        .unwrap()
        .unwrap();
    assert_eq!(pdb["status"]["disruptionsAllowed"], 0);
    assert!(pdb["status"]["disruptedPods"]["a"].is_string(), "{pdb}");

    // The budget is spent: the next eviction is refused, naming the budget.
    let b = cluster.get("pods", Some("ml"), "b").unwrap().unwrap();
    let refused = evict(&cluster, "b", b["metadata"]["uid"].as_str().unwrap()).await;
    let (code, causes) = status_of(refused.unwrap_err());
    assert_eq!(code, 429);
    assert_eq!(
        causes,
        "The disruption budget model needs 1 healthy pods and has 2 currently"
    );
    assert!(cluster.get("pods", Some("ml"), "b").unwrap().is_some());
}

#[tokio::test]
async fn a_budget_not_yet_observed_refuses_every_eviction() {
    let cluster = FakeCluster::default();
    let a = running_pod(&cluster, "a");
    budget(
        &cluster,
        json!({"observedGeneration": 0, "disruptionsAllowed": 1}),
    );
    let (code, causes) = status_of(evict(&cluster, "a", &a).await.unwrap_err());
    assert_eq!(code, 429);
    assert_eq!(
        causes,
        "The disruption budget model is still being processed by the server."
    );
}

#[tokio::test]
async fn an_eviction_keeps_the_uid_precondition_and_answers_404_for_a_missing_pod() {
    let cluster = FakeCluster::default();
    running_pod(&cluster, "a");
    let (code, _) = status_of(evict(&cluster, "a", "another").await.unwrap_err());
    assert_eq!(code, 409);
    assert!(cluster.get("pods", Some("ml"), "a").unwrap().is_some());
    let (code, _) = status_of(evict(&cluster, "gone", "u").await.unwrap_err());
    assert_eq!(code, 404);
}

#[tokio::test]
async fn discovery_names_the_eviction_version_of_kubernetes_1_20() {
    let cluster = FakeCluster::default();
    let core = cluster
        .client()
        .list_core_api_resources("v1")
        .await
        .unwrap();
    let eviction = core
        .resources
        .iter()
        .find(|r| r.name == "pods/eviction")
        .unwrap();
    assert_eq!(
        (eviction.group.as_deref(), eviction.version.as_deref()),
        (Some("policy"), Some("v1beta1"))
    );
}
