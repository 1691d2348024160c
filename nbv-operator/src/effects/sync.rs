//! The `sync` action on the cluster: reading the Application and its AppProject's sync
//! windows (from the watch caches), writing the operation that
//! [`nbv_core::actions::sync::decide`] builds, and reading how the sync stands for
//! [`nbv_core::actions::sync::report`].
//!
//! The patch carries the `resourceVersion` read, so an operation started by someone
//! else in between makes the patch fail with a conflict instead of replacing it.

use chrono::{DateTime, Utc};
use kube::api::DynamicObject;
use kube::runtime::reflector::ObjectRef;
use nbv_core::actions::sync::{self, project_of, windows_of};
use nbv_core::actions::{Run, SyncReport, TriggerOutcome, describe};
use nbv_core::reconcile::without_windows;
use nbv_core::sync::SyncWindow;
use nbv_core::triggers::TargetRef;

use super::target::{JobRef, as_json};
use super::{EffectError, Executor};
use crate::resources::appproject_resource;

impl Executor {
    /// Starts a sync of `application` for `run`.
    pub(super) async fn sync(
        &self,
        target: &TargetRef,
        application: DynamicObject,
        run: &Run,
    ) -> Result<TriggerOutcome, EffectError> {
        let object = as_json(&application, target)?;
        // Without the AppProjects there are no sync windows to read: the sync waits for
        // the Role rather than risk starting inside a window that denies it.
        if let Some(missing) = self
            .caches
            .access
            .as_ref()
            .and_then(|a| a.missing_projects())
        {
            let decision = sync::decide(
                &object,
                None,
                target,
                run,
                &self.config.field_manager,
                self.clock.now(),
            );
            return self
                .carry_patch(target, without_windows(decision, &missing))
                .await;
        }
        let windows = self.sync_windows(&object, target).await?;
        let decision = sync::decide(
            &object,
            windows.as_deref(),
            target,
            run,
            &self.config.field_manager,
            self.clock.now(),
        );
        self.carry_patch(target, decision).await
    }

    /// How the sync that `job`'s run (ended at `completed_at`) started on `target`
    /// stands, read from the Application (the watch cache, when it covers the
    /// Application's namespace; a cached view on which the sync looks replaced is read
    /// again with a GET).
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
        let run = JobRef::of(job)?.run(completed_at);
        let report_of = |application: DynamicObject| {
            let object = serde_json::to_value(&application).unwrap_or_default();
            sync::report(&object, target, &run)
        };
        let report = report_of(self.read_target(target).await?);
        // The cache may not show the operation nbv wrote a moment ago yet (the watch
        // event of the job's status can come before the Application's): a view with no
        // trace of the run's sync is read again before the sync counts as replaced.
        if matches!(report, SyncReport::Replaced { .. }) {
            return Ok(report_of(self.get_target(target).await?));
        }
        Ok(report)
    }

    /// The sync windows of `application`'s AppProject, from the AppProject cache;
    /// `None` without a cache, or when the cache does not hold the project (Argo CD then
    /// refuses the operation itself and nbv reports that result).
    ///
    /// # Errors
    ///
    /// [`EffectError::CacheNotReady`] while the cache has not listed the projects: an
    /// empty cache would let a sync through a window that is closed.
    async fn sync_windows(
        &self,
        application: &serde_json::Value,
        target: &TargetRef,
    ) -> Result<Option<Vec<SyncWindow>>, EffectError> {
        let Some(store) = self.caches.projects.as_ref() else {
            return Ok(None);
        };
        if !super::access::cache_ready(store).await {
            return Err(EffectError::CacheNotReady {
                cache: "AppProject",
                request: format!("sync {}", describe(target)),
            });
        }
        let key = ObjectRef::new_with(&project_of(application), appproject_resource())
            .within(&self.config.argocd_namespace);
        let Some(project) = store.get(&key) else {
            return Ok(None);
        };
        match windows_of(&project.data) {
            Ok(windows) => Ok(Some(windows)),
            Err(error) => {
                tracing::warn!(project = %key, %error, "AppProject syncWindows unreadable");
                Ok(None)
            }
        }
    }
}
