//! The Flux health check of NotebookValidationJob (`config/flux/training.yaml`,
//! `healthCheckExprs`), evaluated with a CEL interpreter the way kustomize-controller
//! does (fluxcd/pkg `runtime/cel`, RFC 0009):
//!
//! 1. when `status.observedGeneration` exists and differs from `metadata.generation`,
//!    the object is InProgress without evaluating anything;
//! 2. then `inProgress`, `failed`, `current`, in that order: the first that is true
//!    decides; none true is InProgress;
//! 3. the expressions see the object's top-level fields as variables; an evaluation
//!    error (a job with no `status` at all, or `status: null`) makes the object's
//!    status Unknown, which a Kustomization with `wait` keeps waiting on, as on
//!    InProgress.
//!
//! They must mean what nbv's Argo CD health check means on every object of its suites
//! (`config/argocd/tests/**/health_test.yaml`): Healthy is Current, Degraded is Failed,
//! Progressing is InProgress, the suites' stale-generation objects included. Every
//! object is also made stale (`observedGeneration` < `generation`) and must then be
//! InProgress whatever its phase.

mod repository;

use std::collections::BTreeSet;

use cel::{Context, Program};
use repository::{documents, root};
use serde_json::Value;

const TRAINING: &str = "config/flux/training.yaml";
const SUITES: &str = "config/argocd/tests/mlops.mlops.dev/NotebookValidationJob";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    InProgress,
    Failed,
    Current,
    /// An expression could not be evaluated: Flux reports the error and waits.
    Unknown,
}

struct Exprs {
    in_progress: Program,
    failed: Program,
    current: Program,
}

fn exprs() -> Exprs {
    let kustomization = documents(TRAINING).remove(0);
    let checks = kustomization["spec"]["healthCheckExprs"]
        .as_array()
        .expect("healthCheckExprs");
    let check = checks
        .iter()
        .find(|c| {
            c["kind"] == "NotebookValidationJob" && c["apiVersion"] == "mlops.mlops.dev/v1alpha1"
        })
        .expect("a health check for NotebookValidationJob");
    let compile = |key: &str| {
        let text = check[key]
            .as_str()
            .unwrap_or_else(|| panic!("no {key} expression"));
        Program::compile(text).unwrap_or_else(|e| panic!("{key} does not compile: {e}"))
    };
    Exprs {
        in_progress: compile("inProgress"),
        failed: compile("failed"),
        current: compile("current"),
    }
}

/// One expression on `object`: `Some(bool)`, or `None` when it cannot be evaluated.
fn eval(program: &Program, object: &Value) -> Option<bool> {
    let mut context = Context::default();
    for (key, value) in object.as_object().unwrap() {
        context
            .add_variable(key.as_str(), cel::to_value(value).unwrap())
            .unwrap();
    }
    match program.execute(&context) {
        Ok(cel::Value::Bool(b)) => Some(b),
        _ => None,
    }
}

/// What kustomize-controller makes of `object`.
fn flux_status(exprs: &Exprs, object: &Value) -> Status {
    let observed = object
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    let generation = object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64);
    if let (Some(observed), Some(generation)) = (observed, generation)
        && observed != generation
    {
        return Status::InProgress;
    }
    expressions_status(exprs, object)
}

/// The status the expressions alone give, in Flux's order.
fn expressions_status(exprs: &Exprs, object: &Value) -> Status {
    for (program, status) in [
        (&exprs.in_progress, Status::InProgress),
        (&exprs.failed, Status::Failed),
        (&exprs.current, Status::Current),
    ] {
        match eval(program, object) {
            None => return Status::Unknown,
            Some(true) => return status,
            Some(false) => {}
        }
    }
    Status::InProgress
}

/// Every (object file, Argo CD health) of the suites.
fn suite_cases() -> Vec<(String, Value, String)> {
    let mut cases = Vec::new();
    for suite in [
        format!("{SUITES}/health_test.yaml"),
        format!("{SUITES}/advanced/health_test.yaml"),
    ] {
        let dir = std::path::Path::new(&suite).parent().unwrap().to_path_buf();
        for test in documents(&suite)[0]["tests"].as_array().unwrap() {
            let input = dir.join(test["inputPath"].as_str().unwrap());
            let relative = input.to_string_lossy().into_owned();
            let object = documents(&relative).remove(0);
            cases.push((
                relative,
                object,
                test["healthStatus"]["status"].as_str().unwrap().to_owned(),
            ));
        }
    }
    cases
}

