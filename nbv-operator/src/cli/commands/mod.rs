//! One module per subcommand. Each `run` writes to the given streams and returns the
//! process exit code, so commands are tested without spawning a process.

pub mod action;
pub mod build;
pub mod crd;
pub mod health;
pub mod lint;
pub mod olm;
pub mod pod;
pub mod run;
#[cfg(feature = "simulate")]
pub mod simulate;
pub mod wait;
