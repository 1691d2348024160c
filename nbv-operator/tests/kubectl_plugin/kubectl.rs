//! kubectl itself runs the plugin: `kubectl nbv ...` with `kubectl-nbv` on `PATH`.
//!
//! Ignored: a fresh machine has no kubectl. `.ci/run` installs it (Debian's
//! kubernetes-client, `scripts/monitoring-tools install`) and then runs these with
//! `--ignored`; without kubectl they fail, saying so.

use std::path::Path;
use std::process::Output;

use crate::{NBV, isolated, plugin_dir, stderr, stdout};

/// `kubectl ARGS` with `dir` first on `PATH` and nothing else of the caller's
/// kubectl setup.
fn kubectl(dir: &Path, args: &[&str]) -> Output {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(dir.to_owned()).chain(std::env::split_paths(&path)))
            .expect("PATH");
    isolated(std::process::Command::new("kubectl"), dir)
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run kubectl ({e}): install it with scripts/monitoring-tools install")
        })
}

#[test]
#[ignore = "needs kubectl: scripts/monitoring-tools install (Debian's kubernetes-client)"]
fn kubectl_runs_nbv_as_its_plugin() {
    let (dir, _plugin) = plugin_dir("kubectl");

    let list = kubectl(dir.path(), &["plugin", "list", "--name-only"]);
    assert!(
        stdout(&list).lines().any(|l| l.trim() == "kubectl-nbv"),
        "kubectl plugin list does not find kubectl-nbv:\n{}{}",
        stdout(&list),
        stderr(&list)
    );

    let help = kubectl(dir.path(), &["nbv", "--help"]);
    assert!(
        help.status.success(),
        "kubectl nbv --help:\n{}",
        stderr(&help)
    );
    assert!(
        stdout(&help).contains("Usage: kubectl nbv <COMMAND>"),
        "kubectl nbv --help:\n{}",
        stdout(&help)
    );

    // Arguments pass through unchanged, flags after the plugin's name included.
    let crd = kubectl(dir.path(), &["nbv", "crd"]);
    let own = std::process::Command::new(NBV)
        .arg("crd")
        .output()
        .expect("run nbv crd");
    assert!(crd.status.success(), "kubectl nbv crd:\n{}", stderr(&crd));
    assert_eq!(stdout(&crd), stdout(&own));

    let wait = kubectl(dir.path(), &["nbv", "wait", "-n", "ml"]);
    assert_eq!(wait.status.code(), Some(2), "{}", stderr(&wait));
    assert!(
        stderr(&wait).contains("Usage: kubectl nbv wait"),
        "kubectl nbv wait -n ml:\n{}",
        stderr(&wait)
    );

    // kubectl refuses its own flags before a plugin's name (docs/install.md says so).
    let before = kubectl(dir.path(), &["-n", "ml", "nbv", "crd"]);
    assert!(!before.status.success(), "kubectl -n ml nbv crd ran");
}
