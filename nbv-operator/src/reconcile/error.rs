//! Why a reconcile failed.

use crate::validation_pod::PodError;

/// Why a reconcile failed; the controller retries it with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The job lacks a namespace or a name (never the case for objects from a watch).
    #[error("the job has no namespace or name")]
    Identity,
    /// The job could not be read back from the jobs' cache.
    #[error(transparent)]
    Cache(#[from] crate::projection::UnpackError),
    /// The validation Pod could not be created or read.
    #[error("running the validation pod of NotebookValidationJob {job}: {source}")]
    Pod {
        /// `namespace/name` of the job.
        job: String,
        /// What failed.
        #[source]
        source: PodError,
    },
    /// The opt-in annotation of a model's namespace could not be read.
    #[error("checking the models of NotebookValidationJob {job}: {source}")]
    Models {
        /// `namespace/name` of the job.
        job: String,
        /// What failed.
        #[source]
        source: Box<crate::effects::EffectError>,
    },
    /// The status could not be written.
    #[error("writing the status of NotebookValidationJob {job}: {source}")]
    Status {
        /// `namespace/name` of the job.
        job: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
}

impl Error {
    /// A short label for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Identity => "identity",
            Error::Cache(_) => "cache",
            Error::Pod { .. } => "pod",
            Error::Models { .. } => "models",
            Error::Status { source, .. } if is_conflict(source) => "conflict",
            Error::Status { .. } => "status",
        }
    }
}

/// Whether the API server refused a write because the object changed meanwhile.
pub(super) fn is_conflict(e: &kube::Error) -> bool {
    crate::api_error::is_conflict(e)
}
