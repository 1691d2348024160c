//! The operator where Argo CD is not as expected: the AppProject API not served (a sync
//! waits without hammering the API server and says why), a job naming another team's
//! Application (it does not paint it).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use nbv_core::api::Phase;
use nbv_operator::operator::config::OperatorConfig;
use nbv_operator::operator::controller::{self, Runtime};
use nbv_operator::operator::metrics::Metrics;
use nbv_testkit::cluster::{FakeCluster, Fault, FaultMatch, Times, Verb};
use nbv_testkit::fixtures::{JobBuilder, application};
use serde_json::Value;

const ML: &str = "ml";

/// Runs the controller on `cluster` for `time` of virtual time.
async fn run_for(cluster: &FakeCluster, time: Duration) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let clock = cluster.clock();
    let runtime = Runtime {
        config: OperatorConfig {
            gitops_only: true,
            ..OperatorConfig::default()
        },
        metrics: Arc::new(Metrics::new()),
        clock: Arc::new(move || clock.now()),
        instance: "nbv-operator-0".to_owned(),
        io_layer: None,
        evictions: None,
    };
    let shutdown: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
        let _ = stopped.await;
    });
    let shutdown = shutdown.shared();
    let operator = tokio::spawn(controller::run(cluster.client(), runtime, shutdown));
    tokio::time::sleep(time).await;
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(60), operator).await;
}

#[tokio::test(start_paused = true)]
async fn a_sync_without_appprojects_backs_off_and_says_why_it_waits() {
    let cluster = FakeCluster::default();
    cluster.inject(Fault::new(
        FaultMatch::any().resource("appprojects"),
        Fault::status(404),
        Times::Always,
    ));
    cluster
        .apply_object(application("argocd", "serving", ML))
        .expect("the Application");
    let now = cluster.now();
    let job = JobBuilder::new(ML, "train")
        .on_success_trigger(
            "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}",
        )
        .phase(Phase::Succeeded)
        .started_at(now)
        .completed_at(now)
        .build();
    cluster.apply_object(job).expect("the job");

    run_for(&cluster, Duration::from_secs(120)).await;

    let lists = cluster
        .requests()
        .iter()
        .filter(|r| r.resource == "appprojects" && matches!(r.verb, Verb::List))
        .count();
    println!("AppProject LISTs in two minutes: {lists}");
    assert!(lists <= 12, "{lists} LISTs of AppProjects in two minutes");
    let job: Value = cluster
        .get("notebookvalidationjobs.mlops.mlops.dev", Some(ML), "train")
        .expect("a registered kind")
        .expect("the job");
    let conditions = job["status"]["conditions"].to_string();
    assert!(
        conditions.contains("the AppProject watch cache has not listed"),
        "{conditions}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_job_of_another_namespace_does_not_paint_an_application() {
    let cluster = FakeCluster::default();
    cluster
        .apply_object(application("argocd", "fraud", ML))
        .expect("the Application");
    let now = cluster.now();
    let ended = |namespace: &str, name: &str, phase: Phase| {
        JobBuilder::new(namespace, name)
            .part_of("fraud")
            .phase(phase)
            .started_at(now)
            .completed_at(now)
            .build()
    };
    cluster
        .apply_object(ended("team-b", "paint", Phase::Failed))
        .expect("the other team's job");

    run_for(&cluster, Duration::from_secs(180)).await;
    let fraud = || {
        cluster
            .get("applications.argoproj.io", Some("argocd"), "fraud")
            .expect("a registered kind")
            .expect("the Application")
    };
    assert!(
        fraud()["metadata"]["annotations"].is_null(),
        "nothing is written to an Application for a job it does not answer for: {}",
        fraud()["metadata"]
    );

    cluster
        .apply_object(ended(ML, "train", Phase::Succeeded))
        .expect("the Application's own job");
    run_for(&cluster, Duration::from_secs(180)).await;
    let annotations = &fraud()["metadata"]["annotations"];
    assert_eq!(
        annotations["mlops.dev/notebook-summary"], "1/1 succeeded (100% success rate)",
        "{annotations}"
    );
}
