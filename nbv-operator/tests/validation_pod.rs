//! `PodRunner` against a scripted API server: the requests it makes (method, path,
//! query, body) and how it reads the answers.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use http::{Request, Response};
use http_body_util::BodyExt;
use kube::client::Body;
use nbv_core::phase::{Attempt, FailureKind, PhaseEvent};
use nbv_core::pod::{PodDefaults, validation_pod};
use nbv_operator::validation_pod::{PodError, PodRunner};
use nbv_testkit::fixtures::JobBuilder;
use serde_json::{Value, json};
use tower_test::mock::Handle;

// ---------------------------------------------------------------------------------------
// A scripted API server
// ---------------------------------------------------------------------------------------

/// One request the script expects (`METHOD /path?decoded-query`, JSON body) and the
/// answer it gets.
struct Exchange {
    request: String,
    body: Option<Value>,
    status: u16,
    answer: Value,
}

fn expect(request: &str, body: Option<Value>, status: u16, answer: Value) -> Exchange {
    Exchange {
        request: request.to_owned(),
        body,
        status,
        answer,
    }
}

/// A Kubernetes `Status` error.
fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// Runs `act` with a runner whose client talks to a server playing `script`; fails
/// on any request that differs from the script, and on a missing or extra request.
async fn run<T, F>(script: Vec<Exchange>, act: impl FnOnce(PodRunner) -> F) -> T
where
    F: Future<Output = T>,
{
    let (service, server) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let runner = PodRunner::new(
        kube::Client::new(service, "default"),
        PodDefaults::default(),
    );
    let api = tokio::spawn(serve(server, script));
    let result = act(runner).await;
    api.await.expect("the API server's script passed");
    result
}

async fn serve(mut server: Handle<Request<Body>, Response<Body>>, script: Vec<Exchange>) {
    let patience = Duration::from_secs(10);
    for (index, expected) in script.into_iter().enumerate() {
        let next = tokio::time::timeout(patience, server.next_request())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {}", expected.request));
        let Some((request, reply)) = next else {
            panic!("the client finished without {}", expected.request);
        };
        let (parts, body) = request.into_parts();
        let query: Vec<String> = parts
            .uri
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(percent_decode)
            .collect();
        let seen = if query.is_empty() {
            format!("{} {}", parts.method, parts.uri.path())
        } else {
            format!("{} {}?{}", parts.method, parts.uri.path(), query.join("&"))
        };
        assert_eq!(seen, expected.request, "request {index}");
        let bytes = body.collect().await.expect("body").to_bytes();
        let body: Option<Value> =
            (!bytes.is_empty()).then(|| serde_json::from_slice(&bytes).expect("a JSON body"));
        assert_eq!(body, expected.body, "body of {seen}");
        reply.send_response(
            Response::builder()
                .status(expected.status)
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Body::from(
                    serde_json::to_vec(&expected.answer).expect("JSON"),
                ))
                .expect("a response"),
        );
    }
    let extra = tokio::time::timeout(patience, server.next_request())
        .await
        .expect("the client finished");
    if let Some((request, _)) = extra {
        panic!("unexpected {} {}", request.method(), request.uri());
    }
}

/// Decodes `%XX` escapes, so that expected queries read as a person writes them.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).expect("a UTF-8 query")
}

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

const ATTEMPT: Attempt = Attempt {
    generation: 2,
    retry: 1,
};

const POD_PATH: &str = "/api/v1/namespaces/ml/pods/train-g2-r1";

/// `ml/train` at generation 2: a notebook in a private repository, 45 minutes to run.
fn train() -> JobBuilder {
    JobBuilder::new("ml", "train")
        .uid("uid-train")
        .generation(2)
        .spec_fields(json!({
            "notebook": {"git": {"url": "https://example.com/org/repo.git", "ref": "main",
                                 "credentialsSecret": "git-creds"},
                         "path": "notebooks/train.ipynb"},
            "podConfig": {"containerImage": "quay.io/example/papermill:1"},
            "timeout": "45m"
        }))
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 10, 0)
        .single()
        .expect("date")
}

/// The attempt's Pod as the API server returns it, with `status`.
fn stored_pod(status: Value) -> Value {
    let pod = validation_pod(
        &train().typed().expect("a job"),
        ATTEMPT,
        None,
        None,
        &PodDefaults::default(),
    )
    .expect("a pod");
    let mut value = serde_json::to_value(pod).expect("JSON");
    value["metadata"]["uid"] = json!("uid-pod");
    value["metadata"]["creationTimestamp"] = json!("2026-01-24T22:00:00Z");
    value["status"] = status;
    value
}

