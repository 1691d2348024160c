//! How nbv reads the API server's error answers: one classification of HTTP statuses,
//! used by every request the operator sends.
//!
//! A status counts by its code or by its reason (an error body without a code, or a
//! proxy that rewrote the code, still says `NotFound` or `Conflict`), as the Go client's
//! `errors.IsNotFound` and friends do.

use kube::core::Status;

/// What an API error means for the request that got it.
///
/// # Examples
///
/// ```
/// use nbv_operator::api_error::{ApiErrorClass, classify};
///
/// let gone = kube::Error::Api(Box::new(kube::core::Status::failure("pods \"p\" not found", "NotFound").with_code(404)));
/// assert_eq!(classify(&gone), ApiErrorClass::NotFound);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiErrorClass {
    /// 404: the object does not exist.
    NotFound,
    /// 409: the object changed since it was read (a failed `resourceVersion` or uid
    /// precondition), or it already exists.
    Conflict,
    /// 403: the operator may not do this (RBAC, or an admission policy).
    Forbidden,
    /// May pass by itself: 5xx, 429, 408, 401 (the token is refreshed on the next
    /// request), an error body without a code, or no answer at all (network, timeout).
    Transient,
    /// Any other 4xx: the request cannot succeed as it is.
    Rejected,
}

/// The class of a client error.
pub fn classify(error: &kube::Error) -> ApiErrorClass {
    match error {
        kube::Error::Api(status) => classify_status(status),
        _ => ApiErrorClass::Transient,
    }
}

/// The class of an error answer of the API server.
///
/// # Examples
///
/// ```
/// use nbv_operator::api_error::{ApiErrorClass, classify_status};
///
/// let exists = kube::core::Status::failure("events \"e\" already exists", "AlreadyExists").with_code(409);
/// assert_eq!(classify_status(&exists), ApiErrorClass::Conflict);
/// assert_eq!(classify_status(&kube::core::Status::failure("boom", "").with_code(503)), ApiErrorClass::Transient);
/// ```
pub fn classify_status(status: &Status) -> ApiErrorClass {
    let code = status.code;
    if code == 404 || status.is_not_found() {
        ApiErrorClass::NotFound
    } else if code == 409 || status.is_conflict() || status.is_already_exists() {
        ApiErrorClass::Conflict
    } else if code == 403 || status.is_forbidden() {
        ApiErrorClass::Forbidden
    } else if code == 429 || code == 408 || code == 401 || code >= 500 || code == 0 {
        ApiErrorClass::Transient
    } else {
        ApiErrorClass::Rejected
    }
}

/// Whether `error` is a conflict (HTTP 409): the object changed since it was read, or
/// it already exists. Reading again and retrying is the answer.
///
/// # Examples
///
/// ```
/// let conflict = kube::Error::Api(Box::new(kube::core::Status::failure("the object has been modified", "Conflict").with_code(409)));
/// assert!(nbv_operator::api_error::is_conflict(&conflict));
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
/// assert!(nbv_operator::api_error::is_not_found(&gone));
/// ```
pub fn is_not_found(error: &kube::Error) -> bool {
    classify(error) == ApiErrorClass::NotFound
}
