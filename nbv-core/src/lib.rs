//! # nbv-core
//!
//! The decision logic of nbv, as pure and I/O-free Rust: given a
//! [`NotebookValidationJob`] and what a shell has observed about the cluster, decide
//! what Argo CD should see and what should happen next.
//!
//! nbv-core never performs an effect. Every module returns values: a health
//! assessment, a JSON merge patch, a gate decision, a list of effects with idempotency
//! keys. A shell (the `nbv` operator, or your own controller) carries them out and
//! records what it did, so that a re-reconcile, a conflict or a restart never repeats
//! or loses an effect.
//!
//! # The front door
//!
//! [`job::Reconcile`] is one reconcile of a job as a sans-IO state machine, the one
//! front door for the `nbv` operator and for embedders alike: start it with the job,
//! the [`job::Settings`] and the [`job::Facts`] of the moment; [`job::Reconcile::next`]
//! asks for one [`io::Request`] at a time (a closed set: read, list, create, patch,
//! delete), [`job::Reconcile::answer`] takes the [`io::Response`], until it is done with
//! when to look again and what to remember. Every decision and every protocol is
//! inside; `docs/embedding.md` walks through a complete minimal operator that drives it
//! (`nbv-core/examples/embed.rs` in the repository, run by `tests/embed.rs`).
//!
//! The pieces it is made of are public too, re-exported here and in [`prelude`]
//! (`use nbv_core::prelude::*;`) for shells that need finer control. In the order a
//! reconcile meets them:
//!
//! | item | what it is for |
//! |---|---|
//! | [`NotebookValidationJob`], [`NotebookValidationJobStatus`], [`Phase`] | the resource (`mlops.mlops.dev/v1alpha1`), its status and the phase of its run |
//! | [`step`], [`PhaseEvent`], [`Transition`], [`Next`], [`RetryPolicy`] | the phase machine: from the status and what was observed to the status to write and what to do next |
//! | [`plan()`], [`PlanContext`], [`Plan`], [`Effect`] | the GitOps effects a job owes now: wave annotations, on-success triggers, the notification Event |
//! | [`record`], [`Outcome`] | recording what became of an effect in the job's ledger (`status.effects`), which makes every effect happen once |
//! | [`assess_job`], [`Variant`], [`HealthStatus`], [`HealthStatusCode`] | the Argo CD health of a job, as the shipped Lua scripts compute it |
//! | [`parse_triggers`] | reading and validating the `mlops.dev/on-success-trigger` annotation |
//! | [`gate`], [`GateJob`], [`Wave`] | the `mlops.dev/block-wave` gate: may wave N start? |
//! | [`AggregateIndex`], [`NotebookStatus`] | the per-Application notebook status published to Argo CD |
//! | [`notification`], [`NotificationEvent`] | the Event of a terminal transition |
//!
//! Everything else lives in the modules below.
//!
//! # A reconcile, step by step
//!
//! A job without a status starts its run: the phase machine writes `Initializing` and
//! asks for the validation Pod. Once the run has ended and its terminal status is
//! written, the plan owes the wave annotations and the notification Event; the shell
//! carries each out and records it, and the next plan owes nothing.
//!
//! ```
//! use std::collections::BTreeMap;
//! use chrono::{TimeZone, Utc};
//! use nbv_core::prelude::*;
//!
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
//! let mut job = NotebookValidationJob::new("train", Default::default());
//! job.metadata.namespace = Some("ml".into());
//! job.metadata.generation = Some(1);
//! job.metadata.annotations = Some(BTreeMap::from([(
//!     "argocd.argoproj.io/sync-wave".to_string(),
//!     "3".to_string(),
//! )]));
//!
//! // 1. The phase machine: write `t.status` when `t.changed`, then do `t.next`.
//! let t = step(job.status.as_ref(), &PhaseEvent::observe(&job), now, &RetryPolicy::default());
//! assert!(t.changed);
//! assert_eq!(t.status.phase, Some(Phase::Initializing));
//! assert!(matches!(t.next, Next::StartPod(_)));
//!
//! // The run ends (the shell observed the Pod succeed) and its status is written.
//! job.status = Some(NotebookValidationJobStatus {
//!     phase: Some(Phase::Succeeded),
//!     start_time: Some(now),
//!     completion_time: Some(now),
//!     ..t.status
//! });
//! assert_eq!(assess_job(&job, Variant::Basic).status, HealthStatusCode::Healthy);
//!
//! // 2. The plan: carry out each effect, record it, write the ledger to `status.effects`.
//! let ctx = PlanContext::default();
//! let owed = plan(&job, &ctx, now);
//! let keys: Vec<String> = owed.effects.iter().map(|e| e.key.to_string()).collect();
//! assert_eq!(keys, ["wave", "notify"]);
//! let mut ledger = owed.ledger();
//! for effect in &owed.effects {
//!     // Carry `effect.effect` out: here the wave annotations are merged into the job
//!     // (a shell patches it); the Event would be created.
//!     if let Effect::PatchJob { patch } = &effect.effect {
//!         let annotations = job.metadata.annotations.get_or_insert_default();
//!         for (key, value) in patch["metadata"]["annotations"].as_object().into_iter().flatten() {
//!             match value.as_str() {
//!                 Some(value) => annotations.insert(key.clone(), value.to_owned()),
//!                 None => annotations.remove(key),
//!             };
//!         }
//!     }
//!     ledger = record(ledger, &effect.key, Outcome::Done, now, &ctx.retry).ledger;
//! }
//! assert_eq!(job.metadata.annotations.as_ref().unwrap()["mlops.dev/wave-complete"], "3");
//! job.status.as_mut().unwrap().effects = Some(ledger);
//!
//! // A re-reconcile (or a restart of the shell) owes nothing more.
//! assert!(plan(&job, &ctx, now).is_empty());
//! ```
//!
//! # Modules
//!
//! The front door, then the core's two wings, then what both stand on.
//!
//! | module | decides |
//! |---|---|
//! | [`job`] | **the front door**: one reconcile of a job as a sans-IO machine |
//! | [`io`] | the closed set of requests a machine asks a shell for, and the answers |
//! | [`reconcile`] | the bookkeeping of one reconcile: what a step asks of the Pods, what each carried-out effect means, what to persist, when to look again |
//! | **GitOps coordination** | |
//! | [`plan`](mod@plan) | the effects a shell must carry out for a job, and the ledger that makes each happen once |
//! | [`carry`] | carrying out one planned effect as a sans-IO machine: its requests, in order, and what each answer means |
//! | [`triggers`] | parsing and validating `mlops.dev/on-success-trigger`, and who may act where |
//! | [`actions`] | what each trigger action does to its target, and how it stands after the shell acted |
//! | [`sync`] | starting an Argo CD sync: sync windows, what counts as done, its result |
//! | [`waves`] | sync-wave annotations and the `block-wave` gate |
//! | [`aggregate`] | per-Application notebook status and when to publish it |
//! | [`health`] | the Argo CD health of a job, natively and as shipped Lua |
//! | [`events`] | the notification Event of a terminal transition |
//! | **Running and checking notebooks** | |
//! | [`phase`] | the phase machine, the typed run state, retries and backoff |
//! | [`pod`] | the validation Pod of an attempt, and what its status means |
//! | [`checks`] | the checks of `validationConfig` |
//! | [`compare`] | the comparison of an executed notebook with its golden notebook |
//! | [`models`] | model validation: the gate before the Pod, the prediction check after |
//! | **Foundations** | |
//! | [`api`] | the `NotebookValidationJob` resource (`mlops.mlops.dev/v1alpha1`) |
//! | [`api_answer`] | what an answer of the API server means for the request that got it |
//! | [`annotations`] | every annotation and label key nbv reads or writes |
//! | [`duration`] | reading and writing durations: `spec.timeout`'s grammar and Go's (sync windows) |
//! | [`text`] | cutting text to a size: the byte budgets Kubernetes sets, values repeated in messages |
//! | [`time`] | times as nbv writes them: RFC 3339, UTC, whole seconds |
//! | [`redact`] | keeping credentials out of what nbv writes for others to read |
//! | [`kube_names`] | the rules Kubernetes sets for names and label values |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod actions;
pub mod aggregate;
pub mod annotations;
pub mod api;
pub mod api_answer;
pub mod build;
pub mod carry;
pub mod checks;
pub mod compare;
pub mod duration;
pub mod events;
pub mod health;
pub mod io;
pub mod job;
pub mod kube_names;
pub mod models;
pub mod phase;
pub mod plan;
pub mod pod;
pub mod reconcile;
pub mod redact;
pub mod sync;
pub mod text;
pub mod time;
pub mod triggers;
pub mod waves;
pub mod yaml;

pub use aggregate::{AggregateIndex, NotebookStatus};
pub use api::{NotebookValidationJob, NotebookValidationJobStatus, Phase};
pub use events::{NotificationEvent, notification};
pub use health::{HealthStatus, HealthStatusCode, Variant, assess_job};
pub use phase::{Next, PhaseEvent, RetryPolicy, Transition, step};
pub use plan::{Effect, Outcome, Plan, PlanContext, plan, record};
pub use triggers::parse_triggers;
pub use waves::{GateJob, Wave, gate};

/// The front door in one `use`: `use nbv_core::prelude::*;` brings the items an
/// embedding operator calls (see the [crate documentation](crate)).
pub mod prelude {
    pub use crate::{
        AggregateIndex, Effect, GateJob, HealthStatus, HealthStatusCode, Next, NotebookStatus,
        NotebookValidationJob, NotebookValidationJobStatus, NotificationEvent, Outcome, Phase,
        PhaseEvent, Plan, PlanContext, RetryPolicy, Transition, Variant, Wave, assess_job, gate,
        notification, parse_triggers, plan, record, step,
    };
}
