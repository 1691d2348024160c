//! The `sync` action: starting an Argo CD sync by writing the Application's `operation`,
//! and following it until Argo CD has finished it.
//!
//! What to do is [`nbv_core::sync::decide_sync`]'s decision, from the Application and
//! its AppProject's sync windows as the watch caches hold them: the shell only reads,
//! writes the patch the core built (with the `resourceVersion` read, so an operation
//! started by someone else in between makes the patch fail with a conflict instead of
//! replacing it) and reports.
//!
//! The operation's `info` carries a marker of the job's run (`nbv-run:
//! <namespace>/<job>@<completion time>`). Argo CD copies the operation into
//! `status.operationState.operation` when it runs it, so finding the marker in either
//! place means this run's sync was already requested, even if nbv lost its record of it,
//! and it is how [`Executor::sync_result`] follows the sync to its end.

use chrono::{DateTime, Utc};
use kube::api::DynamicObject;
use kube::runtime::reflector::ObjectRef;
use nbv_core::sync::{
    RUN_INFO, SyncDecision, SyncProgress, SyncRequest, SyncWindow, decide_sync, sync_progress,
};
use nbv_core::triggers::TargetRef;

use super::target::{JobRef, describe, rfc3339};
use super::{EffectError, Executor, SyncReport, TriggerOutcome};
use nbv_core::actions::AlreadyDone;

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
        let request = SyncRequest::of_run(
            &job.namespace,
            &job.name,
            completed_at,
            &self.config.field_manager,
        );
        let marker = &request.marker;
        let object = serde_json::to_value(&application).map_err(|e| {
            EffectError::invalid(format!("sync {name}"), format!("cannot read it: {e}"))
        })?;
        let windows = self.sync_windows(&object);
        match decide_sync(&object, windows.as_deref(), &request, self.clock.now()) {
            SyncDecision::AlreadyRequested => Ok(TriggerOutcome::AlreadyDone {
                summary: format!("{name} already has a sync for this run ({RUN_INFO}: {marker})"),
                by: AlreadyDone::ByThisRun,
            }),
            SyncDecision::AlreadySynced { started_at } => Ok(TriggerOutcome::AlreadyDone {
                summary: format!(
                    "{name} already synced successfully in a full sync started at \
                     {started_at}, after the run ended at {}",
                    rfc3339(completed_at)
                ),
                by: AlreadyDone::SyncedSince,
            }),
            SyncDecision::Deleting => Err(EffectError::invalid(
                format!("sync {name}"),
                "the Application is being deleted",
            )),
            SyncDecision::Busy { reason } => Ok(TriggerOutcome::Deferred {
                reason: format!("{name} {reason}; the sync starts when it has finished"),
                until: None,
            }),
            SyncDecision::Blocked { reason, opens_at } => Ok(TriggerOutcome::Deferred {
                reason: format!(
                    "{name}: a sync window of its AppProject {}: {reason}; {}",
                    project_of(&object),
                    match opens_at {
                        Some(at) => format!("the sync starts when it opens, at {}", rfc3339(at)),
                        None => "no opening was found in the windows' next occurrences; nbv \
                                 keeps checking"
                            .to_owned(),
                    }
                ),
                until: opens_at,
            }),
            SyncDecision::Start { patch, stuck } => {
                if application.metadata.resource_version.is_none() {
                    return Err(EffectError::invalid(
                        format!("sync {name}"),
                        "the Application has no metadata.resourceVersion",
                    ));
                }
                self.patch_target(target, &patch).await?;
                Ok(TriggerOutcome::Done {
                    summary: match stuck {
                        Some(phase) => format!(
                            "started a sync of {name} ({RUN_INFO}: {marker}), clearing a \
                             leftover operation state in phase {phase} that had no \
                             operation, as argocd app sync does"
                        ),
                        None => format!("started a sync of {name} ({RUN_INFO}: {marker})"),
                    },
                })
            }
        }
    }

    /// How the sync that `job`'s run (ended at `completed_at`) started on `target`
    /// stands, read from the Application (the watch cache, when it covers the
    /// Application's namespace).
    ///
    /// # Errors
    ///
    /// The error of reading the Application.
    pub async fn sync_result(
        &self,
        job: &nbv_core::api::NotebookValidationJob,
        target: &TargetRef,
        completed_at: DateTime<Utc>,
    ) -> Result<SyncReport, EffectError> {
        let job = JobRef::of(job)?;
        let name = describe(target);
        let request = SyncRequest::of_run(&job.namespace, &job.name, completed_at, "");
        let application = self.read_target(target).await?;
        let object = serde_json::to_value(&application).unwrap_or_default();
        Ok(match sync_progress(&object, &request.marker) {
            SyncProgress::InProgress { phase } => SyncReport::InProgress {
                summary: format!("the sync of {name} for this run is {phase}"),
            },
            SyncProgress::Finished {
                succeeded,
                phase,
                message,
            } => SyncReport::Finished {
                succeeded,
                summary: format!(
                    "the sync of {name} for this run ended in phase {phase}{}",
                    if message.is_empty() {
                        String::new()
                    } else {
                        format!(": {message}")
                    }
                ),
            },
            SyncProgress::Replaced => SyncReport::Replaced {
                summary: format!(
                    "{name} shows no operation of this run any more ({RUN_INFO}: {}): \
                     another operation replaced it, or Argo CD had already synced",
                    request.marker
                ),
            },
        })
    }

    /// The sync windows of `application`'s AppProject, from the AppProject cache;
    /// `None` without a cache, or when the cache does not hold the project (Argo CD then
    /// refuses the operation itself and nbv reports that result).
    fn sync_windows(&self, application: &serde_json::Value) -> Option<Vec<SyncWindow>> {
        let store = self.caches.projects.as_ref()?;
        let key = ObjectRef::new_with(&project_of(application), appproject_resource())
            .within(&self.config.argocd_namespace);
        let project = store.get(&key)?;
        let windows = &project.data["spec"]["syncWindows"];
        if windows.is_null() {
            return Some(Vec::new());
        }
        match serde_json::from_value(windows.clone()) {
            Ok(windows) => Some(windows),
            Err(error) => {
                tracing::warn!(project = %key, %error, "AppProject syncWindows unreadable");
                None
            }
        }
    }
}

/// `spec.project` of an Application (`default` when empty, as in Argo CD).
fn project_of(application: &serde_json::Value) -> String {
    application["spec"]["project"]
        .as_str()
        .filter(|p| !p.is_empty())
        .unwrap_or("default")
        .to_owned()
}

/// Argo CD's AppProject resource.
pub fn appproject_resource() -> kube::core::ApiResource {
    kube::core::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("argoproj.io", "v1alpha1", "AppProject"),
        "appprojects",
    )
}
