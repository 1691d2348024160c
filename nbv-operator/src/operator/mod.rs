//! The controller and everything it runs.

pub mod application_watch;
pub mod applications;
pub mod argocd;
pub mod config;
pub mod controller;
pub mod effects;
pub mod metrics;
pub mod models;
pub mod pod_settings;
pub mod projection;
pub mod publisher;
pub mod reconcile;
pub mod resources;
pub mod resync;
pub mod server;
