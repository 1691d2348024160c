//! Model validation end to end: jobs name InferenceServices whose status (written here,
//! as KServe's controller would) points at a real KServe model server on loopback; the
//! validation Pod sends the prediction check's request to it.
//!
//! First the scenarios' parts on their own: the model server answers both inference
//! protocols with the iris classifier's known predictions, and the status the suite
//! writes for an InferenceService reads as ready to nbv. Neither needs the API server;
//! the first fails, naming it, without `NBV_E2E_MODEL_PYTHON`.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::models::{InferenceService, Protocol};
use serde_json::{Value, json};

use crate::support::git::{GitServer, notebook};
use crate::support::kubelet::Kubelet;
use crate::support::model::{
    ModelServer, inference_service, inference_service_speaking, ready_status,
};
use crate::support::{OperatorOptions, RUN, Scenario, eventually, install, job, message, phase};

/// Two versicolor flowers (class 1) and, in the V1 request, a setosa (0) and a
/// virginica (2) as well, so that a model answering one class for everything fails.
const VERSICOLOR: [[f64; 4]; 2] = [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]];
const SETOSA: [f64; 4] = [5.1, 3.5, 1.4, 0.2];
const VIRGINICA: [f64; 4] = [6.3, 3.3, 6.0, 2.5];

#[tokio::test]
#[ignore = "needs the model server's virtualenv (NBV_E2E_MODEL_PYTHON): `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn the_model_server_answers_both_protocols() {
    let server = ModelServer::start("iris").await;

    let v1 = json!({"instances": [SETOSA, VERSICOLOR[0], VERSICOLOR[1], VIRGINICA]});
    let (status, answer) = server.post("/v1/models/iris:predict", &v1);
    eprintln!("V1 {status}: {answer}");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer, json!({"predictions": [0, 1, 1, 2]}));

    let v2 = json!({"inputs": [{"name": "input-0", "shape": [2, 4], "datatype": "FP32",
                                "data": VERSICOLOR}]});
    let (status, answer) = server.post("/v2/models/iris/infer", &v2);
    eprintln!("V2 {status}: {answer}");
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["model_name"], "iris");
    let output = &answer["outputs"][0];
    assert_eq!(output["data"], json!([1, 1]), "{answer}");
    assert_eq!(output["shape"], json!([2]), "{answer}");

    // A model the server does not hold is an error, not a prediction.
    let (status, _) = server.post("/v1/models/absent:predict", &v1);
    assert_eq!(status, 404);
}

// Pure: it runs everywhere, in the README's test command.
#[test]
fn the_ready_status_reads_as_ready_to_nbv() {
    let url = "http://127.0.0.1:8080";
    for (object, protocol) in [
        (inference_service("iris", "ml"), Protocol::V1),
        (inference_service_speaking("iris", "ml", "v2"), Protocol::V2),
    ] {
        let mut object = object;
        object["metadata"]["generation"] = json!(3);
        object["status"] = ready_status(url, 3);
        let isvc = InferenceService::from_object(&object);
        assert!(isvc.ready.is_ready() && isvc.predictor_ready.is_ready());
        assert_eq!(isvc.generation, Some(3));
        assert_eq!(isvc.observed_generation, Some(3));
        assert_eq!(isvc.url.as_deref(), Some(url));
        assert_eq!(isvc.address_url.as_deref(), Some(url));
        assert_eq!(isvc.version.as_deref(), Some("predictor-00003"));
        assert_eq!(isvc.protocol, protocol);
    }
}

/// The V1 request every prediction check sends, and what the iris model answers.
fn prediction(expected: Value) -> Value {
    json!({
        "enabled": true,
        "testData": json!({"instances": VERSICOLOR}).to_string(),
        "expectedOutput": expected.to_string(),
        "tolerance": "0.01"
    })
}

/// A job of the repository at `url` whose notebook prints a line, validating `models`.
fn validating(name: &str, url: &str, models: Value) -> Value {
    let mut job = job(name, url, "main", "hello.ipynb", json!({}));
    job["spec"]["modelValidation"] = models;
    job
}

