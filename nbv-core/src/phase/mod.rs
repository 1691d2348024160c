//! The phase machine of a job's run: phases, retries with backoff, and the status
//! fields and conditions that go with them.
//!
//! ```text
//! Initializing ──▶ Building ──▶ BuildComplete ──┐      (only when a build is requested)
//!      │                                         ▼
//!      └───────────────────────────────▶ ValidationRunning ──▶ Succeeded
//!      ▲                                         │          └─▶ Failed
//!      └──── transient failure, retries left ────┘
//! ```
//!
//! [`step`] is a pure function from a status, an observed [`PhaseEvent`] and the time to
//! a [`Transition`]: the new status, whether it changed, the phase entered, and the
//! [`Next`] thing the shell does (start the build or the attempt's Pod, watch it, or
//! wait for a retry). It reads the status as a [`RunState`] (repairing what
//! contradicts), decides on that typed state and the event, and writes the new state
//! back. A controller's reconcile is:
//!
//! 1. `step` with [`PhaseEvent::observe`] of the job: starts a run when there is none or
//!    the spec changed, adopts a status written by another operator (legacy phases
//!    `Pending` and `Running` migrate), starts a retry whose backoff has elapsed;
//! 2. do what [`Transition::next`] says, and `step` with what is observed of the build
//!    or the Pod (each event names the run or [`Attempt`] it belongs to, so events about
//!    earlier attempts are ignored);
//! 3. write the status when [`Transition::changed`], and requeue after
//!    [`Transition::requeue_after`].
//!
//! Rules the machine keeps, whatever the events (see `docs/phases.md`):
//!
//! - `Succeeded` and `Failed` absorb every event but a new run (a spec change);
//! - a transient failure with retries left goes back to `Initializing`, adds one to
//!   `retryCount`, sets `lastRetryTime`, and waits [`backoff`] (1m, 2m, 4m by default)
//!   before the next attempt; with retries exhausted it fails the run; a permanent
//!   failure fails it at once;
//! - `completionTime` is set exactly when the phase is terminal, and
//!   `startTime ≤ lastRetryTime ≤ completionTime`;
//! - a `Ready` condition agrees with the phase (`True`, `False`, `Unknown`), and a
//!   `Retrying` condition tells about retries; [`set_condition`] lets other modules
//!   set theirs with the same rules.
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_core::api::Phase;
//! use nbv_core::phase::{step, Failure, Next, PhaseEvent, PodRef, Reason, RetryPolicy};
//!
//! let policy = RetryPolicy::default();
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
//! let t = step(None, &PhaseEvent::Observe { generation: 1, build_requested: false, rerun: None }, now, &policy);
//! let Next::StartPod(attempt) = t.next else { panic!("a new run starts its pod") };
//!
//! let failure = Failure::permanent(Reason::new("CellFailed")?, "cell 4: KeyError 'label'");
//! let event = PhaseEvent::PodFailed { pod: PodRef::new("train-g1-r0", attempt), failure, results: vec![], comparison: None, warnings: vec![] };
//! let t = step(Some(&t.status), &event, now, &policy);
//! assert_eq!(t.entered, Some(Phase::Failed));
//! assert_eq!(t.status.completion_time, Some(now));
//! assert_eq!(t.status.message.as_deref(), Some("Validation failed: CellFailed: cell 4: KeyError 'label'"));
//! assert!(t.next.is_done());
//! # Ok::<(), nbv_core::phase::InvalidReason>(())
//! ```

mod admitted;
mod adopt;
mod build;
mod cause;
mod conditions;
mod event;
mod identifiers;
mod machine;
mod messages;
mod pod_events;
mod record;
mod rerun;
mod retry;
mod run;
mod transition;

pub use admitted::{first_refusal, record_admitted, record_refusal};
pub use adopt::parse_phase;
pub use cause::FailureCause;
pub use conditions::{
    ConditionStatus, ConditionUpdate, InvalidConditionStatus, MAX_CONDITION_MESSAGE_BYTES,
    TRUNCATION_MARKER, find_condition, remove_condition, set_condition, truncate_message,
};
pub use event::{Attempt, Failure, FailureKind, InvalidAttempt, PhaseEvent, PodRef};
pub use identifiers::{ConditionType, InvalidConditionType, InvalidReason, Reason};
pub use machine::step;
pub use rerun::RerunRequest;
pub use retry::{InvalidRetryPolicy, RetryPolicy, backoff};
pub use run::{Build, BuildStage, Run, RunState};
pub use transition::{Ignored, Next, ScheduledRetry, Transition};
