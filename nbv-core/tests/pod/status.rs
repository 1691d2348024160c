//! What a Pod's status means for the run.

use super::*;

// ---------------------------------------------------------------------------------------
// What a Pod's status means
// ---------------------------------------------------------------------------------------

pub(super) fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0)
        .single()
        .expect("date")
        + TimeDelta::minutes(minutes)
}

/// The Pod of a job with HTTPS credentials, created at `at(0)`, with `status`.
fn observed(status: Value) -> Pod {
    let mut pod = pod_of(&job_with(json!({
        "notebook": {"git": {"credentialsSecret": "git-creds"}},
        "podConfig": {"resources": {"limits": {"memory": "2Gi"}}},
    })));
    let mut value = serde_json::to_value(&pod).expect("JSON");
    value["metadata"]["creationTimestamp"] = json!("2026-01-24T22:00:00Z");
    value["status"] = status;
    pod = serde_json::from_value(value).expect("a pod");
    pod
}

fn container_status(name: &str, state: Value) -> Value {
    json!({"name": name, "image": format!("image-of-{name}"), "imageID": "", "ready": false,
           "restartCount": 0, "state": state})
}

fn terminated(name: &str, exit_code: i32, reason: Option<&str>, message: &str) -> Value {
    container_status(
        name,
        json!({"terminated": {"exitCode": exit_code, "reason": reason, "message": message}}),
    )
}

fn waiting(name: &str, reason: &str, message: &str) -> Value {
    container_status(
        name,
        json!({"waiting": {"reason": reason, "message": message}}),
    )
}

fn failed_pod(pod_reason: Option<&str>, init: Vec<Value>, main: Vec<Value>) -> Value {
    json!({"phase": "Failed", "reason": pod_reason, "startTime": "2026-01-24T22:00:05Z",
           "initContainerStatuses": init, "containerStatuses": main})
}

fn clone_ok() -> Value {
    terminated(CLONE_CONTAINER, 0, Some("Completed"), "")
}

fn cell_error_report() -> String {
    RunReport {
        cells: vec![
            ReportedCell {
                index: 0,
                outcome: CellOutcome::Succeeded,
                seconds: Some(1.2),
                error: None,
            },
            ReportedCell {
                index: 4,
                outcome: CellOutcome::Failed,
                seconds: Some(0.1),
                error: Some("KeyError: 'x'".to_owned()),
            },
            ReportedCell {
                index: 5,
                outcome: CellOutcome::Skipped,
                seconds: None,
                error: None,
            },
        ],
        error: Some(RunError {
            kind: RunErrorKind::Cell,
            cell: Some(4),
            ename: "KeyError".to_owned(),
            evalue: "'x'".to_owned(),
        }),
        cmp: None,
        chk: None,
        mdl: None,
        dropped: 0,
    }
    .encode()
}

/// The report of a run whose checks found `findings` (`fail` or `warn` each), with a
/// `check` error when one fails and `with_error`.
fn checked_report(findings: &[(u64, Rule, Outcome, &str)], with_error: bool) -> String {
    let findings: Vec<Finding> = findings
        .iter()
        .map(|(cell, rule, outcome, message)| Finding {
            cell: Some(*cell),
            rule: *rule,
            outcome: *outcome,
            message: (*message).to_owned(),
        })
        .collect();
    let failing = findings.iter().find(|f| f.outcome == Outcome::Fail);
    RunReport {
        cells: vec![ReportedCell {
            index: 0,
            outcome: CellOutcome::Succeeded,
            seconds: Some(0.5),
            error: None,
        }],
        error: failing.filter(|_| with_error).map(|f| RunError {
            kind: RunErrorKind::Check,
            cell: f.cell,
            ename: f.rule.as_str().to_owned(),
            evalue: f.message.clone(),
        }),
        cmp: None,
        chk: Some(CheckReport { findings, more: 0 }),
        mdl: None,
        dropped: 0,
    }
    .encode()
}

/// A report of a prediction check: per model (model, ok, detail, actual), and the
/// error the script sets for the first failure (its reason).
fn prediction_report(
    models: &[(&str, bool, Option<&str>, Option<&str>)],
    reason: Option<&str>,
) -> String {
    let mdl: Vec<ReportedPrediction> = models
        .iter()
        .map(|(model, ok, detail, actual)| ReportedPrediction {
            model: (*model).to_owned(),
            ok: *ok,
            detail: detail.map(str::to_owned),
            actual: actual.map(str::to_owned),
        })
        .collect();
    let first = mdl.iter().find(|m| !m.ok);
    RunReport {
        cells: Vec::new(),
        error: reason.zip(first).map(|(reason, first)| RunError {
            kind: RunErrorKind::Model,
            cell: None,
            ename: reason.to_owned(),
            evalue: format!(
                "model {}: {}",
                first.model,
                first.detail.clone().unwrap_or_default()
            ),
        }),
        cmp: None,
        chk: None,
        mdl: Some(mdl),
        dropped: 0,
    }
    .encode()
}

