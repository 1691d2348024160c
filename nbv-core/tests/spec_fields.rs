//! No spec field is silently ignored. The test walks every property of the CRD's
//! `spec` schema and demands that each one either changes the validation Pod nbv runs
//! (set to a sample value, the Pod differs from the Pod without it) or fails the job at
//! once with the field's name in the message. A field added to the CRD without one or
//! the other fails this test.

use std::collections::BTreeSet;

use nbv_core::api::{NotebookValidationJob, crd};
use nbv_core::build::{BuildDefaults, BuildPlan, PlanError, Route, build_objects};
use nbv_core::phase::{Attempt, FailureKind};
use nbv_core::pod::{FailureCause, PodDefaults, PodSpecError, validation_pod};
use serde_json::{Value, json};

/// What setting a field does.
enum Treatment {
    /// The spec merged with this patch gives a different validation Pod.
    Effect(Value),
    /// The spec merged with the first patch and then the second gives a different
    /// validation Pod than with the first alone (for a field that only means something
    /// beside another, such as `comparisonConfig` beside `goldenNotebook`).
    EffectBeside(Value, Value),
    /// The spec merged with this patch fails the job, naming the field; the field's
    /// sub-fields are refused with it.
    Refused(Value),
    /// The spec merged with this patch builds another image, or builds it otherwise:
    /// its build plan or build objects differ from those of [`build_baseline`] (from
    /// no build at all for `buildConfig` itself).
    Builds(Value),
}

use Treatment::{Builds, Effect, EffectBeside, Refused};

/// The build every `buildConfig` field is set against: Tekton, a named requirements
/// file (which every strategy can build).
fn build_baseline() -> Value {
    json!({"podConfig": {"buildConfig": {"enabled": true, "strategy": "tekton",
                                         "requirementsFile": "notebooks/requirements.txt"}}})
}

/// The job's build: its plan and the objects of the plan's first route.
fn build_of(job: &NotebookValidationJob) -> Result<Option<(BuildPlan, Vec<Value>)>, PlanError> {
    let Some(plan) = BuildPlan::resolve(job, &BuildDefaults::default())? else {
        return Ok(None);
    };
    let objects = build_objects(
        &plan,
        Route::first(plan.strategy),
        &PodDefaults::default(),
        &BuildDefaults::default(),
    )?;
    Ok(Some((
        plan,
        objects.into_iter().map(|(_, body)| body).collect(),
    )))
}

/// A golden notebook in another repository: what `comparisonConfig` is compared with.
fn golden() -> Value {
    json!({"goldenNotebook": {"git": {"url": "https://git.example.com/golden.git", "ref": "v1"},
                              "path": "golden.ipynb"}})
}

/// Kubernetes types nbv copies into the Pod as they are: their own fields are the
/// Kubernetes API's, not walked here.
const PASSED_THROUGH: [&str; 8] = [
    "spec.podConfig.resources",
    "spec.podConfig.env",
    "spec.podConfig.envFrom",
    "spec.podConfig.affinity",
    "spec.podConfig.tolerations",
    "spec.podConfig.volumes",
    "spec.podConfig.volumeMounts",
    "spec.podConfig.nodeSelector",
];

/// The `validationConfig` every check field is set against: the level that turns the
/// fewest checks to `fail`, and one expectation with a type.
fn checks_baseline() -> Value {
    json!({"validationConfig": {"level": "learning", "expectedOutputs": [{"cell": 1, "type": "float"}]}})
}

/// The `modelValidation` every model field is set beside: one model of KServe.
fn models_baseline() -> Value {
    json!({"modelValidation": {"platform": "kserve", "targetModels": ["fraud"]}})
}

/// The prediction check every prediction field is set beside.
fn prediction_baseline() -> Value {
    json!({"enabled": true, "testData": "{\"instances\": [[1, 2]]}",
           "expectedOutput": "{\"predictions\": [1]}"})
}