#[test]
fn the_expressions_mean_what_the_argo_cd_health_check_means() {
    let exprs = exprs();
    let cases = suite_cases();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let mut files = BTreeSet::new();
    for (file, object, argo) in &cases {
        files.insert(file.clone());
        let status = flux_status(&exprs, object);
        let no_status = object.get("status").is_none_or(Value::is_null);
        let expected = match argo.as_str() {
            "Healthy" => Status::Current,
            "Degraded" => Status::Failed,
            // Without any status object the expressions cannot read status.phase:
            // Flux reports Unknown and waits, which is what Progressing means here.
            "Progressing" if no_status => Status::Unknown,
            "Progressing" => Status::InProgress,
            other => panic!("{file}: an Argo CD health {other} the expressions do not map"),
        };
        assert_eq!(status, expected, "{file}: Argo CD says {argo}");
    }
    // Every object of the suites' testdata is covered.
    let testdata = root().join(SUITES).join("testdata");
    for entry in std::fs::read_dir(&testdata).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            files
                .iter()
                .any(|f| f.ends_with(&format!("/testdata/{name}"))),
            "testdata/{name} is in no suite"
        );
    }
}

#[test]
fn at_most_one_expression_holds_so_their_order_does_not_matter() {
    let exprs = exprs();
    for (file, object, _) in suite_cases() {
        for stale in [false, true] {
            let object = if stale {
                with_generations(&object, 2, 1)
            } else {
                object.clone()
            };
            let results: Vec<Option<bool>> = [&exprs.in_progress, &exprs.failed, &exprs.current]
                .iter()
                .map(|p| eval(p, &object))
                .collect();
            if results.iter().any(Option::is_none) {
                assert!(
                    object.get("status").is_none_or(Value::is_null),
                    "{file}: an expression fails: {results:?}"
                );
                continue;
            }
            let holding = results.iter().filter(|r| **r == Some(true)).count();
            assert_eq!(holding, 1, "{file} (stale: {stale}): {results:?}");
        }
    }
}

/// `object` with `metadata.generation` and `status.observedGeneration` set.
fn with_generations(object: &Value, generation: i64, observed: i64) -> Value {
    let mut object = object.clone();
    object["metadata"]["generation"] = generation.into();
    if object["status"].is_object() {
        object["status"]["observedGeneration"] = observed.into();
    }
    object
}

#[test]
fn a_status_of_an_older_generation_is_in_progress() {
    let exprs = exprs();
    let mut terminal = 0;
    for (file, object, argo) in suite_cases() {
        if !object["status"].is_object() {
            continue;
        }
        // The suites' own stale objects aside, marking the status current changes nothing.
        let observed = object
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64);
        let generation = object
            .pointer("/metadata/generation")
            .and_then(Value::as_i64);
        if observed.is_none() || observed == generation {
            let fresh = with_generations(&object, 3, 3);
            assert_eq!(
                flux_status(&exprs, &fresh),
                flux_status(&exprs, &object),
                "{file}: same generation"
            );
        }
        let stale = with_generations(&object, 3, 2);
        // The expressions are generation-aware on their own, not only through Flux's
        // own pre-check.
        assert_eq!(
            expressions_status(&exprs, &stale),
            Status::InProgress,
            "{file} (Argo CD: {argo})"
        );
        assert_eq!(flux_status(&exprs, &stale), Status::InProgress, "{file}");
        if argo != "Progressing" {
            terminal += 1;
        }
    }
    assert!(
        terminal >= 10,
        "only {terminal} terminal objects made stale"
    );
}

#[test]
fn the_evaluator_distinguishes_the_outcomes() {
    // The checks above could not fail if every object came out the same.
    let exprs = exprs();
    let job = |status: Value| serde_json::json!({"metadata": {"name": "j"}, "status": status});
    assert_eq!(
        flux_status(&exprs, &job(serde_json::json!({"phase": "Succeeded"}))),
        Status::Current
    );
    assert_eq!(
        flux_status(&exprs, &job(serde_json::json!({"phase": "Failed"}))),
        Status::Failed
    );
    assert_eq!(
        flux_status(&exprs, &job(serde_json::json!({"phase": "Building"}))),
        Status::InProgress
    );
    assert_eq!(
        flux_status(&exprs, &serde_json::json!({"metadata": {"name": "j"}})),
        Status::Unknown
    );
}

#[test]
fn the_serving_kustomization_depends_on_the_training_one() {
    let training = documents(TRAINING).remove(0);
    let serving = documents("config/flux/serving.yaml").remove(0);
    assert_eq!(
        serving["spec"]["dependsOn"][0]["name"],
        training["metadata"]["name"]
    );
    assert_eq!(
        training["spec"]["wait"], true,
        "health checks run only with wait: true"
    );
    for kustomization in [&training, &serving] {
        let path = kustomization["spec"]["path"]
            .as_str()
            .unwrap()
            .trim_start_matches("./");
        assert!(
            root().join(path).join("kustomization.yaml").is_file(),
            "{path} is not a kustomization"
        );
    }
}
