//! Why a reconcile failed.

use std::time::Duration;

use nbv_core::job::Failure;
use nbv_core::reconcile::RequeuePolicy;

/// Why a reconcile failed; the controller retries it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The job lacks a namespace or a name (never the case for objects from a watch).
    #[error("the job has no namespace or name")]
    Identity,
    /// The job could not be read back from the jobs' cache.
    #[error(transparent)]
    Cache(#[from] crate::operator::projection::UnpackError),
    /// The job machine stopped: a request failed, or a Pod is in the way.
    #[error("reconciling NotebookValidationJob {job}: {failure}")]
    Job {
        /// `namespace/name` of the job.
        job: String,
        /// What stopped it.
        #[source]
        failure: Failure,
        /// When the machine said to try again.
        retry: Duration,
    },
}

impl Error {
    /// A short label for metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Identity => "identity",
            Error::Cache(_) => "cache",
            Error::Job { failure, .. } => failure.kind(),
        }
    }

    /// When to try again: when the job machine said, or (for a job that could not be
    /// read from the cache) after the policy's pause.
    pub fn retry_after(&self, policy: &RequeuePolicy) -> Duration {
        match self {
            Error::Job { retry, .. } => *retry,
            Error::Identity | Error::Cache(_) => policy.after_error(false),
        }
    }
}
