//! Why an effect did not take effect, classified so that the job knows whether to try
//! again: the one reading of the API server's answers for effects.

use std::fmt;

use crate::actions::Refused as ActionRefused;
use crate::plan::Outcome;
use crate::reconcile::{AnswerClass, ApiAnswer};
use crate::triggers::Refusal;

/// An effect that did not take effect.
///
/// Every message names the request or object at fault and says what happens next; the
/// shell records it in the job's status and reports it as an Event.
///
/// # Examples
///
/// ```
/// use nbv_core::carry::Failure;
///
/// let err = Failure::NotFound { object: "InferenceService ml/x".into() };
/// assert_eq!(err.to_string(), "InferenceService ml/x not found");
/// assert!(err.is_retryable());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The confused-deputy rule refused the trigger; nothing was written.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The object does not exist (yet).
    #[error("{object} not found")]
    NotFound {
        /// The missing object, for example `InferenceService ml/x`.
        object: String,
    },
    /// The object changed between reading and writing it (HTTP 409).
    #[error("{request} conflicted with a concurrent change ({message}); it will be retried")]
    Conflict {
        /// The request, for example `patch Application argocd/models`.
        request: String,
        /// The API server's message.
        message: String,
    },
    /// The API server or the network failed in a way that may pass (5xx, 429,
    /// timeouts, connection errors).
    #[error("{request} failed: {}; it will be retried", Http(answer))]
    Transient {
        /// The request, for example `list Pods in ml`.
        request: String,
        /// What the API server answered, or that it did not.
        answer: ApiAnswer,
    },
    /// A watch cache the effect decides on has not listed its objects yet: acting on
    /// what it does not know could break a rule it would show (a sync through a closed
    /// sync window). Retried once the cache has caught up.
    #[error(
        "the {cache} watch cache has not listed its objects yet; {request} waits for it and will \
         be retried (if this lasts: is the {cache} API served, is Argo CD installed, and may nbv \
         list it?)"
    )]
    CacheNotReady {
        /// The cache, for example `AppProject`.
        cache: &'static str,
        /// The request that waits, for example `sync Application argocd/models`.
        request: String,
    },
    /// The request cannot succeed as it is: the target is unusable, or the API server
    /// rejected the request (4xx other than 404, 409 and 429). Retrying does not help
    /// until someone changes the target, the trigger or the operator's permissions.
    #[error("{request}: {reason}")]
    Invalid {
        /// The request or object, for example `restart Widget ml/w`.
        request: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
}

impl Failure {
    /// What the failed answer `answer` to `request` (about `object`) means
    /// ([`ApiAnswer::class`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::Failure;
    /// use nbv_core::reconcile::ApiAnswer;
    ///
    /// let forbidden = ApiAnswer::status(403, "Forbidden", "cannot patch resource");
    /// let failure = Failure::of("patch Deployment ml/web", "Deployment ml/web", &forbidden);
    /// assert!(failure.to_string().starts_with("patch Deployment ml/web: forbidden: cannot patch resource"));
    /// assert!(!failure.is_retryable());
    /// let busy = ApiAnswer::status(503, "ServiceUnavailable", "shutting down");
    /// assert_eq!(
    ///     Failure::of("list Pods in ml", "Pods in ml", &busy).to_string(),
    ///     "list Pods in ml failed: HTTP 503 ServiceUnavailable: shutting down; it will be retried"
    /// );
    /// ```
    pub fn of(request: impl Into<String>, object: impl Into<String>, answer: &ApiAnswer) -> Self {
        let request = request.into();
        match answer.class() {
            AnswerClass::NotFound => Failure::NotFound {
                object: object.into(),
            },
            AnswerClass::Conflict => Failure::Conflict {
                request,
                message: answer.message().to_owned(),
            },
            AnswerClass::Forbidden => Failure::Invalid {
                request,
                reason: format!(
                    "forbidden: {}; grant the operator's service account this permission \
                     in its ClusterRole",
                    answer.message()
                ),
            },
            AnswerClass::Transient => Failure::Transient {
                request,
                answer: answer.clone(),
            },
            AnswerClass::Rejected => Failure::Invalid {
                request,
                reason: match answer {
                    ApiAnswer::Status {
                        code,
                        reason,
                        message,
                    } => format!("the API server rejected it (HTTP {code} {reason}): {message}"),
                    ApiAnswer::NoAnswer { error } => error.clone(),
                },
            },
        }
    }

    /// A request that cannot succeed as it is, for `reason`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::Failure;
    ///
    /// let invalid = Failure::invalid("restart Widget ml/w", "no selector");
    /// assert_eq!(invalid.to_string(), "restart Widget ml/w: no selector");
    /// ```
    pub fn invalid(request: impl Into<String>, reason: impl Into<String>) -> Self {
        Failure::Invalid {
            request: request.into(),
            reason: reason.into(),
        }
    }

    /// Whether trying the same effect again later may succeed.
    ///
    /// A missing object is retryable: the target of a trigger is often created by the
    /// same sync that runs the notebook, a little later. A refusal or an invalid request
    /// is not: it needs a person to change something first.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::Failure;
    ///
    /// let invalid = Failure::invalid("restart Widget ml/w", "no selector");
    /// assert!(!invalid.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Failure::NotFound { .. }
                | Failure::CacheNotReady { .. }
                | Failure::Conflict { .. }
                | Failure::Transient { .. }
        )
    }

    /// The outcome to record in the job's effect ledger: a retryable failure is retried
    /// with backoff; any other (a refusal, a forbidden or invalid request) would fail
    /// the same way again, so the effect is given up at once and reported.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::Failure;
    /// use nbv_core::plan::Outcome;
    ///
    /// let err = Failure::NotFound { object: "Deployment ml/web".into() };
    /// assert_eq!(err.outcome(), Outcome::Failed("Deployment ml/web not found".into()));
    /// assert!(matches!(Failure::invalid("restart Widget ml/w", "no selector").outcome(), Outcome::GiveUp(_)));
    /// ```
    pub fn outcome(&self) -> Outcome {
        if self.is_retryable() {
            Outcome::Failed(self.to_string())
        } else {
            Outcome::GiveUp(self.to_string())
        }
    }
}

/// A trigger that can never act on its target as it is: an invalid request.
impl From<ActionRefused> for Failure {
    fn from(refused: ActionRefused) -> Failure {
        Failure::Invalid {
            request: refused.request,
            reason: refused.reason,
        }
    }
}

/// An answer as an HTTP status line and message (`HTTP 503 ServiceUnavailable: busy`),
/// or what the client saw when there was none.
struct Http<'a>(&'a ApiAnswer);

impl fmt::Display for Http<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            ApiAnswer::Status {
                code,
                reason,
                message,
            } if reason.is_empty() => write!(f, "HTTP {code}: {message}"),
            ApiAnswer::Status {
                code,
                reason,
                message,
            } => write!(f, "HTTP {code} {reason}: {message}"),
            ApiAnswer::NoAnswer { error } => f.write_str(error),
        }
    }
}
