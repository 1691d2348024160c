//! Carrying out a planned effect as a sans-IO machine: every protocol of an effect
//! (which requests, in which order, and what each answer means) decided here, one
//! request at a time; the shell only carries each [`Request`](crate::io::Request) out
//! and answers it.
//!
//! [`Carry`] is the front door: [`Carry::start`] with the job, the planned effect
//! ([`crate::plan::PlannedEffect`]) and what the shell knows ([`CarryFacts`]), then
//! [`Machine::next`] / [`Machine::answer`] until it is done with the [`Carried`] that
//! [`Settlement::record`](crate::reconcile::Settlement::record) takes. Each effect kind
//! has its own machine, which a shell may also drive alone:
//!
//! | effect | machine | requests |
//! |---|---|---|
//! | wave annotations | [`JobPatch`] | `PATCH` (merge) the job |
//! | trigger | [`Fire`] | the reads the confused-deputy rule needs (the Application, the target's `Namespace`), then the action's (below) |
//! | `restart` Deployment, StatefulSet, DaemonSet | | `GET` it; `PATCH` (merge) its template's `restartedAt` with the resourceVersion read, unless it already restarted at the run's time or later |
//! | `restart` InferenceService | | `LIST` its pods by label (`GET` it when none is found); before an eviction `GET` each ReplicaSet (or StatefulSet) controlling them not read yet; `POST` an eviction of the next pod created before the run ended, once no pod terminates, no controller is short of pods and every newer pod is Ready ([`pace`](crate::actions::restart::pace)); deferred while it waits or a PodDisruptionBudget refuses (429) |
//! | `restart` any other kind | | `GET` it, `LIST` pods by its `spec.selector`, `GET` intermediate owners; then as an InferenceService, among the pods it owns |
//! | `sync` Application | | read it (cache, else `GET`), its AppProject's sync windows (cache); `PATCH` (merge) the operation with the resourceVersion read, unless [`crate::actions::sync::decide`] defers or skips it |
//! | `refresh` | | read it (an Application from the cache, anything else with `GET`); `PATCH` (merge) its annotations, unless its timestamp is the run's time or later |
//! | sync result | [`SyncResult`] | read the Application (cache, else `GET`; again with `GET` when the sync looks replaced) |
//! | notification | [`Notify`] | `POST` a `core/v1` Event (`AlreadyExists`: delivered before) |
//! | report of an abandoned effect | [`Report`] | `POST` a `core/v1` Event |
//! | Application status | [`ApplicationStatus`] | `PATCH` (merge) two annotations of the Application |
//!
//! Every write is a JSON merge patch of the fields nbv owns, a create, or a delete
//! guarded by the object's uid; nothing ever replaces an object. Every effect is
//! idempotent for its run, which covers the window between carrying an effect out and
//! recording it: a rolling restart or a refresh writes the run's completion time only
//! over an older one, eviction spares pods created after it (and a pod already
//! terminating), a sync is skipped
//! when the Application already carries the run's marker, and a notification Event has
//! a name derived from the run.
//!
//! Failed answers are read once, by [`Failure::of`] ([`crate::reconcile::ApiAnswer`]'s
//! classes): what is retried, what is given up.
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_core::carry::{Carry, CarryFacts, Machine};
//! use nbv_core::io::{Response, Step};
//! use nbv_core::plan::{plan, Outcome, PlanContext};
//! use nbv_core::reconcile::Carried;
//!
//! let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
//!     "metadata": {"name": "train", "namespace": "ml", "generation": 1,
//!                  "annotations": {"argocd.argoproj.io/sync-wave": "3"}},
//!     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
//!              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
//!     "status": {"phase": "Succeeded", "observedGeneration": 1,
//!                "startTime": "2026-01-24T22:29:00Z", "completionTime": "2026-01-24T22:30:00Z"}
//! }))?;
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
//! let plan = plan(&job, &PlanContext::default(), now);
//!
//! // The wave patch: one PATCH of the job, answered with the job as stored.
//! let mut carry = Carry::start(&job, &plan.effects[0], &CarryFacts::default(), now);
//! let carried = loop {
//!     match carry.next() {
//!         Step::Io(request) => {
//!             assert_eq!(request.to_string(), "PATCH NotebookValidationJob ml/train");
//!             carry.answer(Response::Object(Some(serde_json::json!({"metadata": {"resourceVersion": "8"}}))));
//!         }
//!         Step::Done(carried) => break carried,
//!     }
//! };
//! assert_eq!(carried, Carried::Written(Outcome::Done));
//! assert_eq!(carry.stored_job().unwrap()["metadata"]["resourceVersion"], "8");
//! # Ok::<(), serde_json::Error>(())
//! ```

mod access;
mod effect;
mod event;
mod failure;
mod fire;
mod job_patch;
mod machine;
mod restart;
mod sync;
mod target;

#[cfg(test)]
mod tests;

pub use access::NamespaceOptIn;
pub use effect::{Carry, CarryFacts, TriggerStatus};
pub use event::{Delivery, Notify, Report};
pub use failure::Failure;
pub use fire::Fire;
pub use job_patch::{ApplicationStatus, JobPatch};
pub use machine::Machine;
pub use sync::SyncResult;

pub use crate::reconcile::Carried;
