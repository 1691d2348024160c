//! Whether a job asks for a service account token in its validation Pod.
//!
//! A validation Pod gets no API token unless the job asks: most notebooks never call
//! the Kubernetes API, and a token in the Pod is a credential the notebook's code (and
//! every package it installs) can use. The upstream CRD has no field for it, so the
//! job asks with an annotation, which keeps its manifest valid under both CRDs.

use crate::api::NotebookValidationJob;
use crate::phase::{Failure, FailureCause};

/// The annotation with which a job asks for its service account's token in the
/// validation Pod: `"true"` mounts it (`automountServiceAccountToken: true`); absent or
/// `"false"`, the Pod has none.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::pod::SERVICE_ACCOUNT_TOKEN_ANNOTATION, "mlops.dev/automount-service-account-token");
/// ```
pub const SERVICE_ACCOUNT_TOKEN_ANNOTATION: &str = "mlops.dev/automount-service-account-token";

/// A [`SERVICE_ACCOUNT_TOKEN_ANNOTATION`] that is neither `"true"` nor `"false"`.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::InvalidTokenAnnotation;
///
/// let error = InvalidTokenAnnotation { value: "yes".into() };
/// assert_eq!(error.failure().reason.as_str(), "InvalidAnnotation");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "annotation {SERVICE_ACCOUNT_TOKEN_ANNOTATION}: {value:?} is not \"true\" or \"false\"; \
     write \"true\" to mount the service account's API token in the validation Pod"
)]
pub struct InvalidTokenAnnotation {
    /// The value.
    pub value: String,
}

impl InvalidTokenAnnotation {
    /// The failure of the attempt: permanent, naming the annotation.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::phase::FailureKind;
    /// use nbv_core::pod::InvalidTokenAnnotation;
    ///
    /// let failure = InvalidTokenAnnotation { value: "True".into() }.failure();
    /// assert_eq!(failure.kind, FailureKind::Permanent);
    /// assert!(failure.message.contains("mlops.dev/automount-service-account-token"));
    /// ```
    pub fn failure(&self) -> Failure {
        FailureCause::InvalidAnnotation.failure(self.to_string())
    }
}

/// Whether `job` asks for its service account's API token in the validation Pod
/// ([`SERVICE_ACCOUNT_TOKEN_ANNOTATION`]).
///
/// # Errors
///
/// [`InvalidTokenAnnotation`] when the annotation is neither `"true"` nor `"false"`:
/// never guessed.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{NotebookValidationJob, NotebookValidationJobSpec};
/// use nbv_core::pod::{api_token_requested, SERVICE_ACCOUNT_TOKEN_ANNOTATION};
///
/// let mut job = NotebookValidationJob::new("train", NotebookValidationJobSpec::default());
/// assert_eq!(api_token_requested(&job), Ok(false));
/// job.metadata.annotations = Some([(SERVICE_ACCOUNT_TOKEN_ANNOTATION.to_owned(), "true".to_owned())].into());
/// assert_eq!(api_token_requested(&job), Ok(true));
/// ```
pub fn api_token_requested(job: &NotebookValidationJob) -> Result<bool, InvalidTokenAnnotation> {
    let value = job
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SERVICE_ACCOUNT_TOKEN_ANNOTATION));
    match value.map(String::as_str) {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(InvalidTokenAnnotation {
            value: other.to_owned(),
        }),
    }
}
