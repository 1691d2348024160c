//! Every request of the client to the API server, counted by method and answer: the
//! `rest_client_requests_total{code, host, method}` family of client-go (and so of
//! every controller-runtime operator), which operator dashboards and alerts assume.
//!
//! The count is taken outside kube's own retries and nbv's request deadline: one
//! request as nbv asked it, with the answer it finally got (`<error>` when none came:
//! a connection error or the deadline, as client-go labels it).

use std::pin::Pin;
use std::task::{Context, Poll};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

/// The labels of one count.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct RequestLabels {
    /// The HTTP status of the answer, or `<error>`.
    pub code: String,
    /// The API server's host and port.
    pub host: String,
    /// The HTTP method (`GET` also for lists and watches).
    pub method: String,
}

/// The counts, shared by the layer of every client and the metrics registry.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::requests::ApiRequests;
///
/// let requests = ApiRequests::default();
/// requests.count(&http::Method::PATCH, "10.0.0.1:6443", Some(409));
/// requests.count(&http::Method::GET, "10.0.0.1:6443", None);
/// assert_eq!(requests.get("PATCH", "10.0.0.1:6443", "409"), 1);
/// assert_eq!(requests.get("GET", "10.0.0.1:6443", "<error>"), 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ApiRequests(Family<RequestLabels, Counter>);

impl ApiRequests {
    /// The family, for a registry.
    pub fn family(&self) -> Family<RequestLabels, Counter> {
        self.0.clone()
    }

    /// Counts one request with `method` to `host`, answered `code` (`None`: no answer).
    pub fn count(&self, method: &http::Method, host: &str, code: Option<u16>) {
        let code = code.map_or_else(|| "<error>".to_owned(), |c| c.to_string());
        self.0
            .get_or_create(&RequestLabels {
                code,
                host: host.to_owned(),
                method: method.as_str().to_owned(),
            })
            .inc();
    }

    /// The count of `method`, `host` and `code` so far (0 for one never counted).
    pub fn get(&self, method: &str, host: &str, code: &str) -> u64 {
        let labels = RequestLabels {
            code: code.to_owned(),
            host: host.to_owned(),
            method: method.to_owned(),
        };
        self.0.get(&labels).map_or(0, |counter| counter.get())
    }
}

/// A [`tower::Layer`] counting each request in [`ApiRequests`].
///
/// # Examples
///
/// ```no_run
/// use kube::client::ClientBuilder;
/// use nbv_operator::runtime::requests::{ApiRequests, RequestsLayer};
///
/// # async fn build() -> Result<kube::Client, Box<dyn std::error::Error>> {
/// let requests = ApiRequests::default();
/// let config = kube::Config::infer().await?;
/// let client = ClientBuilder::try_from(config)?
///     .with_layer(&RequestsLayer::new(requests.clone()))
///     .build();
/// # Ok(client)
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RequestsLayer {
    requests: ApiRequests,
}

impl RequestsLayer {
    /// A layer counting into `requests`.
    pub fn new(requests: ApiRequests) -> Self {
        RequestsLayer { requests }
    }
}

impl<S> tower::Layer<S> for RequestsLayer {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Counted {
            inner,
            requests: self.requests.clone(),
        }
    }
}

/// The service of [`RequestsLayer`].
#[derive(Debug, Clone)]
pub struct Counted<S> {
    inner: S,
    requests: ApiRequests,
}

impl<S, ReqBody, B> tower::Service<http::Request<ReqBody>> for Counted<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let method = request.method().clone();
        let host = request
            .uri()
            .authority()
            .map(ToString::to_string)
            .unwrap_or_default();
        let requests = self.requests.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await;
            let code = answer.as_ref().ok().map(|a| a.status().as_u16());
            requests.count(&method, &host, code);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use tower::{Layer, Service, ServiceExt};

    use super::{ApiRequests, RequestsLayer};

    #[tokio::test]
    async fn each_request_is_counted_once_with_its_answer() {
        let requests = ApiRequests::default();
        let inner = tower::service_fn(|request: http::Request<()>| async move {
            match request.uri().path() {
                "/fails" => Err("connection reset"),
                "/missing" => Ok(http::Response::builder().status(404).body(()).unwrap()),
                _ => Ok(http::Response::new(())),
            }
        });
        let mut service = RequestsLayer::new(requests.clone()).layer(inner);
        for (method, path) in [
            ("GET", "/api/v1/pods"),
            ("GET", "/api/v1/pods"),
            ("PATCH", "/missing"),
            ("DELETE", "/fails"),
        ] {
            let request = http::Request::builder()
                .method(method)
                .uri(format!("https://10.0.0.1:6443{path}"))
                .body(())
                .unwrap();
            let _ = service.ready().await.unwrap().call(request).await;
        }
        let host = "10.0.0.1:6443";
        assert_eq!(requests.get("GET", host, "200"), 2);
        assert_eq!(requests.get("PATCH", host, "404"), 1);
        assert_eq!(requests.get("DELETE", host, "<error>"), 1);
        assert_eq!(requests.get("DELETE", host, "200"), 0);
    }
}
