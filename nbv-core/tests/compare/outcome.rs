//! What nbv makes of a comparing Pod's status: the comparison in the event (and so in
//! `status.comparisonResult`), a mismatch as a permanent failure naming the cell, even
//! when the Pod ended Succeeded, and the health checks saying so.

use chrono::{TimeZone, Utc};
use k8s_openapi::api::core::v1::Pod;
use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus, Phase};
use nbv_core::compare::compare;
use nbv_core::health::{HealthStatusCode, Variant, assess_job};
use nbv_core::phase::{Attempt, FailureKind, PhaseEvent};
use nbv_core::pod::{
    CLONE_CONTAINER, DEFAULT_START_GRACE, GOLDEN_CLONE_CONTAINER, NOTEBOOK_CONTAINER, PodDefaults,
    RunError, RunErrorKind, RunReport, observe_pod, validation_pod,
};

use super::*;

/// The Pod of a job whose golden notebook is in another repository, with `status`.
fn pod(status: Value) -> Pod {
    let job: NotebookValidationJob = serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
        "spec": {
            "notebook": {"git": {"url": "https://git.example.com/m.git", "ref": "main"}, "path": "train.ipynb"},
            "goldenNotebook": {"git": {"url": "https://git.example.com/goldens.git", "ref": "v1",
                                       "credentialsSecret": "golden-creds"}, "path": "train.ipynb"},
            "podConfig": {"containerImage": "quay.io/example/papermill:1"}
        }
    }))
    .expect("a job");
    let pod = validation_pod(
        &job,
        Attempt::new(1, 0),
        None,
        None,
        &PodDefaults::default(),
    )
    .expect("a pod");
    let mut value = serde_json::to_value(&pod).expect("JSON");
    value["metadata"]["creationTimestamp"] = json!("2026-01-24T22:00:00Z");
    value["status"] = status;
    serde_json::from_value(value).expect("a pod")
}

fn terminated(name: &str, code: i32, message: &str) -> Value {
    json!({"name": name, "image": "i", "imageID": "", "ready": false, "restartCount": 0,
           "state": {"terminated": {"exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
                                     "message": message}}})
}

fn ended(phase: &str, inits: Vec<Value>, report: &str) -> Value {
    let code = i32::from(phase == "Failed");
    json!({"phase": phase, "initContainerStatuses": inits,
           "containerStatuses": [terminated(NOTEBOOK_CONTAINER, code, report)]})
}

fn clones_ok() -> Vec<Value> {
    vec![
        terminated(CLONE_CONTAINER, 0, ""),
        terminated(GOLDEN_CLONE_CONTAINER, 0, ""),
    ]
}

fn cell(text: &str) -> Value {
    json!({"cell_type": "code", "execution_count": 1, "outputs": [
        {"output_type": "stream", "name": "stdout", "text": text}]})
}

fn report(golden: &[&str], run: &[&str], error: Option<RunError>) -> String {
    let notebook =
        |texts: &[&str]| json!({"cells": texts.iter().map(|t| cell(t)).collect::<Vec<_>>()});
    let cmp = compare(&notebook(run), &notebook(golden), &Settings::default()).reported();
    RunReport {
        cmp: Some(cmp),
        error,
        ..RunReport::default()
    }
    .encode()
}

fn describe(event: &PhaseEvent) -> String {
    match event {
        PhaseEvent::PodSucceeded {
            message,
            comparison,
            ..
        } => format!(
            "PodSucceeded: {}\n    comparison: {}",
            message.as_deref().unwrap_or_default(),
            serde_json::to_string(comparison).unwrap()
        ),
        PhaseEvent::PodFailed {
            failure,
            comparison,
            ..
        } => format!(
            "PodFailed {:?} {}: {}\n    comparison: {}",
            failure.kind,
            failure.reason,
            failure.message,
            serde_json::to_string(comparison).unwrap()
        ),
        other => format!("unexpected {}", other.name()),
    }
}

