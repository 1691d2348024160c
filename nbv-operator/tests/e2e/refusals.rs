//! Bad input gets a clear answer and everything else still happens: a trigger into a
//! namespace that has not opted in, and an annotation that does not parse.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::Api;
use serde_json::json;

use crate::gitops::deployment;
use crate::support::install::ensure_namespace;
use crate::support::objects::apply;
use crate::support::{OperatorOptions, Scenario, annotation, condition, eventually};

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_trigger_into_a_namespace_not_allowed_is_refused_and_reported() {
    let s = Scenario::new("e2e-deputy").await;
    let other = format!("{}-serving", s.namespace);
    ensure_namespace(&s.client, &other, json!({})).await;
    apply(&s.client, &deployment("shared-server"), Some(&other)).await;
    let _operator = s.operator(&OperatorOptions::gitops_only(&s.namespace));

    let trigger = format!(
        "- {{apiVersion: apps/v1, kind: Deployment, name: shared-server, namespace: {other}, action: restart}}"
    );
    s.succeeds_elsewhere(
        "train",
        json!({"argocd.argoproj.io/sync-wave": "1", "mlops.dev/on-success-trigger": trigger}),
    )
    .await;

    let refused = eventually("the TriggerFailed Event", WAIT, || async {
        let e = s.events("train", "TriggerFailed").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    let message = refused[0].message.clone().unwrap_or_default();
    assert!(
        message.contains(&other) && message.contains("mlops.dev/accept-triggers-from"),
        "{message}"
    );
    assert_eq!(refused[0].type_.as_deref(), Some("Warning"));
    let job = eventually("the refusal in the job's status", WAIT, || async {
        let job = s.job("train").await;
        let (status, _, _) = condition(&job, "EffectsApplied")?;
        (status == "False").then_some(job)
    })
    .await;
    let (_, _, text) = condition(&job, "EffectsApplied").unwrap();
    assert!(text.contains("shared-server"), "{text}");
    // Everything else happened.
    assert_eq!(
        annotation(&job.metadata, "mlops.dev/wave-complete"),
        Some("1")
    );
    assert_eq!(s.events("train", "ValidationSucceeded").await.len(), 1);
    // The target is untouched, and nbv never even asked for it.
    let target: Api<Deployment> = Api::namespaced(s.client.clone(), &other);
    assert_eq!(
        target
            .get("shared-server")
            .await
            .unwrap()
            .metadata
            .generation,
        Some(1)
    );
    if let Some(requests) = s.report_requests("a trigger refused") {
        assert!(
            requests
                .0
                .iter()
                .all(|r| r.namespace() != other || r.resource() == "namespaces"),
            "{requests}"
        );
    }

    // The namespace opts in: a new run's trigger acts there.
    ensure_namespace(
        &s.client,
        &other,
        json!({"mlops.dev/accept-triggers-from": s.namespace}),
    )
    .await;
    s.succeeds_elsewhere("retrain", json!({"mlops.dev/on-success-trigger": trigger}))
        .await;
    eventually(
        "the restart in the namespace that opted in",
        WAIT,
        || async {
            let d = target.get("shared-server").await.ok()?;
            (d.metadata.generation == Some(2)).then_some(())
        },
    )
    .await;
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_bad_annotation_gets_its_event_and_condition_and_the_rest_happens() {
    let s = Scenario::new("e2e-annotations").await;
    let _operator = s.operator(&OperatorOptions::gitops_only(&s.namespace));
    s.succeeds_elsewhere("train", json!({
        "argocd.argoproj.io/sync-wave": "2",
        "mlops.dev/on-success-trigger": "- {apiVersion: apps/v1, kind: Deployment, action: restart}",
    }))
    .await;
    let reported = eventually("the InvalidAnnotation Event", WAIT, || async {
        let e = s.events("train", "InvalidAnnotation").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    let message = reported[0].message.clone().unwrap_or_default();
    assert!(
        message.contains("mlops.dev/on-success-trigger") && message.contains("name"),
        "{message}"
    );
    let job = eventually("AnnotationsValid False", WAIT, || async {
        let job = s.job("train").await;
        let (status, _, _) = condition(&job, "AnnotationsValid")?;
        (status == "False").then_some(job)
    })
    .await;
    let (_, _, text) = condition(&job, "AnnotationsValid").unwrap();
    assert!(text.contains("mlops.dev/on-success-trigger"), "{text}");
    let job = eventually("the wave annotations", WAIT, || async {
        let job = s.job("train").await;
        (annotation(&job.metadata, "mlops.dev/wave-complete") == Some("2")).then_some(job)
    })
    .await;
    drop(job);
    assert_eq!(s.events("train", "ValidationSucceeded").await.len(), 1);
    // One Event for the problem, not one per reconcile.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(s.events("train", "InvalidAnnotation").await.len(), 1);
    s.report_requests("a bad annotation");
    s.clean_up().await;
}
