//! What an answer of the API server means for the request that got it: the one
//! reading of HTTP codes and reasons that every request of a shell uses (a Pod create
//! reads the message further, see [`crate::pod::PodRefusal`]).

use std::fmt;

/// An answer of the API server that is not a success: an error `Status` (its HTTP
/// `code`, `reason` and `message`), or no answer at all (the connection failed, the
/// request timed out on the client's side).
///
/// # Examples
///
/// ```
/// use nbv_core::api_answer::{AnswerClass, ApiAnswer};
///
/// let quota = ApiAnswer::status(403, "Forbidden", "pods \"p\" is forbidden: exceeded quota: compute");
/// assert_eq!(quota.class(), AnswerClass::Forbidden);
/// assert_eq!(quota.to_string(), "403 Forbidden: pods \"p\" is forbidden: exceeded quota: compute");
/// assert_eq!(ApiAnswer::no_answer("connection refused").class(), AnswerClass::Transient);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ApiAnswer {
    /// An error `Status`.
    Status {
        /// The HTTP code (`Status.code`; 0 when the body had none).
        code: u16,
        /// `Status.reason` (`Forbidden`, `Invalid`, …), possibly empty.
        reason: String,
        /// `Status.message`, possibly empty.
        message: String,
    },
    /// No answer: the request did not reach the API server or its answer was lost.
    NoAnswer {
        /// What the client saw (`connection refused`, `operation timed out`).
        error: String,
    },
}

impl ApiAnswer {
    /// An error `Status`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api_answer::ApiAnswer;
    ///
    /// let invalid = ApiAnswer::status(422, "Invalid", "spec.containers: Required value");
    /// assert_eq!(invalid.to_string(), "422 Invalid: spec.containers: Required value");
    /// ```
    pub fn status(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        ApiAnswer::Status {
            code,
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// No answer, with what the client saw.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api_answer::ApiAnswer;
    ///
    /// assert_eq!(ApiAnswer::no_answer("timed out").to_string(), "no answer: timed out");
    /// ```
    pub fn no_answer(error: impl Into<String>) -> Self {
        ApiAnswer::NoAnswer {
            error: error.into(),
        }
    }

    /// What the answer means ([`AnswerClass::of`]; no answer is transient).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api_answer::{AnswerClass, ApiAnswer};
    ///
    /// assert_eq!(ApiAnswer::status(409, "AlreadyExists", "").class(), AnswerClass::Conflict);
    /// ```
    pub fn class(&self) -> AnswerClass {
        match self {
            ApiAnswer::Status { code, reason, .. } => AnswerClass::of(*code, reason),
            ApiAnswer::NoAnswer { .. } => AnswerClass::Transient,
        }
    }

    /// The message of the answer (the client's error when there was none).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api_answer::ApiAnswer;
    ///
    /// assert_eq!(ApiAnswer::status(503, "", "busy").message(), "busy");
    /// assert_eq!(ApiAnswer::no_answer("reset").message(), "reset");
    /// ```
    pub fn message(&self) -> &str {
        match self {
            ApiAnswer::Status { message, .. } => message,
            ApiAnswer::NoAnswer { error } => error,
        }
    }
}

impl fmt::Display for ApiAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiAnswer::Status {
                code,
                reason,
                message,
            } => {
                write!(f, "{code}")?;
                if !reason.is_empty() {
                    write!(f, " {reason}")?;
                }
                if !message.is_empty() {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            ApiAnswer::NoAnswer { error } => write!(f, "no answer: {error}"),
        }
    }
}

/// What an error answer means for the request that got it.
///
/// A status counts by its code or by its reason (an error body without a code, or a
/// proxy that rewrote the code, still says `NotFound` or `Conflict`), as the Go
/// client's `errors.IsNotFound` and friends do.
///
/// # Examples
///
/// ```
/// use nbv_core::api_answer::AnswerClass;
///
/// assert_eq!(AnswerClass::of(404, ""), AnswerClass::NotFound);
/// assert_eq!(AnswerClass::of(0, "AlreadyExists"), AnswerClass::Conflict);
/// assert_eq!(AnswerClass::of(429, "TooManyRequests"), AnswerClass::Transient);
/// assert_eq!(AnswerClass::of(422, "Invalid"), AnswerClass::Rejected);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnswerClass {
    /// 404: the object does not exist.
    NotFound,
    /// 409: the object changed since it was read (a failed `resourceVersion` or uid
    /// precondition), or it already exists.
    Conflict,
    /// 403: the request is forbidden (RBAC, or an admission policy: what a Pod
    /// create's message says tells which, [`crate::pod::PodRefusal`]).
    Forbidden,
    /// May pass by itself: 5xx, 429, 408, 401 (the token is refreshed on the next
    /// request), an error body without a code, or no answer at all.
    Transient,
    /// Any other 4xx: the request cannot succeed as it is.
    Rejected,
}

impl AnswerClass {
    /// The class of an error status with HTTP `code` and `reason`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api_answer::AnswerClass;
    ///
    /// assert_eq!(AnswerClass::of(403, "Forbidden"), AnswerClass::Forbidden);
    /// assert_eq!(AnswerClass::of(0, ""), AnswerClass::Transient);
    /// ```
    pub fn of(code: u16, reason: &str) -> AnswerClass {
        if code == 404 || reason == "NotFound" {
            AnswerClass::NotFound
        } else if code == 409 || reason == "Conflict" || reason == "AlreadyExists" {
            AnswerClass::Conflict
        } else if code == 403 || reason == "Forbidden" {
            AnswerClass::Forbidden
        } else if matches!(code, 0 | 401 | 408 | 429) || code >= 500 {
            AnswerClass::Transient
        } else {
            AnswerClass::Rejected
        }
    }
}
