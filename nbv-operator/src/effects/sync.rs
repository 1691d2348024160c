//! The `sync` action: starting an Argo CD sync by writing the Application's `operation`.
//!
//! This is what `argocd app sync` does through the Argo CD API server
//! (`SetAppOperation`): it sets `operation` to a sync with the Application's own sync
//! options and retry policy, refusing while another operation is in progress, and the
//! application controller then runs it. nbv writes the same field with a merge patch
//! that carries the `resourceVersion` it read, so an operation started by someone else
//! in between makes the patch fail with a conflict instead of replacing it.
//!
//! The operation's `info` carries a marker of the job's run (`nbv-run:
//! <namespace>/<job>@<completion time>`). Argo CD copies the operation into
//! `status.operationState.operation` when it runs it, so finding the marker in either
//! place means this run's sync was already requested, even if nbv lost its record of it.
//! A later operation replaces that evidence; but a sync that succeeded and started
//! after the run ended (an auto-sync, a user's) already deployed what the run left
//! behind, so it also counts as done.

use chrono::{DateTime, Utc};
use kube::api::DynamicObject;
use nbv_core::triggers::TargetRef;
use serde_json::{Map, Value, json};

use super::target::{JobRef, describe, rfc3339};
use super::{EffectError, Executor, TriggerOutcome};

/// Name of the `operation.info` entry that identifies the run a sync belongs to.
const RUN_INFO: &str = "nbv-run";

/// Operation phases after which Argo CD starts a new operation
/// (gitops-engine `OperationPhase.Completed()`); any other phase is in progress.
const COMPLETED_PHASES: [&str; 3] = ["Succeeded", "Failed", "Error"];

impl Executor {
    /// Starts a sync of `application` for `job`'s run that completed at `completed_at`.
    pub(super) async fn sync(
        &self,
        job: &JobRef,
        target: &TargetRef,
        application: DynamicObject,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        let name = describe(target);
        let marker = format!("{}/{}@{}", job.namespace, job.name, rfc3339(completed_at));
        let data = &application.data;

        if has_marker(&data["operation"], &marker)
            || has_marker(&data["status"]["operationState"]["operation"], &marker)
        {
            return Ok(TriggerOutcome::AlreadyDone {
                summary: format!("{name} already has a sync for this run ({RUN_INFO}: {marker})"),
            });
        }
        if application.metadata.deletion_timestamp.is_some() {
            return Err(EffectError::invalid(
                format!("sync {name}"),
                "the Application is being deleted",
            ));
        }
        if let Some(reason) = running_operation(data) {
            return Ok(TriggerOutcome::Deferred {
                reason: format!("{name} {reason}; the sync starts when it has finished"),
            });
        }
        if let Some(started) = synced_since(data, completed_at) {
            // Argo CD (an auto-sync, a user) already synced after the run ended: the
            // Application deploys what the run left behind. Like a restart that finds a
            // newer restartedAt, this holds even if nbv lost its record of its own sync.
            return Ok(TriggerOutcome::AlreadyDone {
                summary: format!(
                    "{name} already synced successfully in an operation started at {started}, \
                     after the run ended at {}",
                    rfc3339(completed_at)
                ),
            });
        }
        let Some(resource_version) = application.metadata.resource_version.clone() else {
            return Err(EffectError::invalid(
                format!("sync {name}"),
                "the Application has no metadata.resourceVersion",
            ));
        };

        let patch = json!({
            "metadata": {"resourceVersion": resource_version},
            "operation": operation(data, &self.config.field_manager, &marker),
        });
        self.patch_target(target, &patch).await?;
        Ok(TriggerOutcome::Done {
            summary: format!("started a sync of {name} ({RUN_INFO}: {marker})"),
        })
    }
}

/// The sync operation, as the Argo CD API server builds it for `argocd app sync`
/// without flags: the Application's own sync options and retry policy, the target
/// revision of its spec (by leaving `revision` out), and who asked.
fn operation(application: &Value, username: &str, marker: &str) -> Value {
    let policy = &application["spec"]["syncPolicy"];
    let mut sync = Map::new();
    if let Some(options) = policy["syncOptions"].as_array().filter(|o| !o.is_empty()) {
        sync.insert("syncOptions".to_owned(), Value::Array(options.clone()));
    }
    let mut operation = json!({
        "sync": sync,
        "initiatedBy": {"username": username},
        "info": [{"name": RUN_INFO, "value": marker}],
    });
    if policy["retry"].is_object() {
        operation["retry"] = policy["retry"].clone();
    }
    operation
}

/// Whether an operation's `info` carries `nbv-run: <marker>`.
fn has_marker(operation: &Value, marker: &str) -> bool {
    operation["info"].as_array().is_some_and(|info| {
        info.iter()
            .any(|entry| entry["name"] == RUN_INFO && entry["value"] == marker)
    })
}

/// When the Application's last operation started, if it was a sync that succeeded and
/// started no earlier than `completed_at`.
fn synced_since(application: &Value, completed_at: DateTime<Utc>) -> Option<String> {
    let state = &application["status"]["operationState"];
    if state["phase"] != "Succeeded" || !state["operation"]["sync"].is_object() {
        return None;
    }
    let started = state["startedAt"].as_str()?;
    let at = DateTime::parse_from_rfc3339(started).ok()?;
    (at.with_timezone(&Utc) >= completed_at).then(|| started.to_owned())
}

/// Why an operation is in progress, or `None` when a new one may start.
fn running_operation(application: &Value) -> Option<String> {
    if !application["operation"].is_null() {
        return Some("has an operation requested".to_owned());
    }
    let state = &application["status"]["operationState"];
    if state.is_null() {
        return None;
    }
    let phase = state["phase"].as_str().unwrap_or_default();
    (!COMPLETED_PHASES.contains(&phase)).then(|| match phase {
        "" => "has an operation without a phase".to_owned(),
        phase => format!("is running an operation (phase {phase})"),
    })
}