fn notebook_terminated(exit_code: i32, message: &str) -> Value {
    json!({"phase": if exit_code == 0 { "Succeeded" } else { "Failed" },
           "containerStatuses": [{"name": "notebook", "image": "i", "imageID": "", "ready": false,
               "restartCount": 0, "state": {"terminated": {"exitCode": exit_code, "message": message}}}]})
}

// ---------------------------------------------------------------------------------------
// ensure_started
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn the_attempts_pod_is_created_as_the_core_builds_it() {
    let job = train().typed().expect("a job");
    let expected =
        validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect("a pod");
    let body = serde_json::to_value(&expected).expect("JSON");
    insta::assert_yaml_snapshot!("created_pod", body, {
        ".spec.initContainers[].command[2]" => "[clone.sh]",
        ".spec.containers[].command[2]" => "[run_notebook.py]",
    });
    let script = vec![expect(
        "POST /api/v1/namespaces/ml/pods?fieldManager=nbv-operator",
        Some(body.clone()),
        201,
        body,
    )];
    let name = run(script, |runner| async move {
        runner.ensure_started(&job, ATTEMPT, None, None).await
    })
    .await
    .expect("created");
    assert_eq!(name, "train-g2-r1");
}

#[tokio::test]
async fn a_built_image_is_the_one_the_pod_runs() {
    let job = train().typed().expect("a job");
    let expected = validation_pod(
        &job,
        ATTEMPT,
        Some("registry/built@sha256:ab"),
        None,
        &PodDefaults::default(),
    )
    .expect("a pod");
    let body = serde_json::to_value(&expected).expect("JSON");
    assert_eq!(
        body["spec"]["containers"][0]["image"],
        "registry/built@sha256:ab"
    );
    let script = vec![expect(
        "POST /api/v1/namespaces/ml/pods?fieldManager=nbv-operator",
        Some(body.clone()),
        201,
        body,
    )];
    run(script, |runner| async move {
        runner
            .ensure_started(&job, ATTEMPT, Some("registry/built@sha256:ab"), None)
            .await
    })
    .await
    .expect("created");
}

#[tokio::test]
async fn a_pod_that_already_exists_is_the_attempts_pod() {
    let job = train().typed().expect("a job");
    let script = vec![expect(
        "POST /api/v1/namespaces/ml/pods?fieldManager=nbv-operator",
        Some(
            serde_json::to_value(
                validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect("pod"),
            )
            .expect("JSON"),
        ),
        409,
        status(409, "AlreadyExists", "pods \"train-g2-r1\" already exists"),
    )];
    let name = run(script, |runner| async move {
        runner.ensure_started(&job, ATTEMPT, None, None).await
    })
    .await
    .expect("idempotent");
    assert_eq!(name, "train-g2-r1");
}

#[tokio::test]
async fn a_spec_nbv_refuses_sends_nothing_and_fails_the_attempt() {
    let job = train()
        .spec_fields(json!({"podConfig": {"containerImage": "i",
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}]}}))
        .typed()
        .expect("a job");
    let err = run(Vec::new(), |runner| async move {
        runner.ensure_started(&job, ATTEMPT, None, None).await
    })
    .await
    .expect_err("refused");
    let failure = err.failure().expect("a permanent failure");
    assert_eq!(failure.kind, FailureKind::Permanent);
    assert!(
        failure
            .message
            .starts_with("spec.podConfig.volumes[0].hostPath"),
        "{}",
        failure.message
    );
}

#[tokio::test]
async fn a_refused_pod_is_reported_with_the_cores_reading_of_the_answer() {
    let cases = [
        (
            422,
            "Invalid",
            "Pod \"train-g2-r1\" is invalid: spec.containers[0].resources.limits: Invalid value",
            "PodSpecInvalid",
            true,
        ),
        (
            403,
            "Forbidden",
            "pods \"train-g2-r1\" is forbidden: violates PodSecurity \"restricted:latest\": seLinuxOptions",
            "PodSecurityViolation",
            true,
        ),
        (
            403,
            "Forbidden",
            "pods \"train-g2-r1\" is forbidden: exceeded quota: compute, requested: limits.cpu=4",
            "QuotaExceeded",
            false,
        ),
        (
            500,
            "InternalError",
            "etcdserver: request timed out",
            "APIServerUnavailable",
            false,
        ),
    ];
    for (code, reason, message, cause, permanent) in cases {
        let job = train().typed().expect("a job");
        let body = serde_json::to_value(
            validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).expect("pod"),
        )
        .expect("JSON");
        let script = vec![expect(
            "POST /api/v1/namespaces/ml/pods?fieldManager=nbv-operator",
            Some(body),
            code,
            status(code, reason, message),
        )];
        let err = run(script, |runner| async move {
            runner.ensure_started(&job, ATTEMPT, None, None).await
        })
        .await
        .expect_err("refused");
        assert!(
            err.to_string()
                .starts_with("create Pod ml/train-g2-r1 refused"),
            "{err}"
        );
        assert!(err.failure().is_none(), "the core judges refusals: {err}");
        let refusal = err.refusal().expect("a refusal");
        assert_eq!(refusal.kind.cause().as_str(), cause, "{message}");
        assert_eq!(refusal.kind.is_permanent(), permanent, "{message}");
        assert!(refusal.answer.contains(message), "{}", refusal.answer);
    }
}

