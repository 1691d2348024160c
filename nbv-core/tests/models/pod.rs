//! The validation Pod of a job with model validation: the environment its notebook
//! gets, the Pods refused without the gate's models, the prediction check run for
//! real against a local model server, and what the answers write into the status.

use k8s_openapi::api::core::v1::Pod;
use nbv_core::api::{
    ExistingEnvironmentCheck, ModelCheck, ModelValidationResult, NotebookValidationJob,
};
use nbv_core::models::{ReportedPrediction, ServedModel, record_predictions};
use nbv_core::phase::Attempt;
use nbv_core::pod::{NOTEBOOK_CONTAINER, PodDefaults, PodSpecError, validation_pod};

use super::*;

const ATTEMPT: Attempt = Attempt::new(1, 0);

fn job(model_validation: Value) -> NotebookValidationJob {
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "score", "namespace": "ml", "uid": "u1"},
        "spec": {
            "notebook": {"git": {"url": "https://git.example.com/m.git", "ref": "main"}, "path": "score.ipynb"},
            "podConfig": {
                "containerImage": "quay.io/example/papermill:1",
                // The job's own env cannot override what the gate found.
                "env": [{"name": "MODEL_VALIDATION_PLATFORM", "value": "mine"}]
            },
            "modelValidation": model_validation
        }
    }))
    .expect("a job")
}

fn served(namespace: &str, name: &str, url: &str, protocol: Protocol) -> ServedModel {
    ServedModel {
        model: ModelRef::new(namespace, name),
        url: url.to_owned(),
        protocol,
        version: Some(format!("{name}-predictor-00001")),
    }
}

fn prediction_job() -> NotebookValidationJob {
    job(json!({
        "platform": "openshift-ai",
        "targetModels": ["fraud-detector", " serving/iris"],
        "timeout": "2m",
        "predictionValidation": {
            "testData": "{\"instances\": [[1.5, 2]]}",
            "expectedOutput": "{\"predictions\": [1]}",
            "tolerance": "0.05"
        }
    }))
}

fn prediction_models() -> Vec<ServedModel> {
    vec![
        served(
            "ml",
            "fraud-detector",
            "http://fraud-detector.ml.svc.cluster.local",
            Protocol::V1,
        ),
        served(
            "serving",
            "iris",
            "http://iris.serving.svc.cluster.local",
            Protocol::V2,
        ),
    ]
}

