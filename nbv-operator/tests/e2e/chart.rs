//! The Helm chart as a user installs it: `charts/nbv` rendered by a real Helm
//! (`scripts/helm template`, Helm v4 from helm-python-sdk; `scripts/helm install` puts
//! it in place, as `.ci/run` does before this suite), every object applied to the real
//! API server, and nbv then run under what the chart installed: its identity's
//! ClusterRole and bindings are the chart's.
//!
//! The PodDisruptionBudget is switched off: it is `policy/v1`, which this suite's
//! Kubernetes 1.20 does not serve (`manager.rs` checks the budget there).

use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::Api;
use serde_json::{Value, json};

use crate::support::git::tempdir;
use crate::support::objects::{apply, repository, yaml_documents};
use crate::support::{OperatorOptions, Scenario, eventually};

/// `scripts/helm template ARGS`: the chart's objects.
fn rendered(args: &[&str]) -> Vec<Value> {
    let output = Command::new(repository().join("scripts/helm"))
        .arg("template")
        .args(args)
        .current_dir(repository())
        .output()
        .expect("run scripts/helm");
    assert!(
        output.status.success(),
        "scripts/helm template {args:?} failed (run `scripts/helm install` first): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dir = tempdir("chart");
    let file = dir.join("rendered.yaml");
    std::fs::write(&file, &output.stdout).expect("write the rendering");
    let objects = yaml_documents(&file);
    let _ = std::fs::remove_dir_all(&dir);
    objects
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn the_chart_installs_on_the_api_server_and_nbv_runs_under_it() {
    let s = Scenario::new("e2e-chart").await;
    let objects = rendered(&[
        "--namespace",
        "nbv-system",
        "--include-crds",
        "--set",
        "podDisruptionBudget.enabled=false",
    ]);
    let kinds: Vec<String> = objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    for expected in [
        "CustomResourceDefinition/notebookvalidationjobs.mlops.mlops.dev",
        "ClusterRole/nbv-operator",
        "ClusterRoleBinding/nbv-operator",
        "ServiceAccount/nbv-operator",
        "Deployment/nbv-operator",
        "Service/nbv-operator-metrics",
        "NetworkPolicy/nbv-operator",
        "ClusterRole/nbv-metrics-reader",
    ] {
        assert!(
            kinds.iter().any(|k| k == expected),
            "no {expected} in {kinds:?}"
        );
    }
    // Every object the chart renders is one the API server accepts.
    for object in &objects {
        apply(&s.client, object, None).await;
    }
    let roles: Api<ClusterRole> = Api::all(s.client.clone());
    let stored = roles
        .get("nbv-operator")
        .await
        .expect("the chart's ClusterRole");
    let chart_role = objects
        .iter()
        .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == "nbv-operator")
        .expect("rendered");
    assert_eq!(
        serde_json::to_value(&stored.rules).expect("rules"),
        chart_role["rules"],
        "the stored role is the chart's"
    );

    // nbv, as the chart's ServiceAccount, reports a run another controller ended.
    let _operator = s.operator(&OperatorOptions::gitops_only(&s.namespace));
    s.succeeds_elsewhere("train", json!({})).await;
    eventually(
        "the notification of train",
        Duration::from_secs(60),
        || async {
            let events = s.events("train", "ValidationSucceeded").await;
            (!events.is_empty()).then_some(())
        },
    )
    .await;
    s.report_requests("a run under the chart's installation");
}