#[test]
fn comparing_pods_are_classified() {
    let mismatch = report(
        &["accuracy 0.93\n", "ok\n"],
        &["accuracy 0.95\n", "ok\n"],
        None,
    );
    let reported_mismatch = report(
        &["accuracy 0.93\n"],
        &["accuracy 0.95\n"],
        Some(RunError {
            kind: RunErrorKind::Comparison,
            cell: None,
            ename: "GoldenMismatch".to_owned(),
            evalue: "1 of 1 code cells differ from the golden notebook".to_owned(),
        }),
    );
    let golden_missing = RunReport {
        error: Some(RunError {
            kind: RunErrorKind::Golden,
            cell: None,
            ename: "FileNotFoundError".to_owned(),
            evalue: "No such golden notebook: /workspace/golden/train.ipynb".to_owned(),
        }),
        ..RunReport::default()
    }
    .encode();
    let golden_invalid = RunReport {
        error: Some(RunError {
            kind: RunErrorKind::Golden,
            cell: None,
            ename: "JSONDecodeError".to_owned(),
            evalue: "/workspace/golden/train.ipynb: Expecting value: line 1 column 1 (char 0)"
                .to_owned(),
        }),
        ..RunReport::default()
    }
    .encode();
    let cases = [
        (
            "matched",
            ended(
                "Succeeded",
                clones_ok(),
                &report(&["a 1\n"], &["a  1.00001\n"], None),
            ),
        ),
        (
            "mismatch in a Pod that ended Succeeded",
            ended("Succeeded", clones_ok(), &mismatch),
        ),
        (
            "mismatch reported by the script",
            ended("Failed", clones_ok(), &reported_mismatch),
        ),
        (
            "no comparison reported",
            ended("Succeeded", clones_ok(), &RunReport::default().encode()),
        ),
        ("no result at all", ended("Succeeded", clones_ok(), "")),
        (
            "golden notebook missing",
            ended("Failed", clones_ok(), &golden_missing),
        ),
        (
            "golden notebook unreadable",
            ended("Failed", clones_ok(), &golden_invalid),
        ),
        (
            "golden clone refused",
            json!({"phase": "Failed", "initContainerStatuses": [terminated(CLONE_CONTAINER, 0, ""),
                terminated(GOLDEN_CLONE_CONTAINER, 128, "fatal: Authentication failed for 'https://git.example.com/goldens.git/'")]}),
        ),
        (
            "golden ref missing",
            json!({"phase": "Failed", "initContainerStatuses": [terminated(CLONE_CONTAINER, 0, ""),
                terminated(GOLDEN_CLONE_CONTAINER, 128, "error: pathspec 'v1^{commit}' did not match any file(s) known to git")]}),
        ),
    ];
    let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 5, 0).unwrap();
    let mut table = String::new();
    for (case, status) in cases {
        let event = observe_pod(&pod(status), now, DEFAULT_START_GRACE)
            .expect("a validation pod")
            .expect("an event");
        if case != "matched" {
            let PhaseEvent::PodFailed { failure, .. } = &event else {
                panic!("{case}: {event:?}");
            };
            assert_eq!(failure.kind, FailureKind::Permanent, "{case}");
        }
        table.push_str(&format!("{case}\n  {}\n", describe(&event)));
    }
    insta::assert_snapshot!("comparing_pods", table);
}

#[test]
fn every_health_check_names_the_comparison_of_a_failed_job() {
    let mismatch = report(&["accuracy 0.93\n"], &["accuracy 0.95\n"], None);
    let event = observe_pod(
        &pod(ended("Succeeded", clones_ok(), &mismatch)),
        Utc::now(),
        DEFAULT_START_GRACE,
    )
    .expect("a validation pod")
    .expect("an event");
    let PhaseEvent::PodFailed {
        failure,
        comparison,
        ..
    } = event
    else {
        panic!("{event:?}");
    };
    let mut job = NotebookValidationJob::new("train", Default::default());
    job.status = Some(NotebookValidationJobStatus {
        phase: Some(Phase::Failed),
        message: Some(format!("Validation failed: {}", failure.message)),
        comparison_result: comparison,
        ..Default::default()
    });
    for variant in Variant::ALL {
        let health = assess_job(&job, variant);
        assert_eq!(health.status, HealthStatusCode::Degraded, "{variant:?}");
        assert!(
            health.message.contains("golden notebook") && health.message.contains("cell 0"),
            "{variant:?}: {}",
            health.message
        );
    }
}
