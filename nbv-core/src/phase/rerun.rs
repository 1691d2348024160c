//! Running a finished job again on request: the `mlops.dev/rerun` annotation.
//!
//! Argo CD's resource action `rerun` (and `kubectl annotate`) writes a new value into
//! the annotation; the phase machine starts one new run of the same generation when the
//! last run has ended and its [`RerunRecord`](crate::api::RerunRecord) holds another
//! value. The new run records the value, so the request is answered exactly once, by
//! whichever replica reconciles first, however often the job is read afterwards.

use std::fmt;

use crate::annotations::RERUN;
use crate::api::NotebookValidationJob;
use crate::kube_names::fnv1a;

/// Longest value recorded as it is. A longer one is recorded as a digest, so that the
/// status stays small whatever the annotation holds; values are compared in the form
/// they are recorded in, so a long value is answered once too.
const MAX_RECORDED_BYTES: usize = 63;

/// A request to run the job again: the value of `mlops.dev/rerun`, in the form it is
/// recorded in `status.rerun.request`.
///
/// # Examples
///
/// ```
/// use nbv_core::phase::RerunRequest;
///
/// assert_eq!(RerunRequest::new("3").unwrap().as_str(), "3");
/// assert_eq!(RerunRequest::new("  "), None, "a blank value asks for nothing");
/// let long = RerunRequest::new(&"x".repeat(300)).unwrap();
/// assert!(long.as_str().starts_with("fnv1a:") && long.as_str().len() < 64);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RerunRequest(String);

impl RerunRequest {
    /// The request an annotation value makes; `None` for a blank value.
    pub fn new(value: &str) -> Option<Self> {
        let value = value.trim();
        if value.is_empty() {
            None
        } else if value.len() <= MAX_RECORDED_BYTES {
            Some(RerunRequest(value.to_owned()))
        } else {
            Some(RerunRequest(format!(
                "fnv1a:{:016x}",
                fnv1a(value.as_bytes())
            )))
        }
    }

    /// The request `job`'s `mlops.dev/rerun` annotation makes, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::{NotebookValidationJob, NotebookValidationJobSpec};
    /// use nbv_core::phase::RerunRequest;
    ///
    /// let mut job = NotebookValidationJob::new("train", NotebookValidationJobSpec::default());
    /// assert_eq!(RerunRequest::of(&job), None);
    /// job.metadata.annotations = Some([("mlops.dev/rerun".to_owned(), "1".to_owned())].into());
    /// assert_eq!(RerunRequest::of(&job), RerunRequest::new("1"));
    /// ```
    pub fn of(job: &NotebookValidationJob) -> Option<Self> {
        job.metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(RERUN))
            .and_then(|value| RerunRequest::new(value))
    }

    /// The request as `status.rerun.request` records it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RerunRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_recorded_as_written_up_to_the_limit() {
        let at_limit = "7".repeat(MAX_RECORDED_BYTES);
        assert_eq!(RerunRequest::new(&at_limit).unwrap().as_str(), at_limit);
        let over = RerunRequest::new(&"7".repeat(MAX_RECORDED_BYTES + 1)).unwrap();
        assert_ne!(
            over,
            RerunRequest::new(&"7".repeat(MAX_RECORDED_BYTES + 2)).unwrap()
        );
        assert_eq!(over.as_str().len(), "fnv1a:".len() + 16);
    }

    #[test]
    fn surrounding_blanks_do_not_make_another_request() {
        assert_eq!(RerunRequest::new(" 2\n"), RerunRequest::new("2"));
    }
}