fn report_with(kind: RunErrorKind, ename: &str, evalue: &str) -> String {
    RunReport {
        cells: Vec::new(),
        error: Some(RunError {
            kind,
            cell: None,
            ename: ename.to_owned(),
            evalue: evalue.to_owned(),
        }),
        cmp: None,
        chk: None,
        mdl: None,
        dropped: 0,
    }
    .encode()
}

/// `(case, pod status, minutes after creation)`.
pub(super) fn classification_cases() -> Vec<(&'static str, Value, i64)> {
    let nb = NOTEBOOK_CONTAINER;
    let cl = CLONE_CONTAINER;
    vec![
        ("pending, scheduled, pulling", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:05Z",
            "containerStatuses": [waiting(nb, "ContainerCreating", "")]}), 10),
        ("image pull back-off within the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": [clone_ok()],
            "containerStatuses": [waiting(nb, "ImagePullBackOff", "Back-off pulling image \"image-of-notebook\"")]}), 4),
        ("image pull back-off after the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "containerStatuses": [waiting(nb, "ImagePullBackOff", "Back-off pulling image \"image-of-notebook\"")]}), 6),
        ("image does not exist", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "containerStatuses": [waiting(nb, "ErrImagePull", "rpc error: code = NotFound desc = failed to pull and unpack image: manifest unknown")]}), 6),
        ("invalid image name", json!({"phase": "Pending",
            "containerStatuses": [waiting(nb, "InvalidImageName", "couldn't parse image name \"Bad Image\"")]}), 0),
        ("missing secret within the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": [waiting(cl, "CreateContainerConfigError", "secret \"git-creds\" not found")]}), 1),
        ("missing secret after the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": [waiting(cl, "CreateContainerConfigError", "secret \"git-creds\" not found")]}), 5),
        ("runtime cannot create the container", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "containerStatuses": [waiting(nb, "CreateContainerError", "context deadline exceeded")]}), 7),
        ("unschedulable past the deadline", json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}), 31),
        ("unschedulable within the deadline", json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}]}), 29),
        ("running", json!({"phase": "Running"}), 1),
        ("node unreachable", json!({"phase": "Unknown"}), 1),
        ("succeeded", json!({"phase": "Succeeded", "initContainerStatuses": [clone_ok()],
            "containerStatuses": [terminated(nb, 0, Some("Completed"),
                &RunReport { cells: vec![
                    ReportedCell { index: 1, outcome: CellOutcome::Succeeded, seconds: Some(1.25), error: None },
                    ReportedCell { index: 3, outcome: CellOutcome::Succeeded, seconds: Some(10.0), error: None }],
                    error: None, cmp: None, chk: None, mdl: None, dropped: 0 }.encode())]}), 3),
        ("a check failed", json!({"phase": "Failed", "initContainerStatuses": [clone_ok()],
            "containerStatuses": [terminated(nb, 1, Some("Error"), &checked_report(&[
                (2, Rule::Shape, Outcome::Fail, "cell 2: expected shape -1,3, got 3,2"),
                (4, Rule::Nan, Outcome::Fail, "cell 4: the value is NaN"),
                (3, Rule::Stderr, Outcome::Warn, "cell 3 wrote to stderr: loading")], true))]}), 3),
        ("succeeded, but a check finding fails", json!({"phase": "Succeeded", "initContainerStatuses": [clone_ok()],
            "containerStatuses": [terminated(nb, 0, Some("Completed"), &checked_report(&[
                (2, Rule::Type, Outcome::Fail, "cell 2: expected a float, got a str")], false))]}), 3),
        ("succeeded with check warnings", json!({"phase": "Succeeded", "initContainerStatuses": [clone_ok()],
            "containerStatuses": [terminated(nb, 0, Some("Completed"), &checked_report(&[
                (3, Rule::Warning, Outcome::Warn, "cell 3 raised FutureWarning: the default will change"),
                (5, Rule::Stderr, Outcome::Warn, "cell 5 wrote to stderr: loading")], false))]}), 3),
        ("succeeded, result unreadable", json!({"phase": "Succeeded",
            "containerStatuses": [terminated(nb, 0, Some("Completed"), "Executing: 100%|██████████| 8/8")]}), 3),
        ("succeeded, no result", json!({"phase": "Succeeded", "containerStatuses": [terminated(nb, 0, Some("Completed"), "")]}), 3),
        ("cell raised", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"), &cell_error_report())]), 3),
        ("notebook missing", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Missing, "FileNotFoundError", "No such file: notebooks/train.ipynb"))]), 3),
        ("papermill missing", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Setup, "ModuleNotFoundError", "No module named 'papermill'"))]), 3),
        ("kernel died", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Kernel, "DeadKernelError", "Kernel died"))]), 3),
        ("not a notebook", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Invalid, "NotJSONError", "Notebook does not appear to be JSON: ''"))]), 3),
        ("golden notebook missing", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Golden, "FileNotFoundError", "No such golden notebook: /workspace/repo/golden.ipynb"))]), 3),
        ("golden notebook unreadable", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Golden, "JSONDecodeError", "/workspace/repo/golden.ipynb: Expecting value"))]), 3),
        ("outputs differ from the golden notebook", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Comparison, "GoldenMismatch", "1 of 3 code cells differ from the golden notebook; cell 2: output 0 (stream:stdout) differs"))]), 3),
        ("a model answers otherwise than expected", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &prediction_report(&[("ml/fraud", false, Some("at $[0]: expected 1, the model answered 0 (tolerance 0.01)"), Some("[0]")), ("ml/iris", true, None, None)], Some("PredictionMismatch")))]), 3),
        ("a model does not answer", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &prediction_report(&[("ml/fraud", false, Some("HTTP 503 from http://fraud.ml.svc.cluster.local/v1/models/fraud:predict: unavailable"), None)], Some("PredictionFailed")))]), 3),
        ("a model error without the answers", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Model, "PredictionFailed", "model ml/fraud: cannot reach http://fraud.ml.svc.cluster.local/v1/models/fraud:predict: [Errno 111] Connection refused"))]), 3),
        ("script crashed", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Internal, "PermissionError", "[Errno 13] Permission denied: '/workspace/out.ipynb'"))]), 3),
        ("timeout", failed_pod(Some("DeadlineExceeded"), vec![clone_ok()], vec![terminated(nb, 137, Some("Error"), "")]), 31),
        ("timeout before the notebook started", failed_pod(Some("DeadlineExceeded"), vec![clone_ok()],
            vec![waiting(nb, "ImagePullBackOff", "Back-off pulling image \"quay.io/example/papermill:1\"")]), 31),
        ("evicted", failed_pod(Some("Evicted"), vec![clone_ok()], vec![terminated(nb, 137, Some("Error"), "")])
            .tap(|v| v["message"] = json!("The node was low on resource: memory.")), 10),
        ("node lost", failed_pod(Some("NodeLost"), vec![clone_ok()], vec![]), 10),
        ("preempted", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 143, Some("Error"), "")])
            .tap(|v| v["conditions"] = json!([{"type": "DisruptionTarget", "status": "True",
                "reason": "PreemptionByScheduler", "message": "preempted by ml/high-priority"}])), 10),
        ("garbage-collected with its node", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 137, None, "")])
            .tap(|v| v["conditions"] = json!([{"type": "DisruptionTarget", "status": "True",
                "reason": "DeletionByPodGC", "message": "PodGC: node no longer exists"}])), 10),
        ("out of memory", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 137, Some("OOMKilled"), "")]), 10),
        ("container state lost", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 137, Some("ContainerStatusUnknown"),
            "The container could not be located when the pod was terminated")]), 10),
        ("image cannot run python3", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 128, Some("StartError"),
            "exec: \"python3\": executable file not found in $PATH")]), 1),
        ("log tail: no such file", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: 'x.ipynb'")]), 1),
        ("log tail: unknown", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 2, Some("Error"), "Segmentation fault")]), 1),
        ("clone: credentials refused", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "fatal: Authentication failed for 'https://bot:ghp_s3cr3t@github.com/org/repo.git/'")], vec![]), 1),
        ("clone: ssh host key", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "Host key verification failed.\nfatal: Could not read from remote repository.")], vec![]), 1),
        ("clone: unreachable", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "fatal: unable to access 'https://github.com/org/repo.git/': Could not resolve host: github.com")], vec![]), 1),
        ("clone: ref missing", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "nbv: fetching nope alone failed; fetching the whole repository\nerror: pathspec 'nope^{commit}' did not match any file(s) known to git")], vec![]), 1),
        ("rejected by the kubelet", failed_pod(Some("OutOfcpu"), vec![], vec![])
            .tap(|v| v["message"] = json!("Pod Node didn't have enough resource: cpu, requested: 4000, used: 1000, capacity: 2000")), 0),
    ]
}

