//! The status writes of a reconcile, as JSON merge patches of the status subresource.

use serde_json::{Value, json};

use crate::api::{EffectLedger, NotebookValidationJob, NotebookValidationJobStatus};
use crate::plan::merge_patch;
use crate::redact::redact_strings;

/// The merge patch that turns `job`'s status into `status`, with the job's
/// `resourceVersion` as a precondition (a stale view never overwrites a newer status);
/// `None` when nothing differs.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{NotebookValidationJob, Phase};
/// use nbv_core::reconcile::status_patch;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "resourceVersion": "41"},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
///     "status": {"phase": "ValidationRunning", "message": "running"}
/// }))?;
/// let mut status = job.status.clone().unwrap();
/// assert_eq!(status_patch(&job, &status), None);
///
/// status.phase = Some(Phase::Succeeded);
/// let patch = status_patch(&job, &status).unwrap();
/// assert_eq!(patch["metadata"]["resourceVersion"], "41");
/// assert_eq!(patch["status"], serde_json::json!({"phase": "Succeeded"}));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn status_patch(
    job: &NotebookValidationJob,
    status: &NotebookValidationJobStatus,
) -> Option<Value> {
    let before = match &job.status {
        Some(before) => serde_json::to_value(before).unwrap_or_else(|_| json!({})),
        None => json!({}),
    };
    // Redacted before the diff: what is stored is redacted, so comparing with the
    // unredacted status would patch the same fields again on every reconcile.
    let mut after = serde_json::to_value(status).unwrap_or_else(|_| json!({}));
    redact_strings(&mut after);
    let diff = merge_patch(&before, &after)?;
    Some(json!({
        "metadata": {"resourceVersion": job.metadata.resource_version},
        "status": diff,
    }))
}

/// The merge patch that writes `ledger` as `status.effects`.
///
/// The ledger's JSON leaves out an empty `failed`; the patch still clears failures
/// persisted before (of this run, or of an earlier one). No precondition: nbv is the
/// ledger's only writer, and a conflict would only delay its record.
///
/// # Examples
///
/// ```
/// use nbv_core::api::EffectLedger;
/// use nbv_core::reconcile::ledger_patch;
///
/// let patch = ledger_patch(&EffectLedger::for_run("g1@t0"));
/// assert_eq!(patch["status"]["effects"]["failed"], serde_json::json!([]));
/// assert_eq!(patch["status"]["effects"]["run"], "g1@t0");
/// assert!(patch.get("metadata").is_none());
/// ```
pub fn ledger_patch(ledger: &EffectLedger) -> Value {
    let mut effects = serde_json::to_value(ledger).unwrap_or_else(|_| json!({}));
    effects["failed"] = json!(ledger.failed);
    json!({"status": {"effects": effects}})
}
