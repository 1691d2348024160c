//! The operator's HTTP endpoints: metrics for Prometheus, probes for the kubelet.
//!
//! | Route          | Answer                                                            |
//! |----------------|-------------------------------------------------------------------|
//! | `GET /metrics` | `200`, the [`Metrics`] in the OpenMetrics text format; served by  |
//! |                | [`serve_secure`], only to a bearer token whose user may `get` it  |
//! |                | (`401` without one, `403` if not allowed: [`access`])             |
//! | `GET /healthz` | `200 ok` while the process serves requests (liveness)             |
//! | `GET /readyz`  | `200 ready` once [`Readiness::set_ready`] said so, `503` before   |
//! | anything else  | `404` (or `405` for another method on a known route)              |
//!
//! Liveness says nothing about leadership or the API server on purpose: restarting a
//! replica that waits for the lease, or that cannot reach the API server, would not fix
//! anything and would only add load.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::operator::metrics::Metrics;

pub mod access;
pub mod tls;

use access::{Access, Verdict};

/// The `Content-Type` of `GET /metrics`.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Whether the replica is ready, as answered by `GET /readyz`: a flag shared by clones.
///
/// Starts not ready; the caller decides when the replica is ready (`nbv run` sets it
/// once its Kubernetes client works, on standby replicas too, so that a rollout of
/// several replicas completes while only one of them leads).
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::server::Readiness;
///
/// let readiness = Readiness::default();
/// let probe = readiness.clone();
/// assert!(!probe.is_ready());
/// readiness.set_ready(true);
/// assert!(probe.is_ready());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// Marks the replica ready (`true`) or not (`false`), for every clone.
    ///
    /// # Examples
    ///
    /// ```
    /// let readiness = nbv_operator::operator::server::Readiness::default();
    /// readiness.set_ready(true);
    /// readiness.set_ready(false);
    /// assert!(!readiness.is_ready());
    /// ```
    pub fn set_ready(&self, ready: bool) {
        self.0.store(ready, Ordering::Release);
    }

    /// Whether the replica is ready.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!nbv_operator::operator::server::Readiness::default().is_ready());
    /// ```
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

#[derive(Clone)]
struct AppState {
    metrics: Arc<Metrics>,
    readiness: Readiness,
    /// Who may read `/metrics`; `None`: anyone (plain HTTP, [`serve`]).
    access: Option<Arc<Access>>,
}

/// The routes, without a listener: what [`serve`] and [`serve_secure`] serve.
fn router(metrics: Arc<Metrics>, readiness: Readiness, access: Option<Arc<Access>>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_handler))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz_handler))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .with_state(AppState {
            metrics,
            readiness,
            access,
        })
}

async fn metrics_handler(State(state): State<AppState>, headers: header::HeaderMap) -> Response {
    if let Some(access) = &state.access {
        match access.check(headers.get(header::AUTHORIZATION)).await {
            Verdict::Allowed => {}
            Verdict::Unauthenticated => {
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    "a bearer token of a user allowed to get /metrics is needed\n",
                )
                    .into_response();
            }
            Verdict::Forbidden(why) => {
                return (StatusCode::FORBIDDEN, format!("{why}\n")).into_response();
            }
            Verdict::Unavailable(why) => {
                tracing::warn!(%why, "cannot tell who may read /metrics");
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the API server could not review the token; try again\n",
                )
                    .into_response();
            }
        }
    }
    (
        [(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)],
        state.metrics.encode(),
    )
        .into_response()
}

async fn readyz_handler(State(state): State<AppState>) -> Response {
    if state.readiness.is_ready() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n").into_response()
    }
}

/// Serves the endpoints on `listener` until `shutdown` completes, then stops accepting
/// connections and returns once the requests in flight are answered.
///
/// # Errors
///
/// The listener's I/O error, if accepting connections fails for good.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use nbv_operator::operator::{metrics::Metrics, server::{serve, Readiness}};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// // A shutdown signal that has already fired: serve returns at once.
/// serve(listener, Arc::new(Metrics::new()), Readiness::default(), async {}).await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    readiness: Readiness,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(metrics, readiness, None))
        .with_graceful_shutdown(shutdown)
        .await
}

/// The same over HTTPS with `tls`, `/metrics` answered only to who `access` allows;
/// the probes stay open to the kubelet (which sends no token).
///
/// # Errors
///
/// The listener's address cannot be read.
pub async fn serve_secure(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    readiness: Readiness,
    tls: Arc<rustls::ServerConfig>,
    access: Access,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tls::TlsListener::new(listener, tls)?;
    axum::serve(listener, router(metrics, readiness, Some(Arc::new(access))))
        .with_graceful_shutdown(shutdown)
        .await
}
