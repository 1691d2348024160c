//! Exactly once across what happens to real operators: a SIGKILL between two effects,
//! a restart of the API server and of etcd in the middle of a run.

use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use nbv_core::api::{NotebookValidationJob, Phase};
use serde_json::{Value, json};

use crate::gitops::{deployment, inference_service};
use crate::notebooks::repository;
use crate::support::git::GitServer;
use crate::support::kubelet::Kubelet;
use crate::support::{
    Cluster, OperatorOptions, Scenario, annotation, ended, eventually, job, rfc3339,
};

const WAIT: Duration = Duration::from_secs(90);

pub(crate) async fn deployment_json(s: &Scenario, name: &str) -> Value {
    let api: Api<Deployment> = Api::namespaced(s.client.clone(), &s.namespace);
    serde_json::to_value(api.get(name).await.expect("the Deployment")).expect("json")
}

fn restarted_at(deployment: &Value) -> Option<&str> {
    deployment
        .pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")?
        .as_str()
}

/// `generation` counts the changes of a Deployment's spec: 1 when created, 2 after one
/// rolling restart, whatever nbv sent beyond that without changing anything.
pub(crate) fn generation(deployment: &Value) -> i64 {
    deployment["metadata"]["generation"]
        .as_i64()
        .unwrap_or_default()
}

/// Whether the job's ledger records its `triggers` triggers and its notification. (The
/// wave patch is recorded only when nbv wrote it: one already in place is no effect.)
pub(crate) fn settled(job: &NotebookValidationJob, triggers: usize) -> bool {
    let Some(done) = job
        .status
        .as_ref()
        .and_then(|s| s.effects.as_ref())
        .map(|l| &l.done)
    else {
        return false;
    };
    done.contains("notify") && done.iter().filter(|k| k.starts_with("trigger/")).count() == triggers
}

fn triggers(deployments: &[&str], isvc: &str) -> String {
    let mut text: String = deployments
        .iter()
        .map(|d| {
            format!("- {{apiVersion: apps/v1, kind: Deployment, name: {d}, action: restart}}\n")
        })
        .collect();
    text.push_str(&format!(
        "- {{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: {isvc}, action: restart}}\n"
    ));
    text
}

/// Kills the operator the moment `first` is restarted (its first trigger), then starts
/// another and checks every effect happened once.
async fn kill_after_first_restart(s: &Scenario, round: &str) {
    let (first, second, isvc) = (
        format!("{round}-a"),
        format!("{round}-b"),
        format!("{round}-model"),
    );
    s.apply(deployment(&first)).await;
    s.apply(deployment(&second)).await;
    inference_service(s, &isvc).await;
    let name = format!("{round}-train");
    s.apply(crate::support::job(
        &name,
        "https://git.example.com/m.git",
        "main",
        "t.ipynb",
        json!({
            "argocd.argoproj.io/sync-wave": "2",
            "mlops.dev/on-success-trigger": triggers(&[&first, &second], &isvc),
        }),
    ))
    .await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    s.set_job_status(
        &name,
        json!({"phase": "ValidationRunning", "observedGeneration": 1,
                                   "startTime": rfc3339(Utc::now())}),
    )
    .await;
    let mut operator = s.operator(&OperatorOptions::gitops_only(&s.namespace));
    operator.metrics().await; // up and serving
    s.set_job_status(&name, ended("Succeeded", "ok")).await;

    // As soon as the first target is restarted, kill the operator.
    loop {
        if restarted_at(&deployment_json(s, &first).await).is_some() {
            operator.kill();
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(
            operator.is_running(),
            "the operator exited:\n{}",
            operator.log_tail()
        );
    }
    let at_kill = s.job(&name).await;
    let recorded = at_kill
        .status
        .as_ref()
        .and_then(|s| s.effects.as_ref())
        .map(|l| l.done.len())
        .unwrap_or(0);
    eprintln!(
        "{round}: killed with {recorded} effect(s) recorded (of the wave patch, 3 triggers, the notification)"
    );

    let _successor = s.operator(&OperatorOptions::gitops_only(&s.namespace));
    eventually("every effect recorded by the successor", WAIT, || async {
        settled(&s.job(&name).await, 3).then_some(())
    })
    .await;
    for target in [&first, &second] {
        let d = deployment_json(s, target).await;
        assert_eq!(generation(&d), 2, "{target} restarted exactly once: {d}");
    }
    let job = s.job(&name).await;
    assert_eq!(
        annotation(&job.metadata, "mlops.dev/wave-complete"),
        Some("2")
    );
    assert_eq!(
        s.events(&name, "ValidationSucceeded").await.len(),
        1,
        "one notification"
    );
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn exactly_once_across_a_sigkill_between_two_effects() {
    let s = Scenario::new("e2e-sigkill").await;
    for round in ["r1", "r2", "r3"] {
        kill_after_first_restart(&s, round).await;
    }
    if let Some(requests) = s.report_requests("three SIGKILLs between effects") {
        // Two predictor pods per round, each evicted once.
        assert_eq!(requests.count("create", "pods/eviction"), 6, "{requests}");
    }
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_run_survives_restarts_of_the_api_server_and_etcd() {
    Cluster::from_env().require_own_control_plane("restarting etcd and the API server");
    let s = Scenario::new("e2e-restarts").await;
    let git = GitServer::start();
    let url = repository(&git, "models");
    let slow = git.repository(
        "slow",
        &[(
            "train.ipynb",
            serde_json::to_string(&crate::support::git::notebook(&[
                "import time\ntime.sleep(8)",
                "import time\ntime.sleep(8)",
                "print('trained')",
            ]))
            .expect("json"),
        )],
    );
    let _ = url;
    let _kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    s.apply(deployment("server")).await;
    let mut operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    s.apply(job("train", &slow, "main", "train.ipynb", json!({
        "argocd.argoproj.io/sync-wave": "1",
        "mlops.dev/on-success-trigger": "- {apiVersion: apps/v1, kind: Deployment, name: server, action: restart}",
    })))
    .await;
    eventually("the run to start", WAIT, || async {
        let job = s.job("train").await;
        (job.status?.phase? == Phase::ValidationRunning).then_some(())
    })
    .await;

    let before = s.report_requests("a run, before the restarts");
    let audit = s.cluster.required_audit();
    let restarting = audit.mark();
    s.cluster.restart("apiserver");
    s.cluster.restart("etcd");

    let job = eventually("the run to end", Duration::from_secs(180), || async {
        let job = s.jobs().get("train").await.ok()?;
        matches!(
            job.status.as_ref()?.phase?,
            Phase::Succeeded | Phase::Failed
        )
        .then_some(job)
    })
    .await;
    assert_eq!(
        job.status.as_ref().unwrap().phase,
        Some(Phase::Succeeded),
        "{:?}",
        job.status
    );
    eventually("every effect recorded", WAIT, || async {
        settled(&s.job("train").await, 1).then_some(())
    })
    .await;
    assert_eq!(
        generation(&deployment_json(&s, "server").await),
        2,
        "restarted exactly once"
    );
    assert_eq!(s.events("train", "ValidationSucceeded").await.len(), 1);
    assert!(
        operator.is_running(),
        "nbv rode out both restarts:\n{}",
        operator.log_tail()
    );
    drop(before);
    let after = audit.since(restarting);
    eprintln!("requests of nbv, after the restarts: {after}");
    // A restarted API server answers 403 until its authorizer has loaded the roles
    // again; each such request must have succeeded when retried.
    after.assert_forbidden_only_while_starting();
    s.clean_up().await;
}
