//! Why an attempt failed (its validation Pod, or the wait for its models before it),
//! and whether a retry may help.

use std::fmt;

use super::{Failure, FailureKind, Reason};
use crate::redact::redact_secrets;

/// Why an attempt failed: the `reason` of the failure, and whether it is transient.
///
/// Each cause has one [`FailureKind`], so a reason in a job's status always means the
/// same thing. A cause is transient when running the same spec again may succeed
/// (the node went away, the registry was down); permanent when it would fail the same
/// way (a cell raised, the notebook does not exist, the run exceeded `spec.timeout`).
///
/// # Examples
///
/// ```
/// use nbv_core::phase::FailureKind;
/// use nbv_core::phase::FailureCause;
///
/// let failure = FailureCause::NotebookCellFailed.failure("cell 4: KeyError: 'x'");
/// assert_eq!(failure.reason.as_str(), "NotebookCellFailed");
/// assert_eq!(failure.kind, FailureKind::Permanent);
/// assert_eq!(FailureCause::Evicted.kind(), FailureKind::Transient);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureCause {
    /// The repository could not be cloned at the ref (it does not exist, the ref does
    /// not exist, the server refused for another reason than the credentials).
    GitCloneFailed,
    /// The Git server refused the credentials, or asked for credentials none were
    /// given for, or the SSH host key did not match `known_hosts`.
    GitCredentialsInvalid,
    /// The Git server could not be reached (name resolution, connection, 5xx).
    GitUnreachable,
    /// `spec.notebook.path` does not exist in the repository at the ref.
    NotebookNotFound,
    /// The notebook file is not a notebook papermill can read.
    NotebookInvalid,
    /// A cell raised an exception.
    NotebookCellFailed,
    /// The kernel died while a cell ran (most often out of memory).
    KernelDied,
    /// The image cannot run the notebook: no `python3`, no papermill, or no kernel of
    /// the notebook's kernelspec.
    ExecutorSetupFailed,
    /// The notebook container failed in a way nbv cannot tell more about.
    ExecutorFailed,
    /// The run did not finish (or the Pod did not start) within `spec.timeout`.
    Timeout,
    /// The notebook container exceeded its memory limit.
    OOMKilled,
    /// An image does not exist, its name is invalid, or access to it is denied.
    ImageNotFound,
    /// An image could not be pulled for longer than the start grace period (the
    /// registry is down or rate-limits).
    ImagePullBackOff,
    /// A container cannot be configured: a Secret, ConfigMap or key it refers to is
    /// missing, or the image runs as root.
    ContainerConfigInvalid,
    /// The container runtime could not create a container for longer than the start
    /// grace period.
    ContainerCreateFailed,
    /// The Pod was evicted (node pressure, a drain, the Eviction API).
    Evicted,
    /// The Pod was preempted by a higher-priority Pod.
    Preempted,
    /// The Pod's node went away or shut down, or the Pod's state was lost with it.
    NodeLost,
    /// The node's kubelet refused to run the Pod (not enough resources, affinity).
    PodRejected,
    /// The attempt's Pod disappeared before it ended.
    PodDeleted,
    /// The API server found the Pod invalid (422 Invalid, 400 BadRequest).
    PodSpecInvalid,
    /// The cluster admin's pod policy (`nbv run --allowed-images` and the other policy
    /// flags) does not let the job put a field's value in its Pod; decided by nbv
    /// before any build or Pod, naming the field and the flag.
    PodPolicyDenied,
    /// Pod Security admission forbids the Pod in its namespace.
    PodSecurityViolation,
    /// OpenShift's security context constraints admit the Pod under no SCC its
    /// service account may use.
    SecurityContextConstraints,
    /// A validating admission webhook (Kyverno, Gatekeeper, …) denied the Pod.
    AdmissionWebhookDenied,
    /// A ValidatingAdmissionPolicy denied the Pod.
    AdmissionPolicyDenied,
    /// A ResourceQuota requires requests or limits the Pod does not set.
    QuotaRequiresLimits,
    /// A LimitRange refuses the Pod's requests or limits.
    LimitRangeViolation,
    /// A ResourceQuota stayed used up for the whole pod admission timeout.
    QuotaExceeded,
    /// nbv was not allowed to create the Pod (its RBAC, or an unknown policy) for the
    /// whole pod admission timeout.
    PodCreateForbidden,
    /// The job's namespace is being deleted.
    NamespaceTerminating,
    /// An admission webhook could not be called for the whole pod admission timeout.
    AdmissionWebhookUnavailable,
    /// The API server was not available for the whole pod admission timeout.
    APIServerUnavailable,
    /// The API server refused the Pod with an unexpected answer for the whole pod
    /// admission timeout.
    PodCreateFailed,
    /// An nbv annotation of the job is invalid (`mlops.dev/pod-admission-timeout`).
    InvalidAnnotation,
    /// A check of `spec.validationConfig` failed: a cell wrote to stderr, warned, has a
    /// None or NaN value, or a value that breaks its expectation.
    CheckFailed,
    /// `podConfig.buildConfig` asks for a build strategy nbv does not carry out
    /// (`custom`).
    BuildNotSupported,
    /// A field of `podConfig.buildConfig` cannot be carried out as written (the
    /// message names it).
    BuildConfigInvalid,
    /// The cluster does not serve the API the build strategy needs (Tekton's,
    /// Shipwright's, OpenShift's builds).
    BuildApiNotServed,
    /// The build system built no image: its own reason and message say why.
    BuildFailed,
    /// The build ran past `buildConfig.timeout` and was cancelled.
    BuildTimedOut,
    /// The executed notebook's outputs differ from the golden notebook's.
    GoldenMismatch,
    /// `spec.goldenNotebook.path` does not exist in the golden repository at its ref.
    GoldenNotFound,
    /// The golden notebook file is not a notebook nbv can read.
    GoldenInvalid,
    /// A model answered the prediction check of `spec.modelValidation` with other
    /// outputs than `expectedOutput`, beyond the tolerance.
    PredictionMismatch,
    /// A model did not answer the prediction check: an HTTP error, no connection, or
    /// an answer that is not a response of its protocol. Permanent: the gate found the
    /// model ready just before, so a model that cannot answer `testData` is broken or
    /// asked the wrong question.
    PredictionFailed,
    /// The spec asks for a check nbv does not carry out yet (`modelValidation` without
    /// the models' gate, or a field unknown to nbv): succeeding without it would be a
    /// false result.
    FieldNotSupported,
    /// A model of `spec.modelValidation` cannot be checked or is not ready: its
    /// namespace may not be read from the job's, the serving platform is missing or
    /// unreadable, or the model was not ready within `timeout`.
    ModelUnavailable,
}

