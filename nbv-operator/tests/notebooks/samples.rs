//! The sample jobs of `config/samples`, each run with a notebook that succeeds and one that
//! fails.

use super::*;

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../nbv-core/tests/data/upstream/samples")
}

/// Every NotebookValidationJob of every sample file, with its file name.
fn sample_jobs() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .expect("the samples directory exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let mut jobs = Vec::new();
    for path in files {
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 name")
            .to_owned();
        let text = std::fs::read_to_string(&path).expect("readable");
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let value = Value::deserialize(document)
                .unwrap_or_else(|e| panic!("{file}: a document is not YAML: {e}"));
            if value["kind"] == "NotebookValidationJob" {
                jobs.push((file.clone(), value));
            }
        }
    }
    jobs
}

fn build_enabled(job: &Value) -> bool {
    job.pointer("/spec/podConfig/buildConfig/enabled") == Some(&json!(true))
}

/// A scenario with `job` alone in its namespace (its own, or `default`), the
/// namespace, the ServiceAccount and Secrets it names (as the samples' prerequisites
/// create them), and `outcome` for its Pods.
fn sample_scenario(file: &str, job: &Value, outcome: &str) -> (Scenario, String) {
    let mut job = job.clone();
    let namespace = job["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_owned();
    job["metadata"]["namespace"] = json!(namespace);
    let name = job["metadata"]["name"]
        .as_str()
        .expect("a named job")
        .to_owned();
    let key = format!("{namespace}/{name}");

    let mut objects =
        vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})];
    let config = &job["spec"]["podConfig"];
    if let Some(account) = config["serviceAccountName"].as_str() {
        objects.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                            "metadata": {"name": account, "namespace": namespace}}));
    }
    let mut secrets: BTreeSet<&str> = BTreeSet::new();
    secrets.extend(
        job.pointer("/spec/notebook/git/credentialsSecret")
            .and_then(Value::as_str),
    );
    secrets.extend(
        config["credentials"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    secrets.extend(
        config["envFrom"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.pointer("/secretRef/name").and_then(Value::as_str)),
    );
    for secret in secrets {
        objects.push(json!({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": secret, "namespace": namespace},
                            "stringData": {"token": "placeholder"}}));
    }
    objects.push(job.clone());
    let scenario = json!({
        "name": format!("sample {file} {key} {outcome}"),
        "mode": "default",
        "epoch": EPOCH,
        "settle": "10m",
        "objects": objects,
        "podOutcomes": [{"job": key, "outcome": outcome, "runFor": "2m", "cells": 6}],
    });
    let scenario = Scenario::from_yaml(&scenario.to_string())
        .unwrap_or_else(|e| panic!("{file} {key}: the scenario does not read: {e}"));
    (scenario, key)
}

/// The field of a sample that asks for a check nbv does not carry out yet, as the
/// samples spell them.
fn unimplemented_field(job: &Value) -> Option<&'static str> {
    let spec = &job["spec"];
    let set = |field: &str| !spec[field].is_null();
    if set("validationConfig") {
        Some("spec.validationConfig")
    } else if set("retryPolicy") {
        Some("spec.retryPolicy")
    } else {
        None
    }
}

/// Checks a sample that asks for what nbv does not carry out: failed at once with
/// `reason` and a message starting with `message`, with no Pod.
fn assert_refused(report: &Report, key: &str, reason: &str, message: &str, what: &str) {
    let view = JobView::of(report, key);
    let render = report.render();
    assert_eq!(view.phase.as_deref(), Some("Failed"), "{what}\n{render}");
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", reason),
        "{what}"
    );
    let text = view.status.message.as_deref().unwrap_or_default();
    assert!(text.starts_with(message), "{what}: {text}");
    assert_eq!(ready.at, at("0:00"), "{what}");
    assert!(view.pods_created.is_empty(), "{what}\n{render}");
    assert!(view.kubelet.is_empty(), "{what}\n{render}");
    assert_eq!(view.completions, [Phase::Failed], "{what}");
    assert_eq!(view.notifications, ["ValidationFailed"], "{what}");
}

/// Checks a sample whose `podConfig.buildConfig.enabled` is true: the simulated build
/// system built its image, and the run used it, by digest.
fn assert_built(report: &Report, key: &str, what: &str) {
    let view = JobView::of(report, key);
    let build = view.status.build_status.clone().unwrap_or_default();
    assert_eq!(build.phase, Some(BuildPhase::Complete), "{what}: {build:?}");
    assert_eq!(build.strategy.as_deref(), Some("tekton"), "{what}");
    let image = build.image_reference.unwrap_or_default();
    assert!(
        image.starts_with("image-registry.openshift-image-registry.svc:5000/")
            && image.contains("/nbv-notebooks@sha256:"),
        "{what}: {image}"
    );
    assert!(
        build
            .build_name
            .as_deref()
            .is_some_and(|n| n.starts_with("nbv-build-")),
        "{what}"
    );
}

/// Whether a sample validates models (`spec.modelValidation`, not switched off).
fn validates_models(job: &Value) -> bool {
    let models = &job["spec"]["modelValidation"];
    !models.is_null() && models["enabled"] != json!(false)
}

