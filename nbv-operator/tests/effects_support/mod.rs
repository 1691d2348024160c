//! A scripted Kubernetes API server for the effect executors' adapter tests.
//!
//! A test lists the exact requests it expects, in order, each with the answer to
//! send. The server checks every request (method, path, query, content type, JSON
//! body), answers it, and fails the test on any request that was not expected, on a
//! missing one, and on a request that differs in any way. It returns what it saw,
//! so that tests can also snapshot the conversation.

#![allow(dead_code)] // Each test file uses a different part of the support.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use http::{Request, Response};
use http_body_util::BodyExt;
use kube::client::Body;
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::triggers::{Trigger, parse_triggers};
use nbv_operator::operator::effects::{Executor, ExecutorConfig};
use nbv_testkit::fixtures::JobBuilder;
use serde::Serialize;
use serde_json::{Value, json};
use tower_test::mock::Handle;

/// The API server's side of the in-memory transport.
pub type Server = Handle<Request<Body>, Response<Body>>;

/// How long the server waits for a request the script expects.
const PATIENCE: Duration = Duration::from_secs(10);

pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const JSON: &str = "application/json";
pub const FIELD_MANAGER_QUERY: &str = "fieldManager=nbv-operator";

/// One request the script expects, and the answer it gets.
#[derive(Clone, Debug)]
pub struct Exchange {
    method: &'static str,
    path: String,
    query: String,
    content_type: Option<&'static str>,
    body: Option<Value>,
    status: u16,
    response: Value,
}

impl Exchange {
    fn new(method: &'static str, path: impl Into<String>) -> Exchange {
        Exchange {
            method,
            path: path.into(),
            query: String::new(),
            content_type: None,
            body: None,
            status: 200,
            response: json!({}),
        }
    }

    /// `GET path`, no body.
    pub fn get(path: impl Into<String>) -> Exchange {
        Exchange::new("GET", path)
    }

    /// `GET path?labelSelector=<selector>` (the selector unescaped).
    pub fn list(path: impl Into<String>, selector: &str) -> Exchange {
        Exchange {
            query: format!("labelSelector={selector}"),
            ..Exchange::new("GET", path)
        }
    }

    /// A JSON merge patch with nbv's field manager and exactly this body.
    pub fn merge_patch(path: impl Into<String>, body: Value) -> Exchange {
        Exchange {
            query: FIELD_MANAGER_QUERY.to_owned(),
            content_type: Some(MERGE_PATCH),
            body: Some(body),
            ..Exchange::new("PATCH", path)
        }
    }

    /// `DELETE path` with exactly this `DeleteOptions` body.
    pub fn delete(path: impl Into<String>, body: Value) -> Exchange {
        Exchange {
            content_type: Some(JSON),
            body: Some(body),
            ..Exchange::new("DELETE", path)
        }
    }

    /// `POST path` under nbv's field manager, with exactly this body.
    pub fn post(path: impl Into<String>, body: Value) -> Exchange {
        Exchange {
            content_type: Some(JSON),
            body: Some(body),
            query: FIELD_MANAGER_QUERY.to_owned(),
            ..Exchange::new("POST", path)
        }
    }

    /// `GET /api/v1`: discovery of core `v1`, answered as Kubernetes 1.20 answers it
    /// (`pods/eviction` is a `policy/v1beta1` Eviction).
    pub fn core_discovery() -> Exchange {
        Exchange::get("/api/v1").reply(
            200,
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
                   "resources": [
                       {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod",
                        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
                       {"name": "pods/eviction", "singularName": "", "namespaced": true,
                        "group": "policy", "version": "v1beta1", "kind": "Eviction",
                        "verbs": ["create"]}]}),
        )
    }

    /// `POST` a `policy/v1beta1` Eviction of pod `name` of `ml`, guarded by the uid
    /// [`pod`] gives it.
    pub fn evict(name: &str) -> Exchange {
        Exchange {
            content_type: Some(JSON),
            body: Some(json!({
                "apiVersion": "policy/v1beta1", "kind": "Eviction",
                "metadata": {"name": name, "namespace": "ml"},
                "deleteOptions": {"preconditions": {"uid": format!("uid-{name}")}},
            })),
            status: 201,
            response: json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
            ..Exchange::new(
                "POST",
                format!("/api/v1/namespaces/ml/pods/{name}/eviction"),
            )
        }
    }

    /// `DELETE path?labelSelector=<selector>` (the selector unescaped) with exactly
    /// this `DeleteOptions` body.
    pub fn delete_all(path: impl Into<String>, selector: &str, body: Value) -> Exchange {
        Exchange {
            query: format!("labelSelector={selector}"),
            ..Exchange::delete(path, body)
        }
    }

    /// Answer with `status` and `body`.
    pub fn reply(mut self, status: u16, body: Value) -> Exchange {
        self.status = status;
        self.response = body;
        self
    }

    /// Answer with a Kubernetes `Status` error.
    pub fn fail(self, code: u16, reason: &str, message: &str) -> Exchange {
        self.reply(code, status(code, reason, message))
    }
}

