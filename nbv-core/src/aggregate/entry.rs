//! A job as its Application's status counts it.

use std::collections::BTreeMap;

use super::keys::JobKey;
use super::parent::{ParentLookup, TrackingSettings, parent_application};
use crate::api::{JobPhase, NotebookValidationJob};

/// What the Application status needs of one job: who it is, which Application it
/// belongs to (and what was skipped finding out), and how its phase counts. The
/// reconciler and a new listing of the jobs both derive it here, so they always agree.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::{JobEntry, JobPhase, ParentSource, TrackingSettings};
/// use nbv_core::api::NotebookValidationJob;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml",
///                  "annotations": {"argocd.argoproj.io/tracking-id":
///                      "platform:mlops.mlops.dev/NotebookValidationJob:ml/train"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
///     "status": {"phase": "Succeeded"}
/// }))?;
/// let entry = JobEntry::of(&job, &TrackingSettings::default()).expect("a named job");
/// assert_eq!(entry.key.to_string(), "ml/train");
/// let parent = entry.lookup.parent.expect("a parent");
/// assert_eq!((parent.app.name(), parent.source), ("platform", ParentSource::TrackingId));
/// assert_eq!(entry.phase, JobPhase::Succeeded);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobEntry {
    /// The job's namespace and name.
    pub key: JobKey,
    /// Its parent Application, and the sources that were present but unusable.
    pub lookup: ParentLookup,
    /// How its `status.phase` counts.
    pub phase: JobPhase,
}

impl JobEntry {
    /// The entry of `job`, its parent found with `tracking`; `None` when it lacks a
    /// namespace or a name.
    pub fn of(job: &NotebookValidationJob, tracking: &TrackingSettings) -> Option<JobEntry> {
        let key = JobKey::of(job)?;
        let empty = BTreeMap::new();
        let metadata = &job.metadata;
        let lookup = parent_application(
            &key,
            metadata.annotations.as_ref().unwrap_or(&empty),
            metadata.labels.as_ref().unwrap_or(&empty),
            tracking,
        );
        let phase = JobPhase::of(job.status.as_ref().and_then(|s| s.phase));
        Some(JobEntry { key, lookup, phase })
    }
}
