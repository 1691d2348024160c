//! Per-Application notebook status: which Application a job belongs to, the counts of
//! its jobs, the annotations that show them, and when to publish them.
//!
//! - [`parent_application`] finds a job's Argo CD Application the way Argo CD tracks
//!   resources (tracking-id annotation, then the `app.kubernetes.io/instance` and
//!   `app.kubernetes.io/part-of` labels), reporting unusable values.
//! - [`OperatorTracking`] reads the same settings from the `ArgoCD` resource of the Argo
//!   CD operator (OpenShift GitOps), which writes `argocd-cm`.
//! - [`AggregateIndex`] keeps per-Application counts up to date one watch event at a
//!   time and says which Applications changed.
//! - [`Aggregate::status`] and [`Aggregate::summary`] render
//!   `mlops.dev/notebook-status` (JSON, capped) and `mlops.dev/notebook-summary`;
//!   [`NotebookStatus::application_patch`] is the merge patch, or `None` when the
//!   Application already shows it.
//! - [`decide_publish`] rate-limits publishing to once a minute per Application, with a
//!   trailing update and a resync every 5 minutes.
//! - [`Custody`] says which of the jobs naming an Application it answers for: only
//!   those count in what it shows ([`Board::patch`]).
//! - [`Board`] puts it together for a shell: fed by the jobs' watch (`apply`, `delete`,
//!   `reset`), it says which Applications are [`Due`] and with what status, and takes
//!   each [`PublishOutcome`] back.
//!
//! Jobs are grouped per Application, never per namespace.
//!
//! # Examples
//!
//! ```
//! use std::collections::BTreeMap;
//! use chrono::{TimeZone, Utc};
//! use nbv_core::aggregate::{
//!     decide_publish, parent_application, AggregateIndex, JobKey, JobPhase, PublishDecision,
//!     StatusLimit, TrackingSettings,
//! };
//!
//! let job = JobKey::new("ml", "train");
//! let labels = BTreeMap::from([("app.kubernetes.io/part-of".to_string(), "fraud".to_string())]);
//! let parent = parent_application(&job, &BTreeMap::new(), &labels, &TrackingSettings::default()).parent;
//!
//! let mut index = AggregateIndex::new();
//! let changed = index.upsert(job, parent, JobPhase::Succeeded);
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
//! for app in changed {
//!     assert_eq!(decide_publish(None, Some(now), now, true), PublishDecision::Now);
//!     let status = index.aggregate(&app).status(now, StatusLimit::DEFAULT);
//!     assert_eq!(status.summary(), "1/1 succeeded (100% success rate)");
//!     let patch = status.application_patch(&BTreeMap::new());
//!     assert!(patch.is_some());
//! }
//! ```

mod board;
mod custody;
mod entry;
mod index;
mod instance;
mod keys;
mod parent;
mod preserved;
mod publish;
mod status;

/// How a job's phase counts: [`crate::api::JobPhase`], re-exported beside the index it
/// feeds.
pub use crate::api::JobPhase;
pub use board::{Board, Due, Publication, PublishOutcome, RETRY_INTERVAL};
pub use custody::Custody;
pub use entry::JobEntry;
pub use index::{Aggregate, AggregateIndex};
pub use instance::{ARGOCD_API_VERSION, OperatorTracking};
pub use keys::{AppId, AppPart, AppRef, InvalidAppName, JobKey, ParentSource};
pub use parent::{
    InvalidTrackingMethod, ParentLookup, ParentProblem, TrackingMethod, TrackingSettings,
    parent_application,
};
pub use preserved::{application_set_owner, application_status_condition};
pub use publish::{MIN_INTERVAL, PublishDecision, RESYNC_INTERVAL, decide_publish};
pub use status::{NotebookStatus, StatusLimit, StatusLimitTooSmall};