/// A Kubernetes `Status` error body.
pub fn status(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason, "code": code
    })
}

/// A request as the server saw it, for snapshots.
#[derive(Debug, Serialize)]
pub struct Seen {
    pub request: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    pub answered: u16,
}

/// A client over the in-memory transport, and the server's end of it.
pub fn client() -> (kube::Client, Server) {
    let (service, server) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    (kube::Client::new(service, "default"), server)
}

/// The time the executors of these tests read from their clock.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 35, 0).unwrap()
}

/// An executor with `config` over a fresh transport, reading the time [`now`], and the
/// server's end.
pub fn executor(config: ExecutorConfig) -> (Executor, Server) {
    let (client, server) = client();
    let executor = Executor::new(client, config).with_clock(std::sync::Arc::new(now));
    (executor, server)
}

/// A watch cache holding `objects` of `resource`, as a reflector leaves it after its
/// first listing (ready).
pub fn cache<K>(
    resource: kube::core::ApiResource,
    objects: Vec<Value>,
) -> kube::runtime::reflector::Store<K>
where
    K: kube::Resource<DynamicType = kube::core::ApiResource>
        + serde::de::DeserializeOwned
        + Clone
        + 'static,
{
    use kube::runtime::watcher::Event;
    let mut writer = kube::runtime::reflector::store::Writer::new(resource);
    writer.apply_watcher_event(&Event::Init);
    for object in objects {
        let object: K = serde_json::from_value(object).expect("a Kubernetes object");
        writer.apply_watcher_event(&Event::InitApply(object));
    }
    writer.apply_watcher_event(&Event::InitDone);
    writer.as_reader()
}

/// As [`run`], with the executor changed by `setup` first (to give it caches).
pub async fn run_with<T, F>(
    config: ExecutorConfig,
    setup: impl FnOnce(Executor) -> Executor,
    script: Vec<Exchange>,
    act: impl FnOnce(Executor) -> F,
) -> (T, Vec<Seen>)
where
    F: std::future::Future<Output = T>,
{
    let (executor, server) = executor(config);
    let executor = setup(executor);
    let api = tokio::spawn(serve(server, script));
    let result = act(executor).await;
    let seen = api.await.expect("the API server's script passed");
    (result, seen)
}

/// Plays `script` and then checks that no further request comes before the client
/// is dropped. Returns what it saw.
pub async fn serve(mut server: Server, script: Vec<Exchange>) -> Vec<Seen> {
    let mut seen = Vec::new();
    for (index, expected) in script.into_iter().enumerate() {
        let next = tokio::time::timeout(PATIENCE, server.next_request())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for request {index}: {expected:?}"));
        let Some((request, reply)) = next else {
            panic!(
                "the client finished without request {index}: {} {}",
                expected.method, expected.path
            );
        };
        let (parts, body) = request.into_parts();
        let bytes = body.collect().await.expect("request body").to_bytes();
        // kube writes `?&name=value`; compare the non-empty pairs, decoded.
        let query = parts
            .uri
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(decode)
            .collect::<Vec<_>>()
            .join("&");
        let content_type = parts
            .headers
            .get(http::header::CONTENT_TYPE)
            .map(|v| v.to_str().expect("ASCII content type").to_owned());
        let body: Option<Value> = (!bytes.is_empty())
            .then(|| serde_json::from_slice(&bytes).expect("the request body is JSON"));
        let what = format!("request {index} ({} {})", parts.method, parts.uri);

        assert_eq!(parts.method.as_str(), expected.method, "method of {what}");
        assert_eq!(parts.uri.path(), expected.path, "path of {what}");
        assert_eq!(query, expected.query, "query of {what}");
        assert_eq!(
            content_type.as_deref(),
            expected.content_type,
            "content type of {what}"
        );
        assert_eq!(body, expected.body, "body of {what}");

        let response = Response::builder()
            .status(expected.status)
            .header(http::header::CONTENT_TYPE, JSON)
            .body(Body::from(
                serde_json::to_vec(&expected.response).expect("JSON"),
            ))
            .expect("response");
        reply.send_response(response);
        seen.push(Seen {
            request: format!(
                "{} {}{}",
                parts.method,
                parts.uri.path(),
                if query.is_empty() {
                    String::new()
                } else {
                    format!("?{query}")
                }
            ),
            content_type,
            body,
            answered: expected.status,
        });
    }
    let extra = tokio::time::timeout(PATIENCE, server.next_request())
        .await
        .expect("timed out waiting for the client to finish; drop the executor before awaiting the server");
    if let Some((request, _)) = extra {
        panic!(
            "unexpected request after the script: {} {}",
            request.method(),
            request.uri()
        );
    }
    seen
}

