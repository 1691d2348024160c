//! `nbv run`: the operator.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::Shared;

use crate::cli::config::RunArgs;
use crate::operator::controller::{self, Runtime};
use crate::operator::metrics::Metrics;
use crate::operator::server::access::Access;
use crate::operator::server::{Readiness, serve, serve_secure, tls};
use crate::runtime::clock::SystemClock;
use crate::runtime::leader::{LeaderConfig, run_while_leader};
use crate::runtime::telemetry::init_logging;

/// A shutdown signal every task can wait on.
pub type Shutdown = Shared<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>;

/// Resolves on SIGTERM or Ctrl-C.
pub fn shutdown_signal() -> Shutdown {
    let signal: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = tokio::signal::ctrl_c() => {}
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down");
    });
    signal.shared()
}

/// This replica's name: the Pod name from the downward API, else the host name.
fn identity() -> String {
    std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "nbv-operator".to_owned())
}

/// The namespace the operator runs in (downward API), for its Lease.
fn own_namespace() -> String {
    std::env::var("POD_NAMESPACE")
        .ok()
        .or_else(|| {
            std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace").ok()
        })
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "nbv-system".to_owned())
}

/// Runs the operator until SIGTERM. Exit code 0 after a graceful shutdown, 1 when it
/// cannot start.
pub async fn run(args: RunArgs) -> u8 {
    let filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_owned());
    if let Err(error) = init_logging(args.log_format, &filter) {
        eprintln!("error: {error}");
        return 1;
    }
    // The Pod settings first: a mistake in them stops nbv at once, naming the field.
    let pod_defaults = match crate::operator::pod_settings::load(
        args.pod_defaults.as_deref(),
        args.nbv_image.as_deref(),
        args.clone_image.as_deref(),
    ) {
        Ok(defaults) => defaults,
        Err(error) => {
            tracing::error!(%error, "invalid validation Pod settings");
            return 1;
        }
    };
    let pod_defaults = match args.pod_policy() {
        Ok(policy) => {
            if policy != nbv_core::pod::PodPolicy::default() {
                tracing::info!(
                    ?policy,
                    "jobs' validation Pods are restricted by the pod policy"
                );
            }
            nbv_core::pod::PodDefaults {
                policy,
                ..pod_defaults
            }
        }
        Err(error) => {
            tracing::error!(%error, "invalid pod policy");
            return 1;
        }
    };
    let metrics = Arc::new(Metrics::with_options(args.metrics_options()));
    // The replica's name in every request's User-Agent: the API server's audit log
    // tells replicas apart by it.
    let options = crate::runtime::client::ClientOptions {
        user_agent: Some(crate::runtime::client::user_agent(&identity())),
        requests: Some(metrics.api_requests()),
        ..Default::default()
    };
    let client = match crate::runtime::client::build(&options).await {
        Ok(c) => c,
        Err(error) => {
            tracing::error!(%error, "cannot build a Kubernetes client (no kubeconfig or in-cluster config)");
            return 1;
        }
    };
    // Evictions through a client that does not retry a 429 itself (see
    // `Runtime::evictions`); without one, evictions share the client.
    let evictions = crate::runtime::client::build(&crate::runtime::client::ClientOptions {
        retries: false,
        ..options.clone()
    })
    .await
    .ok();
    let listener = match tokio::net::TcpListener::bind(args.metrics_addr).await {
        Ok(l) => l,
        Err(error) => {
            tracing::error!(%error, addr = %args.metrics_addr, "cannot listen for /metrics");
            return 1;
        }
    };
    let shutdown = shutdown_signal();
    let readiness = Readiness::default();
    let server = if args.insecure_metrics {
        tracing::warn!("serving /metrics over plain HTTP to anyone (--insecure-metrics)");
        tokio::spawn(serve(
            listener,
            metrics.clone(),
            readiness.clone(),
            shutdown.clone(),
        ))
    } else {
        let namespace = own_namespace();
        let names = [
            format!("nbv-operator-metrics.{namespace}.svc"),
            format!("nbv-operator-metrics.{namespace}.svc.cluster.local"),
            "localhost".to_owned(),
        ];
        let tls = match tls::server_config(args.metrics_cert_dir.as_deref(), &names) {
            Ok(tls) => tls,
            Err(error) => {
                tracing::error!(%error, "cannot serve /metrics over HTTPS");
                return 1;
            }
        };
        tokio::spawn(serve_secure(
            listener,
            metrics.clone(),
            readiness.clone(),
            tls,
            Access::new(client.clone()),
            shutdown.clone(),
        ))
    };

    let trimming = tokio::spawn(crate::runtime::heap::trim_every(
        crate::runtime::heap::TRIM_PERIOD,
        shutdown.clone(),
    ));

    let config = crate::operator::config::OperatorConfig {
        pod_defaults,
        ..args.operator_config()
    };
    let instance = identity();
    tracing::info!(gitops_only = config.gitops_only, %instance, "starting nbv operator");
    // Ready once the client works: a standby replica is ready too (it serves probes
    // and metrics, and takes over when the leader goes), or a rollout of two replicas
    // would never complete.
    readiness.set_ready(true);
    let work = {
        let (client, metrics, shutdown) = (client.clone(), metrics.clone(), shutdown.clone());
        move || {
            let runtime = Runtime {
                config: config.clone(),
                metrics: metrics.clone(),
                clock: Arc::new(SystemClock),
                instance: instance.clone(),
                io_layer: None,
                evictions: evictions.clone(),
            };
            controller::run(client.clone(), runtime, shutdown.clone())
        }
    };
    let code = if args.no_leader_election {
        work().await;
        0
    } else {
        let lease = LeaderConfig {
            namespace: args.lease_namespace.clone().unwrap_or_else(own_namespace),
            lease_name: "nbv-operator-leader".to_owned(),
            identity: identity(),
            lease_duration: Duration::from_secs(15),
            renew_every: Duration::from_secs(5),
        };
        match run_while_leader(client, lease, shutdown.clone(), work).await {
            Ok(()) => 0,
            Err(error) => {
                tracing::error!(%error, "leader election failed");
                1
            }
        }
    };
    let _ = server.await;
    let _ = trimming.await;
    code
}
