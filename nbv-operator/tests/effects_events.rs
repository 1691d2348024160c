//! Notification and report Events against a scripted API server.

mod effects_support;

use chrono::{TimeZone, Utc};
use effects_support::{Exchange, job, run};
use nbv_core::events::{NotificationContext, notification};
use nbv_operator::operator::effects::{Delivery, EffectError, ExecutorConfig, ReportReason};
use serde_json::{Value, json};

const EVENTS: &str = "/api/v1/namespaces/ml/events";

fn config() -> ExecutorConfig {
    ExecutorConfig {
        reporting_instance: "nbv-operator-5f7c9-abcde".into(),
        ..ExecutorConfig::default()
    }
}

/// The Event nbv-core plans for the succeeded `ml/train`, and the body nbv posts.
fn succeeded() -> (nbv_core::events::NotificationEvent, Value) {
    let ctx = NotificationContext {
        application: Some("fraud".into()),
        sync_wave: Some(3),
        max_retries: 3,
    };
    let event = notification(&job("ml", "train"), &ctx).expect("terminal job");
    let body = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": event.name,
            "namespace": "ml",
            "labels": {
                "app.kubernetes.io/part-of": "fraud",
                "mlops.dev/notification-type": "validation-success"
            }
        },
        "involvedObject": {
            "apiVersion": "mlops.mlops.dev/v1alpha1",
            "kind": "NotebookValidationJob",
            "name": "train",
            "namespace": "ml",
            "uid": "uid-train"
        },
        "type": "Normal",
        "reason": "ValidationSucceeded",
        "action": "ValidateNotebook",
        "message": event.message,
        "firstTimestamp": "2026-01-24T22:30:00Z",
        "lastTimestamp": "2026-01-24T22:30:00Z",
        "eventTime": "2026-01-24T22:30:00.000000Z",
        "count": 1,
        "source": {"component": "nbv-operator"},
        "reportingComponent": "nbv-operator",
        "reportingInstance": "nbv-operator-5f7c9-abcde"
    });
    (event, body)
}

#[tokio::test]
async fn the_notification_is_created_with_the_seed_shape() {
    let (event, body) = succeeded();
    let script = vec![Exchange::post(EVENTS, body.clone()).reply(201, body)];
    let (delivery, seen) = run(config(), script, |executor| async move {
        executor
            .create_notification(&job("ml", "train"), &event)
            .await
    })
    .await;
    assert_eq!(delivery.expect("created"), Delivery::Created);
    insta::assert_json_snapshot!(seen, {"[0].body.message" => "[message]"});
}

#[tokio::test]
async fn an_existing_notification_counts_as_delivered() {
    let (event, body) = succeeded();
    let name = event.name.clone();
    let script = vec![Exchange::post(EVENTS, body).fail(
        409,
        "AlreadyExists",
        &format!("events \"{name}\" already exists"),
    )];
    let (delivery, _) = run(config(), script, |executor| async move {
        executor
            .create_notification(&job("ml", "train"), &event)
            .await
    })
    .await;
    assert_eq!(delivery.expect("exactly once"), Delivery::AlreadyExisted);
}

#[tokio::test]
async fn a_failing_notification_is_a_retryable_error() {
    let (event, body) = succeeded();
    let script = vec![Exchange::post(EVENTS, body).fail(503, "ServiceUnavailable", "try later")];
    let (delivery, _) = run(config(), script, |executor| async move {
        executor
            .create_notification(&job("ml", "train"), &event)
            .await
    })
    .await;
    let error = delivery.expect_err("503");
    assert!(matches!(error, EffectError::Transient { .. }));
    assert!(error.is_retryable());
}

#[tokio::test]
async fn reports_have_generated_names_and_the_type_of_their_reason() {
    let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    let cases = [
        (ReportReason::TriggerSucceeded, "Normal", "FireTrigger"),
        (ReportReason::TriggerFailed, "Warning", "FireTrigger"),
        (
            ReportReason::InvalidAnnotation,
            "Warning",
            "ReadAnnotations",
        ),
        (ReportReason::EffectAbandoned, "Warning", "RetryEffect"),
    ];
    for (reason, event_type, action) in cases {
        let message = format!("{} happened", reason.as_str());
        let body = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": "train.", "namespace": "ml"},
            "involvedObject": {
                "apiVersion": "mlops.mlops.dev/v1alpha1",
                "kind": "NotebookValidationJob",
                "name": "train",
                "namespace": "ml",
                "uid": "uid-train"
            },
            "type": event_type,
            "reason": reason.as_str(),
            "action": action,
            "message": message,
            "firstTimestamp": "2026-01-24T22:30:05Z",
            "lastTimestamp": "2026-01-24T22:30:05Z",
            "eventTime": "2026-01-24T22:30:05.000000Z",
            "count": 1,
            "source": {"component": "nbv-operator"},
            "reportingComponent": "nbv-operator",
            "reportingInstance": "nbv-operator-5f7c9-abcde"
        });
        let script = vec![Exchange::post(EVENTS, body).reply(201, json!({}))];
        let (reported, seen) = run(config(), script, |executor| async move {
            executor
                .report(&job("ml", "train"), reason, &message, now)
                .await
        })
        .await;
        reported.expect("reported");
        if reason == ReportReason::TriggerFailed {
            insta::assert_json_snapshot!("trigger_failed_report", seen);
        }
    }
}

#[tokio::test]
async fn report_messages_are_cut_to_the_event_limit() {
    let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    // 2-byte characters, so that the cut falls inside one if done by bytes.
    let long = "é".repeat(700);
    let (client, mut server) = effects_support::client();
    let api = tokio::spawn(async move {
        let (request, reply) = server.next_request().await.expect("one request");
        let body = http_body_util::BodyExt::collect(request.into_body())
            .await
            .expect("body")
            .to_bytes();
        let event: Value = serde_json::from_slice(&body).expect("JSON");
        reply.send_response(
            http::Response::builder()
                .status(201)
                .body(kube::client::Body::from(b"{}".to_vec()))
                .expect("response"),
        );
        event["message"].as_str().expect("message").to_owned()
    });
    let executor = nbv_operator::operator::effects::Executor::new(client, config());
    executor
        .report(&job("ml", "train"), ReportReason::TriggerFailed, &long, now)
        .await
        .expect("reported");
    drop(executor);
    let sent = api.await.expect("server");
    assert_eq!(sent.len(), 1024);
    assert!(long.starts_with(&sent));
}
