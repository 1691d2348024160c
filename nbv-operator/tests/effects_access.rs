//! The confused-deputy rule in the executor: what is read to decide, and that a
//! refused trigger writes nothing.

mod effects_support;

use effects_support::{Exchange, completed_at, job, rolling_restart_patch, run, trigger, workload};
use nbv_core::triggers::TriggerAccess;
use nbv_operator::operator::effects::{EffectError, ExecutorConfig, TriggerOutcome};
use serde_json::json;

const SERVING_NS: &str = "/api/v1/namespaces/serving";
const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/serving/deployments/web";
const APP: &str = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/prod";

fn restart_in_serving() -> nbv_core::triggers::Trigger {
    trigger(
        "{apiVersion: apps/v1, kind: Deployment, name: web, namespace: serving, action: restart}",
        "ml",
    )
}

/// The read of the Deployment before its rolling restart.
fn read_deployment(path: &str, namespace: &str) -> Exchange {
    Exchange::get(path).reply(200, workload("Deployment", namespace, "web", None))
}

fn namespace(name: &str, accepts: Option<&str>) -> serde_json::Value {
    let annotations = match accepts {
        Some(value) => json!({"mlops.dev/accept-triggers-from": value}),
        None => json!({}),
    };
    json!({"apiVersion": "v1", "kind": "Namespace",
           "metadata": {"name": name, "annotations": annotations}})
}

#[tokio::test]
async fn a_refused_cross_namespace_trigger_reads_the_namespace_and_writes_nothing() {
    // The server expects exactly one read; any write would fail the test.
    let script = vec![Exchange::get(SERVING_NS).reply(200, namespace("serving", Some("research")))];
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart_in_serving(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("refused");
    assert!(matches!(error, EffectError::Refused(_)));
    assert!(!error.is_retryable());
    assert_eq!(seen.len(), 1);
    insta::assert_snapshot!(error.to_string());
}

#[tokio::test]
async fn a_missing_namespace_is_a_refusal_not_a_hint() {
    let script =
        vec![Exchange::get(SERVING_NS).fail(404, "NotFound", "namespaces \"serving\" not found")];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart_in_serving(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Err(EffectError::Refused(_))),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn the_namespace_opt_in_allows_the_trigger() {
    let script = vec![
        Exchange::get(SERVING_NS).reply(200, namespace("serving", Some("research, ml"))),
        read_deployment(DEPLOYMENT, "serving"),
        Exchange::merge_patch(DEPLOYMENT, rolling_restart_patch()).reply(200, json!({})),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart_in_serving(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn the_operator_flag_allows_the_trigger_without_reading_the_namespace() {
    let config = ExecutorConfig {
        trigger_access: TriggerAccess::from_list("serving"),
        ..ExecutorConfig::default()
    };
    let script = vec![
        read_deployment(DEPLOYMENT, "serving"),
        Exchange::merge_patch(DEPLOYMENT, rolling_restart_patch()).reply(200, json!({})),
    ];
    let (outcome, _) = run(config, script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart_in_serving(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_trigger_in_the_jobs_namespace_reads_no_namespace() {
    let local = trigger(
        "{apiVersion: apps/v1, kind: Deployment, name: web, action: restart}",
        "ml",
    );
    let script = vec![
        read_deployment("/apis/apps/v1/namespaces/ml/deployments/web", "ml"),
        Exchange::merge_patch(
            "/apis/apps/v1/namespaces/ml/deployments/web",
            rolling_restart_patch(),
        )
        .reply(200, json!({})),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &local, completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn syncing_an_application_that_deploys_elsewhere_is_refused_without_writing() {
    let sync = trigger(
        "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: prod, namespace: argocd, action: sync}",
        "ml",
    );
    let script = vec![
        Exchange::get(APP).reply(
            200,
            json!({"metadata": {"name": "prod", "namespace": "argocd", "resourceVersion": "9"},
                   "spec": {"destination": {"namespace": "production"}}}),
        ),
        Exchange::get("/api/v1/namespaces/argocd").reply(200, namespace("argocd", None)),
    ];
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync, completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("refused");
    assert!(seen.iter().all(|s| s.request.starts_with("GET ")));
    insta::assert_snapshot!(error.to_string());
}

#[tokio::test]
async fn a_missing_application_the_job_may_not_touch_is_refused_not_reported_missing() {
    let sync = trigger(
        "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: prod, namespace: argocd, action: sync}",
        "ml",
    );
    let script = vec![
        Exchange::get(APP).fail(
            404,
            "NotFound",
            "applications.argoproj.io \"prod\" not found",
        ),
        Exchange::get("/api/v1/namespaces/argocd").reply(200, namespace("argocd", None)),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync, completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Err(EffectError::Refused(_))),
        "{outcome:?}"
    );

    // Allowed by the flag, the same Application is reported missing.
    let config = ExecutorConfig {
        trigger_access: TriggerAccess::from_list("argocd"),
        ..ExecutorConfig::default()
    };
    let script = vec![Exchange::get(APP).fail(
        404,
        "NotFound",
        "applications.argoproj.io \"prod\" not found",
    )];
    let sync = trigger(
        "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: prod, namespace: argocd, action: sync}",
        "ml",
    );
    let (outcome, _) = run(config, script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync, completed_at())
            .await
    })
    .await;
    assert_eq!(
        outcome.expect_err("missing").to_string(),
        "Application argocd/prod not found"
    );
}

#[tokio::test]
async fn a_job_without_a_namespace_is_invalid_and_nothing_is_requested() {
    let mut nameless = job("ml", "train");
    nameless.metadata.namespace = None;
    let (outcome, _) = run(ExecutorConfig::default(), vec![], |executor| async move {
        executor
            .fire_trigger(&nameless, &restart_in_serving(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Err(EffectError::Invalid { .. })),
        "{outcome:?}"
    );
}
