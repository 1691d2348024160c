//! `nbv`: the nbv operator and its command-line tools.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = nbv_operator::cli::Cli::parse();
    nbv_operator::cli::run(cli)
}
