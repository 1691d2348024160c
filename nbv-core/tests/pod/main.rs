//! The validation Pod: snapshots of the Pod of every upstream sample, the properties
//! every Pod has (restricted profile, names, owner, no job value in a command line, a
//! small spec), the result format and its 4 KiB budget, and the classification of Pod
//! statuses. `nbv pod`, which the Pod's containers run, is tested in nbv-operator.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use k8s_openapi::api::core::v1::{Container, Pod};
use nbv_core::api::{CellStatus, NotebookValidationJob};
use nbv_core::checks::{CheckReport, Finding, Outcome, Rule};
use nbv_core::compare::{ReportedComparison, ReportedDiff};
use nbv_core::models::ReportedPrediction;
use nbv_core::phase::{Attempt, PhaseEvent};
use nbv_core::pod::{
    ATTEMPT_LABEL, CLONE_CONTAINER, CellOutcome, DEFAULT_START_GRACE, FailureCause, JOB_LABEL,
    MANAGED_BY, MANAGED_BY_LABEL, MAX_REPORT_BYTES, NOTEBOOK_CONTAINER, Platform, PodDefaults,
    PodSpecError, ReportedCell, RunError, RunErrorKind, RunReport, TOOLS_CONTAINER,
    is_controlled_by, is_dns_label, job_label_value, observe_pod, pod_name, pod_ref,
    validation_pod,
};
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream/samples")
}

/// Every NotebookValidationJob of the upstream samples, as read from the API server:
/// with a namespace (`default` when the sample has none), a uid and a generation.
fn sample_jobs() -> Vec<NotebookValidationJob> {
    let mut files: Vec<_> = std::fs::read_dir(samples_dir())
        .expect("samples dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    let mut jobs = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable sample");
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: Value = serde::Deserialize::deserialize(doc).expect("YAML");
            if value["kind"] != "NotebookValidationJob" {
                continue;
            }
            let mut job: NotebookValidationJob = serde_json::from_value(value).expect("a job");
            let name = job.metadata.name.clone().expect("named");
            job.metadata
                .namespace
                .get_or_insert_with(|| "default".to_owned());
            job.metadata.uid = Some(format!("uid-{name}"));
            job.metadata.generation = Some(1);
            jobs.push(job);
        }
    }
    jobs
}

/// A job `ml/train` with `spec` merged over a minimal spec.
fn job_with(spec: Value) -> NotebookValidationJob {
    let mut base = json!({
        "notebook": {"git": {"url": "https://example.com/org/repo.git", "ref": "main"},
                     "path": "notebooks/train.ipynb"},
        "podConfig": {"containerImage": "quay.io/example/papermill:1"}
    });
    merge(&mut base, spec);
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train", "generation": 3},
        "spec": base
    }))
    .expect("a job")
}

fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, patch) => *base = patch,
    }
}

const ATTEMPT: Attempt = Attempt::new(3, 1);

fn pod_of(job: &NotebookValidationJob) -> Pod {
    validation_pod(job, ATTEMPT, None, None, &PodDefaults::default()).expect("a pod")
}

/// The Pod's YAML, nbv's image tag left out (it changes with every release).
macro_rules! assert_pod_snapshot {
    ($name:expr, $pod:expr) => {
        insta::assert_yaml_snapshot!($name, $pod, {
            ".spec.initContainers[].image" => "[nbv image]",
        })
    };
}

fn containers(pod: &Pod) -> Vec<&Container> {
    let spec = pod.spec.as_ref().expect("spec");
    spec.init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .collect()
}

fn env_value<'a>(container: &'a Container, name: &str) -> Option<&'a str> {
    container
        .env
        .iter()
        .flatten()
        .rev() // the last definition wins
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
}

fn container<'a>(pod: &'a Pod, name: &str) -> &'a Container {
    containers(pod)
        .into_iter()
        .find(|c| c.name == name)
        .expect("container")
}

