//! Argo CD's resource action `rerun` on a real API server: the action's Lua run on the
//! live job as argocd-server runs it, its merge patch sent to the API server, and nbv
//! answering with exactly one new run, whose success fires the job's triggers once
//! more.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
};
use nbv_core::api::Phase;
use nbv_operator::cli::commands::action::{Scripts, Write, writes};
use serde_json::json;

use crate::notebooks::repository;
use crate::support::git::GitServer;
use crate::support::kubelet::Kubelet;
use crate::support::{OperatorOptions, RUN, Scenario, annotation, eventually, job, phase};

const REFRESHED: &str = "mlops.dev/restart-timestamp";

/// The refresh time the trigger wrote on the InferenceService `predictor`.
async fn refreshed(s: &Scenario) -> Option<String> {
    let gvk = GroupVersionKind::gvk("serving.kserve.io", "v1beta1", "InferenceService");
    let services: Api<DynamicObject> =
        Api::namespaced_with(s.client.clone(), &s.namespace, &ApiResource::from_gvk(&gvk));
    let predictor = services
        .get("predictor")
        .await
        .expect("get the InferenceService");
    annotation(&predictor.metadata, REFRESHED).map(str::to_owned)
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn run_again_from_argo_cd_runs_the_job_once_more() {
    let s = Scenario::new("e2e-rerun").await;
    let git = GitServer::start();
    let url = repository(&git, "models");
    let _kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    // The model server the run refreshes (nbv's role may patch InferenceServices).
    s.apply(
        json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                   "metadata": {"name": "predictor"},
                   "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}}),
    )
    .await;
    let trigger = "- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: predictor, action: refresh}";
    s.apply(job(
        "train",
        &url,
        "main",
        "passes.ipynb",
        json!({"mlops.dev/on-success-trigger": trigger}),
    ))
    .await;

    let first = s.ended("train", RUN).await;
    assert_eq!(phase(&first), Some(Phase::Succeeded), "{:?}", first.status);
    let first_status = first.status.clone().unwrap_or_default();
    assert_eq!(
        first_status.validation_pod_name.as_deref(),
        Some("train-g1-r0")
    );
    let first_refresh = eventually("the first run's refresh", RUN, || async {
        refreshed(&s).await
    })
    .await;

    // What argocd-server does when a user clicks "Run again": discovery, the action
    // on the live object, and the merge patch of the difference.
    let live = serde_json::to_value(s.job("train").await).expect("the job as JSON");
    let made = writes("rerun", &live, &Scripts::nbv(), &BTreeMap::new())
        .expect("rerun is offered for an ended run and runs");
    let [Write::Patch(patch)] = made.as_slice() else {
        panic!("one patch of the job, got {made:?}")
    };
    assert_eq!(
        patch,
        &json!({"metadata": {"annotations": {"mlops.dev/rerun": "1"}}})
    );
    s.jobs()
        .patch("train", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("argocd-server's patch");

    let second = eventually("the rerun to end", RUN, || async {
        let job = s.job("train").await;
        let status = job.status.clone().unwrap_or_default();
        let rerun = status.rerun.as_ref().map(|r| r.count) == Some(1);
        (rerun && phase(&job).is_some_and(Phase::is_terminal)).then_some(job)
    })
    .await;
    let status = second.status.clone().unwrap_or_default();
    assert_eq!(phase(&second), Some(Phase::Succeeded), "{status:?}");
    assert_eq!(
        status.validation_pod_name.as_deref(),
        Some("train-g1-rerun1-r0")
    );
    assert_eq!(status.rerun.as_ref().map(|r| r.request.as_str()), Some("1"));
    assert_eq!(
        (second.metadata.generation, status.observed_generation),
        (Some(1), Some(1))
    );
    assert!(
        status.start_time > first_status.start_time,
        "a new run: {status:?}"
    );

    // The rerun's success fired the trigger again.
    let second_refresh = eventually("the rerun's refresh", RUN, || async {
        refreshed(&s).await.filter(|at| *at != first_refresh)
    })
    .await;

    // The same request, read again by every later reconcile, starts nothing: a label
    // change makes nbv look at the job again.
    s.jobs()
        .patch(
            "train",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"looked-at": "again"}}})),
        )
        .await
        .expect("relabel");
    tokio::time::sleep(Duration::from_secs(10)).await;
    let later = s.job("train").await;
    assert_eq!(
        later.status, second.status,
        "the answered request started another run"
    );
    assert_eq!(refreshed(&s).await, Some(second_refresh));
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let names: Vec<_> = pods
        .list(&ListParams::default().labels("mlops.dev/job=train"))
        .await
        .expect("list Pods")
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n == "train-g1-r0" || n == "train-g1-rerun1-r0"),
        "{names:?}"
    );
    s.clean_up().await;
}
