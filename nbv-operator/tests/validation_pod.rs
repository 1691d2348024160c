//! The validation Pod's requests on the wire: what the job machine asks
//! ([`nbv_core::job`]; its decisions are tested in nbv-core's `tests/job`) as the
//! executor's I/O sends it, exactly.

mod effects_support;

use effects_support::{Exchange, pod_list, run};
use nbv_core::api::NotebookValidationJob;
use nbv_core::io::{ApiAnswer, ObjectRef, Request, Response};
use nbv_core::job::other_attempts_selector;
use nbv_core::phase::Attempt;
use nbv_core::pod::{PodDefaults, validation_pod};
use nbv_operator::operator::effects::ExecutorConfig;
use nbv_testkit::fixtures::JobBuilder;
use serde_json::{Value, json};

const PODS: &str = "/api/v1/namespaces/ml/pods";
const ATTEMPT: Attempt = Attempt::new(2, 1);

fn pod() -> Value {
    let job: NotebookValidationJob = JobBuilder::new("ml", "train")
        .uid("uid-train")
        .generation(2)
        .typed()
        .expect("a job");
    serde_json::to_value(
        validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect("a pod"),
    )
    .expect("JSON")
}

fn train_pod() -> ObjectRef {
    ObjectRef::namespaced("v1", "Pod", "ml", "train-g2-r1")
}

#[tokio::test]
async fn the_attempts_pod_is_created_under_nbvs_field_manager() {
    let script = vec![Exchange::post(PODS, pod()).reply(201, pod())];
    let create = Request::Create {
        object: train_pod(),
        body: pod(),
    };
    let (response, _) = run(ExecutorConfig::default(), script, |ex| async move {
        ex.run(create).await
    })
    .await;
    let Response::Object(Some(created)) = response else {
        panic!("{response:?}")
    };
    assert_eq!(created["metadata"]["name"], "train-g2-r1");
}

#[tokio::test]
async fn a_refusal_is_answered_as_the_api_server_said_it() {
    let message = "pods \"train-g2-r1\" is forbidden: exceeded quota: compute";
    let script = vec![Exchange::post(PODS, pod()).fail(403, "Forbidden", message)];
    let create = Request::Create {
        object: train_pod(),
        body: pod(),
    };
    let (response, _) = run(ExecutorConfig::default(), script, |ex| async move {
        ex.run(create).await
    })
    .await;
    assert_eq!(
        response,
        Response::Failed(ApiAnswer::status(403, "Forbidden", message))
    );
}

#[tokio::test]
async fn a_missing_pod_is_an_answer_not_a_failure() {
    let script = vec![Exchange::get(format!("{PODS}/train-g2-r1")).fail(
        404,
        "NotFound",
        "pods \"train-g2-r1\" not found",
    )];
    let (response, _) = run(ExecutorConfig::default(), script, |ex| async move {
        ex.run(Request::Get(train_pod())).await
    })
    .await;
    assert_eq!(response, Response::Object(None));
}

#[tokio::test]
async fn a_pod_left_over_is_deleted_only_if_it_is_still_the_one_read() {
    let script = vec![
        Exchange::delete(
            format!("{PODS}/train-g2-r1"),
            json!({"preconditions": {"uid": "uid-pod"}}),
        )
        .reply(200, pod()),
    ];
    let delete = Request::Delete {
        object: train_pod(),
        uid: Some("uid-pod".into()),
    };
    let (response, _) = run(ExecutorConfig::default(), script, |ex| async move {
        ex.run(delete).await
    })
    .await;
    assert_eq!(response, Response::Deleted);
}

#[tokio::test]
async fn other_attempts_are_deleted_by_label_in_the_background() {
    let selector = other_attempts_selector("train", ATTEMPT);
    assert_eq!(
        selector,
        "app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt,mlops.dev/attempt!=g2-r1"
    );
    let script = vec![
        Exchange::delete_all(PODS, &selector, json!({"propagationPolicy": "Background"}))
            .reply(200, pod_list(vec![pod(), pod()])),
    ];
    let delete = Request::DeleteAll {
        kind: ObjectRef::namespaced("v1", "Pod", "ml", ""),
        label_selector: selector,
    };
    let (response, _) = run(ExecutorConfig::default(), script, |ex| async move {
        ex.run(delete).await
    })
    .await;
    let Response::Objects(deleted) = response else {
        panic!("{response:?}")
    };
    assert_eq!(deleted.len(), 2);
}

#[tokio::test]
async fn a_long_job_name_is_selected_by_its_hashed_label() {
    let name = format!("{}.v2", "training".repeat(10));
    let label = nbv_core::pod::job_label_value(&name);
    assert!(label.len() <= 63);
    let selector = other_attempts_selector(&name, ATTEMPT);
    assert_eq!(
        selector,
        format!(
            "app.kubernetes.io/managed-by=nbv,mlops.dev/job={label},mlops.dev/attempt,mlops.dev/attempt!=g2-r1"
        )
    );
    let script = vec![
        Exchange::delete_all(PODS, &selector, json!({"propagationPolicy": "Background"})).reply(
            200,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200}),
        ),
    ];
    let delete = Request::DeleteAll {
        kind: ObjectRef::namespaced("v1", "Pod", "ml", ""),
        label_selector: selector,
    };
    let (response, _) = run(ExecutorConfig::default(), script, |ex| async move {
        ex.run(delete).await
    })
    .await;
    assert_eq!(response, Response::Objects(Vec::new()));
}
