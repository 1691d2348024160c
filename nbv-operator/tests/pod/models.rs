//! The prediction check: `nbv pod run` asks each model over HTTP and judges the
//! answers with nbv-core's rule.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpListener;

use nbv_core::models::{Protocol, ServedModel, capped_predictions};
use nbv_core::pod::{Judged, PredictionRequest, RunReport, prediction_entry, with_predictions};
use nbv_operator::cli::commands::pod::predict::Models;

use super::*;

/// A model server on a free local port, answering by path; checks the request.
fn model_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            reader.read_line(&mut line).expect("request line");
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_owned();
            let (mut length, mut json) = (0, false);
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).expect("header");
                let header = header.trim().to_ascii_lowercase();
                if header.is_empty() {
                    break;
                }
                if let Some(n) = header.strip_prefix("content-length:") {
                    length = n.trim().parse().expect("length");
                }
                json |= header == "content-type: application/json";
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let body: Value = serde_json::from_slice(&body).unwrap_or_default();
            let (code, answer) = if body != json!({"instances": [[1.5, 2]]}) || !json {
                (400, format!("unexpected request {body}"))
            } else {
                match path.as_str() {
                    "/v1/models/fraud-detector:predict" => (200, json!({"predictions": [1.02]}).to_string()),
                    "/v2/models/iris/infer" => (200, json!({"outputs": [{"name": "o", "datatype": "INT64", "shape": [1], "data": [2]}]}).to_string()),
                    "/v1/models/broken:predict" => (503, "no healthy upstream".to_owned()),
                    "/v1/models/chatty:predict" => (200, "<html>hello</html>".to_owned()),
                    other => (404, format!("no model at {other}")),
                }
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    port
}

#[test]
fn the_pod_asks_each_model_and_reports_what_it_answered() {
    let port = model_server();
    let closed = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let job = job(json!({"modelValidation": {
        "enabled": true, "platform": "kserve",
        "targetModels": ["fraud-detector", "serving/iris", "broken", "chatty", "absent"],
        "predictionValidation": {"enabled": true, "testData": "{\"instances\": [[1.5, 2]]}",
                                 "expectedOutput": "[1]", "tolerance": "0.05"}
    }}));
    let served = |namespace: &str, name: &str, port: u16, protocol| ServedModel {
        model: nbv_core::models::ModelRef::new(namespace, name),
        url: format!("http://127.0.0.1:{port}/"),
        protocol,
        version: None,
    };
    let models = [
        served("ml", "fraud-detector", port, Protocol::V1),
        served("serving", "iris", port, Protocol::V2),
        served("ml", "broken", port, Protocol::V1),
        served("ml", "chatty", port, Protocol::V1),
        served("ml", "absent", closed, Protocol::V1),
    ];
    let attempt = Attempt::new(1, 0);
    let pod =
        validation_pod(&job, attempt, None, Some(&models), &PodDefaults::default()).expect("a pod");
    let text = container(&pod, NOTEBOOK_CONTAINER)
        .env
        .iter()
        .flatten()
        .find(|v| v.name == "NBV_MODELS")
        .and_then(|v| v.value.clone())
        .expect("NBV_MODELS");
    let request: PredictionRequest = serde_json::from_str(&text).expect("the request");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = Models::new().expect("an HTTP client");
    let entries: Vec<_> = request
        .models
        .iter()
        .map(|m| {
            prediction_entry(
                &request,
                m,
                runtime.block_on(client.ask(&m.predict_url(), &request.test_data)),
            )
        })
        .collect();
    let verdicts: Vec<(&str, bool)> = entries
        .iter()
        .map(|(e, _)| (e.model.as_str(), e.ok))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("ml/fraud-detector", true),
            ("serving/iris", false),
            ("ml/broken", false),
            ("ml/chatty", false),
            ("ml/absent", false)
        ]
    );
    let detail = |i: usize| entries[i].0.detail.clone().unwrap_or_default();
    assert_eq!(
        detail(1),
        "at $[0]: expected 1, the model answered 2 (tolerance 0.05)"
    );
    assert_eq!(entries[1].0.actual.as_deref(), Some("[2]"));
    assert!(
        detail(2).starts_with("HTTP 503 from http://127.0.0.1:"),
        "{}",
        detail(2)
    );
    assert!(
        detail(2).ends_with("/v1/models/broken:predict: no healthy upstream"),
        "{}",
        detail(2)
    );
    assert!(detail(3).contains("is not JSON"), "{}", detail(3));
    assert!(
        detail(4).starts_with("cannot reach http://127.0.0.1:"),
        "{}",
        detail(4)
    );

    let plain: Vec<_> = entries.iter().map(|(e, _)| e.clone()).collect();
    let report = with_predictions(
        Judged {
            report: RunReport::default(),
            ask_models: true,
        },
        entries,
    );
    let error = report.error.clone().expect("a failure");
    assert_eq!(
        (error.kind, error.ename.as_str()),
        (RunErrorKind::Model, "PredictionMismatch")
    );
    assert_eq!(
        error.evalue,
        "model serving/iris: at $[0]: expected 1, the model answered 2 (tolerance 0.05)"
    );
    // The report travels within its budget, failures first.
    let read = RunReport::parse(&report.encode()).expect("a report");
    assert_eq!(read.mdl, Some(capped_predictions(&plain)));
    assert_eq!(
        read.mdl.as_ref().map(|m| m[0].model.as_str()),
        Some("serving/iris")
    );
}