fn treatment(path: &str) -> Option<Treatment> {
    let pod = |patch: Value| Effect(json!({"podConfig": patch}));
    let build = |patch: Value| Builds(json!({"podConfig": {"buildConfig": patch}}));
    let models = |patch: Value| EffectBeside(models_baseline(), json!({"modelValidation": patch}));
    let prediction = |patch: Value| {
        let mut first = models_baseline();
        first["modelValidation"]["predictionValidation"] = prediction_baseline();
        EffectBeside(
            first,
            json!({"modelValidation": {"predictionValidation": patch}}),
        )
    };
    let checks = |patch: Value| {
        let mut config = checks_baseline();
        merge(&mut config["validationConfig"], &patch);
        Effect(config)
    };
    let expect = |entry: Value| checks(json!({"expectedOutputs": [entry]}));
    Some(match path {
        "spec.notebook" | "spec.notebook.git" => Effect(
            json!({"notebook": {"git": {"url": "https://git.example.com/other.git", "ref": "v2"}, "path": "b.ipynb"}}),
        ),
        "spec.notebook.git.url" => {
            Effect(json!({"notebook": {"git": {"url": "https://git.example.com/other.git"}}}))
        }
        "spec.notebook.git.ref" => Effect(json!({"notebook": {"git": {"ref": "v2"}}})),
        "spec.notebook.git.credentialsSecret" => {
            Effect(json!({"notebook": {"git": {"credentialsSecret": "git-creds"}}}))
        }
        "spec.notebook.path" => Effect(json!({"notebook": {"path": "notebooks/other.ipynb"}})),
        "spec.podConfig" | "spec.podConfig.containerImage" => {
            pod(json!({"containerImage": "quay.io/example/other:2"}))
        }
        "spec.podConfig.credentials" => pod(json!({"credentials": ["s3-credentials"]})),
        "spec.podConfig.env" => pod(json!({"env": [{"name": "EPOCHS", "value": "3"}]})),
        "spec.podConfig.envFrom" => {
            pod(json!({"envFrom": [{"configMapRef": {"name": "settings"}}]}))
        }
        "spec.podConfig.resources" => pod(json!({"resources": {"limits": {"memory": "4Gi"}}})),
        "spec.podConfig.serviceAccountName" => {
            pod(json!({"serviceAccountName": "notebook-runner"}))
        }
        "spec.podConfig.nodeSelector" => pod(json!({"nodeSelector": {"gpu": "true"}})),
        "spec.podConfig.tolerations" => {
            pod(json!({"tolerations": [{"key": "gpu", "operator": "Exists"}]}))
        }
        "spec.podConfig.affinity" => pod(
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]}]}]}}}}),
        ),
        "spec.podConfig.volumes" => pod(
            json!({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}),
        ),
        "spec.podConfig.volumeMounts" => pod(json!({
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]
        })),
        "spec.podConfig.buildConfig" | "spec.podConfig.buildConfig.enabled" => Builds(json!({})),
        "spec.podConfig.buildConfig.strategy" => build(json!({"strategy": "kaniko"})),
        "spec.podConfig.buildConfig.baseImage" => {
            build(json!({"baseImage": "quay.io/jupyter/scipy-notebook:2025-01-01"}))
        }
        "spec.podConfig.buildConfig.autoGenerateRequirements" => {
            build(json!({"autoGenerateRequirements": false}))
        }
        "spec.podConfig.buildConfig.requirementsFile" => {
            build(json!({"requirementsFile": "requirements.txt"}))
        }
        "spec.podConfig.buildConfig.requirementsSources" => {
            build(json!({"requirementsSources": ["a/requirements.txt"]}))
        }
        "spec.podConfig.buildConfig.dockerfile" => build(json!({"dockerfile": "Dockerfile"})),
        "spec.podConfig.buildConfig.preferDockerfile" => build(json!({"preferDockerfile": true})),
        "spec.podConfig.buildConfig.fallbackStrategy" => build(json!({"fallbackStrategy": "auto"})),
        "spec.podConfig.buildConfig.strategyConfig" => {
            build(json!({"strategyConfig": {"serviceAccount": "builder"}}))
        }
        "spec.podConfig.buildConfig.timeout" => build(json!({"timeout": "30m"})),
        "spec.timeout" => Effect(json!({"timeout": "2h"})),
        "spec.goldenNotebook" | "spec.goldenNotebook.git" | "spec.goldenNotebook.git.url" => {
            Effect(golden())
        }
        "spec.goldenNotebook.path" => EffectBeside(
            golden(),
            json!({"goldenNotebook": {"path": "other-golden.ipynb"}}),
        ),
        "spec.goldenNotebook.git.ref" => {
            EffectBeside(golden(), json!({"goldenNotebook": {"git": {"ref": "v2"}}}))
        }
        "spec.goldenNotebook.git.credentialsSecret" => EffectBeside(
            golden(),
            json!({"goldenNotebook": {"git": {"credentialsSecret": "golden-creds"}}}),
        ),
        "spec.comparisonConfig" | "spec.comparisonConfig.strategy" => {
            EffectBeside(golden(), json!({"comparisonConfig": {"strategy": "exact"}}))
        }
        "spec.comparisonConfig.floatingPointTolerance" => EffectBeside(
            golden(),
            json!({"comparisonConfig": {"floatingPointTolerance": "0.01"}}),
        ),
        "spec.comparisonConfig.ignoreTimestamps" => EffectBeside(
            golden(),
            json!({"comparisonConfig": {"ignoreTimestamps": false}}),
        ),
        "spec.comparisonConfig.ignoreExecutionCount" => EffectBeside(
            golden(),
            json!({"comparisonConfig": {"ignoreExecutionCount": false}}),
        ),
        "spec.comparisonConfig.ignoreOutputTypes" => EffectBeside(
            golden(),
            json!({"comparisonConfig": {"ignoreOutputTypes": ["image/png"]}}),
        ),
        "spec.comparisonConfig.customTimestampPatterns" => EffectBeside(
            golden(),
            json!({"comparisonConfig": {"customTimestampPatterns": ["took [0-9]+ms"]}}),
        ),
        "spec.validationConfig" | "spec.validationConfig.level" => {
            checks(json!({"level": "production"}))
        }
        "spec.validationConfig.strictMode" => checks(json!({"strictMode": true})),
        "spec.validationConfig.failOnStderr" => checks(json!({"failOnStderr": true})),
        "spec.validationConfig.failOnWarnings" => checks(json!({"failOnWarnings": true})),
        "spec.validationConfig.detectSilentFailures" => {
            checks(json!({"detectSilentFailures": false}))
        }
        "spec.validationConfig.checkOutputTypes" => checks(json!({"checkOutputTypes": true})),
        "spec.validationConfig.verifyAssertions" => checks(json!({"verifyAssertions": true})),
        "spec.validationConfig.requireExplicitExitCodes" => {
            checks(json!({"requireExplicitExitCodes": true}))
        }
        "spec.validationConfig.expectedOutputs" | "spec.validationConfig.expectedOutputs.cell" => {
            expect(json!({"cell": 2, "type": "float"}))
        }
        "spec.validationConfig.expectedOutputs.type" => expect(json!({"cell": 1, "type": "int"})),
        "spec.validationConfig.expectedOutputs.shape" => {
            expect(json!({"cell": 1, "type": "float", "shape": "-1,2"}))
        }
        "spec.validationConfig.expectedOutputs.minValue" => {
            expect(json!({"cell": 1, "type": "float", "minValue": "0"}))
        }
        "spec.validationConfig.expectedOutputs.maxValue" => {
            expect(json!({"cell": 1, "type": "float", "maxValue": "1"}))
        }
        "spec.validationConfig.expectedOutputs.notEmpty" => {
            expect(json!({"cell": 1, "type": "float", "notEmpty": true}))
        }
        "spec.modelValidation" => Effect(models_baseline()),
        "spec.modelValidation.enabled" => models(json!({"enabled": false})),
        "spec.modelValidation.platform" => models(json!({"platform": "openshift-ai"})),
        "spec.modelValidation.phase" => models(json!({"phase": "clean"})),
        "spec.modelValidation.targetModels" => models(json!({"targetModels": ["serving/iris"]})),
        "spec.modelValidation.timeout" => models(json!({"timeout": "10m"})),
        "spec.modelValidation.customPlatform" => Refused(json!({"modelValidation": {
            "platform": "custom",
            "customPlatform": {"apiGroup": "serving.example.com", "resourceType": "models"}}})),
        "spec.modelValidation.predictionValidation"
        | "spec.modelValidation.predictionValidation.enabled" => {
            models(json!({"predictionValidation": prediction_baseline()}))
        }
        "spec.modelValidation.predictionValidation.testData" => {
            prediction(json!({"testData": "{\"instances\": [[2, 3]]}"}))
        }
        "spec.modelValidation.predictionValidation.expectedOutput" => {
            prediction(json!({"expectedOutput": "[0]"}))
        }
        "spec.modelValidation.predictionValidation.tolerance" => {
            prediction(json!({"tolerance": "0.5"}))
        }
        _ => return None,
    })
}

