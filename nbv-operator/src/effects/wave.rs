//! The job's own metadata: the sync-wave annotations nbv-core computes.

use kube::api::{Api, DynamicObject, Patch};
use kube::core::ApiResource;
use nbv_core::api::NotebookValidationJob;
use serde_json::Value;

use super::{EffectError, Executor};

impl Executor {
    /// Applies `patch`, a JSON merge patch of the job's `metadata.annotations` and
    /// `metadata.labels` (nbv-core's wave patch), to the job `namespace/name`, and
    /// returns the job as the API server stored it (its new `resourceVersion` is the
    /// precondition of the status write that follows, without a read).
    ///
    /// # Errors
    ///
    /// [`EffectError::Invalid`] without any request when the patch touches anything
    /// but annotations and labels: the job's spec and status are written elsewhere.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::effects::{Executor, ExecutorConfig};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("one request");
    /// #     assert_eq!(request.uri().path(), "/apis/mlops.mlops.dev/v1alpha1/namespaces/ml/notebookvalidationjobs/train");
    /// #     reply.send_response(http::Response::new(kube::client::Body::from(b"{}".to_vec())));
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// let patch = json!({"metadata": {"annotations": {"mlops.dev/wave-complete": "3", "mlops.dev/wave-failed": null}}});
    /// executor.patch_job_metadata("ml", "train", &patch).await.unwrap();
    ///
    /// let not_metadata = json!({"spec": {"timeout": "1h"}});
    /// assert!(executor.patch_job_metadata("ml", "train", &not_metadata).await.is_err());
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn patch_job_metadata(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<DynamicObject, EffectError> {
        let object = format!("NotebookValidationJob {namespace}/{name}");
        let request = format!("patch {object}");
        check_metadata_patch(patch, &["annotations", "labels"], None)
            .map_err(|reason| EffectError::invalid(&request, reason))?;
        let resource = ApiResource::erase::<NotebookValidationJob>(&());
        let jobs: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), namespace, &resource);
        jobs.patch(name, &self.patch_params(), &Patch::Merge(patch))
            .await
            .map_err(|e| EffectError::from_kube(request, &object, e))
    }
}

/// Checks that `patch` is `{"metadata": {...}}` with only the `fields` of metadata,
/// and, when `annotations` is given, only those annotation keys with string or null
/// values. Returns what is wrong otherwise.
pub(super) fn check_metadata_patch(
    patch: &Value,
    fields: &[&str],
    annotations: Option<&[&str]>,
) -> Result<(), String> {
    let Some(top) = patch.as_object() else {
        return Err("the patch is not a JSON object".to_owned());
    };
    if let Some(key) = top.keys().find(|k| *k != "metadata") {
        return Err(format!("the patch may only change metadata, not {key:?}"));
    }
    let Some(metadata) = top.get("metadata").and_then(Value::as_object) else {
        return Err("the patch has no metadata object".to_owned());
    };
    if let Some(key) = metadata.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(format!(
            "the patch may only change metadata.{}, not metadata.{key}",
            fields.join(" and metadata.")
        ));
    }
    for field in fields {
        let Some(entries) = metadata.get(*field) else {
            continue;
        };
        let Some(entries) = entries.as_object() else {
            return Err(format!("metadata.{field} of the patch is not an object"));
        };
        for (key, value) in entries {
            if !(value.is_string() || value.is_null()) {
                return Err(format!("metadata.{field}.{key:?} must be a string or null"));
            }
            if *field == "annotations"
                && annotations.is_some_and(|allowed| !allowed.contains(&key.as_str()))
            {
                return Err(format!("the patch may not change the annotation {key:?}"));
            }
        }
    }
    Ok(())
}
