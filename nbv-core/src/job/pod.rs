//! How the job machine names the validation Pod and its fellows in requests.

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::io::{ObjectRef, Request};
use crate::phase::Attempt;
use crate::pod::{ATTEMPT_LABEL, JOB_LABEL, MANAGED_BY, MANAGED_BY_LABEL, job_label_value};

/// The Pod `name` in `namespace`.
pub(super) fn pod_ref(namespace: &str, name: &str) -> ObjectRef {
    ObjectRef::namespaced("v1", "Pod", namespace, name)
}

/// The label selector of `job_name`'s validation Pods of attempts other than `keep`:
/// only Pods with an attempt (a kaniko build's Pod has none, and is not one of them).
///
/// # Examples
///
/// ```
/// use nbv_core::job::other_attempts_selector;
/// use nbv_core::phase::Attempt;
///
/// assert_eq!(
///     other_attempts_selector("train", Attempt::new(2, 1)),
///     "app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt,mlops.dev/attempt!=g2-r1"
/// );
/// ```
pub fn other_attempts_selector(job_name: &str, keep: Attempt) -> String {
    format!(
        "{MANAGED_BY_LABEL}={MANAGED_BY},{JOB_LABEL}={},{ATTEMPT_LABEL},{ATTEMPT_LABEL}!={keep}",
        job_label_value(job_name)
    )
}

/// Deleting the Pods of `job_name`'s other attempts and runs than `keep`.
pub(super) fn delete_other_attempts(namespace: &str, job_name: &str, keep: Attempt) -> Request {
    Request::DeleteAll {
        kind: pod_ref(namespace, ""),
        label_selector: other_attempts_selector(job_name, keep),
    }
}

/// A Pod as the shell answered it; `None` when it is not a Pod.
pub(super) fn parse_pod(object: Value) -> Option<Pod> {
    serde_json::from_value(object).ok()
}
