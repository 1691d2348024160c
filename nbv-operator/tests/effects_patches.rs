//! Metadata patches (wave annotations, Application status, `refresh` of a plain object)
//! and how API errors are classified, against a scripted API server.

mod effects_support;

use effects_support::{Exchange, READ_VERSION, annotated, completed_at, job, run, trigger};
use nbv_core::actions::Already;
use nbv_operator::operator::effects::{EffectError, ExecutorConfig, TriggerOutcome};
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

const CONFIG_MAP: &str = "/api/v1/namespaces/ml/configmaps/model-config";

fn refresh_config_map() -> nbv_core::triggers::Trigger {
    trigger(
        "{apiVersion: v1, kind: ConfigMap, name: model-config, action: refresh}",
        "ml",
    )
}

/// The ConfigMap, annotated with `timestamp` when given.
fn config_map(timestamp: Option<&str>) -> serde_json::Value {
    annotated("v1", "ConfigMap", "ml", "model-config", timestamp)
}

/// The refresh patch of the run, conditional on the version read.
fn refresh_patch() -> serde_json::Value {
    json!({"metadata": {
        "resourceVersion": READ_VERSION,
        "annotations": {"mlops.dev/restart-timestamp": "2026-01-24T22:30:00Z"}
    }})
}

#[tokio::test]
async fn refresh_of_a_config_map_sets_the_restart_timestamp() {
    let script = vec![
        Exchange::get(CONFIG_MAP).reply(200, config_map(None)),
        Exchange::merge_patch(CONFIG_MAP, refresh_patch()).reply(200, json!({})),
    ];
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &refresh_config_map(), completed_at())
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

#[tokio::test]
async fn refresh_writes_nothing_over_a_timestamp_not_older_than_the_run() {
    // Newer, newer with an offset, the run's own time, the same instant with an offset.
    for existing in [
        "2026-01-24T22:31:00Z",
        "2026-01-24T23:31:00+01:00",
        "2026-01-24T22:30:00Z",
        "2026-01-24T23:30:00+01:00",
    ] {
        let script = vec![Exchange::get(CONFIG_MAP).reply(200, config_map(Some(existing)))];
        let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &refresh_config_map(), completed_at())
                .await
        })
        .await;
        assert_eq!(seen.len(), 1, "only the read, for {existing}");
        assert_eq!(
            outcome.expect("nothing to do"),
            TriggerOutcome::AlreadyDone {
                reason: Already::Refreshed {
                    at: existing.to_string()
                },
                summary: format!(
                    "ConfigMap ml/model-config already refreshed at {existing} \
                     (not older than this run)"
                )
            }
        );
    }
}

#[tokio::test]
async fn refresh_overwrites_an_older_or_foreign_timestamp_conditionally() {
    for existing in ["2026-01-24T22:29:59Z", "yesterday", ""] {
        let script = vec![
            Exchange::get(CONFIG_MAP).reply(200, config_map(Some(existing))),
            Exchange::merge_patch(CONFIG_MAP, refresh_patch()).reply(200, json!({})),
        ];
        let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &refresh_config_map(), completed_at())
                .await
        })
        .await;
        assert!(
            matches!(outcome, Ok(TriggerOutcome::Done { .. })),
            "{existing:?}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_refresh_written_meanwhile_makes_the_patch_conflict_and_retry() {
    let script = vec![
        Exchange::get(CONFIG_MAP).reply(200, config_map(Some("2026-01-24T22:00:00Z"))),
        Exchange::merge_patch(CONFIG_MAP, refresh_patch()).fail(
            409,
            "Conflict",
            "Operation cannot be fulfilled on configmaps \"model-config\": the object has \
             been modified; please apply your changes to the latest version and try again",
        ),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &refresh_config_map(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("conflict");
    assert!(matches!(error, EffectError::Conflict { .. }), "{error:?}");
    assert!(error.is_retryable());
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
            EffectError::CacheNotReady { .. } => "CacheNotReady",
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
    let executor =
        nbv_operator::operator::effects::Executor::new(client, ExecutorConfig::default());
    let error = executor
        .patch_job_metadata("ml", "train", &wave_patch())
        .await
        .expect_err("502");
    drop(executor);
    api.await.expect("server");
    assert!(error.is_retryable(), "{error}");
}
