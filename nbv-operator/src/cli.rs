//! Command-line interface of `nbv`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands;

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
    /// Print the NotebookValidationJob CustomResourceDefinition as YAML.
    Crd,
    /// Work with `mlops.dev/on-success-trigger` annotations.
    #[command(subcommand)]
    Triggers(TriggersCommand),
    /// Walk the ADR-049 end-to-end example through nbv-core and print what happens.
    Demo,
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

/// Runs a parsed command line, writing to standard output and error.
pub fn run(cli: Cli) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = match cli.command {
        Command::Crd => commands::crd::run(&mut stdout.lock()),
        Command::Triggers(TriggersCommand::Lint { file, namespace }) => commands::lint::run(
            file.as_deref(),
            &namespace,
            &mut stdout.lock(),
            &mut stderr.lock(),
        ),
        Command::Demo => commands::demo::run(&mut stdout.lock()),
    };
    let _ = std::io::stdout().flush();
    ExitCode::from(code)
}
