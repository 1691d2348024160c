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

/// `Kind/name` of each object.
fn kinds(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect()
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
    let kinds = kinds(&objects);
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

/// The Argo CD Application of the chart that `docs/install.md` shows, as written there.
fn documented_application() -> Value {
    let text = std::fs::read_to_string(repository().join("docs/install.md")).expect("install.md");
    let block = text
        .split("```yaml\n")
        .skip(1)
        .filter_map(|rest| rest.split_once("```").map(|(block, _)| block))
        .find(|block| block.contains("kind: Application") && block.contains("path: charts/nbv"))
        .expect("an Application of charts/nbv in docs/install.md");
    serde_yaml_ng::from_str(block).expect("the documented Application is YAML")
}

/// The documented Application of the chart: Argo CD's own CRD accepts it, and what
/// Argo CD renders for it (`helm template` with the Application's name as the release,
/// its destination namespace and its `valuesObject`, CRDs included) is accepted by the
/// API server object by object.
#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn the_documented_argo_cd_application_of_the_chart_renders_and_applies() {
    let s = Scenario::new("e2e-chart-app").await;
    let application = documented_application();
    // The API server checks it against Argo CD's Application CRD.
    let mut stored = application.clone();
    stored["metadata"]["namespace"] = json!(s.namespace);
    apply(&s.client, &stored, None).await;

    let source = &application["spec"]["source"];
    assert_eq!(source["path"], "charts/nbv");
    let release = application["metadata"]["name"].as_str().expect("a name");
    let namespace = application["spec"]["destination"]["namespace"]
        .as_str()
        .expect("a destination namespace");
    let dir = tempdir("chart-app");
    let values = dir.join("values.yaml");
    std::fs::write(
        &values,
        serde_yaml_ng::to_string(&source["helm"]["valuesObject"]).expect("values as YAML"),
    )
    .expect("write the values");
    let objects = rendered(&[
        "--name",
        release,
        "--namespace",
        namespace,
        "--include-crds",
        "--values",
        values.to_str().expect("a UTF-8 path"),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let kinds = kinds(&objects);
    // The values it sets took effect: monitoring on.
    assert!(
        kinds.iter().any(|k| k.starts_with("ServiceMonitor/")),
        "{kinds:?}"
    );
    for object in &objects {
        // policy/v1 is not served by this suite's Kubernetes 1.20 (manager.rs checks
        // the budget as v1beta1); Argo CD would apply it on the 1.21+ the chart needs.
        if object["kind"] == "PodDisruptionBudget" {
            assert_eq!(object["apiVersion"], "policy/v1");
            continue;
        }
        apply(&s.client, object, Some(namespace)).await;
    }
}