/// `status.modelValidationResult` as JSON (`null` when absent).
fn model_result(job: &NotebookValidationJob) -> Value {
    serde_json::to_value(
        job.status
            .as_ref()
            .and_then(|s| s.model_validation_result.as_ref()),
    )
    .expect("json")
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn jobs_are_checked_against_the_models_they_name() {
    let s = Scenario::new("e2e-models").await;
    let server = ModelServer::start("iris").await;
    let ns = s.namespace.clone();
    let git = GitServer::start();
    let repo = git.repository(
        "models",
        &[(
            "hello.ipynb",
            serde_json::to_string_pretty(&notebook(&["print('scoring the model')"])).expect("json"),
        )],
    );
    // The model server stands in for the predictor; the status says what KServe's
    // controller would, pointing at it.
    let mut iris = inference_service("iris", &ns);
    iris["status"] = ready_status(&server.url(), 1);
    s.apply(iris).await;
    let mut broken = inference_service("broken", &ns);
    broken["status"] = json!({"observedGeneration": 1, "conditions": [
        {"type": "PredictorReady", "status": "False", "reason": "RevisionMissing"},
        {"type": "Ready", "status": "False", "reason": "RevisionMissing",
         "message": "Revision \"broken-predictor-00001\" failed with message: 0/3 nodes are available"}]});
    s.apply(broken).await;
    // Models of a namespace that has not opted in may not be read from this one.
    let foreign = format!("{ns}-foreign");
    install::ensure_namespace(&s.client, &foreign, json!({})).await;

    let kubelet = Kubelet::start(s.client.clone(), &ns);
    let _operator = s.operator(&OperatorOptions::default_mode(&ns));
    let checks = |targets: Value, extra: Value| {
        let mut models = json!({"platform": "kserve", "phase": "both", "targetModels": targets});
        for (key, value) in extra.as_object().into_iter().flatten() {
            models[key] = value.clone();
        }
        models
    };
    let jobs = [
        (
            "predicts",
            checks(
                json!(["iris"]),
                json!({"predictionValidation": prediction(json!({"predictions": [1, 1]}))}),
            ),
        ),
        (
            "mispredicts",
            checks(
                json!(["iris"]),
                json!({"predictionValidation": prediction(json!({"predictions": [2, 1]}))}),
            ),
        ),
        (
            "waits",
            checks(json!(["broken"]), json!({"timeout": "20s"})),
        ),
        ("late", checks(json!(["late"]), json!({"timeout": "2m"}))),
        (
            "foreign",
            checks(json!([format!("{foreign}/iris")]), json!({})),
        ),
    ];
    for (name, models) in &jobs {
        s.apply(validating(name, &repo, models.clone())).await;
    }

    // Ready and answering as expected: the notebook runs, told where the model is.
    let predicts = s.ended("predicts", RUN).await;
    assert_eq!(
        phase(&predicts),
        Some(Phase::Succeeded),
        "{:?}",
        predicts.status
    );
    let result = model_result(&predicts);
    assert_eq!(result["success"], true, "{result:#}");
    assert_eq!(result["platformDetected"], true, "{result:#}");
    let checked = &result["existingEnvironmentCheck"]["modelsChecked"][0];
    assert_eq!(checked["modelName"], format!("{ns}/iris"), "{result:#}");
    assert_eq!(
        (checked["available"].clone(), checked["healthy"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(checked["version"], "predictor-00001", "{result:#}");
    let prediction = &result["existingEnvironmentCheck"]["predictionValidation"];
    assert_eq!(prediction["success"], true, "{result:#}");

    // A wrong answer fails the job naming the model, what was expected and the answer.
    let mispredicts = s.ended("mispredicts", RUN).await;
    assert_eq!(
        phase(&mispredicts),
        Some(Phase::Failed),
        "{:?}",
        mispredicts.status
    );
    let said = message(&mispredicts);
    assert!(said.contains(&format!("{ns}/iris")), "{said}");
    assert!(
        said.contains("expected 2") && said.contains("answered 1"),
        "{said}"
    );
    assert_eq!(
        model_result(&mispredicts)["existingEnvironmentCheck"]["predictionValidation"]["success"],
        false
    );

    // Another namespace's model, without its opt-in: refused at once, with no Pod.
    let refused = s.ended("foreign", Duration::from_secs(30)).await;
    assert_eq!(phase(&refused), Some(Phase::Failed));
    let said = message(&refused);
    assert!(
        said.contains("spec.modelValidation.targetModels") && said.contains(&foreign),
        "{said}"
    );

    // A model that is not Ready: the job waits, Progressing, naming it…
    let waiting = eventually(
        "the job waiting for its model",
        Duration::from_secs(15),
        || async {
            let job = s.job("waits").await;
            message(&job)
                .contains("waiting for the models")
                .then_some(job)
        },
    )
    .await;
    assert!(
        message(&waiting).contains(&format!("{ns}/broken")),
        "{}",
        message(&waiting)
    );
    assert_ne!(phase(&waiting), Some(Phase::ValidationRunning));
    // …and fails when its timeout has passed, still naming it.
    let timed_out = s.ended("waits", Duration::from_secs(60)).await;
    assert_eq!(phase(&timed_out), Some(Phase::Failed));
    let said = message(&timed_out);
    assert!(
        said.contains("spec.modelValidation.timeout") && said.contains(&format!("{ns}/broken")),
        "{said}"
    );

    // A model created while its job waits wakes the job: the Pod starts without a poll.
    eventually(
        "the job waiting for the model to exist",
        Duration::from_secs(15),
        || async {
            message(&s.job("late").await)
                .contains("does not exist")
                .then_some(())
        },
    )
    .await;
    // Created with a status KServe's controller wrote for an earlier generation: not
    // current, so still waited for.
    let mut late = inference_service("late", &ns);
    late["status"] = ready_status(&server.url(), 0);
    s.apply(late.clone()).await;
    eventually(
        "the job waiting for the model's controller",
        Duration::from_secs(15),
        || async {
            message(&s.job("late").await)
                .contains("not reconciled at its generation")
                .then_some(())
        },
    )
    .await;
    late["status"] = ready_status(&server.url(), 1);
    s.apply(late).await;
    let became_ready = std::time::Instant::now();
    eventually("the late job's Pod", Duration::from_secs(30), || async {
        let job = s.job("late").await;
        job.status.as_ref()?.validation_pod_name.clone()
    })
    .await;
    eprintln!(
        "the late job's Pod was created {:.1} s after its model became Ready",
        became_ready.elapsed().as_secs_f64()
    );
    assert_eq!(phase(&s.ended("late", RUN).await), Some(Phase::Succeeded));

    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &ns);
    for name in ["waits", "foreign"] {
        let found = pods
            .list(&ListParams::default().labels(&format!("mlops.dev/job={name}")))
            .await
            .expect("list Pods");
        assert!(found.items.is_empty(), "{name} got a Pod");
    }
    if let Some(requests) = s.report_requests("model validation") {
        // The models come from the watch cache: never a GET.
        assert_eq!(requests.count("get", "inferenceservices"), 0, "{requests}");
    }
    drop(kubelet);
    s.clean_up().await;
}
