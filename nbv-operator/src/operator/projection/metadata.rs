//! What every watch drops from every object's metadata.

use kube::api::ObjectMeta;

/// The annotation `kubectl apply` records the applied configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Drops `managedFields` and the `last-applied-configuration` annotation.
///
/// # Examples
///
/// ```
/// use kube::api::ObjectMeta;
/// use nbv_operator::operator::projection::{LAST_APPLIED, trim_metadata};
///
/// let mut meta: ObjectMeta = serde_json::from_value(serde_json::json!({
///     "name": "train",
///     "annotations": {LAST_APPLIED: "{\"kind\":\"NotebookValidationJob\"}", "team": "ml"},
///     "managedFields": [{"manager": "kubectl", "operation": "Apply"}]
/// })).unwrap();
/// trim_metadata(&mut meta);
/// assert!(meta.managed_fields.is_none());
/// assert_eq!(meta.annotations.unwrap().keys().collect::<Vec<_>>(), ["team"]);
/// ```
pub fn trim_metadata(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            meta.annotations = None;
        }
    }
}
