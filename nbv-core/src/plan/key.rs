//! Identities of runs and effects.

use std::fmt;

use serde::Serialize;

use crate::api::NotebookValidationJob;
use crate::time::rfc3339;
use crate::triggers::Trigger;

/// Identity of a job's run: the spec generation it runs, which run of that generation
/// it is, and when it started.
///
/// A spec edit starts a new run (new generation); so does a request to run again (a
/// new rerun count, written as `-rerunN` after the generation, so that the keys of
/// first runs stay as they were) and the phase machine restarting a run (new start
/// time). Records of effects are only valid for their run.
///
/// # Examples
///
/// ```
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::plan::RunKey;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "j", "generation": 4},
///     "spec": {"notebook": {"git": {"url": "https://e.com/r", "ref": "main"}, "path": "a.ipynb"},
///              "podConfig": {"containerImage": "img"}},
///     "status": {"observedGeneration": 4, "startTime": "2026-01-24T22:29:00Z"}
/// }))?;
/// assert_eq!(RunKey::of(&job).as_str(), "g4@2026-01-24T22:29:00Z");
///
/// let mut rerun = job.clone();
/// rerun.status.as_mut().unwrap().rerun = Some(nbv_core::api::RerunRecord { request: "1".into(), count: 1 });
/// assert_eq!(RunKey::of(&rerun).as_str(), "g4-rerun1@2026-01-24T22:29:00Z");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct RunKey(String);

impl RunKey {
    /// The run a job's status describes.
    pub fn of(job: &NotebookValidationJob) -> RunKey {
        let status = job.status.as_ref();
        let generation = status
            .and_then(|s| s.observed_generation)
            .or(job.metadata.generation)
            .unwrap_or(0);
        let generation = match status.and_then(|s| s.rerun.as_ref()).map(|r| r.count) {
            None | Some(0) => generation.to_string(),
            Some(rerun) => format!("{generation}-rerun{rerun}"),
        };
        match status.and_then(|s| s.start_time) {
            Some(start) => RunKey(format!("g{generation}@{}", rfc3339(start))),
            None => RunKey(format!("g{generation}")),
        }
    }

    /// The key as written in `status.effects.run`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Identity of an effect within a run, as recorded in `status.effects.done`.
///
/// Keys are injective: the wave patch is `wave`, the notification `notify`, a trigger
/// `trigger/` followed by [`Trigger::key`] (itself injective), the report of a sync's
/// result `sync-result/` followed by the same, and the report of an
/// abandoned effect `gave-up/` followed by that effect's key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EffectKey(String);

impl EffectKey {
    /// The wave-annotation patch.
    pub fn wave() -> EffectKey {
        EffectKey("wave".to_owned())
    }

    /// The notification Event.
    pub fn notify() -> EffectKey {
        EffectKey("notify".to_owned())
    }

    /// An on-success trigger.
    pub fn trigger(trigger: &Trigger) -> EffectKey {
        EffectKey(format!("trigger/{}", trigger.key()))
    }

    /// The report of how the Argo CD sync started by a `sync` trigger ended.
    pub fn sync_result(trigger: &Trigger) -> EffectKey {
        EffectKey(format!("sync-result/{}", trigger.key()))
    }

    /// The report that `effect` was abandoned.
    pub fn gave_up(effect: &EffectKey) -> EffectKey {
        EffectKey(format!("gave-up/{}", effect.0))
    }

    /// The key as recorded.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EffectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
