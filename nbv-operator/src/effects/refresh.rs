//! The `refresh` action: annotating the target with the run's completion time.

use chrono::{DateTime, SecondsFormat, Utc};
use kube::api::DynamicObject;
use nbv_core::annotations::{ARGOCD_REFRESH, ARGOCD_REFRESH_TIMESTAMP, RESTART_TIMESTAMP};
use nbv_core::triggers::TargetRef;
use serde_json::json;

use super::target::{describe, not_older, resource_version, rfc3339};
use super::{EffectError, Executor, TriggerOutcome};
use nbv_core::actions::AlreadyDone;

impl Executor {
    /// Sets `mlops.dev/restart-timestamp` on `target` to `completed_at`, and for an
    /// Argo CD Application also `argocd.argoproj.io/refresh: normal`, which asks Argo CD
    /// to compare the Application with its source again (Argo CD removes it when done),
    /// with `argocd.argoproj.io/refresh-timestamp` set to the time of the request
    /// (RFC 3339, nanoseconds), as Argo CD's own `RefreshApp` writes it since Argo CD
    /// merged its fix for refresh requests lost during an in-flight reconcile: the
    /// controller removes the request only if the timestamp is still the one it saw, so
    /// a request made while it was refreshing is not dropped. (An Argo CD without that
    /// fix ignores the extra annotation.)
    ///
    /// The target is read first (`read`, when deciding access already read it): when its
    /// timestamp is already this run's time or later, nothing is written, so a retry of
    /// a write whose answer was lost cannot move it backwards over a newer run's refresh.
    /// The patch carries the `resourceVersion` read, so a write in between makes it a
    /// conflict, and the retry reads again.
    pub(super) async fn refresh(
        &self,
        target: &TargetRef,
        application: bool,
        read: Option<DynamicObject>,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        let object = match read {
            Some(object) => object,
            None => self.read_target(target).await?,
        };
        let current = object
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(RESTART_TIMESTAMP))
            .map(String::as_str);
        if let Some(existing) = not_older(current, completed_at) {
            return Ok(TriggerOutcome::AlreadyDone {
                summary: format!(
                    "{} already refreshed at {existing} (not older than this run)",
                    describe(target)
                ),
                by: AlreadyDone::ByThisRun,
            });
        }
        let at = rfc3339(completed_at);
        let annotations = if application {
            let requested = self.clock.now().to_rfc3339_opts(SecondsFormat::Nanos, true);
            json!({RESTART_TIMESTAMP: at, ARGOCD_REFRESH: "normal", ARGOCD_REFRESH_TIMESTAMP: requested})
        } else {
            json!({RESTART_TIMESTAMP: at})
        };
        let patch = json!({"metadata": {
            "resourceVersion": resource_version(&object, target)?,
            "annotations": annotations,
        }});
        self.patch_target(target, &patch).await?;
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
