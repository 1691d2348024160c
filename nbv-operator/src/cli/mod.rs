//! Command-line interface of `nbv`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
        /// Namespace of the jobs.
        #[arg(long, short)]
        namespace: String,
        /// The wave to wait for.
        #[arg(long)]
        wave: i64,
        /// Give up after this long (e.g. `30s`, `10m`, `1h30m`).
        #[arg(long, value_parser = crate::wait::parse_duration)]
        timeout: Option<std::time::Duration>,
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

/// Parses the process's command line. On an error, prints clap's message (and, for a
/// subcommand this build leaves out, how to get it) and exits with clap's exit code.
pub fn parse() -> Cli {
    Cli::try_parse().unwrap_or_else(|error| {
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
        } => block_on(async move {
            let client = match crate::runtime::client::build(&Default::default()).await {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: cannot build a Kubernetes client: {e}");
                    return 3;
                }
            };
            let args = crate::wait::WaitArgs {
                namespace,
                wave,
                timeout,
            };
            crate::wait::wait(
                client,
                &args,
                &mut std::io::stdout(),
                &mut std::io::stderr(),
            )
            .await
        }),
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