/// Checks a sample that validates models none of which exists in the simulated
/// cluster: the job waits for them without a Pod, and fails when `timeout` (5m in the
/// samples) has passed, naming the first model.
fn assert_models_unavailable(report: &Report, key: &str, what: &str) {
    let view = JobView::of(report, key);
    let render = report.render();
    assert_eq!(view.phase.as_deref(), Some("Failed"), "{what}\n{render}");
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "ModelUnavailable"),
        "{what}"
    );
    assert_eq!(ready.at, at("5:00"), "{what}\n{render}");
    let text = view.status.message.as_deref().unwrap_or_default();
    assert!(
        text.contains("spec.modelValidation.timeout")
            && text.contains("fraud-detection-model does not exist"),
        "{what}: {text}"
    );
    assert!(view.pods_created.is_empty(), "{what}\n{render}");
    assert_eq!(view.completions, [Phase::Failed], "{what}");
    assert_eq!(view.notifications, ["ValidationFailed"], "{what}");
}

/// Checks a sample that asks for a check nbv does not carry out, naming `field`.
fn assert_field_refused(report: &Report, key: &str, field: &str, what: &str) {
    let message = format!("Validation failed: FieldNotSupported: {field}: ");
    assert_refused(report, key, "FieldNotSupported", &message, what);
}

#[test]
fn every_sample_job_succeeds_with_a_notebook_that_runs_through() {
    let jobs = sample_jobs();
    let mut by_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut refused = BTreeSet::new();
    let mut built = BTreeSet::new();
    for (file, job) in &jobs {
        *by_file.entry(file.as_str()).or_default() += 1;
        let (scenario, key) = sample_scenario(file, job, "succeeded");
        let what = format!("{file}: {key}");
        let report = play(&scenario);
        if build_enabled(job) {
            assert_built(&report, &key, &what);
            built.insert(key.clone());
        }
        if let Some(field) = unimplemented_field(job) {
            assert_field_refused(&report, &key, field, &what);
            refused.insert(key);
            continue;
        }
        if validates_models(job) {
            assert_models_unavailable(&report, &key, &what);
            refused.insert(key);
            continue;
        }
        let view = JobView::of(&report, &key);
        view.assert_results(6, None);
        let render = report.render();
        let name = key.split_once('/').map_or("", |(_, n)| n);
        let pod = format!("{name}-g1-r0");
        assert_eq!(view.phase.as_deref(), Some("Succeeded"), "{what}\n{render}");
        let ready = view.ready();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("True", "ValidationSucceeded"),
            "{what}"
        );
        // A sample with a golden notebook also says its outputs matched.
        let expected = format!("Notebook validation succeeded: {}", cells_ran(6));
        if ready.message != expected {
            assert!(
                ready
                    .message
                    .starts_with(&format!("{expected}; the outputs match the golden")),
                "{what}: {}",
                ready.message
            );
        }
        assert_eq!(view.pods_created, [pod.as_str()], "{what}\n{render}");
        assert_eq!(view.validation_pod(), Some(pod.as_str()), "{what}");
        assert_eq!(view.completions, [Phase::Succeeded], "{what}");
        assert_eq!(view.notifications, ["ValidationSucceeded"], "{what}");
    }
    // Every file with a job was read, every job of a multi-document file too.
    assert!(jobs.len() >= 14, "{by_file:#?}");
    assert_eq!(
        by_file.get("mlops_v1alpha1_notebookvalidationjob_gpu_scheduling.yaml"),
        Some(&4)
    );
    assert_eq!(
        by_file.get("mlops_v1alpha1_notebookvalidationjob_private.yaml"),
        Some(&2)
    );
    assert!(
        refused.contains("mlops/model-validation-kserve-example"),
        "{refused:?}"
    );
    // Both samples with a build build their image and run in it.
    assert_eq!(built.len(), 2, "{built:?}");
    assert!(
        built.contains("default/notebookvalidationjob-tekton-sample"),
        "{built:?}"
    );
    // The golden sample runs, compared with its golden notebook.
    assert!(
        !refused.contains("default/notebookvalidationjob-golden-sample"),
        "{refused:?}"
    );
}

#[test]
fn every_sample_job_fails_with_a_notebook_whose_cell_raises() {
    let jobs = sample_jobs();
    assert!(!jobs.is_empty());
    for (file, job) in &jobs {
        let (scenario, key) = sample_scenario(file, job, "failed");
        let what = format!("{file}: {key}");
        let report = play(&scenario);
        if build_enabled(job) {
            assert_built(&report, &key, &what);
        }
        if let Some(field) = unimplemented_field(job) {
            assert_field_refused(&report, &key, field, &what);
            continue;
        }
        if validates_models(job) {
            assert_models_unavailable(&report, &key, &what);
            continue;
        }
        let view = JobView::of(&report, &key);
        view.assert_results(6, Some(5));
        let render = report.render();
        assert_eq!(view.phase.as_deref(), Some("Failed"), "{what}\n{render}");
        let ready = view.ready();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "NotebookCellFailed"),
            "{what}"
        );
        assert_eq!(
            ready.message,
            format!("Validation failed: NotebookCellFailed: cell 5: {CELL_ERROR}"),
            "{what}"
        );
        assert_eq!(view.pods_created.len(), 1, "{what}\n{render}");
        assert_eq!(view.completions, [Phase::Failed], "{what}");
        assert_eq!(view.notifications, ["ValidationFailed"], "{what}");
    }
}
