//! The HTTP face of the cluster: a `tower::Service` that `kube::Client` sits on.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use http::{Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, StreamBody};
use serde_json::Value;

use super::error::{ApiError, Reason};
use super::faults::FaultEffect;
use super::handler::{ApiRequest, Outcome};
use super::log::{PatchType, RequestRecord, Verb};
use super::route::{ResourcePath, Route, parse_query, route};
use super::state::Shared;
use super::watch::{error_stream, watch_stream};

/// The body of every response: whole JSON documents and watch streams alike.
pub type ResponseBody = StreamBody<BoxStream<'static, Result<Frame<Bytes>, Infallible>>>;

/// The in-memory API server as a `tower::Service`, for
/// [`kube::Client::new`](kube::Client::new) or custom middleware stacks.
///
/// Get one from [`FakeCluster::service`](super::FakeCluster::service); every clone
/// serves the same cluster.
///
/// # Examples
///
/// ```
/// use http::Request;
/// use http_body_util::{BodyExt, Full};
/// use nbv_testkit::cluster::FakeCluster;
/// use tower::ServiceExt;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let cluster = FakeCluster::default();
/// let request = Request::get("/api/v1/namespaces/default/pods/missing")
///     .body(Full::new(bytes::Bytes::new()))
///     .unwrap();
/// let response = cluster.service().oneshot(request).await.unwrap();
/// assert_eq!(response.status(), 404);
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(status["reason"], "NotFound");
/// # }
/// ```
#[derive(Clone)]
pub struct ApiServerService {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for ApiServerService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServerService").finish_non_exhaustive()
    }
}

impl<B> tower::Service<Request<B>> for ApiServerService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move { Ok(serve(shared, request).await) })
    }
}

fn full(bytes: Bytes) -> ResponseBody {
    StreamBody::new(stream::once(async move { Ok(Frame::data(bytes)) }).boxed())
}

fn streaming(lines: BoxStream<'static, Bytes>) -> ResponseBody {
    StreamBody::new(lines.map(|b| Ok(Frame::data(b))).boxed())
}

fn json_response(code: StatusCode, value: &Value) -> (Response<ResponseBody>, usize) {
    let bytes = Bytes::from(serde_json::to_vec(value).unwrap_or_default());
    let len = bytes.len();
    let mut response = Response::new(full(bytes));
    *response.status_mut() = code;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    (response, len)
}

fn error_response(error: &ApiError) -> (Response<ResponseBody>, usize) {
    let (mut response, len) = json_response(error.reason.code(), &error.to_status());
    if error.reason == Reason::TooManyRequests {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    }
    (response, len)
}

/// The verb a request names, if any.
fn verb_of(
    method: &Method,
    route: Option<&Route>,
    query: &BTreeMap<String, String>,
    content_type: Option<&str>,
) -> Result<Verb, ApiError> {
    let (has_name, is_resource) = match route {
        Some(Route::Resource(r)) => (r.name.is_some(), true),
        _ => (false, false),
    };
    let watch = matches!(query.get("watch").map(String::as_str), Some("true" | "1"));
    match *method {
        Method::GET if has_name || !is_resource => Ok(Verb::Get),
        Method::GET if watch => Ok(Verb::Watch),
        Method::GET => Ok(Verb::List),
        Method::POST => Ok(Verb::Create),
        Method::PUT => Ok(Verb::Update),
        Method::PATCH => content_type
            .and_then(PatchType::from_content_type)
            .map(|patch_type| Verb::Patch { patch_type })
            .ok_or_else(|| {
                ApiError::new(
                    Reason::Other(StatusCode::UNSUPPORTED_MEDIA_TYPE),
                    format!(
                        "the body of a PATCH must be sent as application/merge-patch+json, \
                         application/json-patch+json, application/apply-patch+yaml or \
                         application/strategic-merge-patch+json, not {}",
                        content_type.unwrap_or("(no Content-Type)")
                    ),
                )
            }),
        Method::DELETE if has_name => Ok(Verb::Delete),
        Method::DELETE => Ok(Verb::DeleteCollection),
        _ => Err(ApiError::new(
            Reason::MethodNotAllowed,
            format!("method {method} is not a Kubernetes API verb"),
        )),
    }
}