// ---------------------------------------------------------------------------------------
// observe
// ---------------------------------------------------------------------------------------

async fn observe(answer: (u16, Value)) -> Result<Option<PhaseEvent>, PodError> {
    let script = vec![expect(&format!("GET {POD_PATH}"), None, answer.0, answer.1)];
    run(script, |runner| async move {
        runner
            .observe(&train().typed().expect("a job"), ATTEMPT, now())
            .await
    })
    .await
}

#[tokio::test]
async fn a_running_pod_is_reported_running() {
    let event = observe((200, stored_pod(json!({"phase": "Running"}))))
        .await
        .expect("read");
    let Some(PhaseEvent::PodRunning { pod }) = event else {
        panic!("{event:?}");
    };
    assert_eq!((pod.name.as_str(), pod.attempt), ("train-g2-r1", ATTEMPT));
}

#[tokio::test]
async fn a_pending_pod_reports_nothing() {
    let event = observe((200, stored_pod(json!({"phase": "Pending"}))))
        .await
        .expect("read");
    assert_eq!(event, None);
}

#[tokio::test]
async fn a_failed_cell_is_a_permanent_failure_with_results() {
    let report = r#"{"cells":[{"i":0,"s":"ok","t":1.2},{"i":4,"s":"err","t":0.1,"e":"KeyError: 'x'"}],"error":{"kind":"cell","cell":4,"ename":"KeyError","evalue":"'x'"}}"#;
    let event = observe((200, stored_pod(notebook_terminated(1, report))))
        .await
        .expect("read");
    let Some(PhaseEvent::PodFailed {
        failure, results, ..
    }) = event
    else {
        panic!("{event:?}");
    };
    assert_eq!(failure.kind, FailureKind::Permanent);
    assert_eq!(failure.reason.as_str(), "NotebookCellFailed");
    assert_eq!(failure.message, "cell 4: KeyError: 'x'");
    assert_eq!(results.len(), 2);
}

#[tokio::test]
async fn a_succeeded_pod_reports_its_cells() {
    let report = r#"{"cells":[{"i":0,"s":"ok","t":1.5},{"i":2,"s":"ok","t":2}]}"#;
    let event = observe((200, stored_pod(notebook_terminated(0, report))))
        .await
        .expect("read");
    let Some(PhaseEvent::PodSucceeded {
        results, message, ..
    }) = event
    else {
        panic!("{event:?}");
    };
    assert_eq!(results.len(), 2);
    assert_eq!(message.as_deref(), Some("2 code cells ran in 3.5s"));
}

#[tokio::test]
async fn a_missing_pod_is_a_transient_failure() {
    let event = observe((
        404,
        status(404, "NotFound", "pods \"train-g2-r1\" not found"),
    ))
    .await
    .expect("read");
    let Some(PhaseEvent::PodFailed { pod, failure, .. }) = event else {
        panic!("{event:?}");
    };
    assert_eq!(pod.name, "train-g2-r1");
    assert_eq!(failure.kind, FailureKind::Transient);
    assert_eq!(failure.reason.as_str(), "PodDeleted");
}

#[tokio::test]
async fn a_read_that_fails_is_an_error_not_an_outcome() {
    let err = observe((500, status(500, "InternalError", "etcd down")))
        .await
        .expect_err("an error");
    assert!(
        err.to_string().starts_with("get Pod ml/train-g2-r1 failed"),
        "{err}"
    );
    assert!(err.failure().is_none());
}

#[tokio::test]
async fn a_pod_left_by_an_earlier_job_of_the_same_name_is_deleted_not_observed() {
    let mut left_over = stored_pod(json!({"phase": "Succeeded"}));
    left_over["metadata"]["ownerReferences"][0]["uid"] = json!("uid-of-the-deleted-job");
    let script = vec![
        expect(&format!("GET {POD_PATH}"), None, 200, left_over.clone()),
        expect(
            &format!("DELETE {POD_PATH}"),
            Some(json!({"propagationPolicy": "Background", "preconditions": {"uid": "uid-pod"}})),
            200,
            left_over,
        ),
    ];
    let err = run(script, |runner| async move {
        runner
            .observe(&train().typed().expect("a job"), ATTEMPT, now())
            .await
    })
    .await
    .expect_err("not this job's pod");
    assert!(matches!(err, PodError::LeftOver { .. }), "{err}");
    insta::assert_snapshot!("left_over_pod", err.to_string());
}