trait Tap {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}

impl Tap for Value {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}

fn describe(event: Option<&PhaseEvent>) -> String {
    match event {
        None => "nothing to report".to_owned(),
        Some(PhaseEvent::PodRunning { pod }) => format!("PodRunning {}", pod.name),
        Some(PhaseEvent::PodSucceeded {
            results, message, ..
        }) => format!(
            "PodSucceeded, {} results: {}",
            results.len(),
            message.as_deref().unwrap_or_default()
        ),
        Some(PhaseEvent::PodFailed {
            failure, results, ..
        }) => format!(
            "PodFailed {:?} {}, {} results: {}",
            failure.kind,
            failure.reason,
            results.len(),
            failure.message
        ),
        Some(other) => format!("unexpected {}", other.name()),
    }
}

#[test]
fn pod_statuses_are_classified() {
    let mut table = String::new();
    for (case, status, minutes) in classification_cases() {
        let pod = observed(status);
        let event = observe_pod(&pod, at(minutes), DEFAULT_START_GRACE).expect("a validation pod");
        if let Some(PhaseEvent::PodFailed { failure, .. }) = &event {
            assert!(
                !failure.message.contains("ghp_s3cr3t"),
                "{case}: a credential leaked"
            );
        }
        table.push_str(&format!("{case}\n  {}\n", describe(event.as_ref())));
    }
    insta::assert_snapshot!("classification", table);
}