async fn serve<B>(shared: Arc<Shared>, request: Request<B>) -> Response<ResponseBody>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    let at = shared.clock.now();
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            let error = ApiError::bad_request(format!("the request body could not be read: {e}"));
            return error_response(&error).0;
        }
    };
    let path = parts.uri.path().to_owned();
    let query = parse_query(parts.uri.query());
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let routed = route(&path);
    let verb = match verb_of(&parts.method, routed.as_ref().ok(), &query, content_type) {
        Ok(verb) => verb,
        Err(error) => return error_response(&error).0,
    };
    let resource = match &routed {
        Ok(Route::Resource(r)) => r.clone(),
        _ => ResourcePath::default(),
    };
    let record = RequestRecord {
        id: 0,
        verb,
        method: parts.method.to_string(),
        path: path.clone(),
        group: resource.group.clone(),
        version: resource.version.clone(),
        resource: resource.plural.clone(),
        subresource: resource.subresource.clone(),
        namespace: resource.namespace.clone(),
        name: resource.name.clone(),
        query: query.clone(),
        body: serde_json::from_slice(&body).ok(),
        bytes_in: body.len(),
        bytes_out: 0,
        status: 0,
        at,
    };
    let id = shared.lock().log_request(record);
    let (response, bytes_out) = match routed {
        Err(error) => error_response(&error),
        Ok(Route::Discovery(doc)) => {
            let document = super::discovery::document(&doc, shared.lock().registry.all());
            match document {
                Ok(value) => json_response(StatusCode::OK, &value),
                Err(error) => error_response(&error),
            }
        }
        Ok(Route::Resource(path)) => serve_resource(&shared, id, verb, &path, &query, &body).await,
    };
    shared.lock().update_request(id, |r| {
        r.status = response.status().as_u16();
        r.bytes_out = r.bytes_out.saturating_add(bytes_out);
    });
    response
}

/// Serves a resource request, applying any injected fault. Returns the response and the
/// size of its body when it is not a stream (streams account for themselves).
async fn serve_resource(
    shared: &Arc<Shared>,
    id: u64,
    verb: Verb,
    path: &ResourcePath,
    query: &BTreeMap<String, String>,
    body: &[u8],
) -> (Response<ResponseBody>, usize) {
    let (spec, fault) = {
        let mut state = shared.lock();
        let spec = state
            .registry
            .by_plural(&path.group, &path.version, &path.plural)
            .cloned();
        let fault = spec.as_ref().and_then(|_| {
            state.faults.take(
                verb.kind(),
                &path.plural,
                path.subresource.as_deref(),
                path.name.as_deref(),
            )
        });
        (spec, fault)
    };
    let Some(spec) = spec else {
        return error_response(&ApiError::new(
            Reason::NotFound,
            format!(
                "the server could not find the requested resource ({} {}/{})",
                path.plural, path.group, path.version
            ),
        ));
    };
    let after_commit = match fault {
        None => None,
        Some(FaultEffect::Status(code)) => {
            return error_response(&injected(code));
        }
        Some(FaultEffect::Timeout(delay)) => {
            tokio::time::sleep(delay).await;
            return error_response(&ApiError::new(
                Reason::Timeout,
                "the server was unable to return a response in the time allotted (injected)",
            ));
        }
        Some(FaultEffect::DropWatch) => {
            let mut response = Response::new(streaming(stream::empty().boxed()));
            *response.status_mut() = StatusCode::OK;
            return (response, 0);
        }
        Some(FaultEffect::AfterCommit(code)) => Some(code),
    };
    let request = ApiRequest {
        verb,
        path,
        spec: &spec,
        query,
        body,
    };
    let now = shared.clock.now();
    let outcome = shared.lock().execute(&request, now);
    if let Some(code) = after_commit {
        return error_response(&injected(code));
    }
    match outcome {
        Err(error) => error_response(&error),
        Ok(Outcome::Json(code, value)) => json_response(code, &value),
        Ok(Outcome::WatchError(error)) => {
            let (bytes, lines) = error_stream(&error);
            (Response::new(streaming(lines)), bytes.len())
        }
        Ok(Outcome::Watch(plan)) => {
            let lines = watch_stream(plan, Arc::clone(shared), id);
            (Response::new(streaming(lines)), 0)
        }
    }
}

fn injected(code: StatusCode) -> ApiError {
    ApiError::new(
        Reason::for_code(code),
        format!("injected fault: the server answered {code}"),
    )
}