#[tokio::test]
async fn a_pod_without_nbv_labels_is_an_error() {
    let mut pod = stored_pod(json!({"phase": "Running"}));
    pod["metadata"]["labels"] = json!({});
    let err = observe((200, pod)).await.expect_err("not a validation pod");
    assert!(matches!(err, PodError::InvalidValidationPod(_)), "{err}");
}

// ---------------------------------------------------------------------------------------
// delete_other_attempts
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn other_attempts_are_deleted_by_label() {
    let list = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {},
        "items": [stored_pod(json!({})), stored_pod(json!({}))]});
    let script = vec![expect(
        "DELETE /api/v1/namespaces/ml/pods?labelSelector=app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt!=g2-r1",
        Some(json!({"propagationPolicy": "Background"})),
        200,
        list,
    )];
    let deleted = run(script, |runner| async move {
        runner
            .delete_other_attempts(&train().typed().expect("a job"), ATTEMPT)
            .await
    })
    .await
    .expect("deleted");
    assert_eq!(deleted, 2);
}

#[tokio::test]
async fn a_long_job_name_is_selected_by_its_hashed_label() {
    let mut long = train().typed().expect("a job");
    long.metadata.name = Some(format!("{}.v2", "training".repeat(10)));
    let label = nbv_core::pod::job_label_value(long.metadata.name.as_deref().unwrap_or_default());
    assert!(label.len() <= 63);
    let script = vec![expect(
        &format!(
            "DELETE /api/v1/namespaces/ml/pods?labelSelector=app.kubernetes.io/managed-by=nbv,mlops.dev/job={label},mlops.dev/attempt!=g2-r1"
        ),
        Some(json!({"propagationPolicy": "Background"})),
        200,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200}),
    )];
    let deleted = run(script, |runner| async move {
        runner.delete_other_attempts(&long, ATTEMPT).await
    })
    .await
    .expect("deleted");
    assert_eq!(deleted, 0);
}

// ---------------------------------------------------------------------------------------
// With a watch cache of nbv's Pods
// ---------------------------------------------------------------------------------------

/// A watch cache holding `pods`, as the controller's Pod watch fills it.
fn cache_of(pods: Vec<Value>) -> kube::runtime::reflector::Store<k8s_openapi::api::core::v1::Pod> {
    let mut writer = kube::runtime::reflector::store::Writer::default();
    let reader = writer.as_reader();
    for pod in pods {
        let pod = serde_json::from_value(pod).expect("a Pod");
        writer.apply_watcher_event(&kube::runtime::watcher::Event::Apply(pod));
    }
    reader
}

#[tokio::test]
async fn a_cached_pod_is_observed_without_a_request() {
    let cache = cache_of(vec![stored_pod(json!({"phase": "Running"}))]);
    let event = run(Vec::new(), |runner| async move {
        runner
            .with_cache(cache)
            .observe(&train().typed().expect("a job"), ATTEMPT, now())
            .await
    })
    .await
    .expect("read from the cache");
    let Some(PhaseEvent::PodRunning { pod }) = event else {
        panic!("{event:?}");
    };
    assert_eq!(pod.name, "train-g2-r1");
}

#[tokio::test]
async fn a_cached_pod_is_not_created_again() {
    let cache = cache_of(vec![stored_pod(json!({"phase": "Pending"}))]);
    let name = run(Vec::new(), |runner| async move {
        runner
            .with_cache(cache)
            .ensure_started(&train().typed().expect("a job"), ATTEMPT, None, None)
            .await
    })
    .await
    .expect("already there");
    assert_eq!(name, "train-g2-r1");
}

#[tokio::test]
async fn a_pod_the_cache_lacks_is_read_from_the_api_server() {
    // Just created, or deleted: the cache cannot tell which; the API server can.
    let mut other = stored_pod(json!({"phase": "Running"}));
    other["metadata"]["name"] = json!("train-g2-r0");
    let cache = cache_of(vec![other]);
    let script = vec![expect(
        &format!("GET {POD_PATH}"),
        None,
        200,
        stored_pod(notebook_terminated(0, "")),
    )];
    let event = run(script, |runner| async move {
        runner
            .with_cache(cache)
            .observe(&train().typed().expect("a job"), ATTEMPT, now())
            .await
    })
    .await
    .expect("read");
    assert!(
        matches!(event, Some(PhaseEvent::PodSucceeded { .. })),
        "{event:?}"
    );
}