fn baseline() -> Value {
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "0c1f"},
        "spec": {
            "notebook": {"git": {"url": "https://git.example.com/m.git", "ref": "main"}, "path": "a.ipynb"},
            "podConfig": {"containerImage": "quay.io/example/papermill:1"}
        }
    })
}

/// RFC 7386.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(key);
                } else {
                    merge(target.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

fn job_with(patch: &Value) -> NotebookValidationJob {
    let mut job = baseline();
    merge(&mut job["spec"], patch);
    serde_json::from_value(job).expect("a job")
}

/// The job's Pod, built as after the model gate opened for every model it names.
fn pod_of(job: &NotebookValidationJob) -> Result<Value, PodSpecError> {
    let models = nbv_testkit::fixtures::served_models(job);
    let pod = validation_pod(
        job,
        Attempt::new(1, 0),
        None,
        models.as_deref(),
        &PodDefaults::default(),
    )?;
    Ok(serde_json::to_value(pod).expect("json"))
}

/// Every property path of `schema`, below `path`, not descending into the types nbv
/// passes through.
fn walk(schema: &Value, path: &str, paths: &mut Vec<String>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        if let Some(items) = schema.get("items") {
            walk(items, path, paths);
        }
        return;
    };
    for (name, property) in properties {
        let child = format!("{path}.{name}");
        paths.push(child.clone());
        if !PASSED_THROUGH.contains(&child.as_str()) {
            walk(property, &child, paths);
        }
    }
}

fn spec_paths() -> Vec<String> {
    let crd = serde_json::to_value(crd()).expect("the CRD as JSON");
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let mut paths = Vec::new();
    walk(spec, "spec", &mut paths);
    paths
}

#[test]
fn every_spec_field_is_carried_out_or_refused_by_name() {
    let paths = spec_paths();
    assert!(
        paths.len() > 40,
        "the walk finds the schema's fields: {paths:?}"
    );
    let base = pod_of(&job_with(&json!({}))).expect("the baseline job runs");
    let mut refused: BTreeSet<String> = BTreeSet::new();
    let mut unhandled = Vec::new();
    for path in &paths {
        if refused.iter().any(|r| path.starts_with(&format!("{r}."))) {
            continue; // refused with its parent
        }
        match treatment(path) {
            Some(Effect(patch)) => {
                let pod = pod_of(&job_with(&patch))
                    .unwrap_or_else(|e| panic!("{path}: the sample {patch} is refused: {e}"));
                assert_ne!(
                    pod, base,
                    "{path} is set ({patch}) but the validation Pod does not change"
                );
            }
            Some(EffectBeside(first, patch)) => {
                let without = pod_of(&job_with(&first))
                    .unwrap_or_else(|e| panic!("{path}: the sample {first} is refused: {e}"));
                let mut both = first.clone();
                merge(&mut both, &patch);
                let with = pod_of(&job_with(&both))
                    .unwrap_or_else(|e| panic!("{path}: the sample {both} is refused: {e}"));
                assert_ne!(
                    with, without,
                    "{path} is set ({patch}) beside {first} but the validation Pod does not change"
                );
            }
            Some(Refused(patch)) => {
                let job = job_with(&patch);
                let failure = match (pod_of(&job), build_of(&job)) {
                    (Err(error), _) => {
                        assert_eq!(error.field(), *path, "{error}");
                        error.failure()
                    }
                    (Ok(_), Err(error)) => {
                        assert_eq!(error.field(), *path, "{error}");
                        error.failure()
                    }
                    (Ok(_), Ok(_)) => panic!("{path} is set ({patch}) and nothing refuses it"),
                };
                let field = path.trim_start_matches("spec.");
                assert!(
                    failure.message.contains(field),
                    "{path}: {}",
                    failure.message
                );
                assert_eq!(
                    failure.kind,
                    FailureKind::Permanent,
                    "{path}: a retry cannot help"
                );
                refused.insert(path.clone());
            }
            Some(Builds(patch)) => {
                // `buildConfig` itself is compared with no build; its fields with the
                // baseline build.
                let before = if patch == json!({}) {
                    json!({})
                } else {
                    build_baseline()
                };
                let mut after = build_baseline();
                merge(&mut after, &patch);
                let without = build_of(&job_with(&before))
                    .unwrap_or_else(|e| panic!("{path}: the build {before} is refused: {e}"));
                let with = build_of(&job_with(&after))
                    .unwrap_or_else(|e| panic!("{path}: the build {after} is refused: {e}"));
                assert!(with.is_some(), "{path}: {after} builds nothing");
                assert_ne!(
                    with, without,
                    "{path} is set ({patch}) but the build does not change"
                );
                let objects_of =
                    |b: &Option<(BuildPlan, Vec<Value>)>| b.as_ref().map(|(_, o)| o.clone());
                assert_ne!(
                    objects_of(&with),
                    objects_of(&without),
                    "{path} is set ({patch}) but the build objects do not change: the field is not carried out"
                );
            }
            None => unhandled.push(path.clone()),
        }
    }
    assert!(
        unhandled.is_empty(),
        "spec fields neither carried out nor refused (add them to `treatment`): {unhandled:#?}"
    );
}

/// The Pod's `NBV_CHECKS`, when it has one.
fn checks_env(pod: &Value) -> Option<String> {
    let env = pod["spec"]["containers"][0]["env"].as_array()?;
    let var = env.iter().find(|v| v["name"] == "NBV_CHECKS")?;
    var["value"].as_str().map(str::to_owned)
}

#[test]
fn every_validation_config_field_changes_the_check_policy_the_pod_receives() {
    let base = pod_of(&job_with(&checks_baseline())).expect("the checks baseline runs");
    let base_checks = checks_env(&base).expect("NBV_CHECKS");
    let paths: Vec<String> = spec_paths()
        .into_iter()
        .filter(|p| p.starts_with("spec.validationConfig."))
        .collect();
    assert!(paths.len() >= 14, "{paths:?}");
    for path in paths {
        let Some(Effect(patch)) = treatment(&path) else {
            panic!("{path} is not carried out");
        };
        let pod = pod_of(&job_with(&patch)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let checks = checks_env(&pod).expect("NBV_CHECKS");
        assert_ne!(
            checks, base_checks,
            "{path} ({patch}) does not change NBV_CHECKS"
        );
    }
    assert_eq!(
        checks_env(&pod_of(&job_with(&json!({}))).expect("runs")),
        None
    );
}

#[test]
fn a_check_nbv_does_not_carry_out_fails_the_job_for_good_naming_the_field() {
    let job = job_with(
        &json!({"modelValidation": {"platform": "triton", "targetModels": ["fraud"]},
                               "validationConfig": {"failOnStderr": true}}),
    );
    let error = pod_of(&job).expect_err("refused");
    assert_eq!(error.field(), "spec.modelValidation.platform");
    let failure = error.failure();
    assert_eq!(
        failure.reason.as_str(),
        FailureCause::FieldNotSupported.as_str()
    );
    assert_eq!(failure.kind, FailureKind::Permanent);
    insta::assert_snapshot!(failure.message, @"spec.modelValidation.platform: triton is not implemented by nbv, so its models could not be checked; nbv checks KServe InferenceServices (platform kserve or openshift-ai)");

    // A value nbv cannot use is an invalid spec, named the same way.
    let job =
        job_with(&json!({"modelValidation": {"platform": "kserve", "targetModels": ["a/b/c"]}}));
    let error = pod_of(&job).expect_err("refused");
    assert_eq!(error.field(), "spec.modelValidation.targetModels[0]");
    assert_eq!(
        error.failure().reason.as_str(),
        FailureCause::PodSpecInvalid.as_str()
    );
}

#[test]
fn model_validation_on_kserve_becomes_a_pod() {
    let job =
        job_with(&json!({"modelValidation": {"platform": "kserve", "targetModels": ["fraud"]}}));
    assert!(pod_of(&job).is_ok());
}

#[test]
fn a_comparison_without_a_golden_notebook_is_refused_by_name() {
    let job = job_with(&json!({"comparisonConfig": {"strategy": "exact"}}));
    let error = pod_of(&job).expect_err("refused");
    assert_eq!(error.field(), "spec.comparisonConfig");
    assert_eq!(error.failure().kind, FailureKind::Permanent);

    let mut bad = golden();
    merge(
        &mut bad,
        &json!({"comparisonConfig": {"customTimestampPatterns": ["[0-9]+", "(?<=at )[0-9]+"]}}),
    );
    let error = pod_of(&job_with(&bad)).expect_err("refused");
    assert_eq!(
        error.field(),
        "spec.comparisonConfig.customTimestampPatterns[1]"
    );
    let golden_path = job_with(&json!({"goldenNotebook": {
        "git": {"url": "https://git.example.com/golden.git", "ref": "v1"}, "path": "../golden.ipynb"}}));
    let error = pod_of(&golden_path).expect_err("refused");
    assert_eq!(error.field(), "spec.goldenNotebook.path");
    let golden_url = job_with(&json!({"goldenNotebook": {
        "git": {"url": "file:///etc", "ref": "v1"}, "path": "golden.ipynb"}}));
    assert_eq!(
        pod_of(&golden_url).expect_err("refused").field(),
        "spec.goldenNotebook.git.url"
    );
}

#[test]
fn model_validation_switched_off_asks_for_nothing() {
    let job = job_with(&json!({"modelValidation": {"enabled": false, "platform": "kserve"}}));
    assert!(pod_of(&job).is_ok());
}

#[test]
fn a_field_nbv_does_not_know_is_refused_by_name() {
    let job = job_with(&json!({"retryPolicy": {"maxRetries": 9}}));
    let error = pod_of(&job).expect_err("refused");
    assert_eq!(error.field(), "spec.retryPolicy");
    assert!(error.to_string().contains("spec.retryPolicy"), "{error}");
}
