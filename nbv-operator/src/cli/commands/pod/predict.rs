//! Asking a model server for a prediction: one POST, bounded in time and size.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// How long one model may take to answer.
const TIMEOUT: Duration = Duration::from_secs(30);
/// The most of an answer read: a prediction is small, a runaway body is not kept.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The most of an error answer quoted.
const MAX_QUOTED: usize = 512;

/// POSTs `body` to `url` as JSON; the answer as JSON, or why there is none (the text
/// the report shows: `HTTP 503 from <url>: ...`, `cannot reach <url>: ...`).
pub async fn ask(url: &str, body: &Value) -> Result<Value, String> {
    let unreachable = |e: &dyn std::fmt::Display| format!("cannot reach {url}: {e}");
    let tls = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
        .map_err(|e| unreachable(&e))?
        .https_or_http()
        .enable_http1()
        .build();
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(tls);
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
