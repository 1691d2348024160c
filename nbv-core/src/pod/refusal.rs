//! What the API server's refusal to create a validation Pod means for the attempt.

use super::FailureCause;
use crate::phase::Failure;

/// The text Pod Security admission puts in a 403 for a Pod its namespace's profile
/// forbids (`pods "x" is forbidden: violates PodSecurity "restricted:latest": …`).
const POD_SECURITY_VIOLATION: &str = "violates PodSecurity";

/// The permanent failure to report for the attempt when the API server refused its
/// Pod (HTTP `code`, `reason` and `message` of its answer) in a way no retry of the
/// reconcile can fix: the Pod is invalid (422), or Pod Security admission forbids it.
/// `None` for refusals that may pass: other 403s are missing permissions of the
/// operator or an exhausted quota, which someone can fix without changing the job.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::creation_refused;
///
/// let forbidden = "pods \"train-g1-r0\" is forbidden: violates PodSecurity \"restricted:latest\": runAsNonRoot != true";
/// let failure = creation_refused(403, "Forbidden", forbidden).unwrap();
/// assert_eq!(failure.reason.to_string(), "PodSpecInvalid");
/// assert!(creation_refused(403, "Forbidden", "pods is forbidden: exceeded quota: compute").is_none());
/// assert!(creation_refused(422, "Invalid", "spec.containers[0].image: Required value").is_some());
/// assert!(creation_refused(500, "InternalError", "etcd timeout").is_none());
/// ```
pub fn creation_refused(code: u16, reason: &str, message: &str) -> Option<Failure> {
    let permanent = code == 422 || (code == 403 && message.contains(POD_SECURITY_VIOLATION));
    permanent.then(|| {
        FailureCause::PodSpecInvalid.failure(format!(
            "the API server refused the validation pod ({code} {reason}): {message}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::FailureKind;

    #[test]
    fn only_invalid_pods_and_pod_security_violations_fail_the_attempt() {
        let cases = [
            (422, "Invalid", "spec.volumes[0].name: Invalid value", true),
            (
                403,
                "Forbidden",
                "pods \"p\" is forbidden: violates PodSecurity \"baseline:v1.30\": host namespaces",
                true,
            ),
            (
                403,
                "Forbidden",
                "pods is forbidden: User \"system:serviceaccount:nbv:nbv\" cannot create resource \"pods\"",
                false,
            ),
            (
                403,
                "Forbidden",
                "pods \"p\" is forbidden: exceeded quota: compute-resources",
                false,
            ),
            (409, "AlreadyExists", "pods \"p\" already exists", false),
            (400, "BadRequest", "violates PodSecurity", false),
            (503, "ServiceUnavailable", "", false),
        ];
        for (code, reason, message, fails) in cases {
            let failure = creation_refused(code, reason, message);
            assert_eq!(failure.is_some(), fails, "{code} {message}");
            if let Some(failure) = failure {
                assert_eq!(failure.kind, FailureKind::Permanent);
                assert_eq!(
                    failure.message,
                    format!(
                        "the API server refused the validation pod ({code} {reason}): {message}"
                    )
                );
            }
        }
    }
}
