//! `nbv action`: run Argo CD resource actions offline, the sibling of `nbv health`.
//!
//! - `nbv action test` runs action test suites in Argo CD's format
//!   (`resource_customizations/<group>/<Kind>/actions/` with `action_test.yaml`), as
//!   Argo CD's `TestLuaResourceActionsScript` does ([`run_suites`]).
//! - `nbv action run` runs one action on an object as argocd-server does and prints the
//!   writes it would make: the merge patch of the object (`{"patch": …}`) or an object
//!   to create (`{"create": …}`), one JSON line each ([`writes`]).
//!
//! # Examples
//!
//! ```
//! use clap::Parser;
//! use nbv_operator::cli::{Cli, Command};
//! use nbv_operator::cli::commands::action::{self, ActionCommand};
//!
//! let cli = Cli::try_parse_from(["nbv", "action", "run", "rerun", "--object", "-"])?;
//! let Command::Action(command) = cli.command else { panic!("not an action command") };
//! let stdin = br#"{"metadata": {"name": "train"}, "status": {"phase": "Failed"}}"#;
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! assert_eq!(action::run(command, &mut &stdin[..], &mut out, &mut err), 0);
//! assert_eq!(
//!     String::from_utf8(out)?,
//!     "{\"patch\":{\"metadata\":{\"annotations\":{\"mlops.dev/rerun\":\"1\"}}}}\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod argocd;
mod suite;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{Value, json};

pub use argocd::{ActionError, Scripts, Write, writes};
pub use suite::{
    ActionTest, DiscoveryTest, ExpectedAction, ExpectedParam, Report, TESTS_FILE, TestList,
    run_suites,
};

use super::health::{read_file, read_text};

/// `nbv action ...`
#[derive(Debug, Subcommand)]
pub enum ActionCommand {
    /// Run action test suites in Argo CD's format: every directory under DIR that holds
    /// action_test.yaml (with discovery.lua and <action>/action.lua beside it).
    ///
    /// Discovery runs with every library open and each action it offers must be listed
    /// in the test's result; actions run in Argo CD's production VM and each returned
    /// resource must match the expected object (fields it leaves out are not compared).
    /// Prints each failure, then `N passed, N failed`; exit code 0 only when every test
    /// passed.
    Test(TestCli),
    /// Run an action on an object as argocd-server does and print the writes it makes,
    /// one JSON line each: {"patch": <JSON merge patch>} or {"create": <object>}.
    ///
    /// The action must be offered, and enabled, by the discovery script. Exit codes: 0
    /// the action ran; 1 it is not offered, disabled, or its script failed; 2 the
    /// object or the scripts cannot be read.
    Run(RunCli),
}

/// The command line of `nbv action test`.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct TestCli {
    /// Directories searched recursively for suites.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
}

/// The command line of `nbv action run`.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct RunCli {
    /// The action's name.
    pub action: String,
    /// The object, as YAML or JSON; `-` reads standard input.
    #[arg(long, value_name = "FILE")]
    pub object: PathBuf,
    /// The actions directory to use (discovery.lua and <action>/action.lua) instead of
    /// nbv's own NotebookValidationJob actions.
    #[arg(long, value_name = "DIR")]
    pub actions: Option<PathBuf>,
    /// A parameter of the action, as NAME=VALUE (Argo CD's `actionParams`).
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
}

fn parse_param(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .ok_or_else(|| format!("{text:?} is not NAME=VALUE"))
}

/// Runs `nbv action ...`; returns the process exit code (see [`ActionCommand`]).
pub fn run(
    command: ActionCommand,
    stdin: &mut impl Read,
    out: &mut impl std::io::Write,
    err: &mut impl std::io::Write,
) -> u8 {
    match command {
        ActionCommand::Test(cli) => {
            let report = run_suites(&cli.dirs);
            for failure in &report.failures {
                let _ = writeln!(out, "FAIL {failure}");
            }
            let _ = writeln!(
                out,
                "{} passed, {} failed",
                report.passed,
                report.failures.len()
            );
            u8::from(!report.failures.is_empty())
        }
        ActionCommand::Run(cli) => run_action(&cli, stdin, out, err),
    }
}

fn run_action(
    cli: &RunCli,
    stdin: &mut impl Read,
    out: &mut impl std::io::Write,
    err: &mut impl std::io::Write,
) -> u8 {
    let loaded = load_object(&cli.object, stdin).and_then(|object| {
        let scripts = match &cli.actions {
            Some(dir) => load_scripts(dir)?,
            None => Scripts::nbv(),
        };
        Ok((object, scripts))
    });
    let (object, scripts) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return 2;
        }
    };
    let params: BTreeMap<String, String> = cli.params.iter().cloned().collect();
    match writes(&cli.action, &object, &scripts, &params) {
        Ok(writes) => {
            for write in writes {
                let line = match write {
                    Write::Patch(patch) => json!({ "patch": patch }),
                    Write::Create(object) => json!({ "create": object }),
                };
                let _ = writeln!(out, "{line}");
            }
            0
        }
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            1
        }
    }
}

fn load_object(path: &Path, stdin: &mut impl Read) -> Result<Value, String> {
    let text = if path == Path::new("-") {
        read_text(stdin, "standard input")
    } else {
        read_file(path)
    }
    .map_err(|e| e.to_string())?;
    nbv_core::yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_scripts(dir: &Path) -> Result<Scripts, String> {
    let discovery = read_file(&dir.join("discovery.lua")).map_err(|e| e.to_string())?;
    let mut actions = BTreeMap::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let script = entry.path().join("action.lua");
        if script.is_file() {
            let name = entry.file_name().to_string_lossy().into_owned();
            actions.insert(name, read_file(&script).map_err(|e| e.to_string())?);
        }
    }
    Ok(Scripts { discovery, actions })
}
