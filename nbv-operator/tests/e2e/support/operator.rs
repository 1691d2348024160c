//! `nbv run` as a process, as a user runs it: with its ServiceAccount's kubeconfig,
//! stopped with SIGTERM or killed with SIGKILL.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::cluster::Cluster;
use super::process::{dies_with_the_test, free_port};

/// How an operator is started.
#[derive(Clone, Debug)]
pub struct OperatorOptions {
    /// `--gitops-only`.
    pub gitops_only: bool,
    /// `--watch-namespace`.
    pub watch_namespace: Option<String>,
    /// Leader election in the `nbv-system` Lease, or `--no-leader-election`.
    pub leader_election: bool,
    /// `POD_NAME`: this replica's identity in the Lease and in Events.
    pub identity: String,
    /// More flags.
    pub extra: Vec<String>,
    /// The build of nbv to run, if not `NBV_E2E_NBV` or this one (a before-and-after
    /// in one run).
    pub program: Option<PathBuf>,
    /// The kubeconfig to run with, if not the cluster's for nbv (one that sends nbv
    /// through a [`Proxy`](super::proxy::Proxy)).
    pub kubeconfig: Option<PathBuf>,
    /// How `/metrics` is served: plain HTTP to anyone (`None`, so that the scenarios
    /// read it with [`Operator::metrics`]), or nbv's default, HTTPS to an allowed token,
    /// with the certificate of this directory (`tls.crt`, `tls.key`) if it holds one.
    pub secure_metrics: Option<Option<PathBuf>>,
}

impl OperatorOptions {
    /// A single replica without leader election watching `namespace`.
    pub fn gitops_only(namespace: &str) -> OperatorOptions {
        OperatorOptions {
            gitops_only: true,
            watch_namespace: Some(namespace.to_owned()),
            leader_election: false,
            identity: format!("nbv-{namespace}"),
            extra: Vec::new(),
            program: None,
            kubeconfig: None,
            secure_metrics: None,
        }
    }

    /// The same, running notebooks (nbv's default mode).
    pub fn default_mode(namespace: &str) -> OperatorOptions {
        OperatorOptions {
            gitops_only: false,
            ..OperatorOptions::gitops_only(namespace)
        }
    }

    /// With more flags.
    pub fn with(mut self, flags: &[&str]) -> OperatorOptions {
        self.extra.extend(flags.iter().map(|f| (*f).to_owned()));
        self
    }
}

/// A running `nbv run`. Dropping it kills the process; the process also dies with the
/// test ([`dies_with_the_test`]), so a failing test leaves nothing running.
pub struct Operator {
    child: Option<Child>,
    metrics: SocketAddr,
    log: PathBuf,
    /// The identity it runs as.
    pub identity: String,
}

impl Operator {
    /// Starts `nbv run` against `cluster`.
    pub fn start(cluster: &Cluster, options: &OperatorOptions) -> Operator {
        let metrics: SocketAddr = ([127, 0, 0, 1], free_port()).into();
        let log = std::env::temp_dir().join(format!(
            "nbv-e2e-{}-{}.log",
            options.identity,
            std::process::id()
        ));
        let out = std::fs::File::create(&log).expect("the operator's log file");
        // `NBV_E2E_NBV` runs another build of nbv (a release build, an earlier version).
        let program = options
            .program
            .clone()
            .or_else(|| std::env::var_os("NBV_E2E_NBV").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_nbv")));
        let mut command = Command::new(program);
        command
            .arg("run")
            .arg("--metrics-addr")
            .arg(metrics.to_string())
            .arg("--log-format")
            .arg("text")
            .args(&options.extra)
            .env(
                "KUBECONFIG",
                options
                    .kubeconfig
                    .as_deref()
                    .unwrap_or(cluster.operator_kubeconfig()),
            )
            .env("POD_NAME", &options.identity)
            .env("RUST_LOG", "info,nbv_operator=debug")
            .env_remove("NBV_GITOPS_ONLY")
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("log"))
            .stderr(out);
        if options.gitops_only {
            command.arg("--gitops-only");
        }
        // An environment variable, not a flag: an earlier build of nbv (`program`,
        // `NBV_E2E_NBV`) that serves plain HTTP anyway ignores it.
        match &options.secure_metrics {
            None => {
                command.env("NBV_INSECURE_METRICS", "true");
            }
            Some(dir) => {
                command.env_remove("NBV_INSECURE_METRICS");
                if let Some(dir) = dir {
                    command.arg("--metrics-cert-dir").arg(dir);
                }
            }
        }
        if let Some(ns) = &options.watch_namespace {
            command.arg("--watch-namespace").arg(ns);
        }
        if options.leader_election {
            command.arg("--lease-namespace").arg("nbv-system");
        } else {
            command.arg("--no-leader-election");
        }
        dies_with_the_test(&mut command);
        let child = command.spawn().expect("start nbv run");
        Operator {
            child: Some(child),
            metrics,
            log,
            identity: options.identity.clone(),
        }
    }

    /// Kills the process at once (SIGKILL): no graceful shutdown, no Lease release.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, and waits for the exit code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        // SAFETY: sending a signal to our own child.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        for _ in 0..200 {
            if let Ok(Some(status)) = child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        child.wait().ok().and_then(|s| s.code())
    }

    /// The process id, while it runs (for reading `/proc/<pid>/status` and `stat`).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }

    /// The address of its `/metrics` (for a Prometheus to scrape).
    pub fn metrics_addr(&self) -> SocketAddr {
        self.metrics
    }

    /// The reconciles it has run (the sum of `nbv_reconcile_total` over outcomes).
    pub async fn reconciles(&self) -> f64 {
        self.metrics()
            .await
            .lines()
            .filter(|l| l.starts_with("nbv_reconcile_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }

    /// `GET /metrics`, once the server answers.
    pub async fn metrics(&self) -> String {
        for _ in 0..100 {
            if let Some(body) = http_get(self.metrics, "/metrics") {
                return body;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "{} did not serve /metrics; its log:\n{}",
            self.identity,
            self.log_tail()
        );
    }

    /// The last lines of the process's log.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- log of {} ---\n{}", self.identity, self.log_tail());
        }
        self.kill();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A plain HTTP/1.0 GET on loopback; `None` when nothing answers.
pub fn http_get(addr: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then(|| body.to_owned())
}
