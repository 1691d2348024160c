//! Why a reconcile could not finish: a request that failed, or a Pod in the way.

use crate::io::{ApiAnswer, Request};
use crate::pod::InvalidValidationPod;
use crate::reconcile::AnswerClass;

/// Why a reconcile stopped before it was done; the shell tries it again after
/// [`Done::requeue`](super::Done::requeue), soon after a conflict
/// ([`Failure::is_conflict`]). Nothing decided before it is lost: what was carried out
/// is in the [`Memory`](super::Memory) of the result.
///
/// # Examples
///
/// ```
/// use nbv_core::io::{ApiAnswer, ObjectRef, Request};
/// use nbv_core::job::Failure;
///
/// let get = Request::Get(ObjectRef::namespaced("v1", "Pod", "ml", "train-g1-r0"));
/// let failure = Failure::request(&get, ApiAnswer::no_answer("connection refused"));
/// assert_eq!(failure.to_string(), "GET Pod ml/train-g1-r0 failed: no answer: connection refused");
/// assert_eq!(failure.kind(), "pod");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Failure {
    /// The job lacks a namespace or a name (never the case for objects from a watch).
    #[error("the job has no namespace or name")]
    Identity,
    /// A request failed.
    #[error("{request} failed: {answer}")]
    Request {
        /// The request, as [`Request`]'s `Display` writes it.
        request: String,
        /// The kind of the object it was about.
        kind: String,
        /// What the API server answered, or that it did not.
        answer: ApiAnswer,
    },
    /// The Pod with the attempt's name lacks nbv's labels.
    #[error(transparent)]
    InvalidValidationPod(#[from] InvalidValidationPod),
    /// The Pod with the attempt's name was left by an earlier job of the same name
    /// (deleted with `--cascade=orphan`). It has been deleted; the next reconcile
    /// creates the attempt's own Pod.
    #[error(
        "pod {pod} belongs to an earlier job of the same name; it was deleted and the \
         attempt's pod will be created on the next reconcile"
    )]
    LeftOver {
        /// `namespace/name` of the Pod.
        pod: String,
    },
    /// The shell's answer does not fit the request (a bug of the shell).
    #[error("{request}: unexpected answer {answer}")]
    Unexpected {
        /// The request.
        request: String,
        /// The answer, as `Debug` writes it.
        answer: String,
    },
}

impl Failure {
    /// The failure of `request`, answered `answer`.
    pub fn request(request: &Request, answer: ApiAnswer) -> Self {
        Failure::Request {
            request: request.to_string(),
            kind: request.object().kind.clone(),
            answer,
        }
    }

    /// A short label for metrics: what the failed request was about.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::{ApiAnswer, ObjectRef, Request, Subresource};
    /// use nbv_core::job::Failure;
    ///
    /// let write = Request::Patch {
    ///     object: ObjectRef::namespaced("mlops.mlops.dev/v1alpha1", "NotebookValidationJob", "ml", "train"),
    ///     subresource: Subresource::Status,
    ///     patch: serde_json::json!({}),
    /// };
    /// let conflict = Failure::request(&write, ApiAnswer::status(409, "Conflict", "modified"));
    /// assert_eq!(conflict.kind(), "conflict");
    /// assert!(conflict.is_conflict());
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Request { kind, .. } if kind == crate::api::KIND => {
                if self.is_conflict() {
                    "conflict"
                } else {
                    "status"
                }
            }
            Failure::Request { kind, .. } if kind == "Namespace" || kind == "InferenceService" => {
                "models"
            }
            Failure::Request { .. }
            | Failure::InvalidValidationPod(_)
            | Failure::LeftOver { .. } => "pod",
            Failure::Identity => "identity",
            Failure::Unexpected { .. } => "shell",
        }
    }

    /// Whether the failure is a conflict: the object changed since it was read.
    pub fn is_conflict(&self) -> bool {
        matches!(self, Failure::Request { answer, .. } if answer.class() == AnswerClass::Conflict)
    }
}