impl FailureCause {
    /// Every cause, for documentation and tests.
    pub const ALL: [FailureCause; 48] = [
        FailureCause::GitCloneFailed,
        FailureCause::GitCredentialsInvalid,
        FailureCause::GitUnreachable,
        FailureCause::NotebookNotFound,
        FailureCause::NotebookInvalid,
        FailureCause::NotebookCellFailed,
        FailureCause::KernelDied,
        FailureCause::ExecutorSetupFailed,
        FailureCause::ExecutorFailed,
        FailureCause::Timeout,
        FailureCause::OOMKilled,
        FailureCause::ImageNotFound,
        FailureCause::ImagePullBackOff,
        FailureCause::ContainerConfigInvalid,
        FailureCause::ContainerCreateFailed,
        FailureCause::Evicted,
        FailureCause::Preempted,
        FailureCause::NodeLost,
        FailureCause::PodRejected,
        FailureCause::PodDeleted,
        FailureCause::PodSpecInvalid,
        FailureCause::PodPolicyDenied,
        FailureCause::PodSecurityViolation,
        FailureCause::SecurityContextConstraints,
        FailureCause::AdmissionWebhookDenied,
        FailureCause::AdmissionPolicyDenied,
        FailureCause::QuotaRequiresLimits,
        FailureCause::LimitRangeViolation,
        FailureCause::QuotaExceeded,
        FailureCause::PodCreateForbidden,
        FailureCause::NamespaceTerminating,
        FailureCause::AdmissionWebhookUnavailable,
        FailureCause::APIServerUnavailable,
        FailureCause::PodCreateFailed,
        FailureCause::InvalidAnnotation,
        FailureCause::CheckFailed,
        FailureCause::BuildNotSupported,
        FailureCause::BuildConfigInvalid,
        FailureCause::BuildApiNotServed,
        FailureCause::BuildFailed,
        FailureCause::BuildTimedOut,
        FailureCause::FieldNotSupported,
        FailureCause::GoldenMismatch,
        FailureCause::GoldenNotFound,
        FailureCause::GoldenInvalid,
        FailureCause::ModelUnavailable,
        FailureCause::PredictionMismatch,
        FailureCause::PredictionFailed,
    ];

