//! Bounding how deep the API server's answers nest, before they are decoded.
//!
//! kube-client decodes every answer with serde_json, which refuses JSON nested deeper
//! than 128 levels, and the refusal fails the whole answer. One object nested that deep
//! (an Application's `valuesObject`, any field a CRD keeps with
//! `x-kubernetes-preserve-unknown-fields`) would fail every LIST of its kind, and so the
//! watch of all the others. [`DepthLimitLayer`] rewrites each answer as it streams: any
//! value nested deeper than [`MAX_DEPTH`] is replaced by `null`, which nbv reads as an
//! absent field. Answers nested less deeply pass byte for byte.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// The deepest nesting kept, counted from the answer's root: below serde_json's 128,
/// with room for the list or watch event around each object.
pub const MAX_DEPTH: usize = 100;

/// A streaming rewrite of JSON text that replaces every value nested deeper than its
/// limit by `null`. Text may arrive in pieces cut anywhere; a stream of several
/// documents (a watch) is handled as it comes.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::depth::DepthLimit;
///
/// let mut limit = DepthLimit::new(2);
/// let mut out = Vec::new();
/// limit.feed(br#"{"a": [1, {"b": "]"}], "c": [[2]]}"#, &mut out);
/// assert_eq!(String::from_utf8(out).unwrap(), r#"{"a": [1, null], "c": [null]}"#);
/// ```
#[derive(Debug, Clone)]
pub struct DepthLimit {
    max: usize,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The depth of the value being dropped, while one is.
    dropping: Option<usize>,
}

impl DepthLimit {
    /// A rewrite keeping `max` levels of nesting.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::runtime::depth::DepthLimit;
    ///
    /// let mut out = Vec::new();
    /// DepthLimit::new(1).feed(b"[[]]", &mut out);
    /// assert_eq!(out, b"[null]");
    /// ```
    pub fn new(max: usize) -> Self {
        DepthLimit {
            max,
            depth: 0,
            in_string: false,
            escaped: false,
            dropping: None,
        }
    }

    /// Rewrites the next piece of text, `input`, onto `out`.
    ///
    /// # Examples
    ///
    /// See [`DepthLimit`].
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &byte in input {
            let was_dropping = self.dropping.is_some();
            if self.step(byte) {
                out.push(byte);
            } else if !was_dropping && self.dropping.is_some() {
                // A value too deep starts here: `null` stands for it.
                out.extend_from_slice(b"null");
            }
        }
    }

    /// Takes one byte; whether it is kept. Opening a value too deep writes `null`.
    fn step(&mut self, byte: u8) -> bool {
        let dropping = self.dropping.is_some();
        if self.in_string {
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b'"') => self.in_string = false,
                _ => {}
            }
            return !dropping;
        }
        match byte {
            b'"' => self.in_string = true,
            b'{' | b'[' => {
                self.depth += 1;
                if !dropping && self.depth > self.max {
                    self.dropping = Some(self.depth);
                    return false;
                }
            }
            b'}' | b']' => {
                let closed = self.depth;
                self.depth = self.depth.saturating_sub(1);
                if self.dropping == Some(closed) {
                    self.dropping = None;
                    return false;
                }
            }
            _ => {}
        }
        !dropping
    }
}

/// A [`tower::Layer`] that applies [`DepthLimit`] with [`MAX_DEPTH`] to the body of
/// every answer.
///
/// # Examples
///
/// ```no_run
/// use kube::client::ClientBuilder;
/// use nbv_operator::runtime::depth::DepthLimitLayer;
///
/// # async fn build() -> Result<kube::Client, Box<dyn std::error::Error>> {
/// let config = kube::Config::infer().await?;
/// let client = ClientBuilder::try_from(config)?.with_layer(&DepthLimitLayer).build();
/// # Ok(client)
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct DepthLimitLayer;

impl<S> tower::Layer<S> for DepthLimitLayer {
    type Service = DepthLimited<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DepthLimited(inner)
    }
}

/// The service of [`DepthLimitLayer`].
#[derive(Debug, Clone)]
pub struct DepthLimited<S>(S);

impl<S, Request, B> tower::Service<Request> for DepthLimited<S>
where
    S: tower::Service<Request, Response = http::Response<B>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<LimitedBody<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let answer = self.0.call(request);
        Box::pin(async move {
            let answer = answer.await?;
            Ok(answer.map(|body| LimitedBody {
                inner: Box::pin(body),
                limit: DepthLimit::new(MAX_DEPTH),
            }))
        })
    }
}

/// An answer's body, rewritten by [`DepthLimit`] as it streams.
pub struct LimitedBody<B> {
    inner: Pin<Box<B>>,
    limit: DepthLimit,
}

impl<B> Body for LimitedBody<B>
where
    B: Body<Data = Bytes>,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match this.inner.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(data) => {
                    let mut rewritten = Vec::with_capacity(data.len());
                    this.limit.feed(&data, &mut rewritten);
                    Poll::Ready(Some(Ok(Frame::data(Bytes::from(rewritten)))))
                }
                Err(frame) => Poll::Ready(Some(Ok(frame))),
            },
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // The rewrite may shorten the body (or, by `null`, lengthen a tiny one).
        SizeHint::default()
    }
}
