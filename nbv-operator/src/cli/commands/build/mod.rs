//! `nbv build`: what nbv does inside an image build (a Tekton PipelineRun's steps, or a
//! kaniko Pod's init containers), after `nbv pod clone` checked the repository out.
//! The decision is nbv-core's (`nbv_core::build::choose`); this reads the checkout and
//! writes what the build step builds.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

mod checkout;
mod prepare;

/// The subcommands of an image build's steps.
#[derive(Debug, Subcommand)]
pub enum BuildCommand {
    /// Decides which requirements file or Dockerfile of the checkout DIR the build uses
    /// (settings: NBV_BUILD, JSON) and writes DIR/.nbv-build/Dockerfile (and
    /// requirements.txt) for the build step; prints what was chosen. Exit 0 done, 1 a
    /// decision error naming the job's field to fix, 2 bad usage.
    Prepare {
        /// The repository's checkout, the build context.
        #[arg(long, value_name = "DIR")]
        source: PathBuf,
        /// Also write the one-line summary to FILE (a Tekton result, a termination
        /// message).
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
    },
}

/// Runs `command`; returns the exit code.
pub fn run(command: &BuildCommand, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match command {
        BuildCommand::Prepare { source, summary } => {
            prepare::prepare(source, summary.as_deref(), out, err)
        }
    }
}
