//! `nbv pod`: what nbv does inside a validation Pod, as Tekton's entrypoint does in a
//! TaskRun's Pod. The `nbv-tools` init container (nbv's image) installs nbv into the
//! Pod, the clone containers (nbv's image) clone, and the notebook container (the job's
//! image) runs the copy: every check has one implementation, nbv-core's.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

mod clone;
mod credential;
mod install;
pub mod predict;
mod run;

pub use credential::scope_of;

/// The subcommands the validation Pod's containers run.
#[derive(Debug, Subcommand)]
pub enum PodCommand {
    /// Copies this binary and the papermill runner into DIR (the `nbv-tools` init
    /// container).
    Install {
        /// The shared emptyDir.
        dir: PathBuf,
    },
    /// Clones NBV_GIT_URL at NBV_GIT_REF into NBV_CHECKOUT with the image's git (the
    /// clone init containers).
    Clone,
    /// git's credential helper during `nbv pod clone`: answers only for the clone's
    /// own scheme and host.
    #[command(hide = true)]
    Credential {
        /// git's operation: `get`, `store` or `erase`.
        operation: String,
    },
    /// Runs the notebook with papermill, judges the run and writes the report to the
    /// termination message (the notebook container).
    Run,
}

/// Runs `command`; returns the exit code.
pub fn run(command: &PodCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match command {
        PodCommand::Install { dir } => install::install(dir, err),
        PodCommand::Clone => clone::clone(out, err),
        PodCommand::Credential { operation } => {
            credential::answer(operation, &mut std::io::stdin().lock(), out)
        }
        PodCommand::Run => run::run(out, err),
    }
}
