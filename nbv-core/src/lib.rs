//! # nbv-core
//!
//! The decision logic of nbv, as pure and I/O-free Rust: given a
//! [`NotebookValidationJob`](api::NotebookValidationJob) and what a shell has observed
//! about the cluster, decide what Argo CD should see and what should happen next.
//!
//! nbv-core never performs an effect. Every module returns values: a health
//! assessment, a JSON merge patch, a gate decision, a list of effects with idempotency
//! keys. A shell (the `nbv` operator, or your own controller) carries them out and
//! records what it did, so that a re-reconcile, a conflict or a restart never repeats
//! or loses an effect.
//!
//! | module | decides |
//! |---|---|
//! | [`api`] | the `NotebookValidationJob` resource (`mlops.mlops.dev/v1alpha1`) |
//! | [`annotations`] | every annotation and label key nbv reads or writes |
//! | [`phase`] | the phase machine, retries and backoff |
//! | [`triggers`] | parsing and validating `mlops.dev/on-success-trigger` |
//! | [`waves`] | sync-wave annotations and the `block-wave` gate |
//! | [`aggregate`] | per-Application notebook status and when to publish it |
//! | [`health`] | the Argo CD health of a job, natively and as shipped Lua |
//! | [`events`] | the notification Event of a terminal transition |
//! | [`plan`] | the effects a shell must carry out for a job |
//! | [`pod`] | the validation Pod of an attempt, and what its status means |
//! | [`sync`] | starting an Argo CD sync: sync windows, what counts as done, its result |
// Denied rather than forbidden: the `lua` feature's number-format hook
// (`health::lua::numbers`) is the one place that needs it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod actions;
pub mod aggregate;
pub mod annotations;
pub mod api;
pub mod events;
pub mod health;
pub mod phase;
pub mod plan;
pub mod pod;
pub mod sync;
pub mod triggers;
pub mod waves;
