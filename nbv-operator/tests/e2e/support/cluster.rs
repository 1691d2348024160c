//! The cluster under test: a control plane of `scripts/control-plane`, or any cluster a
//! kubeconfig names.

use std::path::{Path, PathBuf};
use std::process::Command;

use kube::config::{KubeConfigOptions, Kubeconfig};

use super::audit::Audit;

/// Where the suite runs.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The directory `scripts/control-plane up` wrote, when the control plane is ours.
    dir: Option<PathBuf>,
    /// The kubeconfig of a cluster administrator (setup, assertions, the stand-ins).
    admin: PathBuf,
    /// The kubeconfig nbv runs with: its ServiceAccount's user on our control plane.
    operator: PathBuf,
    /// The kubeconfig of the `nbv wait` hook's ServiceAccount, where there is one.
    wait_hook: Option<PathBuf>,
}

impl Cluster {
    /// The cluster named by the environment. The suite's tests are ignored unless asked
    /// for (`--ignored`); asked for, they fail rather than pass unrun when the cluster
    /// is missing, naming what to set up:
    ///
    /// - `NBV_E2E=1` enables it;
    /// - `NBV_E2E_CLUSTER=DIR`: the control plane `scripts/control-plane up DIR` started
    ///   (nbv runs as its ServiceAccount, restarts of etcd and the API server are tested);
    /// - otherwise `KUBECONFIG` (or `~/.kube/config`) names the cluster, and nbv runs
    ///   with `NBV_E2E_OPERATOR_KUBECONFIG` if set, else with the same kubeconfig.
    pub fn from_env() -> Cluster {
        assert_eq!(
            std::env::var("NBV_E2E").as_deref(),
            Ok("1"),
            "the end-to-end suite needs NBV_E2E=1 and a cluster: run `scripts/control-plane e2e` (see docs/testing.md)"
        );
        if let Some(dir) = std::env::var_os("NBV_E2E_CLUSTER").map(PathBuf::from) {
            let admin = dir.join("kubeconfig-admin");
            assert!(
                admin.is_file(),
                "NBV_E2E_CLUSTER={} holds no kubeconfig-admin: start a control plane there with \
                 `scripts/control-plane up {}` (after `scripts/control-plane install`), or run \
                 `scripts/control-plane e2e`",
                dir.display(),
                dir.display()
            );
            return Cluster {
                admin,
                operator: dir.join("kubeconfig-nbv"),
                wait_hook: Some(dir.join("kubeconfig-wait")),
                dir: Some(dir),
            };
        }
        let admin = std::env::var_os("KUBECONFIG")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".kube/config")))
            .expect("NBV_E2E=1 needs NBV_E2E_CLUSTER or a kubeconfig");
        assert!(
            admin.is_file(),
            "NBV_E2E=1 without NBV_E2E_CLUSTER needs a kubeconfig, and {} is not a file: set \
             KUBECONFIG, or run `scripts/control-plane e2e`",
            admin.display()
        );
        let operator = std::env::var_os("NBV_E2E_OPERATOR_KUBECONFIG")
            .map(PathBuf::from)
            .unwrap_or_else(|| admin.clone());
        Cluster {
            dir: None,
            admin,
            operator,
            wait_hook: None,
        }
    }

    /// A client with the administrator's rights.
    pub async fn admin(&self) -> kube::Client {
        client_for(&self.admin).await
    }

    /// The administrator's kubeconfig (for tools run as processes, like `kubectl`).
    pub fn admin_kubeconfig(&self) -> &Path {
        &self.admin
    }

    /// The kubeconfig `nbv run` uses.
    pub fn operator_kubeconfig(&self) -> &Path {
        &self.operator
    }

    /// The kubeconfig of the `nbv wait` hook's own ServiceAccount, `ml/nbv-wait`.
    pub fn wait_hook_kubeconfig(&self) -> Option<&Path> {
        self.wait_hook.as_deref()
    }

    /// The API server's audit log of nbv's requests, on our control plane.
    pub fn audit(&self) -> Option<Audit> {
        self.dir
            .as_ref()
            .map(|dir| Audit::new(dir.join("audit.log")))
    }

    /// The audit log, for a test whose subject is nbv's requests. Such a test cannot
    /// run on another cluster: there it fails, naming the `--skip` that leaves it out,
    /// rather than pass without its checks.
    pub fn required_audit(&self) -> Audit {
        self.require_own_control_plane("reading nbv's requests from the audit log");
        self.audit().expect("our control plane has an audit log")
    }

    /// Panics unless the control plane is the suite's own: `what` needs it (restarts,
    /// the audit log). Names the test to leave out on another cluster.
    pub fn require_own_control_plane(&self, what: &str) {
        let current = std::thread::current();
        let test = current.name().unwrap_or("this test");
        assert!(
            self.dir.is_some(),
            "{what} needs the suite's own control plane (NBV_E2E_CLUSTER, which \
             `scripts/control-plane e2e` sets); against another cluster, leave the test out \
             with `--skip {test}` (docs/testing.md)"
        );
    }

    /// Stops and starts `component` (`etcd` or `apiserver`) of our control plane.
    pub fn restart(&self, component: &str) {
        let dir = self.dir.as_ref().expect("restarts need NBV_E2E_CLUSTER");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/control-plane");
        let status = Command::new(script)
            .args(["restart", component])
            .arg(dir)
            .status()
            .expect("run scripts/control-plane");
        assert!(status.success(), "restarting {component} failed");
    }
}

/// A client from a kubeconfig file.
/// The bearer token of a kubeconfig the control plane wrote (`token:`).
pub fn token_of(kubeconfig: &Path) -> String {
    std::fs::read_to_string(kubeconfig)
        .unwrap_or_else(|e| panic!("read {}: {e}", kubeconfig.display()))
        .lines()
        .find_map(|l| l.trim().strip_prefix("token:").map(str::trim))
        .unwrap_or_else(|| panic!("no token in {}", kubeconfig.display()))
        .to_owned()
}

pub async fn client_for(path: &Path) -> kube::Client {
    let kubeconfig = Kubeconfig::read_from(path)
        .unwrap_or_else(|e| panic!("read the kubeconfig {}: {e}", path.display()));
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("use the kubeconfig {}: {e}", path.display()));
    kube::Client::try_from(config).expect("a client")
}