    /// The condition reason, the variant's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::FailureCause;
    ///
    /// assert_eq!(FailureCause::GitCredentialsInvalid.as_str(), "GitCredentialsInvalid");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            FailureCause::GitCloneFailed => "GitCloneFailed",
            FailureCause::GitCredentialsInvalid => "GitCredentialsInvalid",
            FailureCause::GitUnreachable => "GitUnreachable",
            FailureCause::NotebookNotFound => "NotebookNotFound",
            FailureCause::NotebookInvalid => "NotebookInvalid",
            FailureCause::NotebookCellFailed => "NotebookCellFailed",
            FailureCause::KernelDied => "KernelDied",
            FailureCause::ExecutorSetupFailed => "ExecutorSetupFailed",
            FailureCause::ExecutorFailed => "ExecutorFailed",
            FailureCause::Timeout => "Timeout",
            FailureCause::OOMKilled => "OOMKilled",
            FailureCause::ImageNotFound => "ImageNotFound",
            FailureCause::ImagePullBackOff => "ImagePullBackOff",
            FailureCause::ContainerConfigInvalid => "ContainerConfigInvalid",
            FailureCause::ContainerCreateFailed => "ContainerCreateFailed",
            FailureCause::Evicted => "Evicted",
            FailureCause::Preempted => "Preempted",
            FailureCause::NodeLost => "NodeLost",
            FailureCause::PodRejected => "PodRejected",
            FailureCause::PodDeleted => "PodDeleted",
            FailureCause::PodSpecInvalid => "PodSpecInvalid",
            FailureCause::PodPolicyDenied => "PodPolicyDenied",
            FailureCause::PodSecurityViolation => "PodSecurityViolation",
            FailureCause::SecurityContextConstraints => "SecurityContextConstraints",
            FailureCause::AdmissionWebhookDenied => "AdmissionWebhookDenied",
            FailureCause::AdmissionPolicyDenied => "AdmissionPolicyDenied",
            FailureCause::QuotaRequiresLimits => "QuotaRequiresLimits",
            FailureCause::LimitRangeViolation => "LimitRangeViolation",
            FailureCause::QuotaExceeded => "QuotaExceeded",
            FailureCause::PodCreateForbidden => "PodCreateForbidden",
            FailureCause::NamespaceTerminating => "NamespaceTerminating",
            FailureCause::AdmissionWebhookUnavailable => "AdmissionWebhookUnavailable",
            FailureCause::APIServerUnavailable => "APIServerUnavailable",
            FailureCause::PodCreateFailed => "PodCreateFailed",
            FailureCause::InvalidAnnotation => "InvalidAnnotation",
            FailureCause::CheckFailed => "CheckFailed",
            FailureCause::BuildNotSupported => "BuildNotSupported",
            FailureCause::BuildConfigInvalid => "BuildConfigInvalid",
            FailureCause::BuildApiNotServed => "BuildApiNotServed",
            FailureCause::BuildFailed => "BuildFailed",
            FailureCause::BuildTimedOut => "BuildTimedOut",
            FailureCause::FieldNotSupported => "FieldNotSupported",
            FailureCause::GoldenMismatch => "GoldenMismatch",
            FailureCause::GoldenNotFound => "GoldenNotFound",
            FailureCause::GoldenInvalid => "GoldenInvalid",
            FailureCause::ModelUnavailable => "ModelUnavailable",
            FailureCause::PredictionMismatch => "PredictionMismatch",
            FailureCause::PredictionFailed => "PredictionFailed",
        }
    }

    /// Whether a retry may help.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::FailureKind;
    /// use nbv_core::phase::FailureCause;
    ///
    /// assert_eq!(FailureCause::NodeLost.kind(), FailureKind::Transient);
    /// assert_eq!(FailureCause::Timeout.kind(), FailureKind::Permanent);
    /// ```
    pub const fn kind(self) -> FailureKind {
        match self {
            FailureCause::GitUnreachable
            | FailureCause::ImagePullBackOff
            | FailureCause::ContainerCreateFailed
            | FailureCause::Evicted
            | FailureCause::Preempted
            | FailureCause::NodeLost
            | FailureCause::PodRejected
            | FailureCause::PodDeleted => FailureKind::Transient,
            FailureCause::GitCloneFailed
            | FailureCause::GitCredentialsInvalid
            | FailureCause::NotebookNotFound
            | FailureCause::NotebookInvalid
            | FailureCause::NotebookCellFailed
            | FailureCause::KernelDied
            | FailureCause::ExecutorSetupFailed
            | FailureCause::ExecutorFailed
            | FailureCause::Timeout
            | FailureCause::OOMKilled
            | FailureCause::ImageNotFound
            | FailureCause::ContainerConfigInvalid
            | FailureCause::PodSpecInvalid
            | FailureCause::PodPolicyDenied
            | FailureCause::PodSecurityViolation
            | FailureCause::SecurityContextConstraints
            | FailureCause::AdmissionWebhookDenied
            | FailureCause::AdmissionPolicyDenied
            | FailureCause::QuotaRequiresLimits
            | FailureCause::LimitRangeViolation
            | FailureCause::QuotaExceeded
            | FailureCause::PodCreateForbidden
            | FailureCause::NamespaceTerminating
            | FailureCause::AdmissionWebhookUnavailable
            | FailureCause::APIServerUnavailable
            | FailureCause::PodCreateFailed
            | FailureCause::InvalidAnnotation
            | FailureCause::CheckFailed
            | FailureCause::BuildNotSupported
            | FailureCause::BuildConfigInvalid
            | FailureCause::BuildApiNotServed
            | FailureCause::BuildFailed
            | FailureCause::BuildTimedOut
            | FailureCause::FieldNotSupported
            | FailureCause::GoldenMismatch
            | FailureCause::GoldenNotFound
            | FailureCause::GoldenInvalid
            | FailureCause::ModelUnavailable => FailureKind::Permanent,
            FailureCause::PredictionMismatch | FailureCause::PredictionFailed => {
                FailureKind::Permanent
            }
        }
    }

    /// The condition reason of the cause.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::FailureCause;
    ///
    /// assert_eq!(FailureCause::PodDeleted.reason().as_str(), "PodDeleted");
    /// ```
    pub fn reason(self) -> Reason {
        // Every name is CamelCase letters (a unit test checks them all), so the
        // fallback is never taken.
        Reason::new(self.as_str()).unwrap_or(Reason::VALIDATION_FAILED)
    }

    /// A [`Failure`] of this cause. Credentials that the message may echo (a clone URL
    /// with a token, a `password=` pair) are redacted, because the message reaches the
    /// job's status and Events.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::FailureCause;
    ///
    /// let failure = FailureCause::GitUnreachable
    ///     .failure("fatal: unable to access 'https://bot:ghp_x@example.com/r.git/'");
    /// assert_eq!(failure.message, "fatal: unable to access 'https://***@example.com/r.git/'");
    /// ```
    pub fn failure(self, message: impl AsRef<str>) -> Failure {
        let message = redact_secrets(message.as_ref().trim());
        match self.kind() {
            FailureKind::Transient => Failure::transient(self.reason(), message),
            FailureKind::Permanent => Failure::permanent(self.reason(), message),
        }
    }
}

impl fmt::Display for FailureCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_is_a_valid_reason() {
        for cause in FailureCause::ALL {
            assert_eq!(Reason::new(cause.as_str()).as_ref(), Ok(&cause.reason()));
        }
    }
}
