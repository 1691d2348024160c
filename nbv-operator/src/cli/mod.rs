//! Command-line interface of `nbv`.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

pub mod cluster;
pub mod commands;
pub mod config;

/// nbv: GitOps coordination for NotebookValidationJobs with Argo CD.
#[derive(Debug, Parser)]
#[command(name = "nbv", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the operator.
    Run(Box<crate::cli::config::RunArgs>),
    /// Print the NotebookValidationJob CustomResourceDefinition as YAML.
    Crd,
    /// Block until sync wave N may proceed (an Argo CD PreSync hook): exit 0 when every
    /// job that blocks the wave completed its own wave, 1 as soon as one failed.
    Wait {
        /// Namespace of the jobs (default: the kubeconfig context's namespace, or the
        /// Pod's own namespace in a cluster).
        #[arg(long, short)]
        namespace: Option<String>,
        /// The wave to wait for.
        #[arg(long)]
        wave: i64,
        /// Give up after this long (e.g. `30s`, `10m`, `1h30m`).
        #[arg(long, value_parser = crate::wait::parse_duration)]
        timeout: Option<std::time::Duration>,
        /// The cluster to read the jobs from.
        #[command(flatten)]
        cluster: cluster::ClusterArgs,
    },
    /// Work with `mlops.dev/on-success-trigger` annotations.
    #[command(subcommand)]
    Triggers(TriggersCommand),
    /// Simulate the operator against an in-memory cluster in virtual time: a scenario
    /// file (default: ADR-049's end-to-end example) or `--random N` generated ones, with
    /// faults and restarts; checks the invariants (exit 1 when one breaks).
    #[cfg(feature = "simulate")]
    Simulate(commands::simulate::SimulateArgs),
    /// Render the OLM bundle and file-based catalog from the sources of config/.
    #[command(subcommand)]
    Olm(commands::olm::OlmCommand),
    /// Run Argo CD health checks offline: evaluate one on objects, or run test suites.
    #[command(subcommand)]
    Health(commands::health::HealthCommand),
    /// Run Argo CD resource actions offline: run one on an object, or run test suites.
    #[command(subcommand)]
    Action(commands::action::ActionCommand),
    /// What nbv does inside a validation Pod: install, clone, run the notebook.
    #[command(subcommand)]
    Pod(commands::pod::PodCommand),
    /// What nbv does inside an image build: prepare the Dockerfile the build builds.
    #[command(subcommand)]
    Build(commands::build::BuildCommand),
}

/// `nbv triggers ...`
#[derive(Debug, Subcommand)]
pub enum TriggersCommand {
    /// Validate an on-success-trigger annotation value (exit 0 valid, 1 invalid).
    Lint {
        /// File holding the annotation value; `-` or nothing reads standard input.
        file: Option<PathBuf>,
        /// Namespace of the job, used for entries without one.
        #[arg(long, short, default_value = "default")]
        namespace: String,
    },
}

/// What a build without the `simulate` feature says to `nbv simulate`: the simulation
/// is for development, so the image (and a plain `cargo build`) leaves it out.
pub const SIMULATE_LEFT_OUT: &str = "`nbv simulate` is not in this build: it needs \
     nbv-operator's cargo feature `simulate`, which is for development and not in the \
     image. Run it from a clone with `cargo run -p nbv-operator --features simulate -- \
     simulate`.";

/// The file name kubectl runs for `kubectl nbv ...`: a kubectl plugin is an executable
/// named `kubectl-<name>` on `PATH` (krew installs a symlink of that name).
pub const KUBECTL_PLUGIN: &str = "kubectl-nbv";

/// What usage lines and errors call the binary: `kubectl nbv` when it runs as kubectl's
/// plugin (`argv0`'s file name is [`KUBECTL_PLUGIN`], kubectl passes the path it
/// found), `nbv` under any other name.
///
/// # Examples
///
/// ```
/// use std::ffi::OsStr;
/// use nbv_operator::cli::bin_name;
///
/// assert_eq!(bin_name(Some(OsStr::new("/home/me/.krew/bin/kubectl-nbv"))), "kubectl nbv");
/// assert_eq!(bin_name(Some(OsStr::new("/usr/local/bin/nbv"))), "nbv");
/// assert_eq!(bin_name(None), "nbv");
/// ```
pub fn bin_name(argv0: Option<&OsStr>) -> &'static str {
    let file = argv0.map(Path::new).and_then(Path::file_name);
    // Windows finds a plugin by its `.exe`; kubectl passes the name with it.
    let plugin = file.is_some_and(|f| {
        let f = f.to_string_lossy();
        f == KUBECTL_PLUGIN || f.strip_suffix(".exe") == Some(KUBECTL_PLUGIN)
    });
    if plugin { "kubectl nbv" } else { "nbv" }
}

