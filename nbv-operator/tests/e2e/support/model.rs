//! A real model behind an InferenceService: KServe's own model server
//! (`model_server.py`, `kserve.ModelServer` serving a scikit-learn classifier on iris)
//! on a loopback port, and the InferenceService objects and status the suite writes in
//! place of KServe's controller, pointing at it.
//!
//! The server runs with `NBV_E2E_MODEL_PYTHON`, the virtualenv `scripts/control-plane
//! install` makes (`$CACHE_DIR/kserve`); without it the model scenarios fail, naming it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::git::tempdir;
use super::process::{dies_with_the_test, free_port};
use super::rfc3339;

/// The first import of kserve (FastAPI, pandas, gRPC) takes seconds, and more on a
/// busy machine: the server is given this long to answer.
const STARTUP: Duration = Duration::from_secs(120);

/// A running model server, killed with its process group when dropped (and when the
/// test thread that started it ends).
pub struct ModelServer {
    child: Child,
    addr: SocketAddr,
    name: String,
    dir: PathBuf,
}

fn script() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/e2e/support/model_server.py"
    ))
}

impl ModelServer {
    /// Starts the server with one model, `name`, and waits until it reports the model
    /// ready. Panics when `NBV_E2E_MODEL_PYTHON` is unset or not a file, saying how to
    /// make it, and, with the server's log, when the server does not come up.
    pub async fn start(name: &str) -> ModelServer {
        let python = std::env::var_os("NBV_E2E_MODEL_PYTHON")
            .map(PathBuf::from)
            .expect("the model scenarios need NBV_E2E_MODEL_PYTHON (scripts/control-plane install makes it)");
        assert!(
            python.is_file(),
            "NBV_E2E_MODEL_PYTHON={} is not a file: run scripts/control-plane install",
            python.display()
        );
        let port = free_port();
        let dir = tempdir("model");
        let log = std::fs::File::create(dir.join("model-server.log")).expect("log");
        let mut command = Command::new(python);
        command
            .arg(script())
            .args(["--model_name", name, "--http_port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            // Its own group, so that Drop reaches anything it forks as well.
            .process_group(0);
        dies_with_the_test(&mut command);
        let child = command.spawn().expect("start the model server");
        let mut server = ModelServer {
            child,
            addr: ([127, 0, 0, 1], port).into(),
            name: name.to_owned(),
            dir,
        };
        server.wait_ready().await;
        server
    }

    async fn wait_ready(&mut self) {
        let started = Instant::now();
        let path = format!("/v1/models/{}", self.name);
        while started.elapsed() < STARTUP {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "the model server exited ({status}) before it was ready; its log:\n{}",
                    self.log()
                );
            }
            if let Some((200, _)) = request(self.addr, "GET", &path, None) {
                eprintln!(
                    "model server {} ready at {} after {:.1?}",
                    self.name,
                    self.url(),
                    started.elapsed()
                );
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "the model server did not report {} ready within {STARTUP:?}; its log:\n{}",
            self.name,
            self.log()
        );
    }

    /// Its base URL, `http://127.0.0.1:PORT`: what an InferenceService's status holds.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `POST path` with a JSON body: the status code and the body as JSON (`Null` when
    /// it is not JSON). Panics when the server does not answer.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, text) = request(self.addr, "POST", path, Some(&body.to_string()))
            .unwrap_or_else(|| panic!("no answer to POST {path}; log:\n{}", self.log()));
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The last lines of its log.
    pub fn log(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("model-server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- log of the model server ---\n{}", self.log());
        }
        let group = -(self.child.id() as i32);
        // SIGTERM first (uvicorn drains, kserve unloads the model), SIGKILL for
        // whatever of the group is left after a few seconds.
        // SAFETY: signalling the process group our own child leads.
        unsafe {
            libc::kill(group, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; the group is gone or ours.
        unsafe {
            libc::kill(group, libc::SIGKILL);
        }
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One HTTP/1.0 request on loopback (the server closes the connection after the
/// answer, so reading to the end reads the body): the status code and the body, `None`
/// when nothing answers. JSON bodies are sent as `application/json`, which kserve needs
/// to read them as such.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let body = body.unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_owned()))
}

/// An InferenceService `name` in `namespace` for a scikit-learn model speaking the V1
/// protocol, as a user writes it.
pub fn inference_service(name: &str, namespace: &str) -> Value {
    inference_service_speaking(name, namespace, "v1")
}

/// The same, speaking `protocol` (`v1` or `v2`; the model server answers both).
pub fn inference_service_speaking(name: &str, namespace: &str, protocol: &str) -> Value {
    json!({
        "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"predictor": {"model": {
            "modelFormat": {"name": "sklearn"},
            "protocolVersion": protocol,
            "storageUri": format!("pvc://models/{name}")
        }}}
    })
}

/// The status KServe's controller writes for a ready InferenceService (serverless
/// mode) at `generation`, serving at `url`.
///
/// nbv reads `observedGeneration`, the `Ready` and `PredictorReady` conditions, `url`,
/// `address.url` (which the validation Pod prefers) and
/// `components.predictor.latestReadyRevision` (reported as the model's version). In a
/// cluster `address.url` is the cluster-local Service; here both URLs are the loopback
/// server's, since the validation Pod runs on this machine. Knative numbers revisions
/// with five digits; the number here is the generation, so that each generation reads as
/// a new version.
pub fn ready_status(url: &str, generation: i64) -> Value {
    let now = rfc3339(chrono::Utc::now());
    let revision = format!("predictor-{generation:05}");
    let conditions: Vec<Value> = [
        "IngressReady",
        "PredictorConfigurationReady",
        "PredictorReady",
        "PredictorRouteReady",
        "Ready",
    ]
    .into_iter()
    .map(|kind| json!({"type": kind, "status": "True", "lastTransitionTime": now}))
    .collect();
    json!({
        "observedGeneration": generation,
        "url": url,
        "address": {"url": url},
        "conditions": conditions,
        "components": {"predictor": {
            "url": url,
            "address": {"url": url},
            "latestCreatedRevision": revision,
            "latestReadyRevision": revision,
            "latestRolledoutRevision": revision,
            "traffic": [{"revisionName": revision, "latestRevision": true, "percent": 100}]
        }},
        "modelStatus": {
            "states": {"activeModelState": "Loaded", "targetModelState": "Loaded"},
            "transitionStatus": "UpToDate",
            "copies": {"failedCopies": 0, "totalCopies": 1}
        },
        "deploymentMode": "Serverless"
    })
}
