//! The `refresh` action: annotating the target with the run's completion time.

use chrono::{DateTime, Utc};
use kube::api::Patch;
use nbv_core::annotations::{ARGOCD_REFRESH, RESTART_TIMESTAMP};
use nbv_core::triggers::TargetRef;
use serde_json::json;

use super::target::{describe, rfc3339, target_api};
use super::{EffectError, Executor, TriggerOutcome};

impl Executor {
    /// Sets `mlops.dev/restart-timestamp` on `target` to `completed_at`, and for an
    /// Argo CD Application also `argocd.argoproj.io/refresh: normal`, which asks Argo CD
    /// to compare the Application with its source again (Argo CD removes it when done).
    pub(super) async fn refresh(
        &self,
        target: &TargetRef,
        application: bool,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        let at = rfc3339(completed_at);
        let annotations = if application {
            json!({RESTART_TIMESTAMP: at, ARGOCD_REFRESH: "normal"})
        } else {
            json!({RESTART_TIMESTAMP: at})
        };
        let patch = json!({"metadata": {"annotations": annotations}});
        target_api(&self.client, target)
            .patch(
                target.name().as_str(),
                &self.patch_params(),
                &Patch::Merge(&patch),
            )
            .await
            .map_err(|e| {
                EffectError::from_kube(format!("patch {}", describe(target)), &describe(target), e)
            })?;
        Ok(TriggerOutcome::Done {
            summary: format!(
                "{} refreshed ({RESTART_TIMESTAMP}: {at}{})",
                describe(target),
                if application {
                    format!(", {ARGOCD_REFRESH}: normal")
                } else {
                    String::new()
                }
            ),
        })
    }
}
