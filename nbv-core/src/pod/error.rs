//! Why a job's spec cannot become a validation Pod.

use crate::phase::Failure;

use crate::compare::InvalidComparison;
use crate::models::ModelSpecError;

use super::timeout::InvalidTimeout;
use crate::phase::FailureCause;

/// A job whose spec cannot become a validation Pod; the message names the field and
/// says what to change. Retrying cannot help: [`failure`](Self::failure) is the
/// permanent failure to report.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::PodSpecError;
///
/// let err = PodSpecError::ForbiddenVolume { index: 1, name: "host".into(), volume_type: "hostPath".into() };
/// assert_eq!(err.field(), "spec.podConfig.volumes[1].hostPath");
/// assert_eq!(err.failure().reason.as_str(), "PodSpecInvalid");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PodSpecError {
    /// The job lacks a field every object read from the API server has.
    #[error(
        "the job has no {field}; nbv needs it to name and own the validation pod \
         (read the job from the API server rather than building it)"
    )]
    Identity {
        /// `metadata.name`, `metadata.namespace` or `metadata.uid`.
        field: &'static str,
    },
    /// Neither a built image nor `spec.podConfig.containerImage` is given.
    #[error(
        "spec.podConfig.containerImage is empty; set an image with Python 3 and papermill, \
         e.g. quay.io/jupyter/scipy-notebook with papermill installed"
    )]
    EmptyImage,
    /// `spec.timeout` is not a duration.
    #[error(transparent)]
    Timeout(#[from] InvalidTimeout),
    /// `spec.notebook.git.url` (or the golden notebook's) is not a URL nbv clones.
    #[error(
        "{origin}.git.url {url:?} is not a Git URL nbv clones; use https://, http://, \
         git://, ssh:// or git@host:path"
    )]
    GitUrl {
        /// `spec.notebook` or `spec.goldenNotebook`.
        origin: &'static str,
        /// The URL, with any credentials redacted.
        url: String,
    },
    /// `spec.notebook.git.ref` (or the golden notebook's) is empty or would be read as
    /// an option.
    #[error(
        "{origin}.git.ref {git_ref:?} is not a ref; name a branch, tag or commit \
         (it must not be empty or start with '-')"
    )]
    GitRef {
        /// `spec.notebook` or `spec.goldenNotebook`.
        origin: &'static str,
        /// The ref.
        git_ref: String,
    },
    /// Credentials would cross the network unencrypted.
    #[error(
        "{origin}.git.credentialsSecret is set but the URL uses {scheme}://, which would \
         send the credentials unencrypted; use an https:// or ssh:// URL"
    )]
    CredentialsInClear {
        /// `spec.notebook` or `spec.goldenNotebook`.
        origin: &'static str,
        /// `http` or `git`.
        scheme: &'static str,
    },
    /// `spec.notebook.path` (or the golden notebook's) is not a relative path inside the
    /// repository.
    #[error(
        "{origin}.path {path:?} {problem}; give the notebook's path relative to the \
         repository root, e.g. notebooks/train.ipynb"
    )]
    NotebookPath {
        /// `spec.notebook` or `spec.goldenNotebook`.
        origin: &'static str,
        /// The path.
        path: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A volume uses a source the restricted Pod Security profile forbids.
    #[error(
        "spec.podConfig.volumes[{index}].{volume_type}: volume {name:?} uses {volume_type}, which the \
         restricted Pod Security profile forbids; use persistentVolumeClaim, configMap, secret, \
         emptyDir, projected, downwardAPI, csi or ephemeral"
    )]
    ForbiddenVolume {
        /// Position in `spec.podConfig.volumes`.
        index: usize,
        /// The volume's name.
        name: String,
        /// The forbidden source field, e.g. `hostPath`.
        volume_type: String,
    },
    /// A volume's name is one nbv uses.
    #[error(
        "spec.podConfig.volumes[{index}].name: {name:?} is used by nbv's own volumes; \
         rename the volume (names starting with \"nbv-\" are reserved)"
    )]
    ReservedVolume {
        /// Position in `spec.podConfig.volumes`.
        index: usize,
        /// The name.
        name: String,
    },
    /// A volume mount would hide nbv's workspace.
    #[error(
        "spec.podConfig.volumeMounts[{index}].mountPath: {path:?} overlaps /workspace, where \
         nbv clones the repository; mount the volume elsewhere"
    )]
    ReservedMount {
        /// Position in `spec.podConfig.volumeMounts`.
        index: usize,
        /// The mount path.
        path: String,
    },
    /// A volume mount names no volume.
    #[error(
        "spec.podConfig.volumeMounts[{index}].name: no volume {name:?} in spec.podConfig.volumes; \
         add the volume or fix the name"
    )]
    UnknownVolume {
        /// Position in `spec.podConfig.volumeMounts`.
        index: usize,
        /// The name.
        name: String,
    },
    /// `spec.comparisonConfig` (or the strategy annotation) cannot be carried out as
    /// written.
    #[error(transparent)]
    Comparison(#[from] InvalidComparison),
    /// `spec.validationConfig` asks for a check nbv cannot carry out as written.
    #[error("{0}")]
    Checks(#[from] crate::checks::InvalidCheckSpec),
    /// `spec.modelValidation` asks for a platform nbv does not check, or cannot be
    /// carried out as written.
    #[error("{0}")]
    Models(#[from] crate::models::ModelSpecError),
    /// The cluster admin's policy does not let the job put a field's value in its
    /// Pod (an image, a service account, a Secret, placement, a volume source, an API
    /// token).
    #[error(transparent)]
    Policy(#[from] super::PolicyRefusal),
    /// The job's `mlops.dev/automount-service-account-token` is not a boolean.
    #[error(transparent)]
    TokenAnnotation(#[from] super::InvalidTokenAnnotation),
    /// The spec asks for a check nbv does not carry out yet.
    #[error(
        "{field}: {check} is not implemented by nbv yet, so this job could not pass the check \
         it asks for; remove {field} to validate only that the notebook runs, or run the job \
         under an operator that carries the check out (with nbv beside it in --gitops-only mode)"
    )]
    NotImplemented {
        /// The field, e.g. `spec.goldenNotebook`.
        field: String,
        /// What the field asks for, e.g. "the golden-notebook comparison".
        check: &'static str,
    },
}

impl PodSpecError {
    /// The field at fault, as a path in the job.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::PodSpecError;
    ///
    /// assert_eq!(PodSpecError::EmptyImage.field(), "spec.podConfig.containerImage");
    /// ```
    pub fn field(&self) -> String {
        match self {
            PodSpecError::Identity { field } => (*field).to_owned(),
            PodSpecError::EmptyImage => "spec.podConfig.containerImage".to_owned(),
            PodSpecError::Timeout(_) => "spec.timeout".to_owned(),
            PodSpecError::GitUrl { origin, .. } => format!("{origin}.git.url"),
            PodSpecError::GitRef { origin, .. } => format!("{origin}.git.ref"),
            PodSpecError::CredentialsInClear { origin, .. } => {
                format!("{origin}.git.credentialsSecret")
            }
            PodSpecError::NotebookPath { origin, .. } => format!("{origin}.path"),
            PodSpecError::Comparison(e) => e.field.clone(),
            PodSpecError::ForbiddenVolume {
                index, volume_type, ..
            } => {
                format!("spec.podConfig.volumes[{index}].{volume_type}")
            }
            PodSpecError::ReservedVolume { index, .. } => {
                format!("spec.podConfig.volumes[{index}].name")
            }
            PodSpecError::ReservedMount { index, .. } => {
                format!("spec.podConfig.volumeMounts[{index}].mountPath")
            }
            PodSpecError::UnknownVolume { index, .. } => {
                format!("spec.podConfig.volumeMounts[{index}].name")
            }
            PodSpecError::NotImplemented { field, .. } => field.clone(),
            PodSpecError::Checks(error) => error.field.clone(),
            PodSpecError::Models(error) => error.field().to_owned(),
            PodSpecError::Policy(refusal) => refusal.field.clone(),
            PodSpecError::TokenAnnotation(_) => {
                format!(
                    "metadata.annotations[{}]",
                    super::SERVICE_ACCOUNT_TOKEN_ANNOTATION
                )
            }
        }
    }

    /// The permanent failure to report for the attempt: the spec must change before a
    /// Pod can run. [`FailureCause::FieldNotSupported`] for a check nbv does not carry
    /// out (a model platform nbv does not check among them),
    /// [`FailureCause::PodPolicyDenied`] for what the cluster admin's policy refuses,
    /// [`FailureCause::InvalidAnnotation`] for an invalid token annotation,
    /// [`FailureCause::PodSpecInvalid`] for anything else.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::FailureKind;
    /// use nbv_core::pod::PodSpecError;
    ///
    /// let failure = PodSpecError::EmptyImage.failure();
    /// assert_eq!(failure.kind, FailureKind::Permanent);
    /// assert!(failure.message.starts_with("spec.podConfig.containerImage is empty"));
    /// ```
    pub fn failure(&self) -> Failure {
        let cause = match self {
            PodSpecError::NotImplemented { .. }
            | PodSpecError::Models(
                ModelSpecError::UnsupportedPlatform { .. } | ModelSpecError::CustomPlatform,
            ) => FailureCause::FieldNotSupported,
            PodSpecError::Policy(_) => FailureCause::PodPolicyDenied,
            PodSpecError::TokenAnnotation(_) => FailureCause::InvalidAnnotation,
            _ => FailureCause::PodSpecInvalid,
        };
        cause.failure(self.to_string())
    }
}