/// Parses a command line whose first item is the program, naming the program in usage
/// and errors as [`bin_name`] says.
///
/// # Errors
///
/// clap's error for a command line `nbv` does not accept, or for `--help` and
/// `--version`, whose text is the error's.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::{try_parse_from, Command};
///
/// let cli = try_parse_from(["kubectl-nbv", "crd"]).unwrap();
/// assert!(matches!(cli.command, Command::Crd));
/// let help = try_parse_from(["kubectl-nbv", "--help"]).unwrap_err().to_string();
/// assert!(help.contains("Usage: kubectl nbv <COMMAND>"));
/// ```
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // Set before parsing: clap would otherwise take argv[0]'s file name as it is.
    let mut command = Cli::command().bin_name(bin_name(args.first().map(OsString::as_os_str)));
    let matches = command.try_get_matches_from_mut(args)?;
    Cli::from_arg_matches(&matches).map_err(|error| error.format(&mut command))
}

/// Parses the process's command line. On an error, prints clap's message (and, for a
/// subcommand this build leaves out, how to get it) and exits with clap's exit code.
pub fn parse() -> Cli {
    try_parse_from(std::env::args_os()).unwrap_or_else(|error| {
        let _ = error.print();
        if let Some(hint) = left_out(&error) {
            eprintln!("\n{hint}");
        }
        std::process::exit(error.exit_code())
    })
}

/// How to get the subcommand `error` found unknown, if this build leaves it out:
/// `nbv simulate` without the `simulate` feature.
pub fn left_out(error: &clap::Error) -> Option<&'static str> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let named = error.get(ContextKind::InvalidSubcommand);
    let simulate = matches!(named, Some(ContextValue::String(name)) if name == "simulate");
    (error.kind() == ErrorKind::InvalidSubcommand && simulate).then_some(SIMULATE_LEFT_OUT)
}

/// Runs `future` to completion on a multi-threaded tokio runtime.
fn block_on(future: impl std::future::Future<Output = u8>) -> u8 {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(future),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            1
        }
    }
}

/// Runs a parsed command line, writing to standard output and error.
pub fn run(cli: Cli) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = match cli.command {
        Command::Run(args) => block_on(commands::run::run(*args)),
        Command::Wait {
            namespace,
            wave,
            timeout,
            cluster,
        } => block_on(commands::wait::run(namespace, wave, timeout, &cluster)),
        Command::Crd => commands::crd::run(&mut stdout.lock()),
        Command::Triggers(TriggersCommand::Lint { file, namespace }) => commands::lint::run(
            file.as_deref(),
            &namespace,
            &mut stdout.lock(),
            &mut stderr.lock(),
        ),
        #[cfg(feature = "simulate")]
        Command::Simulate(args) => {
            commands::simulate::run(&args, &mut stdout.lock(), &mut stderr.lock())
        }
        Command::Olm(command) => {
            commands::olm::run(&command, &mut stdout.lock(), &mut stderr.lock())
        }
        Command::Pod(command) => {
            commands::pod::run(&command, &mut stdout.lock(), &mut stderr.lock())
        }
        Command::Build(command) => {
            commands::build::run(&command, &mut stdout.lock(), &mut stderr.lock())
        }
        Command::Action(command) => commands::action::run(
            command,
            &mut std::io::stdin().lock(),
            &mut stdout.lock(),
            &mut stderr.lock(),
        ),
        Command::Health(command) => commands::health::run(
            command,
            &mut std::io::stdin().lock(),
            &mut stdout.lock(),
            &mut stderr.lock(),
        ),
    };
    let _ = std::io::stdout().flush();
    ExitCode::from(code)
}
