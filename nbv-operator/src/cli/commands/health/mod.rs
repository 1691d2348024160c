//! `nbv health`: run Argo CD health checks offline.
//!
//! - `nbv health eval` runs one health check (nbv's own `NotebookValidationJob` check
//!   by default, or any Lua script) on every object of a YAML or JSON stream and prints
//!   one JSON line per object: what Argo CD would record as the object's health.
//! - `nbv health test` runs test suites written in Argo CD's own format (a directory
//!   with `health.lua`, `health_test.yaml` and the test inputs, as in Argo CD's
//!   `resource_customizations/<group>/<Kind>/`) and compares the results as Argo CD's
//!   `TestLuaHealthScript` does.
//!
//! Both run the scripts in nbv-lua's embedded Lua (Lua 5.1 with gopher-lua's `goto`
//! and number formatting, [`LuaHealthRunner`](nbv_lua::LuaHealthRunner)), set
//! up either as Argo CD's production VM or as its test harness ([`Sandbox`]); see
//! `docs/health-checks.md`.
//!
//! # Examples
//!
//! ```
//! use clap::Parser;
//! use nbv_operator::cli::{Cli, Command};
//! use nbv_operator::cli::commands::health::{self, HealthCommand};
//!
//! let cli = Cli::try_parse_from(["nbv", "health", "eval", "--object", "-"])?;
//! let Command::Health(command) = cli.command else { panic!("not a health command") };
//! assert!(matches!(command, HealthCommand::Eval(_)));
//!
//! let stdin = br#"{"status": {"phase": "Building"}}"#;
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! let code = health::run(command, &mut &stdin[..], &mut out, &mut err);
//! assert_eq!(code, 0);
//! assert_eq!(
//!     String::from_utf8(out)?,
//!     "{\"status\":\"Progressing\",\"message\":\"Building validation environment\"}\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod customizations;
mod discovery;
mod error;
pub mod eval;
pub mod harness;
mod input;
mod stream;
pub mod suite;

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand};
use nbv_core::health::HealthStatus;
use nbv_lua::Sandbox;

pub use error::{InputError, SuiteError};
pub use input::MAX_FILE_BYTES;
pub(crate) use input::{read_file, read_text};

/// `nbv health ...`
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use nbv_operator::cli::{Cli, Command};
/// use nbv_operator::cli::commands::health::HealthCommand;
///
/// let cli = Cli::try_parse_from(["nbv", "health", "test", "config/argocd/tests"])?;
/// assert!(matches!(cli.command, Command::Health(HealthCommand::Test(_))));
/// # Ok::<(), clap::Error>(())
/// ```
#[derive(Debug, Subcommand)]
pub enum HealthCommand {
    /// Evaluate a health check on every object of a YAML or JSON stream and print one
    /// JSON line per object: {"status": "...", "message": "..."}.
    ///
    /// The script runs in a VM set up as Argo CD's production VM, the one its
    /// application controller uses at runtime (no `string`, `math`, or global `os`),
    /// unless --test-harness is given (closed to this machine: no `io`, no `os` beyond
    /// the clock, unless --allow-host-access is given). With --argocd-cm or
    /// --customizations, each object
    /// runs the check Argo CD would pick for its group and kind, with the libraries
    /// Argo CD gives that check. Argo CD's empty health (the script returned nil or an
    /// empty table) prints {"status":"","message":""}.
    ///
    /// Exit codes: 0 every object was evaluated; 1 the check failed on at least one
    /// object (its line has an "error" field) or a document is not valid YAML/JSON;
    /// 2 the object stream or the script cannot be read.
    Eval(EvalCli),
    /// Run health-check test suites in Argo CD's format: every directory under DIR that
    /// holds health.lua and health_test.yaml.
    ///
    /// Each test compares status and message exactly, as Argo CD's own test does (no
    /// message in a test means an empty message). In a suite at `DIR/<group>/<Kind>`,
    /// each input runs the health.lua Argo CD would pick for it in DIR (exact
    /// directory, then wildcard ones, `_` for `*`). The scripts run in a VM set up as
    /// Argo CD's test harness (every library open) unless --production-sandbox is
    /// given, closed to this machine unless --allow-host-access is given: a suite
    /// cannot use `io`, read the environment or run commands.
    ///
    /// Prints each failure, then `N passed, N failed`. Exit code 0 only when every test
    /// passed.
    Test(TestCli),
}