fn arbitrary_report() -> impl Strategy<Value = RunReport> {
    let outcome = prop_oneof![
        Just(CellOutcome::Succeeded),
        Just(CellOutcome::Failed),
        Just(CellOutcome::Skipped),
    ];
    let seconds = proptest::option::of((0u32..100_000).prop_map(|c| f64::from(c) / 100.0));
    let text = prop_oneof!["\\PC{0,300}", "[\\x00-\\x1f\"\\\\]{0,400}", "é{0,200}"];
    let cell = (outcome, seconds, proptest::option::of(text.clone()));
    let cells = proptest::collection::vec(cell, 0..400);
    let kind = prop_oneof![
        Just(RunErrorKind::Cell),
        Just(RunErrorKind::Missing),
        Just(RunErrorKind::Setup),
        Just(RunErrorKind::Internal),
    ];
    let error = proptest::option::of((
        kind,
        text.clone(),
        text.clone(),
        any::<prop::sample::Index>(),
    ));
    let cmp = proptest::option::weighted(0.5, arbitrary_comparison(text.clone().boxed()));
    let finding = (
        proptest::option::of(0u64..500),
        prop::sample::select(vec![
            Rule::Stderr,
            Rule::Warning,
            Rule::Nan,
            Rule::Shape,
            Rule::Assertions,
        ]),
        prop_oneof![Just(Outcome::Warn), Just(Outcome::Fail)],
        text.clone(),
    )
        .prop_map(|(cell, rule, outcome, message)| Finding {
            cell,
            rule,
            outcome,
            message,
        });
    let chk = proptest::option::of(proptest::collection::vec(finding, 0..30));
    let prediction = (
        prop_oneof!["[a-z]{1,20}/[a-z0-9-]{1,40}", text.clone()],
        any::<bool>(),
        proptest::option::of(text.clone()),
        proptest::option::of(text),
    )
        .prop_map(|(model, ok, detail, actual)| ReportedPrediction {
            model,
            ok,
            detail,
            actual,
        });
    let mdl = proptest::option::of(proptest::collection::vec(prediction, 0..12));
    (cells, error, cmp, chk, mdl).prop_map(|(cells, error, cmp, chk, mdl)| {
        let cells: Vec<ReportedCell> = cells
            .into_iter()
            .enumerate()
            .map(|(i, (outcome, seconds, error))| ReportedCell {
                index: i as u64 * 2,
                outcome,
                seconds,
                error,
            })
            .collect();
        let error = error.map(|(kind, ename, evalue, at)| RunError {
            kind,
            cell: (kind == RunErrorKind::Cell && !cells.is_empty())
                .then(|| cells[at.index(cells.len())].index),
            ename,
            evalue,
        });
        RunReport {
            cells,
            error,
            cmp,
            chk: chk.map(|findings| CheckReport { findings, more: 0 }),
            mdl,
            dropped: 0,
        }
    })
}

/// Comparison reports as a script may write them: any counts, long texts, many diffs.
fn arbitrary_comparison(text: BoxedStrategy<String>) -> impl Strategy<Value = ReportedComparison> {
    let diff = (
        0u64..500,
        prop_oneof![
            Just("output_content"),
            Just("missing_cell"),
            Just("execution_count")
        ],
        prop_oneof![Just("minor"), Just("major"), Just("critical")],
        proptest::option::of(text.clone()),
        proptest::option::of(text.clone()),
        text,
    )
        .prop_map(
            |(cell, kind, severity, expected, actual, diff)| ReportedDiff {
                cell,
                kind: kind.to_owned(),
                severity: severity.to_owned(),
                expected,
                actual,
                diff,
            },
        );
    (
        prop_oneof![Just("matched"), Just("failed")],
        prop_oneof![Just("exact"), Just("normalized")],
        0u64..1000,
        0u64..1000,
        proptest::collection::vec(diff, 0..40),
    )
        .prop_map(
            |(result, strategy, total, matched, diffs)| ReportedComparison {
                result: result.to_owned(),
                strategy: strategy.to_owned(),
                total,
                matched,
                mismatched: diffs.len() as u64,
                diffs,
                more: 0,
            },
        )
}

mod defaults;
mod observed;
mod policy;
mod properties;
mod report;
mod spec;
mod status;
