//! The shell around `nbv-core`: the `nbv` command line and what it runs.
// One call needs `unsafe`: `malloc_trim` in `runtime::heap` (the allocator has no safe
// interface for it). Nothing else may use it.
#![deny(unsafe_code)]

/// The `nbv` command line: its flags and subcommands.
pub mod cli;
/// The controller and everything it runs: reconcile loop, I/O, watches and caches.
pub mod operator;
/// Process plumbing: leader election, logging, the heap, the clock, API errors.
pub mod runtime;
/// The operator against an in-memory cluster in paused time (`nbv simulate`).
#[cfg(feature = "simulate")]
pub mod simulate;
pub mod validation_pod;
/// The wave gate `nbv wait` runs (and the simulation with it).
pub mod wait;

// The paths `validation_pod` was written against, until it is removed.
use operator::{effects, metrics};
use runtime::api_error;