/// The command line of `nbv health eval`.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use nbv_operator::cli::{Cli, Command};
/// use nbv_operator::cli::commands::health::HealthCommand;
///
/// let cli = Cli::try_parse_from(["nbv", "health", "eval", "--object", "jobs.yaml", "--advanced"])?;
/// let Command::Health(HealthCommand::Eval(eval)) = cli.command else { panic!() };
/// assert!(eval.advanced && !eval.native);
///
/// // --native reproduces the shipped checks only: it refuses a script.
/// let refused = Cli::try_parse_from(
///     ["nbv", "health", "eval", "--object", "o.yaml", "--native", "--script", "h.lua"],
/// );
/// assert!(refused.is_err());
/// # Ok::<(), clap::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct EvalCli {
    /// The objects: a YAML stream (documents separated by `---`) or JSON values one
    /// after another; `-` reads standard input. A JSON array is one object, not a list.
    #[arg(long, value_name = "FILE")]
    pub object: PathBuf,
    /// A Lua health script to run instead of nbv's NotebookValidationJob check.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["advanced", "native"])]
    pub script: Option<PathBuf>,
    /// Use nbv's advanced (cell-level) NotebookValidationJob check instead of the basic
    /// one.
    #[arg(long)]
    pub advanced: bool,
    /// Use the integration guide's NotebookValidationJob check exactly, without nbv's
    /// generation check (a status of an older spec then counts).
    #[arg(long, conflicts_with_all = ["advanced", "script"])]
    pub guide: bool,
    /// Run on each object the check Argo CD would pick for its group and kind from this
    /// argocd-cm ConfigMap (`resource.customizations.health.<group>_<Kind>`, with its
    /// `resource.customizations.useOpenLibs.<group>_<Kind>`), before --customizations.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["script", "advanced", "guide", "native"])]
    pub argocd_cm: Option<PathBuf>,
    /// Run on each object the check Argo CD would pick for its group and kind from a
    /// tree laid out like Argo CD's resource_customizations/ (`<group>/<Kind>/health.lua`,
    /// `_` for `*` in wildcard directories), with the libraries open as Argo CD runs its
    /// built-in checks.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["script", "advanced", "guide", "native"])]
    pub customizations: Option<PathBuf>,
    /// Compute nbv's NotebookValidationJob check with nbv-core's native mapping instead
    /// of running its Lua script (numbers print as in Argo CD's gopher-lua).
    #[arg(long)]
    pub native: bool,
    /// The Lua sandbox.
    #[command(flatten)]
    pub sandbox: SandboxFlags,
    /// Give the scripts that run in the test harness `io` and the whole `os`, as Argo
    /// CD's harness does: they can then read and write files, read the environment and
    /// run commands on this machine. Without it, those functions fail with an error
    /// that names them and this flag. Only for scripts you trust, never for a pull
    /// request's.
    #[arg(long, conflicts_with_all = ["production_sandbox", "native"])]
    pub allow_host_access: bool,
}

/// The command line of `nbv health test`.
///
/// # Examples
///
/// ```
/// use clap::Parser;
/// use nbv_lua::Sandbox;
/// use nbv_operator::cli::{Cli, Command};
/// use nbv_operator::cli::commands::health::HealthCommand;
///
/// let cli = Cli::try_parse_from(["nbv", "health", "test", "a", "b", "--production-sandbox"])?;
/// let Command::Health(HealthCommand::Test(test)) = cli.command else { panic!() };
/// assert_eq!(test.dirs.len(), 2);
/// assert_eq!(test.sandbox.or(Sandbox::TestHarness), Sandbox::Production);
/// assert!(!test.allow_host_access);
///
/// // Host access is for the test harness only.
/// let open = Cli::try_parse_from(["nbv", "health", "test", "a", "--allow-host-access"])?;
/// let Command::Health(HealthCommand::Test(test)) = open.command else { panic!() };
/// assert!(test.allow_host_access);
/// let refused = Cli::try_parse_from(
///     ["nbv", "health", "test", "a", "--allow-host-access", "--production-sandbox"],
/// );
/// assert!(refused.is_err());
/// # Ok::<(), clap::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct TestCli {
    /// Directories searched recursively for suites.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// The Lua sandbox.
    #[command(flatten)]
    pub sandbox: SandboxFlags,
    /// Give the scripts that run in the test harness `io` and the whole `os`, as Argo
    /// CD's harness does: they can then read and write files, read the environment and
    /// run commands on this machine. Without it, those functions fail with an error
    /// that names them and this flag. Only for scripts you trust, never for a pull
    /// request's.
    #[arg(long, conflicts_with = "production_sandbox")]
    pub allow_host_access: bool,
}

