//! The validation Pod as the job machine creates, reads and clears it: what used to
//! be the shell's Pod runner, now decided by the machine and carried out as requests.

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::io::ApiAnswer;
use nbv_core::job::{Failure, Memory};
use nbv_core::phase::Attempt;
use nbv_core::pod::{PodDefaults, validation_pod};
use nbv_testkit::fixtures::JobBuilder;
use serde_json::{Value, json};

use super::cluster::Cluster;
use super::{job_of, reconcile};

/// A new run of `ml/train` at generation 2 starts attempt g2-r0.
const ATTEMPT: Attempt = Attempt::new(2, 0);

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
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 10, 0).unwrap()
}

/// `train`, its attempt g2-r0 started at 22:00.
fn running() -> Value {
    train()
        .phase(Phase::ValidationRunning)
        .started_at(Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap())
        .status_field("observedGeneration", 2.into())
        .status_field("retryCount", 0.into())
        .status_field("validationPodName", "train-g2-r0".into())
        .build()
}

/// The attempt's Pod as the API server stores it, with `status`.
fn stored_pod(status: Value) -> Value {
    let job: NotebookValidationJob = serde_json::from_value(train().build()).unwrap();
    let pod = validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).unwrap();
    let mut value = serde_json::to_value(pod).unwrap();
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

fn cluster_with(job: Value, pods: Vec<Value>) -> Cluster {
    let mut cluster = Cluster::new();
    cluster.put(job);
    for pod in pods {
        cluster.put(pod);
    }
    cluster
}

/// The job's status after one reconcile of `job` with `pods` in the cluster.
fn observed(job: Value, pods: Vec<Value>) -> (Cluster, nbv_core::api::NotebookValidationJobStatus) {
    let mut cluster = cluster_with(job, pods);
    let done = reconcile(&mut cluster, Memory::default(), now());
    assert!(done.result.is_ok(), "{:?}", done.result);
    let status = job_of(&cluster).status.expect("a status");
    (cluster, status)
}

fn condition(
    status: &nbv_core::api::NotebookValidationJobStatus,
    kind: &str,
) -> (String, String, String) {
    let found = status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == kind)
        .unwrap_or_else(|| panic!("no {kind} condition: {status:?}"));
    (
        found.status.clone(),
        found.reason.clone(),
        found.message.clone(),
    )
}

#[test]
fn the_pod_the_core_builds_for_an_attempt() {
    let job: NotebookValidationJob = serde_json::from_value(train().build()).unwrap();
    let retry = Attempt::new(2, 1);
    let body = serde_json::to_value(
        validation_pod(&job, retry, None, None, &PodDefaults::default()).unwrap(),
    )
    .unwrap();
    insta::assert_yaml_snapshot!("created_pod", body, {
        ".spec.initContainers[].image" => "[nbv image]",
    });
}

#[test]
fn the_attempts_pod_is_created_as_the_core_builds_it() {
    let (cluster, status) = observed(train().build(), Vec::new());
    assert!(
        cluster.log.contains(&"POST Pod ml/train-g2-r0".to_owned()),
        "{:#?}",
        cluster.log
    );
    let job: NotebookValidationJob = serde_json::from_value(train().build()).unwrap();
    let expected = serde_json::to_value(
        validation_pod(&job, ATTEMPT, None, None, &PodDefaults::default()).unwrap(),
    )
    .unwrap();
    let mut created = cluster
        .get("Pod", "ml", "train-g2-r0")
        .expect("created")
        .clone();
    for generated in ["resourceVersion", "uid"] {
        created["metadata"]
            .as_object_mut()
            .unwrap()
            .remove(generated);
    }
    assert_eq!(created, expected);
    assert_eq!(status.phase, Some(Phase::Initializing));
}

#[test]
fn a_built_image_is_the_one_the_pod_runs() {
    let job: NotebookValidationJob = serde_json::from_value(train().build()).unwrap();
    let pod = validation_pod(
        &job,
        ATTEMPT,
        Some("registry/built@sha256:ab"),
        None,
        &PodDefaults::default(),
    )
    .unwrap();
    let body = serde_json::to_value(pod).unwrap();
    assert_eq!(
        body["spec"]["containers"][0]["image"],
        "registry/built@sha256:ab"
    );
}

#[test]
fn a_pod_that_already_exists_is_the_attempts_pod() {
    let mut cluster = cluster_with(train().build(), Vec::new());
    cluster.faults.insert(
        2,
        ApiAnswer::status(409, "AlreadyExists", "pods \"train-g2-r0\" already exists"),
    );
    let done = reconcile(&mut cluster, Memory::default(), now());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(cluster.log[2], "POST Pod ml/train-g2-r0");
    assert_eq!(
        cluster.log[3], "read Pod ml/train-g2-r0 from the cache",
        "then it is read"
    );
    let status = job_of(&cluster).status.unwrap();
    let refused = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "PodAdmitted");
    assert!(!refused, "not a refusal: {status:?}");
    assert_eq!(status.phase, Some(Phase::Initializing));
}

