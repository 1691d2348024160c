//! The shell around `nbv-core`: the `nbv` command line and what it runs.
#![forbid(unsafe_code)]

pub mod cli;
pub mod commands;