#[test]
fn classification_kinds_follow_the_causes() {
    // Every failure's kind is its cause's kind, and the cases cover every kind of
    // Pod failure nbv reports (all causes but those the shell reports itself).
    let mut seen = BTreeSet::new();
    for (case, status, minutes) in classification_cases() {
        let event =
            observe_pod(&observed(status), at(minutes), DEFAULT_START_GRACE).expect("a pod");
        if let Some(PhaseEvent::PodFailed { failure, .. }) = event {
            let cause = FailureCause::ALL
                .into_iter()
                .find(|c| c.as_str() == failure.reason.as_str())
                .unwrap_or_else(|| panic!("{case}: unknown reason {}", failure.reason));
            assert_eq!(failure.kind, cause.kind(), "{case}");
            seen.insert(cause);
        }
    }
    let reported_by_the_shell = [
        FailureCause::PodDeleted,
        FailureCause::PodSpecInvalid,
        // Decided before any build or Pod, by the cluster admin's pod policy.
        FailureCause::PodPolicyDenied,
        FailureCause::FieldNotSupported,
        // Decided before any Pod exists, by the run's build (nbv-core/tests/job/builds.rs).
        FailureCause::BuildNotSupported,
        FailureCause::BuildConfigInvalid,
        FailureCause::BuildApiNotServed,
        FailureCause::BuildFailed,
        FailureCause::BuildTimedOut,
        // Decided before any Pod exists, by the model gate.
        FailureCause::ModelUnavailable,
        // Read from the API server's answer to the Pod create (`PodRefusal`).
        FailureCause::PodSecurityViolation,
        FailureCause::SecurityContextConstraints,
        FailureCause::AdmissionWebhookDenied,
        FailureCause::AdmissionPolicyDenied,
        FailureCause::QuotaRequiresLimits,
        FailureCause::LimitRangeViolation,
        FailureCause::QuotaExceeded,
        FailureCause::PodCreateForbidden,
        FailureCause::NamespaceTerminating,
        FailureCause::AdmissionWebhookUnavailable,
        FailureCause::APIServerUnavailable,
        FailureCause::PodCreateFailed,
        FailureCause::InvalidAnnotation,
    ];
    let missing: Vec<_> = FailureCause::ALL
        .into_iter()
        .filter(|c| !seen.contains(c) && !reported_by_the_shell.contains(c))
        .collect();
    assert!(missing.is_empty(), "no case for {missing:?}");
}

#[test]
fn pods_nbv_did_not_label_are_refused() {
    let mut pod = observed(json!({"phase": "Running"}));
    pod.metadata.labels = Some(BTreeMap::from([(
        ATTEMPT_LABEL.to_owned(),
        "first".to_owned(),
    )]));
    let err = observe_pod(&pod, at(0), DEFAULT_START_GRACE).expect_err("refused");
    assert_eq!(err.pod, "train-g3-r1");
    assert!(err.problem.contains("invalid attempt"), "{}", err.problem);
    pod.metadata.labels = None;
    assert!(observe_pod(&pod, at(0), DEFAULT_START_GRACE).is_err());
}

