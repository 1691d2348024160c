//! The operator's Kubernetes client: kube's, with the layers every request of nbv
//! passes through.

use std::time::Duration;

use crate::runtime::deadline::{DeadlineLayer, REQUEST_DEADLINE};
use crate::runtime::depth::DepthLimitLayer;
use crate::runtime::requests::{ApiRequests, RequestsLayer};

/// How the client is built.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_operator::runtime::client::ClientOptions;
///
/// let options = ClientOptions { request_deadline: Duration::from_secs(5), ..ClientOptions::default() };
/// assert_eq!(options.user_agent, None);
/// assert!(options.retries);
/// ```
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// How long a request other than a watch may take ([`DeadlineLayer`]).
    pub request_deadline: Duration,
    /// The `User-Agent` of every request, which the API server's audit log records:
    /// with the replica's name in it, the log tells replicas apart.
    pub user_agent: Option<String>,
    /// Whether kube retries 429, 503 and 504 answers itself. Off for requests whose
    /// 429 is an answer to act on, not a pause to sit out: an eviction a
    /// PodDisruptionBudget refuses, which kube would retry 15 times over minutes,
    /// holding the reconcile and hammering the API server.
    pub retries: bool,
    /// Where each request is counted (`rest_client_requests_total`), if anywhere.
    pub requests: Option<ApiRequests>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            request_deadline: REQUEST_DEADLINE,
            user_agent: None,
            retries: true,
            requests: None,
        }
    }
}

/// The `User-Agent` of replica `identity`: `nbv/<version> (<identity>)`.
///
/// # Examples
///
/// ```
/// let agent = nbv_operator::runtime::client::user_agent("nbv-operator-7d9f-abcde");
/// assert!(agent.starts_with("nbv/") && agent.ends_with(" (nbv-operator-7d9f-abcde)"));
/// ```
pub fn user_agent(identity: &str) -> String {
    format!("nbv/{} ({identity})", env!("CARGO_PKG_VERSION"))
}

/// A client of the cluster kube would build (`kube::Config::infer`): answers pass
/// through [`DepthLimitLayer`], requests other than watches fail after
/// `options.request_deadline` ([`DeadlineLayer`], so that it bounds kube's own
/// retries of 429 and 503 too), and each request is counted in `options.requests`
/// ([`RequestsLayer`], outermost, so that it sees the deadline's failures too).
///
/// # Errors
///
/// No kubeconfig and no in-cluster configuration, or one that cannot be used.
pub async fn build(options: &ClientOptions) -> Result<kube::Client, kube::Error> {
    let mut config = kube::Config::infer()
        .await
        .map_err(kube::Error::InferConfig)?;
    config.default_retry = options.retries;
    // A name that is not a valid header value (never a Pod name) is left out.
    if let Some(agent) = options
        .user_agent
        .as_deref()
        .and_then(|a| http::HeaderValue::from_str(a).ok())
    {
        config.headers.push((http::header::USER_AGENT, agent));
    }
    let builder = kube::client::ClientBuilder::try_from(config)?
        .with_layer(&DepthLimitLayer)
        .with_layer(&DeadlineLayer::new(options.request_deadline));
    Ok(match &options.requests {
        Some(requests) => builder
            .with_layer(&RequestsLayer::new(requests.clone()))
            .build(),
        None => builder.build(),
    })
}