/// `--production-sandbox` or `--test-harness`: which of Argo CD's two Lua VMs to
/// imitate. The default depends on the command.
///
/// # Examples
///
/// ```
/// use nbv_lua::Sandbox;
/// use nbv_operator::cli::commands::health::SandboxFlags;
///
/// let none = SandboxFlags::default();
/// assert_eq!(none.or(Sandbox::Production), Sandbox::Production);
/// let harness = SandboxFlags { test_harness: true, ..SandboxFlags::default() };
/// assert_eq!(harness.or(Sandbox::Production), Sandbox::TestHarness);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Args)]
#[group(multiple = false)]
pub struct SandboxFlags {
    /// Run as Argo CD's application controller does at runtime: no `string` or `math`
    /// library, `os` (time and date only) through `require("os")` only. Default of
    /// `eval`.
    #[arg(long)]
    pub production_sandbox: bool,
    /// Run as Argo CD's test harness does (its `TestLuaHealthScript`, its built-in
    /// checks, or `useOpenLibs: true`): `string`, `math`, `coroutine`, `debug` and `os`
    /// open, but closed to this machine: `io` and `os` beyond the clock fail unless
    /// --allow-host-access is given. Default of `test`.
    #[arg(long, visible_alias = "open-libs")]
    pub test_harness: bool,
}

impl SandboxFlags {
    /// The sandbox chosen on the command line, or `default` when neither flag is given.
    pub fn or(self, default: Sandbox) -> Sandbox {
        match (self.production_sandbox, self.test_harness) {
            (true, _) => Sandbox::Production,
            (false, true) => Sandbox::TestHarness,
            (false, false) => default,
        }
    }
}

/// Runs `nbv health ...`, reading standard input from `stdin` (for `--object -`).
/// Returns the process exit code (see [`HealthCommand`]).
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use nbv_operator::cli::commands::health::{self, HealthCommand, SandboxFlags, TestCli};
///
/// let suites = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../config/argocd/tests"));
/// let command = HealthCommand::Test(TestCli {
///     dirs: vec![suites],
///     sandbox: SandboxFlags::default(),
///     allow_host_access: false,
/// });
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// assert_eq!(health::run(command, &mut std::io::empty(), &mut out, &mut err), 0);
/// assert!(String::from_utf8(out)?.ends_with(" passed, 0 failed\n"));
/// # Ok::<(), std::string::FromUtf8Error>(())
/// ```
pub fn run(
    command: HealthCommand,
    stdin: &mut impl Read,
    out: &mut impl Write,
    err: &mut impl Write,
) -> u8 {
    match command {
        HealthCommand::Eval(cli) => match eval::EvalArgs::try_from(cli) {
            Ok(args) => eval::run(&args, stdin, out, err),
            Err(usage) => {
                let _ = writeln!(err, "error: {usage}");
                2
            }
        },
        HealthCommand::Test(cli) => harness::run(&harness::TestArgs::from(cli), out),
    }
}

/// The JSON line of a health: `{"status":"Healthy","message":"..."}`, and
/// `{"status":"","message":""}` for Argo CD's empty health (`None`), which is the value
/// Argo CD's Go code holds then (`&HealthStatus{}`).
pub(crate) fn health_json(health: Option<&HealthStatus>) -> String {
    let (status, message) = match health {
        Some(health) => (health.status.as_str(), health.message.as_str()),
        None => ("", ""),
    };
    // A struct, not `json!`, so that `status` comes first whatever serde_json's map order.
    #[derive(serde::Serialize)]
    struct Line<'a> {
        status: &'a str,
        message: &'a str,
    }
    // Serializing two strings cannot fail.
    serde_json::to_string(&Line { status, message }).unwrap_or_default()
}
