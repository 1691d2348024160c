//! The shell around `nbv-core`: the `nbv` command line and what it runs, one room per
//! module, each importing only from the rooms listed after it:
//!
//! - [`cli`]: the command line, its flags and subcommands;
//! - `simulate`: the operator against an in-memory cluster in paused time (`nbv
//!   simulate`, feature `simulate`);
//! - [`wait`]: the wave gate `nbv wait` runs (and the simulation with it);
//! - [`operator`]: the controller and everything it runs: reconcile loop, I/O, watches
//!   and caches, metrics;
//! - [`runtime`]: process plumbing: leader election, logging, the heap, the clock, API
//!   errors.
// One call needs `unsafe`: `malloc_trim` in `runtime::heap` (the allocator has no safe
// interface for it). Nothing else may use it.
#![deny(unsafe_code)]

pub mod cli;
pub mod operator;
pub mod runtime;
#[cfg(feature = "simulate")]
pub mod simulate;
pub mod wait;
