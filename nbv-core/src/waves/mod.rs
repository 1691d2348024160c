//! Sync-wave coordination: the wave annotations nbv writes on a job, and the
//! `mlops.dev/block-wave` gate that `nbv wait --wave N` evaluates.
//!
//! - [`Wave`] reads `argocd.argoproj.io/sync-wave` and `mlops.dev/block-wave` exactly as
//!   Argo CD reads a sync wave (Go's `strconv.Atoi`), but reports a bad value instead of
//!   falling back to wave 0.
//! - [`wave_patch`] turns a run's outcome into the smallest JSON merge patch of
//!   `mlops.dev/wave-complete`, `mlops.dev/wave-failed` and `mlops.dev/completion-time`,
//!   or `None` when there is nothing to write.
//! - [`gate`] decides whether wave N may proceed given the jobs that block it:
//!   [`GateDecision::Open`], [`GateDecision::Waiting`] or [`GateDecision::Failed`].
//!
//! # Examples
//!
//! ```
//! use std::collections::BTreeMap;
//! use chrono::{TimeZone, Utc};
//! use nbv_core::api::JobPhase;
//! use nbv_core::waves::{gate, wave_patch, GateJob, Wave, WaveOutcome};
//!
//! let mut annotations = BTreeMap::from([
//!     ("argocd.argoproj.io/sync-wave".to_string(), "3".to_string()),
//!     ("mlops.dev/block-wave".to_string(), "4".to_string()),
//! ]);
//! let completed_at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
//! let patch = wave_patch(&annotations, &WaveOutcome::Failed { completed_at })?;
//! assert_eq!(patch.unwrap()["metadata"]["annotations"]["mlops.dev/wave-failed"], "3");
//!
//! annotations.insert("mlops.dev/wave-failed".to_string(), "3".to_string());
//! let job = GateJob { name: "train", annotations: &annotations, phase: JobPhase::Failed };
//! assert!(matches!(gate(Wave::new(4), [job]), nbv_core::waves::GateDecision::Failed { .. }));
//! # Ok::<(), nbv_core::waves::WaveAnnotationError>(())
//! ```

mod gate;
mod patch;
mod wave;

pub use gate::{FailureReason, GateDecision, GateFailure, GateJob, gate};
pub use patch::{WaveOutcome, wave_patch};
pub use wave::{
    EffectiveWave, InvalidWave, InvalidWaveKind, Wave, WaveAnnotationError, block_wave,
    effective_wave, sync_wave,
};
