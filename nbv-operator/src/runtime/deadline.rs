//! A deadline on every request to the API server that is not a watch.
//!
//! kube's client has no read timeout by default (`Config::read_timeout` is `None`): a
//! request whose connection stalls (a half-open TCP connection, a proxy that stopped
//! forwarding, an API server that never answers) waits forever. A reconcile waiting on
//! it never ends, and a Lease renewal waiting on it never fails, so the leader would
//! keep acting long after its Lease expired and another replica took over.
//! [`DeadlineLayer`] fails such a request once its deadline passes, counted from when
//! it is sent and covering the answer's head and body, and kube's retries of 429/503
//! inside it (the layer wraps the whole client). Watches are left alone: they are long
//! by design, and kube's watcher reconnects one that stays silent past its timeout.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// How long a request other than a watch may take, head and body, by default.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// The request took longer than its deadline; the connection it used is dropped.
#[derive(Debug, thiserror::Error)]
#[error(
    "the API server did not answer within {0:?} (the request deadline); the request may or \
     may not have taken effect, and is retried as any failed request"
)]
pub struct DeadlineExceeded(pub Duration);

/// Whether the request is a watch (`watch=true` or `watch=1` in its query), which the
/// deadline leaves alone.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::deadline::is_watch;
///
/// let uri: http::Uri = "/api/v1/pods?watch=true&resourceVersion=5".parse().unwrap();
/// assert!(is_watch(&uri));
/// assert!(!is_watch(&"/api/v1/pods?limit=500".parse().unwrap()));
/// ```
pub fn is_watch(uri: &http::Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| matches!(pair, "watch=true" | "watch=1"))
    })
}

/// A [`tower::Layer`] failing every request but watches with [`DeadlineExceeded`] once
/// `limit` has passed since it was sent.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use kube::client::ClientBuilder;
/// use nbv_operator::runtime::deadline::DeadlineLayer;
///
/// # async fn build() -> Result<kube::Client, Box<dyn std::error::Error>> {
/// let config = kube::Config::infer().await?;
/// let client = ClientBuilder::try_from(config)?
///     .with_layer(&DeadlineLayer::new(Duration::from_secs(30)))
///     .build();
/// # Ok(client)
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DeadlineLayer {
    limit: Duration,
}

impl DeadlineLayer {
    /// A deadline of `limit` per request.
    pub fn new(limit: Duration) -> Self {
        DeadlineLayer { limit }
    }
}

impl<S> tower::Layer<S> for DeadlineLayer {
    type Service = Deadline<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Deadline {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of [`DeadlineLayer`].
#[derive(Debug, Clone)]
pub struct Deadline<S> {
    inner: S,
    limit: Duration,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, ReqBody, B> tower::Service<http::Request<ReqBody>> for Deadline<S>
where
    S: tower::Service<http::Request<ReqBody>, Response = http::Response<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = http::Response<DeadlineBody<B>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let limit = (!is_watch(request.uri())).then_some(self.limit);
        let answer = self.inner.call(request);
        Box::pin(async move {
            let Some(limit) = limit else {
                let answer = answer.await.map_err(Into::into)?;
                return Ok(answer.map(|body| DeadlineBody::new(body, None)));
            };
            let deadline = Instant::now() + limit;
            match tokio::time::timeout_at(deadline, answer).await {
                Ok(answer) => {
                    let answer = answer.map_err(Into::into)?;
                    Ok(answer.map(|body| DeadlineBody::new(body, Some((deadline, limit)))))
                }
                Err(_) => Err(DeadlineExceeded(limit).into()),
            }
        })
    }
}

/// An answer's body that fails with [`DeadlineExceeded`] if it is not complete by the
/// request's deadline.
pub struct DeadlineBody<B> {
    inner: Pin<Box<B>>,
    deadline: Option<(Pin<Box<Sleep>>, Duration)>,
}

impl<B> DeadlineBody<B> {
    fn new(inner: B, deadline: Option<(Instant, Duration)>) -> Self {
        DeadlineBody {
            inner: Box::pin(inner),
            deadline: deadline.map(|(at, limit)| (Box::pin(tokio::time::sleep_until(at)), limit)),
        }
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = this.inner.as_mut().poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        if let Some((sleep, limit)) = &mut this.deadline
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Some(Err(DeadlineExceeded(*limit).into())));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use tower::{Layer, Service, ServiceExt};

    type Mock = tower_test::mock::Mock<http::Request<()>, http::Response<Full<Bytes>>>;
    type Handle = tower_test::mock::Handle<http::Request<()>, http::Response<Full<Bytes>>>;

    fn service() -> (Deadline<Mock>, Handle) {
        let (mock, handle) = tower_test::mock::pair();
        (
            DeadlineLayer::new(Duration::from_secs(5)).layer(mock),
            handle,
        )
    }

    fn get(uri: &str) -> http::Request<()> {
        http::Request::get(uri).body(()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_never_answered_fails_at_its_deadline() {
        let (mut service, mut handle) = service();
        let answer = service
            .ready()
            .await
            .unwrap()
            .call(get("/apis/coordination.k8s.io/v1/namespaces/n/leases/l"));
        // The API server takes the request and never answers.
        let _held = handle.next_request().await;
        let started = Instant::now();
        let Err(error) = answer.await else {
            panic!("an answer that never came");
        };
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        assert!(error.to_string().contains("within 5s"), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stalls_fails_at_the_same_deadline() {
        let (mut service, mut handle) = service();
        let answer = service.ready().await.unwrap().call(get("/api/v1/pods"));
        let (_, reply) = handle.next_request().await.unwrap();
        reply.send_response(http::Response::new(Full::new(Bytes::from_static(b"{}"))));
        let answer = answer.await.unwrap();
        // A body that arrives is passed on.
        let body = answer.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"{}");

        // A body that never ends fails at the deadline.
        let stalled = DeadlineBody::new(
            http_body_util::StreamBody::new(futures::stream::pending::<
                Result<Frame<Bytes>, std::convert::Infallible>,
            >()),
            Some((
                Instant::now() + Duration::from_secs(5),
                Duration::from_secs(5),
            )),
        );
        let Err(error) = stalled.collect().await else {
            panic!("a body that never ended, collected");
        };
        assert!(error.to_string().contains("request deadline"), "{error}");
    }

    #[tokio::test(start_paused = true)]
    async fn watches_have_no_deadline() {
        let (mut service, mut handle) = service();
        let answer = service
            .ready()
            .await
            .unwrap()
            .call(get("/api/v1/pods?watch=true&timeoutSeconds=290"));
        let (_, reply) = handle.next_request().await.unwrap();
        tokio::time::sleep(Duration::from_secs(60)).await;
        reply.send_response(http::Response::new(Full::new(Bytes::new())));
        assert!(answer.await.is_ok());
    }
}
