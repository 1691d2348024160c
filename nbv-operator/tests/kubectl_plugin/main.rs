//! `kubectl nbv`: the `nbv` binary as kubectl's plugin.
//!
//! kubectl runs `kubectl nbv ARGS` by executing `kubectl-nbv` from `PATH` with ARGS,
//! passing the path it found as argv[0] and none of its own flags. These tests put the
//! built binary under that name in a temporary directory and check that it says
//! `kubectl nbv` in its usage and errors and otherwise does what `nbv` does
//! ([`name`]), that `kubectl nbv wait` picks its cluster and namespace as kubectl would
//! ([`cluster`]), that the krew manifest rendered from `plugins/krew/nbv.yaml.tmpl` is one
//! krew accepts ([`krew`]), and, where kubectl is installed, that kubectl really runs it
//! ([`kubectl`], ignored: `.ci/run` runs it after `scripts/monitoring-tools install`).

mod cluster;
mod krew;
mod kubectl;
mod name;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../temp_dir/mod.rs"]
mod temp_dir;

use temp_dir::TempDir;

/// The built binary under its own name.
const NBV: &str = env!("CARGO_BIN_EXE_nbv");

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A directory holding the built binary as `kubectl-nbv`, a symlink as krew installs
/// it: argv[0] is then the link's path, never the binary's.
fn plugin_dir(label: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::new(label);
    let plugin = dir.path().join("kubectl-nbv");
    std::os::unix::fs::symlink(NBV, &plugin)
        .unwrap_or_else(|e| panic!("cannot link {} to {NBV}: {e}", plugin.display()));
    (dir, plugin)
}

/// Runs `program ARGS` from the repository root with an environment that reaches no
/// cluster by accident: no KUBECONFIG, a HOME without ~/.kube, no in-cluster service.
fn run(program: &Path, args: &[&str], home: &Path) -> Output {
    isolated(Command::new(program), home)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// `command` with the environment of [`run`].
fn isolated(mut command: Command, home: &Path) -> Command {
    command
        .current_dir(root())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("HOME", home);
    command
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
