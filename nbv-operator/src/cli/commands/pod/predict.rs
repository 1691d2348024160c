//! Asking a model server for a prediction: one POST, bounded in time and size.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// How long one model may take to answer.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an answer read: a prediction is small, a runaway body is not kept.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The most of an error answer quoted.
const MAX_QUOTED: usize = 512;

/// The HTTP client the models are asked with, built once per run: loading the
/// system's CA certificates is file I/O.
pub struct Models {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
}

impl Models {
    /// A client for `http://` and `https://` URLs, trusting the system's CAs.
    ///
    /// # Errors
    ///
    /// When the system's CA certificates cannot be read.
    pub fn new() -> Result<Models, String> {
        let tls = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
            .map_err(|e| format!("cannot read the system's CA certificates: {e}"))?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(Models {
            client: Client::builder(TokioExecutor::new()).build(tls),
        })
    }

    /// POSTs `body` to `url` as JSON; the answer as JSON, or why there is none (the
    /// text the report shows: `HTTP 503 from <url>: ...`, `cannot reach <url>: ...`).
    pub async fn ask(&self, url: &str, body: &Value) -> Result<Value, String> {
        ask(&self.client, url, body).await
    }
}

async fn ask(
    client: &Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    url: &str,
    body: &Value,
) -> Result<Value, String> {
    let unreachable = |e: &dyn std::fmt::Display| format!("cannot reach {url}: {e}");
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| unreachable(&e))?;
    let exchange = async {
        let response = client.request(request).await.map_err(|e| unreachable(&e))?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| unreachable(&e))?
            .to_bytes();
        Ok::<_, String>((status, bytes))
    };
    let (status, bytes) = tokio::time::timeout(TIMEOUT, exchange)
        .await
        .map_err(|_| unreachable(&format!("no answer within {} s", TIMEOUT.as_secs())))??;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_QUOTED)]);
        let text = text.trim();
        let quoted = if text.is_empty() {
            String::new()
        } else {
            format!(": {text}")
        };
        return Err(format!("HTTP {} from {url}{quoted}", status.as_u16()));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("the answer from {url} is not JSON: {e}"))
}
