//! The condition a job gets from its parent Application.

use serde_json::Value;

use crate::aggregate::{application_set_owner, application_status_condition};
use crate::events::ReportReason;

use super::Reported;

/// The `ApplicationStatus` condition of a job whose parent Application is
/// `application` (as the watch cache holds it): whether an ApplicationSet generates it,
/// and may then drop nbv's status annotations. That warning is announced with an
/// `ApplicationSetOwned` Event when the condition changes to it.
///
/// # Examples
///
/// ```
/// use nbv_core::reconcile::parent_condition;
///
/// let app = serde_json::json!({
///     "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
///     "metadata": {"name": "models", "namespace": "argocd", "ownerReferences": [
///         {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "teams", "uid": "u"}
///     ]}
/// });
/// let reported = parent_condition(&app);
/// assert_eq!(reported.announce.map(|r| r.as_str()), Some("ApplicationSetOwned"));
/// assert!(reported.update.message.contains("argocd/models"));
/// ```
pub fn parent_condition(application: &Value) -> Reported {
    let metadata = &application["metadata"];
    let name = format!(
        "{}/{}",
        metadata["namespace"].as_str().unwrap_or_default(),
        metadata["name"].as_str().unwrap_or_default()
    );
    let owner = application_set_owner(application);
    let update = application_status_condition(&name, owner.as_deref());
    match owner {
        Some(_) => Reported::announced(update, ReportReason::ApplicationSetOwned),
        None => Reported::quiet(update),
    }
}