#[test]
fn a_spec_nbv_refuses_sends_nothing_and_fails_the_attempt() {
    let job = train()
        .spec_fields(json!({"podConfig": {"containerImage": "i",
        "volumes": [{"name": "host", "hostPath": {"path": "/"}}]}}))
        .build();
    let (cluster, status) = observed(job, Vec::new());
    assert!(
        cluster.log.iter().all(|r| !r.starts_with("POST Pod")),
        "{:#?}",
        cluster.log
    );
    assert_eq!(status.phase, Some(Phase::Failed));
    let message = status.message.unwrap_or_default();
    assert!(
        message.contains("spec.podConfig.volumes[0].hostPath"),
        "{message}"
    );
}

#[test]
fn a_refused_pod_is_reported_with_the_cores_reading_of_the_answer() {
    let cases = [
        (
            422,
            "Invalid",
            "Pod \"train-g2-r0\" is invalid: spec.containers[0].resources.limits: Invalid value",
            "PodSpecInvalid",
            true,
        ),
        (
            403,
            "Forbidden",
            "pods \"train-g2-r0\" is forbidden: violates PodSecurity \"restricted:latest\": seLinuxOptions",
            "PodSecurityViolation",
            true,
        ),
        (
            403,
            "Forbidden",
            "pods \"train-g2-r0\" is forbidden: exceeded quota: compute, requested: limits.cpu=4",
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
        let mut cluster = cluster_with(train().build(), Vec::new());
        cluster
            .faults
            .insert(2, ApiAnswer::status(code, reason, message));
        let done = reconcile(&mut cluster, Memory::default(), now());
        assert!(done.result.is_ok(), "{:?}", done.result);
        assert_eq!(cluster.log[2], "POST Pod ml/train-g2-r0");
        let status = job_of(&cluster).status.unwrap();
        let (admitted, why, said) = condition(&status, "PodAdmitted");
        assert_eq!(
            (admitted.as_str(), why.as_str()),
            ("False", cause),
            "{message}"
        );
        assert!(said.contains(message), "{said}");
        assert_eq!(
            status.phase == Some(Phase::Failed),
            permanent,
            "{message}: {status:?}"
        );
        assert_eq!(done.requeue.is_some(), !permanent || done.requeue.is_some());
    }
}

#[test]
fn a_running_pod_is_reported_running() {
    let (_, status) = observed(running(), vec![stored_pod(json!({"phase": "Running"}))]);
    assert_eq!(status.phase, Some(Phase::ValidationRunning));
    assert_eq!(status.validation_pod_name.as_deref(), Some("train-g2-r0"));
}

#[test]
fn a_pending_pod_changes_nothing() {
    let mut cluster = cluster_with(running(), vec![stored_pod(json!({"phase": "Pending"}))]);
    let before = job_of(&cluster).status;
    let done = reconcile(&mut cluster, Memory::default(), now());
    assert!(done.result.is_ok());
    assert_eq!(
        job_of(&cluster).status.map(|s| s.phase),
        before.map(|s| s.phase)
    );
}

#[test]
fn a_failed_cell_is_a_permanent_failure_with_results() {
    let report = r#"{"cells":[{"i":0,"s":"ok","t":1.2},{"i":4,"s":"err","t":0.1,"e":"KeyError: 'x'"}],"error":{"kind":"cell","cell":4,"ename":"KeyError","evalue":"'x'"}}"#;
    let (_, status) = observed(running(), vec![stored_pod(notebook_terminated(1, report))]);
    assert_eq!(status.phase, Some(Phase::Failed));
    let (_, reason, message) = condition(&status, "Ready");
    assert_eq!(reason, "NotebookCellFailed");
    assert!(
        message.ends_with("NotebookCellFailed: cell 4: KeyError: 'x'"),
        "{message}"
    );
    assert_eq!(status.results.map(|r| r.len()), Some(2));
}

#[test]
fn a_succeeded_pod_reports_its_cells() {
    let report = r#"{"cells":[{"i":0,"s":"ok","t":1.5},{"i":2,"s":"ok","t":2}]}"#;
    let (_, status) = observed(running(), vec![stored_pod(notebook_terminated(0, report))]);
    assert_eq!(status.phase, Some(Phase::Succeeded));
    assert_eq!(status.results.map(|r| r.len()), Some(2));
    let message = status.message.unwrap_or_default();
    assert!(message.ends_with(": 2 code cells ran in 3.5s"), "{message}");
}

#[test]
fn a_missing_pod_is_a_transient_failure() {
    let mut cluster = cluster_with(running(), Vec::new());
    let done = reconcile(&mut cluster, Memory::default(), now());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert!(
        cluster.log.contains(&"GET Pod ml/train-g2-r0".to_owned()),
        "the cache lags: asked the API server"
    );
    let status = job_of(&cluster).status.unwrap();
    assert_ne!(status.phase, Some(Phase::Failed), "retried: {status:?}");
    assert!(
        status
            .message
            .unwrap_or_default()
            .contains("train-g2-r0 no longer exists")
    );
}

#[test]
fn a_read_that_fails_is_an_error_not_an_outcome() {
    // Without a cache, the Pod is read from the API server (after the machine found the
    // cache empty): that read fails.
    let mut dry = cluster_with(running(), Vec::new());
    dry.caches = false;
    reconcile(&mut dry, Memory::default(), now());
    let get = dry.log.iter().position(|r| r == "GET Pod ml/train-g2-r0");
    let mut cluster = cluster_with(running(), Vec::new());
    cluster.caches = false;
    let answer = ApiAnswer::status(500, "InternalError", "etcd down");
    cluster.faults.insert(get.expect("a GET"), answer);
    let done = reconcile(&mut cluster, Memory::default(), now());
    let error = done.result.expect_err("an error");
    assert!(
        error
            .to_string()
            .starts_with("GET Pod ml/train-g2-r0 failed"),
        "{error}"
    );
    assert_eq!(error.kind(), "pod");
    assert!(done.requeue.is_some());
}

#[test]
fn a_pod_left_by_an_earlier_job_of_the_same_name_is_deleted_not_observed() {
    let mut left_over = stored_pod(json!({"phase": "Succeeded"}));
    left_over["metadata"]["ownerReferences"][0]["uid"] = json!("uid-of-the-deleted-job");
    let mut cluster = cluster_with(running(), vec![left_over]);
    let done = reconcile(&mut cluster, Memory::default(), now());
    let error = done.result.expect_err("not this job's pod");
    assert!(matches!(error, Failure::LeftOver { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "pod ml/train-g2-r0 belongs to an earlier job of the same name; it was deleted and the attempt's pod will be created on the next reconcile"
    );
    assert_eq!(
        cluster.log.last().map(String::as_str),
        Some("DELETE Pod ml/train-g2-r0")
    );
    assert!(cluster.get("Pod", "ml", "train-g2-r0").is_none());
}

#[test]
fn a_pod_nbv_did_not_create_for_a_job_of_the_name_is_never_deleted() {
    // Under the attempt's name: someone's own Pod, a Pod nbv made for another job, a
    // Pod with nbv's labels whose controller is not a job of this name.
    let mut someones = stored_pod(json!({"phase": "Running"}));
    someones["metadata"]["labels"] = json!({"app": "web"});
    someones["metadata"]["ownerReferences"] = json!([]);
    let mut other_job = stored_pod(json!({"phase": "Running"}));
    other_job["metadata"]["labels"]["mlops.dev/job"] = json!("score");
    other_job["metadata"]["ownerReferences"][0]["uid"] = json!("uid-score");
    other_job["metadata"]["ownerReferences"][0]["name"] = json!("score");
    let mut forged = stored_pod(json!({"phase": "Running"}));
    forged["metadata"]["ownerReferences"][0]["uid"] = json!("uid-x");
    forged["metadata"]["ownerReferences"][0]["kind"] = json!("Deployment");
    for pod in [someones, other_job, forged] {
        let mut cluster = cluster_with(running(), vec![pod.clone()]);
        let done = reconcile(&mut cluster, Memory::default(), now());
        assert!(done.result.is_ok(), "{:?}", done.result);
        assert!(
            !cluster
                .log
                .iter()
                .any(|l| l.starts_with("DELETE Pod ml/train-g2-r0")),
            "{pod:#}\n{:#?}",
            cluster.log
        );
        assert!(cluster.get("Pod", "ml", "train-g2-r0").is_some());
        let status = job_of(&cluster).status.expect("a status");
        let message = status.message.unwrap_or_default();
        assert!(
            message.contains("that nbv did not create for this job"),
            "{message}"
        );
    }
}

#[test]
fn a_pod_without_nbv_labels_is_an_error() {
    let mut pod = stored_pod(json!({"phase": "Running"}));
    pod["metadata"]["labels"] = json!({});
    let mut cluster = cluster_with(running(), vec![pod]);
    let done = reconcile(&mut cluster, Memory::default(), now());
    let error = done.result.expect_err("not a validation pod");
    assert!(matches!(error, Failure::InvalidValidationPod(_)), "{error}");
}

#[test]
fn other_attempts_are_deleted_by_label() {
    let mut earlier = stored_pod(json!({}));
    earlier["metadata"]["name"] = json!("train-g1-r0");
    earlier["metadata"]["labels"]["mlops.dev/attempt"] = json!("g1-r0");
    let (cluster, _) = observed(train().build(), vec![earlier]);
    assert_eq!(
        cluster.log[0],
        "DELETE Pod in ml with app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt,mlops.dev/attempt!=g2-r0"
    );
    assert!(cluster.get("Pod", "ml", "train-g1-r0").is_none());
    assert!(cluster.get("Pod", "ml", "train-g2-r0").is_some());
}

#[test]
fn a_long_job_name_is_selected_by_its_hashed_label() {
    let name = format!("{}.v2", "training".repeat(10));
    let mut job = train().build();
    job["metadata"]["name"] = json!(name);
    let label = nbv_core::pod::job_label_value(&name);
    assert!(label.len() <= 63);
    let mut cluster = Cluster::new();
    cluster.put(job.clone());
    let job: NotebookValidationJob = serde_json::from_value(
        cluster
            .get("NotebookValidationJob", "ml", &name)
            .unwrap()
            .clone(),
    )
    .unwrap();
    super::reconcile_view(&mut cluster, &job, Memory::default(), now());
    assert_eq!(
        cluster.log[0],
        format!(
            "DELETE Pod in ml with app.kubernetes.io/managed-by=nbv,mlops.dev/job={label},mlops.dev/attempt,mlops.dev/attempt!=g2-r0"
        )
    );
}

#[test]
fn a_cached_pod_is_observed_without_a_request_to_the_api_server() {
    let (cluster, status) = observed(running(), vec![stored_pod(json!({"phase": "Running"}))]);
    assert_eq!(status.phase, Some(Phase::ValidationRunning));
    assert!(
        cluster.log.iter().all(|r| !r.starts_with("GET")),
        "{:#?}",
        cluster.log
    );
}

#[test]
fn a_cached_pod_is_not_created_again() {
    // The run starts (no status yet) and finds its Pod in the cache.
    let (cluster, _) = observed(
        train().build(),
        vec![stored_pod(json!({"phase": "Pending"}))],
    );
    assert!(
        cluster.log.iter().all(|r| !r.starts_with("POST Pod")),
        "{:#?}",
        cluster.log
    );
}

#[test]
fn a_pod_the_cache_lacks_is_read_from_the_api_server() {
    // Just created, or deleted: the cache cannot tell which; the API server can.
    let mut cluster = cluster_with(running(), vec![stored_pod(notebook_terminated(0, ""))]);
    cluster.caches = false;
    let done = reconcile(&mut cluster, Memory::default(), now());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert!(cluster.log.contains(&"GET Pod ml/train-g2-r0".to_owned()));
    assert_eq!(
        job_of(&cluster).status.unwrap().phase,
        Some(Phase::Succeeded)
    );
}

#[test]
fn a_job_the_pod_policy_refuses_fails_before_its_models_gate_and_its_pod() {
    let job = train()
        .spec_field(
            "modelValidation",
            json!({"enabled": true, "platform": "kserve", "targetModels": ["fraud"]}),
        )
        .build();
    let mut cluster = cluster_with(job, vec![]);
    let settings = nbv_core::job::Settings {
        pod_defaults: PodDefaults {
            policy: nbv_core::pod::PodPolicy {
                secrets: Some(Default::default()),
                ..nbv_core::pod::PodPolicy::default()
            },
            ..PodDefaults::default()
        },
        ..nbv_core::job::Settings::default()
    };
    let view = job_of(&cluster);
    let done = super::reconcile_with(&mut cluster, &view, Memory::default(), now(), settings);
    assert!(done.result.is_ok(), "{:?}", done.result);
    let status = job_of(&cluster).status.expect("a status");
    assert_eq!(status.phase, Some(Phase::Failed));
    let (_, reason, message) = condition(&status, "Ready");
    assert_eq!(reason, "PodPolicyDenied");
    assert!(
        message.contains("spec.notebook.git.credentialsSecret")
            && message.contains("--deny-secrets"),
        "{message}"
    );
    assert!(
        !cluster
            .log
            .iter()
            .any(|l| l.contains("InferenceService") || l.starts_with("POST Pod")),
        "no model is looked at, no Pod created: {:#?}",
        cluster.log
    );
}
