//! `nbv pod`: the binary as the validation Pod's containers run it, with the Pod's own
//! environment (built by nbv-core's `validation_pod`), on this machine's git and, for
//! the runs marked ignored, the papermill virtualenv `scripts/control-plane install`
//! makes.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use k8s_openapi::api::core::v1::{Container, Pod};
use nbv_core::api::NotebookValidationJob;
use nbv_core::phase::Attempt;
use nbv_core::pod::{
    CLONE_CONTAINER, NOTEBOOK_CONTAINER, PodDefaults, RunErrorKind, RunReport, validation_pod,
};
use serde_json::{Value, json};

mod clone;
mod models;
mod run;

const NBV: &str = env!("CARGO_BIN_EXE_nbv");

fn job(spec: Value) -> NotebookValidationJob {
    let mut base = json!({
        "notebook": {"git": {"url": "https://example.com/org/repo.git", "ref": "main"},
                     "path": "notebooks/train.ipynb"},
        "podConfig": {"containerImage": "quay.io/example/papermill:1"}
    });
    if let (Value::Object(base), Value::Object(extra)) = (&mut base, spec) {
        base.extend(extra);
    }
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train", "generation": 1},
        "spec": base
    }))
    .expect("a job")
}

fn pod_of(job: &NotebookValidationJob) -> Pod {
    let attempt = Attempt::new(1, 0);
    validation_pod(job, attempt, None, None, &PodDefaults::default()).expect("a pod")
}

fn container<'a>(pod: &'a Pod, name: &str) -> &'a Container {
    let spec = pod.spec.as_ref().expect("spec");
    spec.init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .find(|c| c.name == name)
        .expect("container")
}

fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nbv-pod-cmd-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Makes sure `tool` runs here: a machine without it fails the tests that need it.
fn require(tool: &str) {
    let found = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "{tool} does not run here: install it to run these tests"
    );
}

/// `program` with the literal environment of `container` (paths under `/workspace`,
/// `/nbv-golden` and `/nbv-tools` moved under `root`), then `extra`.
fn command_of(
    program: &str,
    args: &[&str],
    container: &Container,
    root: &Path,
    extra: &[(&str, String)],
) -> Command {
    let map = |value: &str| {
        for prefix in [
            "/workspace",
            "/nbv-golden",
            "/nbv-tools",
            "/dev/termination-log",
        ] {
            if let Some(rest) = value.strip_prefix(prefix) {
                return format!("{}{}{rest}", root.display(), prefix);
            }
        }
        value.to_owned()
    };
    let mut command = Command::new(program);
    command.args(args).env_clear();
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    for var in container.env.iter().flatten() {
        if let Some(value) = &var.value {
            command.env(&var.name, map(value));
        }
    }
    for (name, value) in extra {
        command.env(name, value);
    }
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
