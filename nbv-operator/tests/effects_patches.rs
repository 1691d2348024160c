//! Metadata patches (wave annotations, Application status, `refresh` of a plain object)
//! and how API errors are classified, against a scripted API server.

mod effects_support;

use effects_support::{Exchange, completed_at, job, run, trigger};
use nbv_operator::effects::{EffectError, ExecutorConfig, TriggerOutcome};
use serde_json::json;

const JOB: &str = "/apis/mlops.mlops.dev/v1alpha1/namespaces/ml/notebookvalidationjobs/train";
const APP: &str = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/fraud";

fn wave_patch() -> serde_json::Value {
    json!({"metadata": {"annotations": {
        "mlops.dev/wave-complete": "3",
        "mlops.dev/wave-failed": null,
        "mlops.dev/completion-time": "2026-01-24T22:30:00Z"
    }}})
}

#[tokio::test]
async fn wave_annotations_are_a_merge_patch_of_the_job() {
    let script = vec![Exchange::merge_patch(JOB, wave_patch()).reply(200, json!({}))];
    let (result, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .patch_job_metadata("ml", "train", &wave_patch())
            .await
    })
    .await;
    result.expect("patched");
    insta::assert_json_snapshot!(seen);
}

#[tokio::test]
async fn patches_beyond_their_fields_are_refused_before_any_request() {
    let job_patches = [
        json!({"spec": {"timeout": "1h"}}),
        json!({"metadata": {"annotations": {}}, "status": {"phase": "Succeeded"}}),
        json!({"metadata": {"finalizers": ["x"]}}),
        json!({"metadata": {"annotations": {"a": 1}}}),
        json!(["not", "an", "object"]),
    ];
    let app_patches = [
        json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "5"}}}),
        json!({"metadata": {"labels": {"x": "y"}}}),
        json!({"spec": {"syncPolicy": null}}),
    ];
    let (messages, _) = run(ExecutorConfig::default(), vec![], |executor| async move {
        let mut messages = Vec::new();
        for patch in &job_patches {
            let error = executor
                .patch_job_metadata("ml", "train", patch)
                .await
                .expect_err("refused");
            assert!(!error.is_retryable());
            messages.push(error.to_string());
        }
        for patch in &app_patches {
            let error = executor
                .publish_application_status("argocd", "fraud", patch)
                .await
                .expect_err("refused");
            assert!(matches!(error, EffectError::Invalid { .. }));
            messages.push(error.to_string());
        }
        messages
    })
    .await;
    insta::assert_snapshot!(messages.join("\n"));
}

#[tokio::test]
async fn application_status_patches_only_its_two_annotations() {
    let patch = json!({"metadata": {"annotations": {
        "mlops.dev/notebook-status": "{\"total\":2,\"succeeded\":1,\"failed\":1,\"running\":0,\"lastUpdate\":\"2026-01-24T22:30:00Z\",\"failedJobs\":[\"ml/eval\"]}",
        "mlops.dev/notebook-summary": "1/2 succeeded (50% success rate)"
    }}});
    let script = vec![Exchange::merge_patch(APP, patch.clone()).reply(200, json!({}))];
    let (result, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .publish_application_status("argocd", "fraud", &patch)
            .await
    })
    .await;
    result.expect("published");
    insta::assert_json_snapshot!(seen);
}

#[tokio::test]
async fn a_missing_application_is_reported_as_not_found() {
    let patch = json!({"metadata": {"annotations": {"mlops.dev/notebook-summary": "0/1"}}});
    let script = vec![Exchange::merge_patch(APP, patch.clone()).fail(
        404,
        "NotFound",
        "applications.argoproj.io \"fraud\" not found",
    )];
    let (result, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .publish_application_status("argocd", "fraud", &patch)
            .await
    })
    .await;
    assert_eq!(
        result.expect_err("404").to_string(),
        "Application argocd/fraud not found"
    );
}

#[tokio::test]
async fn refresh_of_a_config_map_sets_the_restart_timestamp() {
    let refresh = trigger(
        "{apiVersion: v1, kind: ConfigMap, name: model-config, action: refresh}",
        "ml",
    );
    let script = vec![
        Exchange::merge_patch(
            "/api/v1/namespaces/ml/configmaps/model-config",
            json!({"metadata": {"annotations": {
                "mlops.dev/restart-timestamp": "2026-01-24T22:30:00Z"
            }}}),
        )
        .reply(200, json!({})),
    ];
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &refresh, completed_at())
            .await
    })
    .await;
    assert_eq!(
        outcome.expect("refreshed"),
        TriggerOutcome::Done {
            summary: "ConfigMap ml/model-config refreshed (mlops.dev/restart-timestamp: \
                      2026-01-24T22:30:00Z)"
                .into()
        }
    );
    insta::assert_json_snapshot!(seen);
}

/// How each kind of API answer is classified, with the same request each time.
#[tokio::test]
async fn api_errors_are_classified() {
    let cases = [
        (500, "InternalError", "etcd timeout", true, "Transient"),
        (
            503,
            "ServiceUnavailable",
            "apiserver is shutting down",
            true,
            "Transient",
        ),
        (429, "TooManyRequests", "rate limited", true, "Transient"),
        (
            409,
            "Conflict",
            "the object has been modified",
            true,
            "Conflict",
        ),
        (404, "NotFound", "not found", true, "NotFound"),
        (403, "Forbidden", "cannot patch resource", false, "Invalid"),
        (
            422,
            "Invalid",
            "metadata.annotations: Too long",
            false,
            "Invalid",
        ),
        (400, "BadRequest", "bad patch", false, "Invalid"),
    ];
    let mut messages = Vec::new();
    for (code, reason, message, retryable, class) in cases {
        let script = vec![Exchange::merge_patch(JOB, wave_patch()).fail(code, reason, message)];
        let (result, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .patch_job_metadata("ml", "train", &wave_patch())
                .await
        })
        .await;
        let error = result.expect_err("an error answer");
        let actual = match &error {
            EffectError::Refused(_) => "Refused",
            EffectError::NotFound { .. } => "NotFound",
            EffectError::Conflict { .. } => "Conflict",
            EffectError::Transient { .. } => "Transient",
            EffectError::Invalid { .. } => "Invalid",
        };
        assert_eq!(actual, class, "HTTP {code}");
        assert_eq!(error.is_retryable(), retryable, "HTTP {code}");
        messages.push(format!("{code}: {error}"));
    }
    insta::assert_snapshot!(messages.join("\n"));
}

#[tokio::test]
async fn an_error_body_that_is_not_json_is_still_classified_by_its_code() {
    let (client, mut server) = effects_support::client();
    let api = tokio::spawn(async move {
        let (_, reply) = server.next_request().await.expect("one request");
        reply.send_response(
            http::Response::builder()
                .status(502)
                .body(kube::client::Body::from(
                    b"<html>Bad Gateway</html>".to_vec(),
                ))
                .expect("response"),
        );
    });
    let executor = nbv_operator::effects::Executor::new(client, ExecutorConfig::default());
    let error = executor
        .patch_job_metadata("ml", "train", &wave_patch())
        .await
        .expect_err("502");
    drop(executor);
    api.await.expect("server");
    assert!(error.is_retryable(), "{error}");
}
