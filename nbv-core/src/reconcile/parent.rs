//! What a job gets from the Application it names: a condition, and a parent to label
//! its notifications with when the Application answers for it.

use serde_json::Value;

use crate::aggregate::{Custody, application_set_owner, application_status_condition};
use crate::events::ReportReason;
use crate::phase::{ConditionStatus, ConditionType, ConditionUpdate, Reason};

use super::Reported;

/// What a job learns from the Application it names (as the watch cache holds it).
///
/// A job names its parent itself, so the Application is trusted only when it answers
/// for the job's namespace ([`Custody`]). Then nbv publishes the job's status there
/// and labels the job's notifications with the Application's name (`parent`), and the
/// `ApplicationStatus` condition says whether an ApplicationSet generates it (and may
/// drop nbv's status annotations, announced with an `ApplicationSetOwned` Event).
/// Otherwise `parent` is `None` and the condition, announced with a `ParentRefused`
/// Event, says why, revealing nothing of the Application but the name the job gave.
///
/// # Examples
///
/// ```
/// use nbv_core::reconcile::read_parent;
///
/// let app = serde_json::json!({
///     "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
///     "metadata": {"name": "models", "namespace": "argocd", "ownerReferences": [
///         {"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "teams", "uid": "u"}
///     ]},
///     "spec": {"destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"}}
/// });
/// let reading = read_parent(&app, "ml");
/// assert_eq!(reading.parent.as_deref(), Some("models"));
/// assert_eq!(reading.reported.announce.map(|r| r.as_str()), Some("ApplicationSetOwned"));
/// assert!(reading.reported.update.message.contains("argocd/models"));
///
/// // Another team's job that names the same Application.
/// let refused = read_parent(&app, "team-b");
/// assert_eq!(refused.parent, None);
/// assert_eq!(refused.reported.update.reason.as_str(), "ParentRefused");
/// assert!(!refused.reported.update.message.contains("teams"));
/// ```
pub fn read_parent(application: &Value, job_namespace: &str) -> ParentReading {
    let metadata = &application["metadata"];
    let name = metadata["name"].as_str().unwrap_or_default();
    let qualified = format!(
        "{}/{name}",
        metadata["namespace"].as_str().unwrap_or_default()
    );
    if !Custody::of(application).covers(job_namespace) {
        return ParentReading {
            reported: Reported::announced(
                refused(&qualified, job_namespace),
                ReportReason::ParentRefused,
            ),
            parent: None,
        };
    }
    let owner = application_set_owner(application);
    let update = application_status_condition(&qualified, owner.as_deref());
    let reported = match owner {
        Some(_) => Reported::announced(update, ReportReason::ApplicationSetOwned),
        None => Reported::quiet(update),
    };
    ParentReading {
        reported,
        parent: Some(name.to_owned()),
    }
}

/// What [`read_parent`] found.
#[derive(Debug)]
pub struct ParentReading {
    /// The job's `ApplicationStatus` condition, and the Event announcing a change.
    pub reported: Reported,
    /// The Application's name, when it answers for the job: what the job's
    /// notifications are labelled with (`app.kubernetes.io/part-of`).
    pub parent: Option<String>,
}

/// The condition of a job whose Application does not answer for its namespace. It
/// names only what the job itself wrote, so a refusal tells nothing of the Application.
fn refused(application: &str, job_namespace: &str) -> ConditionUpdate {
    ConditionUpdate {
        type_: ConditionType::APPLICATION_STATUS,
        status: ConditionStatus::False,
        reason: Reason::PARENT_REFUSED,
        message: format!(
            "Application {application} does not answer for namespace {job_namespace}: an \
             Application answers only for its own namespace, the namespace it deploys into \
             in this cluster and the namespaces of the resources it manages. nbv neither \
             counts this job in its status nor labels the job's notifications with it; \
             name an Application that deploys into {job_namespace}"
        ),
    }
}