fn notebook_env(pod: &Pod) -> Vec<(String, String)> {
    let spec = pod.spec.as_ref().expect("spec");
    let container = spec
        .containers
        .iter()
        .find(|c| c.name == NOTEBOOK_CONTAINER)
        .expect("the notebook container");
    container
        .env
        .iter()
        .flatten()
        .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn the_notebook_gets_the_models_and_the_prediction_check() {
    let pod = validation_pod(
        &prediction_job(),
        ATTEMPT,
        None,
        Some(&prediction_models()),
        &PodDefaults::default(),
    )
    .expect("a pod");
    let env = notebook_env(&pod);
    let listed: String = env
        .iter()
        .map(|(name, value)| format!("{name}={value}\n"))
        .collect();
    insta::assert_snapshot!("model_environment", listed);

    // What the script reads is the resolved check, whatever the job's env says.
    let models = env
        .iter()
        .rev()
        .find(|(name, _)| name == "NBV_MODELS")
        .expect("NBV_MODELS");
    let models: Value = serde_json::from_str(&models.1).expect("JSON");
    assert_eq!(models["testData"], json!({"instances": [[1.5, 2]]}));
    assert_eq!(models["models"][1]["protocol"], "v2");
    let last_platform = env
        .iter()
        .rev()
        .find(|(name, _)| name == "MODEL_VALIDATION_PLATFORM");
    assert_eq!(last_platform.map(|(_, v)| v.as_str()), Some("openshift-ai"));
}

#[test]
fn without_a_prediction_check_the_script_asks_no_model() {
    let job = job(json!({"targetModels": ["fraud-detector"]}));
    let models = [served(
        "ml",
        "fraud-detector",
        "http://f.ml.svc",
        Protocol::V1,
    )];
    let pod =
        validation_pod(&job, ATTEMPT, None, Some(&models), &PodDefaults::default()).expect("a pod");
    let env = notebook_env(&pod);
    assert!(env.iter().all(|(name, _)| name != "NBV_MODELS"));
    assert!(env.contains(&(
        "MODEL_VALIDATION_FRAUD_DETECTOR_URL".to_owned(),
        "http://f.ml.svc".to_owned()
    )));
    assert!(env.contains(&("MODEL_VALIDATION_TIMEOUT".to_owned(), "5m".to_owned())));
    assert!(
        env.iter()
            .all(|(name, _)| !name.starts_with("MODEL_VALIDATION_PREDICTION"))
    );
}

#[test]
fn a_pod_without_the_gates_models_is_refused() {
    let asking = prediction_job();
    let refused = |models: Option<&[ServedModel]>| {
        validation_pod(&asking, ATTEMPT, None, models, &PodDefaults::default())
            .expect_err("refused")
    };
    // Without the gate, or with a model the gate did not open for.
    let one = prediction_models()[..1].to_vec();
    for models in [None, Some(&[][..]), Some(&one[..])] {
        let err = refused(models);
        assert!(matches!(err, PodSpecError::NotImplemented { .. }), "{err}");
        assert_eq!(err.field(), "spec.modelValidation");
    }
    // `phase: clean` reads no model: the gate opens with none.
    let clean = job(json!({"phase": "clean", "targetModels": ["fraud-detector"]}));
    validation_pod(&clean, ATTEMPT, None, Some(&[]), &PodDefaults::default()).expect("a pod");
    let err = validation_pod(&clean, ATTEMPT, None, None, &PodDefaults::default())
        .expect_err("refused without the gate");
    assert_eq!(err.field(), "spec.modelValidation");
    // Switched off, the models are not asked for.
    let off = job(json!({"enabled": false, "targetModels": ["fraud-detector"]}));
    validation_pod(&off, ATTEMPT, None, None, &PodDefaults::default()).expect("a pod");
    // A spec nbv cannot use is named, once the gate's models are there.
    let bad = job_with_tolerance("lots");
    let err = validation_pod(
        &bad,
        ATTEMPT,
        None,
        Some(&prediction_models()),
        &PodDefaults::default(),
    )
    .expect_err("refused");
    assert_eq!(
        err.field(),
        "spec.modelValidation.predictionValidation.tolerance"
    );
}

fn job_with_tolerance(tolerance: &str) -> NotebookValidationJob {
    job(json!({
        "targetModels": ["fraud-detector", "serving/iris"],
        "predictionValidation": {"testData": "{}", "expectedOutput": "[1]", "tolerance": tolerance}
    }))
}

#[test]
fn the_answers_are_written_into_what_the_gate_recorded() {
    let gate = || ModelValidationResult {
        success: true,
        platform: "kserve".to_owned(),
        platform_detected: true,
        phase: "both".to_owned(),
        message: Some("2 models are ready".to_owned()),
        clean_environment_check: None,
        existing_environment_check: Some(ExistingEnvironmentCheck {
            success: true,
            models_checked: Some(vec![ModelCheck {
                model_name: "fraud".to_owned(),
                available: true,
                healthy: true,
                ..ModelCheck::default()
            }]),
            prediction_validation: None,
            message: Some("all models are ready".to_owned()),
        }),
    };
    let pass = |m: &str| ReportedPrediction {
        model: m.to_owned(),
        ok: true,
        detail: None,
        actual: None,
    };
    let fail = |m: &str| ReportedPrediction {
        model: m.to_owned(),
        ok: false,
        detail: Some("at $[0]: expected 1, the model answered 0 (tolerance 0.01)".to_owned()),
        actual: Some("[0]".to_owned()),
    };
    let expected = json!({"predictions": [1]});

    let mut passed = gate();
    record_predictions(
        &mut passed,
        &expected,
        &[pass("ml/fraud"), pass("serving/iris")],
    );
    let mut failed = gate();
    record_predictions(
        &mut failed,
        &expected,
        &[fail("ml/fraud"), pass("serving/iris"), fail("ml/other")],
    );
    let mut untouched = gate();
    record_predictions(&mut untouched, &expected, &[]);
    assert_eq!(untouched, gate());

    let existing = passed.existing_environment_check.as_ref().expect("kept");
    assert!(passed.success && existing.success);
    assert_eq!(
        existing.models_checked,
        gate().existing_environment_check.unwrap().models_checked
    );
    insta::assert_yaml_snapshot!(
        "recorded_predictions",
        json!({"passed": passed, "failed": failed})
    );
}

/// The Pod of `prediction_job`, ended Succeeded with `message` in its termination log.
fn succeeded_with(message: &str) -> Pod {
    let pod = validation_pod(
        &prediction_job(),
        ATTEMPT,
        None,
        Some(&prediction_models()),
        &PodDefaults::default(),
    )
    .expect("a pod");
    let mut value = serde_json::to_value(&pod).expect("JSON");
    value["status"] = json!({"phase": "Succeeded", "containerStatuses": [{
        "name": NOTEBOOK_CONTAINER, "image": "i", "imageID": "", "ready": false, "restartCount": 0,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": message}}
    }]});
    serde_json::from_value(value).expect("a pod")
}

#[test]
fn a_pod_that_was_to_ask_the_models_passes_only_with_their_answers() {
    use nbv_core::phase::PhaseEvent;
    use nbv_core::pod::{DEFAULT_START_GRACE, observe_pod, reported_predictions};

    let observe = |message: &str| {
        observe_pod(
            &succeeded_with(message),
            chrono::Utc::now(),
            DEFAULT_START_GRACE,
        )
        .expect("a validation pod")
        .expect("an event")
    };
    let answered = r#"{"cells":[{"i":0,"s":"ok","t":1}],"mdl":[{"m":"ml/fraud-detector","ok":true},{"m":"serving/iris","ok":true}]}"#;
    let PhaseEvent::PodSucceeded { message, .. } = observe(answered) else {
        panic!("answered as expected: a success");
    };
    assert_eq!(
        message.as_deref(),
        Some(
            "1 code cell ran in 1s; the 2 models answered as spec.modelValidation.predictionValidation expects"
        )
    );
    let answers = reported_predictions(&succeeded_with(answered)).expect("reported");
    assert!(answers.iter().all(|a| a.ok));

    // An exit code of 0 does not pass a wrong answer, nor a report without answers.
    let wrong = r#"{"cells":[],"mdl":[{"m":"serving/iris","ok":false,"d":"at $: expected [1], the model answered [2]","a":"[2]"}]}"#;
    for (message, reason, says) in [
        (
            wrong,
            "PredictionMismatch",
            "prediction check: model serving/iris: at $: expected [1], the model answered [2]",
        ),
        (
            r#"{"cells":[]}"#,
            "ExecutorFailed",
            "reported no answers of the models to the prediction check",
        ),
        (
            "Traceback",
            "ExecutorFailed",
            "so the prediction check of spec.modelValidation is unknown",
        ),
    ] {
        let PhaseEvent::PodFailed { failure, .. } = observe(message) else {
            panic!("{message}: a failure");
        };
        assert_eq!(failure.reason.as_str(), reason, "{message}");
        assert!(
            failure.message.contains(says),
            "{message}: {}",
            failure.message
        );
    }
}
