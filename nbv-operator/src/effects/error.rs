//! Why an effect failed, classified so that the caller knows whether to try again.

use std::fmt;

use nbv_core::actions::Refused as ActionRefused;
use nbv_core::plan::Outcome;
use nbv_core::triggers::Refusal;

use crate::api_error::{ApiErrorClass, classify_status};

/// An effect that did not take effect.
///
/// Every message names the request or object at fault and says what happens next;
/// the caller records it in the job's status and reports it as an Event.
///
/// # Examples
///
/// ```
/// use nbv_operator::effects::EffectError;
///
/// let err = EffectError::NotFound { object: "InferenceService ml/x".into() };
/// assert_eq!(err.to_string(), "InferenceService ml/x not found");
/// assert!(err.is_retryable());
/// ```
#[derive(Debug, thiserror::Error)]
pub enum EffectError {
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
    #[error("{request} failed: {}; it will be retried", Describe(source))]
    Transient {
        /// The request, for example `list Pods in ml`.
        request: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// A watch cache the effect decides on has not listed its objects yet: acting on
    /// what it does not know could break a rule it would show (a sync through a closed
    /// sync window). Retried once the cache has caught up.
    #[error(
        "the {cache} watch cache has not listed its objects yet; {request} waits for it and will be retried"
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

impl EffectError {
    /// Whether trying the same effect again later may succeed.
    ///
    /// A missing object is retryable: the target of a trigger is often created by the
    /// same sync that runs the notebook, a little later. A refusal or an invalid request
    /// is not: it needs a person to change something first.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::effects::EffectError;
    ///
    /// let invalid = EffectError::Invalid { request: "restart Widget ml/w".into(), reason: "no selector".into() };
    /// assert!(!invalid.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            EffectError::NotFound { .. }
                | EffectError::CacheNotReady { .. }
                | EffectError::Conflict { .. }
                | EffectError::Transient { .. }
        )
    }

    /// The outcome to record in the job's effect ledger: a retryable error is retried
    /// with backoff; any other (a refusal, a forbidden or invalid request) would fail
    /// the same way again, so the effect is given up at once and reported.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::plan::Outcome;
    /// use nbv_operator::effects::EffectError;
    ///
    /// let err = EffectError::NotFound { object: "Deployment ml/web".into() };
    /// assert_eq!(err.outcome(), Outcome::Failed("Deployment ml/web not found".into()));
    /// let invalid = EffectError::Invalid { request: "restart Widget ml/w".into(), reason: "no selector".into() };
    /// assert!(matches!(invalid.outcome(), Outcome::GiveUp(_)));
    /// ```
    pub fn outcome(&self) -> Outcome {
        if self.is_retryable() {
            Outcome::Failed(self.to_string())
        } else {
            Outcome::GiveUp(self.to_string())
        }
    }

    /// Classifies a client error of `request` on `object` ([`crate::api_error`]).
    pub(crate) fn from_kube(request: String, object: &str, error: kube::Error) -> EffectError {
        let kube::Error::Api(status) = &error else {
            return EffectError::Transient {
                request,
                source: error,
            };
        };
        match classify_status(status) {
            ApiErrorClass::NotFound => EffectError::NotFound {
                object: object.to_owned(),
            },
            ApiErrorClass::Conflict => EffectError::Conflict {
                request,
                message: status.message.clone(),
            },
            ApiErrorClass::Forbidden => EffectError::Invalid {
                request,
                reason: format!(
                    "forbidden: {}; grant the operator's service account this permission \
                     in its ClusterRole",
                    status.message
                ),
            },
            ApiErrorClass::Transient => EffectError::Transient {
                request,
                source: error,
            },
            ApiErrorClass::Rejected => EffectError::Invalid {
                request,
                reason: format!(
                    "the API server rejected it (HTTP {} {}): {}",
                    status.code, status.reason, status.message
                ),
            },
        }
    }

    pub(crate) fn invalid(request: impl Into<String>, reason: impl Into<String>) -> EffectError {
        EffectError::Invalid {
            request: request.into(),
            reason: reason.into(),
        }
    }
}

/// A trigger that can never act on its target as it is: an invalid request.
impl From<ActionRefused> for EffectError {
    fn from(refused: ActionRefused) -> EffectError {
        EffectError::Invalid {
            request: refused.request,
            reason: refused.reason,
        }
    }
}

/// A client error without the debug dump that `kube::Error`'s own message carries.
struct Describe<'a>(&'a kube::Error);

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            kube::Error::Api(status) if status.reason.is_empty() => {
                write!(f, "HTTP {}: {}", status.code, status.message)
            }
            kube::Error::Api(status) => {
                write!(
                    f,
                    "HTTP {} {}: {}",
                    status.code, status.reason, status.message
                )
            }
            other => write!(f, "{other}"),
        }
    }
}
