//! The shell around `nbv-core`: the `nbv` command line and what it runs.
// One call needs `unsafe`: `malloc_trim` in `heap` (the allocator has no safe
// interface for it). Nothing else may use it.
#![deny(unsafe_code)]

pub mod api_error;
pub mod application_watch;
pub mod argocd;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod context;
pub mod controller;
pub mod effects;
pub mod heap;
pub mod leader;
pub mod metrics;
pub mod models;
pub mod monitoring;
pub mod pod_settings;
pub mod projection;
pub mod publisher;
pub mod reconcile;
pub mod resources;
pub mod resync;
pub mod server;
#[cfg(feature = "simulate")]
pub mod simulate;
pub mod telemetry;
