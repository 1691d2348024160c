//! The model scenarios' parts on their own: KServe's model server answers both
//! inference protocols with the iris classifier's known predictions, and the status the
//! suite writes for an InferenceService reads as ready to nbv. Neither needs the API
//! server; the first is skipped without `NBV_E2E_MODEL_PYTHON`.

use nbv_core::models::{InferenceService, Protocol};
use serde_json::json;

use crate::support::model::{
    ModelServer, inference_service, inference_service_speaking, ready_status,
};

/// Two versicolor flowers (class 1) and, in the V1 request, a setosa (0) and a
/// virginica (2) as well, so that a model answering one class for everything fails.
const VERSICOLOR: [[f64; 4]; 2] = [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]];
const SETOSA: [f64; 4] = [5.1, 3.5, 1.4, 0.2];
const VIRGINICA: [f64; 4] = [6.3, 3.3, 6.0, 2.5];

#[tokio::test]
async fn the_model_server_answers_both_protocols() {
    let Some(server) = ModelServer::start("iris").await else {
        return;
    };

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
