//! The job a reconcile works on, as the labels of the metrics it updates.
//!
//! The counters of a reconcile (its outcome, a finished run, a created Pod) are
//! updated deep inside it; upstream's families and the optional `job_name` label need
//! the job's namespace and name there. A task-local value carries them, as a tracing
//! span carries its fields: the controller enters the scope around each reconcile, and
//! nothing between has to pass them on. A metric updated outside any scope (a test, a
//! spawned task) is counted without the job's labels, never dropped.

use std::future::Future;

use nbv_core::aggregate::JobKey;
use nbv_core::api::NotebookValidationJob;
use tokio::task::futures::TaskLocalFuture;

tokio::task_local! {
    static JOB: JobScope;
}

/// The namespace and name of the job being reconciled.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::metrics::JobScope;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let scope = JobScope::new("ml", "train");
/// let seen = scope.run(async { JobScope::current() }).await;
/// assert_eq!(seen, Some(JobScope::new("ml", "train")));
/// assert_eq!(JobScope::current(), None);
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JobScope {
    /// The job's namespace (empty for a job without one).
    pub namespace: String,
    /// The job's name.
    pub name: String,
}

impl JobScope {
    /// The scope of the job `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        JobScope {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The scope of `job`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_operator::operator::metrics::JobScope;
    ///
    /// let mut job = NotebookValidationJob::new("train", Default::default());
    /// job.metadata.namespace = Some("ml".to_owned());
    /// assert_eq!(JobScope::of(&job), JobScope::new("ml", "train"));
    /// ```
    pub fn of(job: &NotebookValidationJob) -> Self {
        match JobKey::of(job) {
            Some(key) => JobScope::new(key.namespace(), key.name()),
            // Never a job from a watch; counted under its name alone.
            None => JobScope::new("", job.metadata.name.as_deref().unwrap_or_default()),
        }
    }

    /// Runs `future` with this scope as [`JobScope::current`].
    pub fn run<F: Future>(self, future: F) -> TaskLocalFuture<JobScope, F> {
        JOB.scope(self, future)
    }

    /// The scope the calling task is in, if any.
    pub fn current() -> Option<JobScope> {
        JOB.try_with(Clone::clone).ok()
    }
}
