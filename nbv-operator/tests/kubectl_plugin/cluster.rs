//! `kubectl nbv wait` picks the cluster and namespace as kubectl would: `--kubeconfig`,
//! `KUBECONFIG`, `--context`, and `-n` over the context's namespace.
//!
//! The kubeconfig points at a port nothing listens on, and `--timeout 0s` gives up at
//! once: the timeout message names the namespace the command chose, and no cluster is
//! needed.

use std::path::Path;
use std::process::Output;

use crate::{TempDir, isolated, plugin_dir, stderr};

/// Contexts `first` (current, namespace ml-first), `second` (ml-second) and `bare` (no
/// namespace), all on a server that refuses connections.
const KUBECONFIG: &str = r#"apiVersion: v1
kind: Config
clusters:
  - name: nowhere
    cluster:
      server: https://127.0.0.1:1
users:
  - name: someone
    user:
      token: not-a-token
contexts:
  - name: first
    context: {cluster: nowhere, user: someone, namespace: ml-first}
  - name: second
    context: {cluster: nowhere, user: someone, namespace: ml-second}
  - name: bare
    context: {cluster: nowhere, user: someone}
current-context: first
"#;

struct Setup {
    _dir: TempDir,
    plugin: std::path::PathBuf,
    kubeconfig: String,
    home: std::path::PathBuf,
}

fn setup(label: &str) -> Setup {
    let (dir, plugin) = plugin_dir(label);
    let kubeconfig = dir.path().join("kubeconfig.yaml");
    std::fs::write(&kubeconfig, KUBECONFIG).expect("write the kubeconfig");
    Setup {
        plugin,
        kubeconfig: kubeconfig.to_string_lossy().into_owned(),
        home: dir.path().to_owned(),
        _dir: dir,
    }
}

/// `kubectl-nbv wait --wave 4 --timeout 0s ARGS`, with `KUBECONFIG` if given.
fn wait(setup: &Setup, args: &[&str], kubeconfig_env: Option<&str>) -> Output {
    let mut command = isolated(std::process::Command::new(&setup.plugin), &setup.home);
    command
        .args(["wait", "--wave", "4", "--timeout", "0s"])
        .args(args);
    if let Some(path) = kubeconfig_env {
        command.env("KUBECONFIG", path);
    }
    command.output().expect("run kubectl-nbv wait")
}

/// The namespace the timeout message names.
fn namespace_waited_on(output: &Output) -> String {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(2), "not a timeout:\n{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("timed out after 0s"))
        .unwrap_or_else(|| panic!("no timeout message:\n{text}"));
    line.split("the jobs of namespace ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the timeout names no namespace: {line}"))
        .trim_end_matches(';')
        .to_owned()
}

#[test]
fn the_namespace_is_the_flag_else_the_context_s_else_default() {
    let s = setup("namespace");
    let file = s.kubeconfig.as_str();
    let cases: [(&[&str], &str); 5] = [
        (&["--kubeconfig", file], "ml-first"),
        (&["--kubeconfig", file, "--context", "second"], "ml-second"),
        (&["--kubeconfig", file, "--context", "bare"], "default"),
        (&["--kubeconfig", file, "-n", "ml-given"], "ml-given"),
        (
            &[
                "--kubeconfig",
                file,
                "--context",
                "second",
                "--namespace",
                "x",
            ],
            "x",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            namespace_waited_on(&wait(&s, args, None)),
            expected,
            "{args:?}"
        );
    }
}

#[test]
fn kubeconfig_comes_from_the_environment_as_for_kubectl() {
    let s = setup("environment");
    let env = Some(s.kubeconfig.as_str());
    assert_eq!(namespace_waited_on(&wait(&s, &[], env)), "ml-first");
    assert_eq!(
        namespace_waited_on(&wait(&s, &["--context", "second"], env)),
        "ml-second"
    );
    // The flag wins over the environment, as with kubectl.
    let elsewhere = Path::new(&s.kubeconfig).with_file_name("missing.yaml");
    let elsewhere = elsewhere.to_string_lossy();
    assert_eq!(
        namespace_waited_on(&wait(
            &s,
            &["--kubeconfig", &s.kubeconfig],
            Some(&elsewhere)
        )),
        "ml-first"
    );
}

#[test]
fn an_unusable_kubeconfig_or_context_is_named_with_exit_code_3() {
    let s = setup("unusable");
    let missing = Path::new(&s.kubeconfig).with_file_name("missing.yaml");
    let missing = missing.to_string_lossy();
    for (args, named) in [
        (
            vec!["--kubeconfig", &*s.kubeconfig, "--context", "nope"],
            "nope",
        ),
        (vec!["--kubeconfig", &*missing], "missing.yaml"),
        // No kubeconfig anywhere (HOME has no .kube) and not in a Pod.
        (vec![], "kubeconfig"),
    ] {
        let output = wait(&s, &args, None);
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{args:?}:\n{text}");
        assert!(
            text.starts_with("error: cannot build a Kubernetes client: ") && text.contains(named),
            "{args:?}:\n{text}"
        );
        assert!(text.contains("--kubeconfig"), "says what to fix: {text}");
    }
}
