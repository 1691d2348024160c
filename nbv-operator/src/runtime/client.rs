//! The operator's Kubernetes client: kube's, with the layers every request of nbv
//! passes through.

use std::path::PathBuf;
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
/// assert_eq!(options.kubeconfig, None);
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
    /// The kubeconfig file to read (kubectl's `--kubeconfig`); `None` reads what
    /// `KUBECONFIG` names, else `~/.kube/config`, else uses the Pod's service account.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (kubectl's `--context`); `None` uses the file's
    /// `current-context`.
    pub context: Option<String>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            request_deadline: REQUEST_DEADLINE,
            user_agent: None,
            retries: true,
            requests: None,
            kubeconfig: None,
            context: None,
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

/// A client of the cluster [`config`] chooses: answers pass through
/// [`DepthLimitLayer`], requests other than watches fail after
/// `options.request_deadline` ([`DeadlineLayer`], so that it bounds kube's own
/// retries of 429 and 503 too), and each request is counted in `options.requests`
/// ([`RequestsLayer`], outermost, so that it sees the deadline's failures too).
///
/// # Errors
///
/// No kubeconfig and no in-cluster configuration, or one that cannot be used.
pub async fn build(options: &ClientOptions) -> Result<kube::Client, kube::Error> {
    let mut config = config(options).await?;
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

/// The cluster, credentials and default namespace `options` choose, as kubectl would:
/// without `kubeconfig` and `context`, what kube infers (`KUBECONFIG` or
/// `~/.kube/config`, falling back to the Pod's service account); with `kubeconfig`,
/// that file only; with `context`, that context instead of `current-context`. Its
/// `default_namespace` is the context's namespace (`default` if it names none), or the
/// Pod's own namespace in a cluster.
///
/// # Errors
///
/// The kubeconfig cannot be read or names no such context, or (without either
/// option) there is neither a kubeconfig nor an in-cluster configuration.
///
/// # Examples
///
/// ```no_run
/// use nbv_operator::runtime::client::{config, ClientOptions};
///
/// # async fn example() -> Result<(), kube::Error> {
/// let options = ClientOptions { context: Some("staging".into()), ..ClientOptions::default() };
/// let config = config(&options).await?;
/// println!("{} in namespace {}", config.cluster_url, config.default_namespace);
/// # Ok(())
/// # }
/// ```
pub async fn config(options: &ClientOptions) -> Result<kube::Config, kube::Error> {
    let chosen = kube::config::KubeConfigOptions {
        context: options.context.clone(),
        ..Default::default()
    };
    let mut config = match (&options.kubeconfig, &options.context) {
        (None, None) => kube::Config::infer()
            .await
            .map_err(kube::Error::InferConfig)?,
        (Some(path), _) => {
            let file = kube::config::Kubeconfig::read_from(path)?;
            kube::Config::from_custom_kubeconfig(file, &chosen).await?
        }
        // A context names an entry of a kubeconfig, so there is no in-cluster fallback.
        (None, Some(_)) => kube::Config::from_kubeconfig(&chosen).await?,
    };
    // What `infer` does too: kube's documented debugging overrides, from the environment.
    if options.kubeconfig.is_some() || options.context.is_some() {
        config.apply_debug_overrides();
    }
    Ok(config)
}
