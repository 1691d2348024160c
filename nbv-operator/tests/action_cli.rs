//! `nbv action`: Argo CD's action test suites, and one action run as argocd-server runs
//! it.

use std::path::{Path, PathBuf};

use nbv_operator::cli::commands::action::{self, ActionCommand, RunCli, TestCli, run_suites};

#[path = "temp_dir/mod.rs"]
mod temp_dir;

use temp_dir::TempDir;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

const SUITE: &str = "config/argocd/tests/mlops.mlops.dev/NotebookValidationJob/actions";

/// A copy of nbv's suite in a temporary directory, with `edit` applied.
fn suite_with(label: &str, edit: impl FnOnce(&Path)) -> TempDir {
    let dir = TempDir::new(label);
    let copy = dir.path().join("actions");
    copy_dir(&root().join(SUITE), &copy);
    edit(&copy);
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create");
    for entry in std::fs::read_dir(from).expect("read").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

#[test]
fn the_shipped_suite_passes() {
    let report = run_suites(&[root().join(SUITE)]);
    assert_eq!(report.failures, Vec::<String>::new());
    assert_eq!(report.passed, 8);
}

#[test]
fn a_wrong_expectation_fails_and_names_the_test() {
    let dir = suite_with("wrong", |suite| {
        let path = suite.join("testdata/succeeded-rerun.yaml");
        let text = std::fs::read_to_string(&path).expect("read");
        std::fs::write(
            &path,
            text.replace("mlops.dev/rerun: \"1\"", "mlops.dev/rerun: \"9\""),
        )
        .expect("write");
        let path = suite.join("action_test.yaml");
        let text = std::fs::read_to_string(&path).expect("read");
        // Discovery that offers an action the test does not list.
        std::fs::write(&path, text.replacen("disabled: false", "disabled: true", 1))
            .expect("write");
    });
    let report = run_suites(&[dir.path().to_owned()]);
    assert_eq!(report.failures.len(), 2, "{:#?}", report.failures);
    assert!(report.failures[0].contains("discovery/testdata/succeeded.yaml"));
    assert!(report.failures[1].contains("actions/rerun/testdata/succeeded.yaml"));
    assert!(report.failures[1].contains("differs from testdata/succeeded-rerun.yaml"));

    let (mut out, mut err) = (Vec::new(), Vec::new());
    let command = ActionCommand::Test(TestCli {
        dirs: vec![dir.path().to_owned()],
    });
    assert_eq!(
        action::run(command, &mut std::io::empty(), &mut out, &mut err),
        1
    );
    assert!(String::from_utf8_lossy(&out).ends_with("6 passed, 2 failed\n"));
}

#[test]
fn a_missing_script_or_suite_is_a_failure_not_a_pass() {
    let dir = suite_with("missing", |suite| {
        std::fs::remove_file(suite.join("rerun/action.lua")).expect("rm")
    });
    let report = run_suites(&[dir.path().to_owned()]);
    assert_eq!(report.failures.len(), 4, "{:#?}", report.failures);
    let empty = TempDir::new("empty");
    let report = run_suites(&[empty.path().to_owned()]);
    assert_eq!(report.passed, 0);
    assert!(report.failures[0].contains("no action_test.yaml found"));
}

#[test]
fn run_refuses_an_action_that_is_disabled() {
    let object = root().join(SUITE).join("testdata/validation-running.yaml");
    let command = ActionCommand::Run(RunCli {
        action: "rerun".to_owned(),
        object,
        actions: None,
        params: vec![],
    });
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(
        action::run(command, &mut std::io::empty(), &mut out, &mut err),
        1
    );
    assert!(out.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&err),
        "error: the action \"rerun\" is disabled for this object now (Argo CD greys it out)\n"
    );
}

#[test]
fn run_prints_the_merge_patch_argocd_server_sends() {
    let object = root().join(SUITE).join("testdata/failed-after-rerun.yaml");
    let command = ActionCommand::Run(RunCli {
        action: "rerun".to_owned(),
        object,
        actions: Some(root().join(SUITE)),
        params: vec![],
    });
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(
        action::run(command, &mut std::io::empty(), &mut out, &mut err),
        0,
        "{}",
        String::from_utf8_lossy(&err)
    );
    assert_eq!(
        String::from_utf8_lossy(&out),
        "{\"patch\":{\"metadata\":{\"annotations\":{\"mlops.dev/rerun\":\"3\"}}}}\n"
    );
}
