//! The decisions of one reconcile, between what a shell observed and what it writes.
//!
//! A shell's reconcile of a job reads as observe → decide → carry out → persist, and
//! every decision on the way is a function here:
//!
//! 1. **The phase** (when the shell runs notebooks): [`crate::phase::step`] with what
//!    is observed of the job, then [`PodWork::of`] the transition says what to do about
//!    the attempt's Pod; each observation of the Pod is stepped again (at most
//!    [`MAX_PHASE_STEPS`] times). The status is written when it changed.
//! 2. **The plan**: [`crate::plan::plan`] from the *persisted* status, whose ledger is
//!    first [`merge_recent`]ed with the ledger the shell wrote a moment ago (its watch
//!    cache may not show that write yet).
//! 3. **Carrying out**: for each planned effect, the shell makes its API calls and
//!    [`Settlement::record`]s what they came to ([`Carried`]); the settlement answers
//!    with the Event to create at once.
//! 4. **Persisting**: [`Settlement::status_write`], one merge patch of the ledger
//!    ([`Settlement::ledger_write`]) and the conditions ([`Settlement::conditions`],
//!    shared with the phase machine, hence written with a `resourceVersion`
//!    precondition), whose Events are created once that write succeeded. When the
//!    patch loses the race, the ledger is written alone, without a precondition (nbv is
//!    its only writer), and the conditions wait for the next reconcile.
//! 5. **Looking again**: [`Wake::requeue`].
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_core::api::NotebookValidationJob;
//! use nbv_core::plan::{plan, Outcome, PlanContext};
//! use nbv_core::reconcile::{Carried, Settlement};
//!
//! let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
//!     "metadata": {"name": "train", "namespace": "ml", "generation": 1,
//!                  "annotations": {"argocd.argoproj.io/sync-wave": "3"}},
//!     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
//!              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
//!     "status": {"phase": "Succeeded", "observedGeneration": 1,
//!                "startTime": "2026-01-24T22:29:00Z", "completionTime": "2026-01-24T22:30:00Z"}
//! }))?;
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
//! let ctx = PlanContext::default();
//! let plan = plan(&job, &ctx, now);
//!
//! // The wave patch and the notification, both carried out.
//! let mut settlement = Settlement::new(&plan);
//! for effect in &plan.effects {
//!     let report = settlement.record(effect, Carried::Written(Outcome::Done), now, &ctx.retry);
//!     assert!(report.is_none(), "only triggers and syncs report at once");
//! }
//! let ledger = settlement.ledger_write(None).expect("the ledger is written");
//! assert_eq!(ledger.done.len(), 2);
//!
//! let change = settlement.conditions(&[], now, Some(1)).expect("the conditions are new");
//! assert_eq!(change.conditions.len(), 2);
//! assert!(change.announce.is_empty(), "nothing is wrong with the annotations");
//! # Ok::<(), serde_json::Error>(())
//! ```

mod admission;
mod argocd_access;
mod attempt;
mod carried;
mod parent;
mod patches;
mod recent;
mod requeue;
mod settle;

pub use admission::{RefusalWork, Refused, pod_refused_at};
// The API-answer reading at its old path: it lives below both reconcile and pod.
pub use crate::api_answer::{AnswerClass, ApiAnswer};
pub use argocd_access::{
    ARGOCD_ACCESS, ARGOCD_ROLE, ARGOCD_ROLE_FILE, ARGOCD_ROLE_FOUND, ARGOCD_ROLE_MISSING,
    ArgocdAccess, MissingRole, access_condition, without_windows,
};
pub use attempt::{MAX_PHASE_STEPS, PodWork, pod_refused};
pub use carried::{Carried, Reported, abandonment};
pub use parent::{ParentReading, read_parent};
pub use patches::{ledger_patch, status_patch};
pub use recent::{merge_recent, recent_persisted};
pub use requeue::{RequeuePolicy, Wake};
pub use settle::{ConditionsChange, Settlement, StatusWrite};