/// Percent-decodes a query string, so that tests compare what a person would write.
fn decode(query: &str) -> String {
    let bytes = query.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("ASCII");
                out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).expect("UTF-8 query")
}

/// When the run in these tests ended.
pub fn completed_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap()
}

/// A job `namespace/name` with uid `uid-<name>` whose run (generation 1) succeeded at
/// [`completed_at`], a minute after it started.
pub fn job(namespace: &str, name: &str) -> NotebookValidationJob {
    JobBuilder::new(namespace, name)
        .uid(format!("uid-{name}"))
        .phase(Phase::Succeeded)
        .status_field("observedGeneration", json!(1))
        .started_at(completed_at() - chrono::Duration::minutes(1))
        .completed_at(completed_at())
        .typed()
        .expect("valid job")
}

/// The single trigger of an annotation value (flow-style entry) for a job in `namespace`.
pub fn trigger(entry: &str, namespace: &str) -> Trigger {
    let set = parse_triggers(&format!("- {entry}"), namespace).expect("valid trigger");
    set.triggers()[0].clone()
}

/// A pod created at `created` (RFC 3339), optionally terminating and owned.
pub fn pod(name: &str, created: &str, owners: &[(&str, &str, &str, &str)]) -> Value {
    let owners: Vec<Value> = owners
        .iter()
        .map(|(api_version, kind, owner, uid)| {
            json!({"apiVersion": api_version, "kind": kind, "name": owner, "uid": uid,
                   "controller": true})
        })
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml", "uid": format!("uid-{name}"),
                     "creationTimestamp": created, "ownerReferences": owners}
    })
}

/// A `PodList` answer.
pub fn pod_list(pods: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"}, "items": pods})
}

/// `pod` running, Ready or not.
pub fn ready(mut pod: Value, ready: bool) -> Value {
    pod["status"] = json!({"phase": "Running", "conditions": [
        {"type": "Ready", "status": if ready { "True" } else { "False" }}]});
    pod
}

/// Runs `act` with an executor over a server that plays `script`; returns what `act`
/// returned and what the server saw. The executor is dropped when `act` ends, which
/// lets the server check that nothing else was requested.
pub async fn run<T, F>(
    config: ExecutorConfig,
    script: Vec<Exchange>,
    act: impl FnOnce(Executor) -> F,
) -> (T, Vec<Seen>)
where
    F: std::future::Future<Output = T>,
{
    let (executor, server) = executor(config);
    let api = tokio::spawn(serve(server, script));
    let result = act(executor).await;
    let seen = api.await.expect("the API server's script passed");
    (result, seen)
}

/// The resourceVersion of the objects that [`workload`] and [`annotated`] build.
pub const READ_VERSION: &str = "5";

/// An `apps/v1` workload `namespace/name` of `kind` at [`READ_VERSION`], whose pod
/// template carries `restartedAt` when given.
pub fn workload(kind: &str, namespace: &str, name: &str, restarted_at: Option<&str>) -> Value {
    let annotations = match restarted_at {
        Some(at) => json!({"kubectl.kubernetes.io/restartedAt": at}),
        None => json!({}),
    };
    json!({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": READ_VERSION},
        "spec": {"template": {"metadata": {"annotations": annotations}}}
    })
}

/// The merge patch of a rolling restart at [`completed_at`], conditional on
/// [`READ_VERSION`].
pub fn rolling_restart_patch() -> Value {
    json!({
        "metadata": {"resourceVersion": READ_VERSION},
        "spec": {"template": {"metadata": {"annotations": {
            "kubectl.kubernetes.io/restartedAt": "2026-01-24T22:30:00Z"
        }}}}
    })
}

/// An object `namespace/name` of `api_version`/`kind` at [`READ_VERSION`], annotated
/// `mlops.dev/restart-timestamp: <timestamp>` when given.
pub fn annotated(
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    timestamp: Option<&str>,
) -> Value {
    let annotations = match timestamp {
        Some(at) => json!({"mlops.dev/restart-timestamp": at}),
        None => json!({}),
    };
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": READ_VERSION,
                     "annotations": annotations}
    })
}
