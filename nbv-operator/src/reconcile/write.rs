//! The status writes of a reconcile.

use kube::api::{Api, Patch, PatchParams};
use nbv_core::aggregate::JobKey;
use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus};
use nbv_core::reconcile::status_patch;

use super::Error;

/// Writes `status` as a merge patch of what changed ([`status_patch`]) and returns the
/// job as the API server stored it.
pub(super) async fn write_status(
    jobs: &Api<NotebookValidationJob>,
    job: &NotebookValidationJob,
    status: &NotebookValidationJobStatus,
) -> Result<NotebookValidationJob, Error> {
    let Some(patch) = status_patch(job, status) else {
        return Ok(job.clone());
    };
    let key = JobKey::of(job).ok_or(Error::Identity)?;
    patch_status(jobs, &key, &patch).await
}

/// One merge patch of the job's status subresource.
pub(super) async fn patch_status(
    jobs: &Api<NotebookValidationJob>,
    key: &JobKey,
    patch: &serde_json::Value,
) -> Result<NotebookValidationJob, Error> {
    jobs.patch_status(key.name(), &PatchParams::default(), &Patch::Merge(patch))
        .await
        .map_err(|source| Error::Status {
            job: key.to_string(),
            source,
        })
}
