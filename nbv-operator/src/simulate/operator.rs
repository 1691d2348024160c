//! The simulated operator: [`controller::run`] started, stopped, crashed and restarted
//! with fresh in-memory state, as a Pod of the operator would be.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::Shared;
use nbv_testkit::FakeCluster;
use nbv_testkit::invariants::Uptime;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::mutation::Mutation;
use crate::operator::config::OperatorConfig;
use crate::operator::controller::{self, Runtime};
use crate::operator::metrics::Metrics;

type Shutdown = Shared<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>;

/// One running operator.
struct Instance {
    stop: oneshot::Sender<()>,
    handle: JoinHandle<()>,
}

/// How a stopped operator ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// It returned.
    Returned,
    /// It was still running when the graceful shutdown gave up waiting, and was aborted.
    Hung,
    /// It panicked (the panic is also recorded by the panic hook).
    Panicked,
    /// It was aborted on purpose (a crash).
    Crashed,
}

/// The operator over the whole simulation: at most one instance at a time.
pub(super) struct Operator {
    cluster: FakeCluster,
    config: OperatorConfig,
    /// The deliberate bug every instance runs with, if any.
    mutation: Option<Mutation>,
    current: Option<Instance>,
    uptimes: Vec<Uptime>,
    /// Names the instances, as Pod names would.
    started: u32,
}

/// How long a graceful shutdown may take before the instance counts as hung.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(60);

impl Operator {
    pub fn new(
        cluster: FakeCluster,
        config: OperatorConfig,
        mutation: Option<Mutation>,
    ) -> Operator {
        Operator {
            cluster,
            config,
            mutation,
            current: None,
            uptimes: Vec::new(),
            started: 0,
        }
    }

    pub fn is_running(&self) -> bool {
        self.current.is_some()
    }

    /// Starts an instance with fresh in-memory state and a new client; returns its name.
    pub fn start(&mut self) -> String {
        self.started += 1;
        let name = format!("nbv-operator-{}", self.started);
        let (stop, receiver) = oneshot::channel::<()>();
        let signal: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
            let _ = receiver.await;
        });
        let shutdown: Shutdown = signal.shared();
        // The cluster's clock is the operator's: both read the same virtual time.
        let clock = self.cluster.clock();
        let runtime = Runtime {
            config: self.config.clone(),
            metrics: Arc::new(Metrics::new()),
            clock: Arc::new(move || clock.now()),
            instance: name.clone(),
            io_layer: self.mutation.map(Mutation::layer),
            evictions: None,
        };
        let handle = tokio::spawn(controller::run(self.cluster.client(), runtime, shutdown));
        self.current = Some(Instance { stop, handle });
        self.uptimes.push(Uptime {
            started: self.cluster.now(),
            stopped: None,
        });
        name
    }

    /// Stops the running instance, if any: `graceful` as on SIGTERM (running
    /// reconciles finish), otherwise a crash wherever it is.
    pub async fn stop(&mut self, graceful: bool) -> Option<Ended> {
        let Instance { stop, mut handle } = self.current.take()?;
        // The signal also stops the tasks the controller spawned (its publisher and
        // Application watcher), which a crash of the process would end too.
        let _ = stop.send(());
        let ended = if graceful {
            match tokio::time::timeout(SHUTDOWN_GRACE, &mut handle).await {
                Ok(Ok(())) => Ended::Returned,
                Ok(Err(e)) if e.is_panic() => Ended::Panicked,
                Ok(Err(_)) => Ended::Crashed,
                Err(_) => {
                    handle.abort();
                    Ended::Hung
                }
            }
        } else {
            handle.abort();
            match handle.await {
                Err(e) if e.is_panic() => Ended::Panicked,
                _ => Ended::Crashed,
            }
        };
        if let Some(uptime) = self.uptimes.last_mut() {
            uptime.stopped = Some(self.cluster.now());
        }
        Some(ended)
    }

    /// Notices an instance that ended on its own (it returned or panicked) and records
    /// when it stopped.
    pub async fn reap(&mut self) -> Option<Ended> {
        if !self
            .current
            .as_ref()
            .is_some_and(|i| i.handle.is_finished())
        {
            return None;
        }
        let Instance { handle, .. } = self.current.take()?;
        let ended = match handle.await {
            Ok(()) => Ended::Returned,
            Err(e) if e.is_panic() => Ended::Panicked,
            Err(_) => Ended::Crashed,
        };
        if let Some(uptime) = self.uptimes.last_mut() {
            uptime.stopped = Some(self.cluster.now());
        }
        Some(ended)
    }

    /// When each instance ran.
    pub fn uptimes(&self) -> &[Uptime] {
        &self.uptimes
    }

    /// How many instances were started.
    pub fn starts(&self) -> u32 {
        self.started
    }
}
