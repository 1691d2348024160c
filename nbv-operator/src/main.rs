//! `nbv`: the nbv operator and its command-line tools.

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = nbv_operator::cli::parse();
    nbv_operator::cli::run(cli)
}
