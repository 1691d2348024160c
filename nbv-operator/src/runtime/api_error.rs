//! How nbv reads the API server's error answers: one classification of HTTP statuses,
//! used by every request the operator sends.
//!
//! A status counts by its code or by its reason (an error body without a code, or a
//! proxy that rewrote the code, still says `NotFound` or `Conflict`), as the Go client's
//! `errors.IsNotFound` and friends do.

use kube::core::Status;
use nbv_core::reconcile::ApiAnswer;

/// What an API error means for the request that got it: the core's
/// [`AnswerClass`](nbv_core::reconcile::AnswerClass), the one reading of codes and
/// reasons. (A Pod create reads the message further:
/// [`PodRefusal`](nbv_core::pod::PodRefusal).)
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::api_error::{ApiErrorClass, classify};
///
/// let gone = kube::Error::Api(Box::new(kube::core::Status::failure("pods \"p\" not found", "NotFound").with_code(404)));
/// assert_eq!(classify(&gone), ApiErrorClass::NotFound);
/// ```
pub use nbv_core::reconcile::AnswerClass as ApiErrorClass;

/// The client's error as the core reads an answer: the API server's error `Status`,
/// or no answer (a transport error, a timeout, a body that could not be read).
///
/// # Examples
///
/// ```
/// use nbv_core::reconcile::ApiAnswer;
/// use nbv_operator::runtime::api_error::answer;
///
/// let quota = kube::Error::Api(Box::new(kube::core::Status::failure("exceeded quota: q", "Forbidden").with_code(403)));
/// assert_eq!(answer(&quota), ApiAnswer::status(403, "Forbidden", "exceeded quota: q"));
/// ```
pub use nbv_kube::answer;

/// The class of a client error.
pub fn classify(error: &kube::Error) -> ApiErrorClass {
    match error {
        kube::Error::Api(status) => classify_status(status),
        _ => ApiAnswer::no_answer("").class(),
    }
}

/// The class of an error answer of the API server.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::api_error::{ApiErrorClass, classify_status};
///
/// let exists = kube::core::Status::failure("events \"e\" already exists", "AlreadyExists").with_code(409);
/// assert_eq!(classify_status(&exists), ApiErrorClass::Conflict);
/// assert_eq!(classify_status(&kube::core::Status::failure("boom", "").with_code(503)), ApiErrorClass::Transient);
/// ```
pub fn classify_status(status: &Status) -> ApiErrorClass {
    ApiErrorClass::of(status.code, &status.reason)
}

/// Whether `error` is a conflict (HTTP 409): the object changed since it was read, or
/// it already exists. Reading again and retrying is the answer.
///
/// # Examples
///
/// ```
/// let conflict = kube::Error::Api(Box::new(kube::core::Status::failure("the object has been modified", "Conflict").with_code(409)));
/// assert!(nbv_operator::runtime::api_error::is_conflict(&conflict));
/// ```
pub fn is_conflict(error: &kube::Error) -> bool {
    classify(error) == ApiErrorClass::Conflict
}

/// Whether `error` says that the object does not exist (HTTP 404).
///
/// # Examples
///
/// ```
/// let gone = kube::Error::Api(Box::new(kube::core::Status::failure("not found", "NotFound").with_code(404)));
/// assert!(nbv_operator::runtime::api_error::is_not_found(&gone));
/// ```
pub fn is_not_found(error: &kube::Error) -> bool {
    classify(error) == ApiErrorClass::NotFound
}

/// An error and its causes on one line, each cause once: kube's transport and config
/// errors keep what they could not reach or use in their source chain.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::api_error::with_causes;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("cannot read the kubeconfig")]
/// struct Unreadable(#[source] std::io::Error);
///
/// let error = Unreadable(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"));
/// assert_eq!(with_causes(&error), "cannot read the kubeconfig: no such file");
/// ```
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
