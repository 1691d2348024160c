//! The annotation patch that records how a job's run ended in its sync wave.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::wave::{WaveAnnotationError, effective_wave};
use crate::annotations::{COMPLETION_TIME, WAVE_COMPLETE, WAVE_FAILED};
use crate::time::rfc3339;

/// What happened to a job's run, as far as its wave annotations are concerned.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::waves::{wave_patch, WaveOutcome};
///
/// let annotations = BTreeMap::from([
///     ("argocd.argoproj.io/sync-wave".to_string(), "1".to_string()),
///     ("mlops.dev/wave-complete".to_string(), "1".to_string()),
/// ]);
/// let patch = wave_patch(&annotations, &WaveOutcome::NewRun)?.unwrap();
/// assert!(patch["metadata"]["annotations"]["mlops.dev/wave-complete"].is_null());
/// # Ok::<(), nbv_core::waves::WaveAnnotationError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaveOutcome {
    /// The run ended in success at `completed_at`.
    Succeeded {
        /// When the run ended.
        completed_at: DateTime<Utc>,
    },
    /// The run ended in failure (no retry left) at `completed_at`.
    Failed {
        /// When the run ended.
        completed_at: DateTime<Utc>,
    },
    /// A new run started: the record of the previous one no longer holds.
    NewRun,
}

/// The JSON merge patch (RFC 7386) that brings a job's wave annotations in line with
/// `outcome`, or `None` when they already are (so the shell makes no API call).
///
/// - [`WaveOutcome::Succeeded`]: `mlops.dev/wave-complete` = the job's wave,
///   `mlops.dev/wave-failed` removed, `mlops.dev/completion-time` set.
/// - [`WaveOutcome::Failed`]: `mlops.dev/wave-failed` = the job's wave,
///   `mlops.dev/wave-complete` removed, `mlops.dev/completion-time` set.
/// - [`WaveOutcome::NewRun`]: all three removed.
///
/// The patch holds only the keys that change, in the form
/// `{"metadata":{"annotations":{key: value-or-null}}}`. The wave is written in canonical
/// form (`+3` and `03` are written as `3`), so an existing `"03"` is rewritten once.
/// Completion times are written to the second ([`rfc3339`]).
///
/// The wave written is the one Argo CD puts the job in ([`effective_wave`]: the
/// sync-wave, else the Helm hook weight, else 0). Terminal outcomes write nothing for a
/// job that declares no wave (neither annotation): only jobs that declare one take
/// part in wave coordination. A new run clears the three annotations whether or not
/// the job still declares a wave, because a record of an earlier run is stale either
/// way.
///
/// # Errors
///
/// None today (invalid wave annotations are reported by the plan and the wave Argo CD
/// falls back to is used); the `Result` is kept for callers' error paths.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use chrono::{TimeZone, Utc};
/// use nbv_core::waves::{wave_patch, WaveOutcome};
/// use serde_json::json;
///
/// let mut annotations = BTreeMap::from([
///     ("argocd.argoproj.io/sync-wave".to_string(), "+3".to_string()),
///     ("mlops.dev/wave-failed".to_string(), "3".to_string()),
/// ]);
/// let completed_at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let patch = wave_patch(&annotations, &WaveOutcome::Succeeded { completed_at })?;
/// assert_eq!(
///     patch,
///     Some(json!({"metadata": {"annotations": {
///         "mlops.dev/wave-complete": "3",
///         "mlops.dev/wave-failed": null,
///         "mlops.dev/completion-time": "2026-01-24T22:30:00Z",
///     }}}))
/// );
///
/// // Once applied, asking again yields no patch.
/// annotations.remove("mlops.dev/wave-failed");
/// annotations.insert("mlops.dev/wave-complete".into(), "3".into());
/// annotations.insert("mlops.dev/completion-time".into(), "2026-01-24T22:30:00Z".into());
/// assert_eq!(wave_patch(&annotations, &WaveOutcome::Succeeded { completed_at })?, None);
/// # Ok::<(), nbv_core::waves::WaveAnnotationError>(())
/// ```
pub fn wave_patch(
    current: &BTreeMap<String, String>,
    outcome: &WaveOutcome,
) -> Result<Option<Value>, WaveAnnotationError> {
    let desired: [(&str, Option<String>); 3] = match outcome {
        WaveOutcome::NewRun => [
            (WAVE_COMPLETE, None),
            (WAVE_FAILED, None),
            (COMPLETION_TIME, None),
        ],
        WaveOutcome::Succeeded { completed_at } | WaveOutcome::Failed { completed_at } => {
            let Some(wave) = effective_wave(current).wave else {
                return Ok(None);
            };
            let (set, clear) = match outcome {
                WaveOutcome::Succeeded { .. } => (WAVE_COMPLETE, WAVE_FAILED),
                _ => (WAVE_FAILED, WAVE_COMPLETE),
            };
            [
                (set, Some(wave.to_string())),
                (clear, None),
                (COMPLETION_TIME, Some(rfc3339(*completed_at))),
            ]
        }
    };
    let changes: Map<String, Value> = desired
        .into_iter()
        .filter(|(key, want)| current.get(*key) != want.as_ref())
        .map(|(key, want)| (key.to_owned(), want.map_or(Value::Null, Value::String)))
        .collect();
    Ok((!changes.is_empty()).then(|| annotations_patch(changes)))
}

/// Wraps annotation changes in `{"metadata":{"annotations":{...}}}`.
fn annotations_patch(changes: Map<String, Value>) -> Value {
    let mut annotations = Map::new();
    annotations.insert("annotations".to_owned(), Value::Object(changes));
    let mut root = Map::new();
    root.insert("metadata".to_owned(), Value::Object(annotations));
    Value::Object(root)
}