#[test]
fn the_start_grace_is_a_setting() {
    let pod = observed(
        json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
        "containerStatuses": [waiting(NOTEBOOK_CONTAINER, "ImagePullBackOff", "Back-off")]}),
    );
    assert_eq!(
        observe_pod(&pod, at(2), Duration::from_secs(60 * 3)).expect("pod"),
        None
    );
    assert!(
        observe_pod(&pod, at(2), Duration::from_secs(60))
            .expect("pod")
            .is_some()
    );
}

pub(super) fn arbitrary_status() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "\\PC{0,80}",
        Just(
            "fatal: Authentication failed for 'https://bot:ghp_s3cr3t@example.com/r.git/'"
                .to_owned()
        ),
        Just("token=ghp_s3cr3t".to_owned()),
        Just(cell_error_report()),
    ];
    let phase = proptest::option::of(prop_oneof![
        Just("Pending"),
        Just("Running"),
        Just("Succeeded"),
        Just("Failed"),
        Just("Unknown"),
        Just("Weird"),
    ]);
    let reason = proptest::option::of(prop_oneof![
        Just("DeadlineExceeded".to_owned()),
        Just("Evicted".to_owned()),
        Just("NodeLost".to_owned()),
        "[A-Za-z]{0,12}",
    ]);
    let state = prop_oneof![
        (any::<i32>(), proptest::option::of("[A-Za-z]{0,12}"), text.clone())
            .prop_map(|(code, reason, message)| json!({"terminated": {"exitCode": code, "reason": reason, "message": message}})),
        (prop_oneof![Just("ErrImagePull".to_owned()), Just("CreateContainerConfigError".to_owned()), "[A-Za-z]{0,12}"], text.clone())
            .prop_map(|(reason, message)| json!({"waiting": {"reason": reason, "message": message}})),
        Just(json!({"running": {}})),
        Just(json!({})),
    ];
    let status = (
        prop_oneof![
            Just(CLONE_CONTAINER),
            Just(NOTEBOOK_CONTAINER),
            Just("sidecar")
        ],
        state,
    )
        .prop_map(|(name, state)| container_status(name, state));
    (phase, reason, text, proptest::collection::vec(status.clone(), 0..3), proptest::collection::vec(status, 0..3))
        .prop_map(|(phase, reason, message, init, main)| json!({
            "phase": phase, "reason": reason, "message": message, "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": init, "containerStatuses": main,
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]
        }))
}

proptest! {
    #[test]
    fn any_status_is_classified_without_panic_or_leak(status in arbitrary_status(), minutes in 0i64..120) {
        let pod = observed(status);
        let event = observe_pod(&pod, at(minutes), DEFAULT_START_GRACE).expect("a validation pod");
        match &event {
            Some(PhaseEvent::PodFailed { failure, .. }) => {
                prop_assert!(!failure.message.contains("ghp_s3cr3t"), "{}", failure.message);
                let cause = FailureCause::ALL.into_iter().find(|c| c.as_str() == failure.reason.as_str());
                prop_assert_eq!(cause.map(FailureCause::kind), Some(failure.kind));
            }
            Some(PhaseEvent::PodSucceeded { message, .. }) => {
                prop_assert!(!message.as_deref().unwrap_or_default().contains("ghp_s3cr3t"));
            }
            _ => {}
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        match phase {
            Some("Running") => prop_assert!(matches!(event, Some(PhaseEvent::PodRunning { .. })), "{:?}", event),
            Some("Succeeded") => prop_assert!(matches!(event, Some(PhaseEvent::PodSucceeded { .. })), "{:?}", event),
            Some("Failed") => prop_assert!(matches!(event, Some(PhaseEvent::PodFailed { .. })), "{:?}", event),
            Some("Unknown" | "Weird") => prop_assert!(event.is_none()),
            _ => prop_assert!(!matches!(event, Some(PhaseEvent::PodRunning { .. } | PhaseEvent::PodSucceeded { .. })), "{:?}", event),
        }
        if let Some(PhaseEvent::PodFailed { pod: pod_ref, .. } | PhaseEvent::PodRunning { pod: pod_ref } | PhaseEvent::PodSucceeded { pod: pod_ref, .. }) = &event {
            prop_assert_eq!(pod_ref.attempt, ATTEMPT);
        }
    }
}
