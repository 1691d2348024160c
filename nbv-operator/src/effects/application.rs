//! Publishing a job aggregate on its parent Argo CD Application.

use kube::api::{Api, DynamicObject, Patch};
use kube::core::{ApiResource, GroupVersionKind};
use nbv_core::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use serde_json::Value;

use super::wave::check_metadata_patch;
use super::{EffectError, Executor};

impl Executor {
    /// Applies `patch` (from [`nbv_core::aggregate::NotebookStatus::application_patch`])
    /// to the Application `app_namespace/app_name` (`argoproj.io/v1alpha1`).
    ///
    /// Only `mlops.dev/notebook-status` and `mlops.dev/notebook-summary` may be in the
    /// patch: the Application belongs to Argo CD and its author, and nbv never rewrites
    /// anything else of it (its sync wave least of all).
    ///
    /// # Errors
    ///
    /// [`EffectError::Invalid`] without any request when the patch touches anything
    /// else; [`EffectError::NotFound`] when the Application does not exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::effects::{EffectError, Executor, ExecutorConfig};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("one request");
    /// #     assert_eq!(request.uri().path(), "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/fraud");
    /// #     reply.send_response(http::Response::new(kube::client::Body::from(b"{}".to_vec())));
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// let patch = json!({"metadata": {"annotations": {
    ///     "mlops.dev/notebook-summary": "1/1 succeeded (100% success rate)"
    /// }}});
    /// executor.publish_application_status("argocd", "fraud", &patch).await.unwrap();
    ///
    /// let wave = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "5"}}});
    /// let refused = executor.publish_application_status("argocd", "fraud", &wave).await;
    /// assert!(matches!(refused, Err(EffectError::Invalid { .. })));
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn publish_application_status(
        &self,
        app_namespace: &str,
        app_name: &str,
        patch: &Value,
    ) -> Result<(), EffectError> {
        let object = format!("Application {app_namespace}/{app_name}");
        let request = format!("patch {object}");
        check_metadata_patch(
            patch,
            &["annotations"],
            Some(&[NOTEBOOK_STATUS, NOTEBOOK_SUMMARY]),
        )
        .map_err(|reason| EffectError::invalid(&request, reason))?;
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Application"),
            "applications",
        );
        let applications: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), app_namespace, &resource);
        applications
            .patch(app_name, &self.patch_params(), &Patch::Merge(patch))
            .await
            .map_err(|e| EffectError::from_kube(request, &object, e))?;
        Ok(())
    }
}
