//! `nbv health eval` and `nbv health test`, run through their `run` functions.
//!
//! The suites nbv ships (`config/argocd/tests`) and the example suites
//! (`examples/health`) must pass in both sandboxes; their `health.lua` files must be
//! the scripts nbv-core ships; a suite with a wrong expectation must fail with the
//! expected report.

use std::collections::BTreeSet;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use clap::Parser;
use nbv_core::api::Phase;
use nbv_core::health::{
    ADVANCED_SCRIPT, BASIC_SCRIPT, GUIDE_SCRIPT, HealthStatus, Semantics, Variant, assess_with,
};
use nbv_lua::{EvalOptions, Sandbox};
use nbv_operator::cli::commands::health::eval::{
    self, Check, EvalArgs, ObjectSource, ScriptSource,
};
use nbv_operator::cli::commands::health::harness::{self, TestArgs};
use nbv_operator::cli::commands::health::suite::{Suite, TestList};
use nbv_operator::cli::commands::health::{self, HealthCommand};
use nbv_operator::cli::{Cli, Command};
use proptest::prelude::*;
use serde_json::{Value, json};

const NVJ_SUITE: &str = "config/argocd/tests/mlops.mlops.dev/NotebookValidationJob";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A fresh, empty directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("nbv-health-cli-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `nbv health eval` with `args` on `stdin`: exit code, stdout, stderr.
fn eval_with(args: &EvalArgs, stdin: &str) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = eval::run(args, &mut stdin.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn lua_args(variant: Variant, sandbox: Sandbox) -> EvalArgs {
    EvalArgs {
        objects: ObjectSource::Stdin,
        check: Check::Lua(ScriptSource::Shipped(variant)),
        options: EvalOptions {
            sandbox,
            ..EvalOptions::default()
        },
    }
}

/// Parses a command line and runs it as `nbv` would: exit code, stdout, stderr.
fn nbv(args: &[&str], stdin: &str) -> (u8, String, String) {
    let cli = Cli::try_parse_from(std::iter::once("nbv").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
    let Command::Health(command) = cli.command else {
        panic!("{args:?} is not `nbv health`");
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = health::run(command, &mut stdin.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn run_tests(dirs: Vec<PathBuf>, sandbox: Sandbox) -> (u8, String) {
    let args = TestArgs {
        dirs,
        options: EvalOptions {
            sandbox,
            ..EvalOptions::default()
        },
    };
    let mut out = Vec::new();
    let code = harness::run(&args, &mut out);
    (code, String::from_utf8(out).unwrap())
}

/// How many tests the suites under `dir` list, read independently of the harness.
fn listed_tests(dir: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            count += listed_tests(&path);
        } else if path.file_name() == Some("health_test.yaml".as_ref()) {
            let list: TestList = TestList::parse(&read(&path)).unwrap();
            count += list.tests.len();
        }
    }
    count
}

/// The objects of the basic NotebookValidationJob suite, as one YAML stream, in the
/// order of its test list.
fn suite_stream() -> (Vec<String>, String) {
    let suite = Suite::load(&root().join(NVJ_SUITE)).unwrap();
    let names = suite.tests.iter().map(|t| t.input_path.clone()).collect();
    let docs: Vec<String> = suite
        .tests
        .iter()
        .map(|t| read(&suite.input_path(t)))
        .collect();
    (names, docs.join("---\n"))
}

mod bounds;
mod evaluation;
mod suites;
