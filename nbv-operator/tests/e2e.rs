//! End-to-end tests against a real cluster (kind with Argo CD's and KServe's CRDs).
//!
//! Skipped unless `NBV_E2E=1` and a kubeconfig are present; see `docs/testing.md`.
//! They run the operator in-process (`controller::run`, `--gitops-only`) against the
//! cluster, play "another controller" by writing the job's status, and check what nbv
//! does: wave annotations, the notification Event, the InferenceService's pods deleted
//! once, and the Application's notebook status.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event, Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use nbv_core::api::NotebookValidationJob;
use nbv_operator::clock::SystemClock;
use nbv_operator::config::OperatorConfig;
use nbv_operator::controller::{Runtime, run};
use nbv_operator::metrics::Metrics;
use serde_json::json;

fn enabled() -> bool {
    std::env::var("NBV_E2E").as_deref() == Ok("1")
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..120 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn a_succeeded_run_writes_waves_notifies_and_restarts_once() {
    if !enabled() {
        eprintln!("skipped: set NBV_E2E=1 with a kubeconfig to run the end-to-end suite");
        return;
    }
    let client = kube::Client::try_default()
        .await
        .expect("a kubeconfig (NBV_E2E=1)");
    let ns = format!("nbv-e2e-{}", std::process::id());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .expect("create the test namespace");

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = futures::FutureExt::shared(Box::pin(async move {
        let _ = stop_rx.await;
    })
        as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + Sync>>);
    let config = OperatorConfig {
        gitops_only: true,
        watch_namespace: Some(ns.clone()),
        ..OperatorConfig::default()
    };
    let runtime = Runtime {
        config,
        metrics: Arc::new(Metrics::new()),
        clock: Arc::new(SystemClock),
        instance: "nbv-e2e".to_owned(),
    };
    let operator = tokio::spawn(run(client.clone(), runtime, shutdown));

    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    for i in 1..=2 {
        let pod = json!({
            "metadata": {"name": format!("predictor-{i}"),
                         "labels": {"serving.kserve.io/inferenceservice": "model"}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}
        });
        pods.create(
            &PostParams::default(),
            &serde_json::from_value(pod).unwrap(),
        )
        .await
        .unwrap();
    }
    let isvcs: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        &ns,
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk("serving.kserve.io", "v1beta1", "InferenceService"),
            "inferenceservices",
        ),
    );
    let isvc = json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
        "metadata": {"name": "model"}, "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}});
    isvcs
        .create(
            &PostParams::default(),
            &serde_json::from_value(isvc).unwrap(),
        )
        .await
        .expect("KServe's InferenceService CRD must be installed");

    let jobs: Api<NotebookValidationJob> = Api::namespaced(client.clone(), &ns);
    let job = json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "annotations": {
            "argocd.argoproj.io/sync-wave": "3", "mlops.dev/block-wave": "4",
            "mlops.dev/on-success-trigger":
                "- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: model, action: restart}"}},
        "spec": {"notebook": {"git": {"url": "https://github.com/example/models", "ref": "main"},
                 "path": "train.ipynb"}, "podConfig": {"containerImage": "quay.io/jupyter/minimal-notebook:latest"}}
    });
    jobs.create(
        &PostParams::default(),
        &serde_json::from_value(job).unwrap(),
    )
    .await
    .expect("nbv's CRD installed");
    let now = chrono::Utc::now();
    let status = json!({"status": {"phase": "Succeeded", "observedGeneration": 1,
        "startTime": (now - chrono::Duration::seconds(30)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "completionTime": now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)}});
    jobs.patch_status("train", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();

    eventually("the wave annotations", || async {
        let job = jobs.get("train").await.unwrap();
        job.metadata
            .annotations
            .unwrap_or_default()
            .get("mlops.dev/wave-complete")
            .map(String::as_str)
            == Some("3")
    })
    .await;
    eventually("the predictor pods to be deleted", || async {
        pods.list(&ListParams::default().labels("serving.kserve.io/inferenceservice=model"))
            .await
            .unwrap()
            .items
            .iter()
            .all(|p| p.metadata.deletion_timestamp.is_some())
    })
    .await;
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    eventually("one ValidationSucceeded Event", || async {
        let list = events
            .list(&ListParams::default().labels("mlops.dev/notification-type=validation-success"))
            .await
            .unwrap();
        list.items.len() == 1
    })
    .await;

    let _ = stop_tx.send(());
    let _ = operator.await;
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
}
