//! What the shell answers.

use serde_json::Value;

use super::ApiAnswer;

/// What came of a [`Request`](super::Request).
///
/// # Examples
///
/// ```
/// use nbv_core::io::Response;
/// use nbv_core::reconcile::{AnswerClass, ApiAnswer};
///
/// let conflict = Response::Failed(ApiAnswer::status(409, "Conflict", "the object has been modified"));
/// assert_eq!(conflict.failure().map(ApiAnswer::class), Some(AnswerClass::Conflict));
/// assert_eq!(Response::Deleted.failure(), None);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Response {
    /// The object read, created or patched; `None` when it does not exist (a `GET`'s
    /// 404, or a cache that does not hold it).
    Object(Option<Value>),
    /// The objects listed.
    Objects(Vec<Value>),
    /// The object is deleted (or being deleted).
    Deleted,
    /// No watch cache of the shell holds objects of this kind (or this namespace):
    /// nothing is known, and the machine decides whether to ask the API server.
    NotCached,
    /// The request failed: what the API server answered, or that it did not.
    Failed(ApiAnswer),
}

impl Response {
    /// The failure, if the request failed.
    pub fn failure(&self) -> Option<&ApiAnswer> {
        match self {
            Response::Failed(answer) => Some(answer),
            _ => None,
        }
    }
}
