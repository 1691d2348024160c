//! Errors, shaped like the API server's `metav1.Status` failures.

use http::StatusCode;
use serde_json::{Value, json};

/// Why a request failed: the `reason` field of a `metav1.Status`, which fixes its HTTP code.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::Reason;
///
/// assert_eq!(Reason::Conflict.code().as_u16(), 409);
/// assert_eq!(Reason::for_code(http::StatusCode::TOO_MANY_REQUESTS), Reason::TooManyRequests);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// 400: the request is malformed (bad selector, bad patch body, name mismatch).
    BadRequest,
    /// 401: not authenticated.
    Unauthorized,
    /// 403: not allowed.
    Forbidden,
    /// 404: the object or resource type does not exist.
    NotFound,
    /// 405: the verb is not supported on this URL.
    MethodNotAllowed,
    /// 409: an object with this name already exists.
    AlreadyExists,
    /// 409: the write was based on a stale `resourceVersion`.
    Conflict,
    /// 410: the requested `resourceVersion` is older than the change history kept.
    Expired,
    /// 422: the object is invalid.
    Invalid,
    /// 429: the client is being throttled.
    TooManyRequests,
    /// 500: the server failed.
    InternalError,
    /// 503: the server is unavailable.
    ServiceUnavailable,
    /// 504: the server timed out.
    Timeout,
    /// Any other code, with an empty reason (as the API server sends for unusual codes).
    Other(StatusCode),
}

impl Reason {
    /// The HTTP status code the reason is sent with.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::Reason;
    ///
    /// assert_eq!(Reason::Expired.code().as_u16(), 410);
    /// ```
    pub fn code(self) -> StatusCode {
        match self {
            Reason::BadRequest => StatusCode::BAD_REQUEST,
            Reason::Unauthorized => StatusCode::UNAUTHORIZED,
            Reason::Forbidden => StatusCode::FORBIDDEN,
            Reason::NotFound => StatusCode::NOT_FOUND,
            Reason::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Reason::AlreadyExists | Reason::Conflict => StatusCode::CONFLICT,
            Reason::Expired => StatusCode::GONE,
            Reason::Invalid => StatusCode::UNPROCESSABLE_ENTITY,
            Reason::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            Reason::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Reason::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Reason::Timeout => StatusCode::GATEWAY_TIMEOUT,
            Reason::Other(code) => code,
        }
    }

    /// The reason the API server sends with `code` (409 maps to `Conflict`).
    ///
    /// # Examples
    ///
    /// ```
    /// use http::StatusCode;
    /// use nbv_testkit::cluster::Reason;
    ///
    /// assert_eq!(Reason::for_code(StatusCode::GATEWAY_TIMEOUT), Reason::Timeout);
    /// assert_eq!(Reason::for_code(StatusCode::IM_A_TEAPOT), Reason::Other(StatusCode::IM_A_TEAPOT));
    /// ```
    pub fn for_code(code: StatusCode) -> Self {
        match code.as_u16() {
            400 => Reason::BadRequest,
            401 => Reason::Unauthorized,
            403 => Reason::Forbidden,
            404 => Reason::NotFound,
            405 => Reason::MethodNotAllowed,
            409 => Reason::Conflict,
            410 => Reason::Expired,
            422 => Reason::Invalid,
            429 => Reason::TooManyRequests,
            500 => Reason::InternalError,
            503 => Reason::ServiceUnavailable,
            504 => Reason::Timeout,
            _ => Reason::Other(code),
        }
    }

    /// The `reason` string of the Status body (empty for [`Reason::Other`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::Reason;
    ///
    /// assert_eq!(Reason::AlreadyExists.as_str(), "AlreadyExists");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::BadRequest => "BadRequest",
            Reason::Unauthorized => "Unauthorized",
            Reason::Forbidden => "Forbidden",
            Reason::NotFound => "NotFound",
            Reason::MethodNotAllowed => "MethodNotAllowed",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Conflict => "Conflict",
            Reason::Expired => "Expired",
            Reason::Invalid => "Invalid",
            Reason::TooManyRequests => "TooManyRequests",
            Reason::InternalError => "InternalError",
            Reason::ServiceUnavailable => "ServiceUnavailable",
            Reason::Timeout => "Timeout",
            Reason::Other(_) => "",
        }
    }
}

/// A failed request, as the API server reports it.
///
/// Converts to the `metav1.Status` body that `kube::Client` turns into
/// `kube::Error::Api` with the same `code` and `reason`.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::{ApiError, Reason};
///
/// let err = ApiError::new(Reason::NotFound, "pods \"web\" not found");
/// assert_eq!(err.to_status()["code"], 404);
/// assert_eq!(err.to_string(), "NotFound (404): pods \"web\" not found");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} ({}): {message}", reason.as_str(), reason.code().as_u16())]
pub struct ApiError {
    /// Why the request failed.
    pub reason: Reason,
    /// Human-readable explanation, sent as the Status `message`.
    pub message: String,
    /// `details.causes[].message`: what the API server adds (an eviction refused by a
    /// PodDisruptionBudget names the budget only there).
    pub causes: Vec<String>,
}

impl ApiError {
    /// An error with `reason` and `message`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{ApiError, Reason};
    ///
    /// assert_eq!(ApiError::new(Reason::Invalid, "bad").reason, Reason::Invalid);
    /// ```
    pub fn new(reason: Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            causes: Vec::new(),
        }
    }

    /// The same error with a `DisruptionBudget` cause in its details.
    pub(crate) fn with_cause(mut self, cause: impl Into<String>) -> Self {
        self.causes.push(cause.into());
        self
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(Reason::BadRequest, message)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(Reason::Invalid, message)
    }

    pub(crate) fn not_found(resource: &str, name: &str) -> Self {
        Self::new(Reason::NotFound, format!("{resource} \"{name}\" not found"))
    }

    pub(crate) fn already_exists(resource: &str, name: &str) -> Self {
        Self::new(
            Reason::AlreadyExists,
            format!("{resource} \"{name}\" already exists"),
        )
    }

    pub(crate) fn conflict(resource: &str, name: &str, detail: &str) -> Self {
        Self::new(
            Reason::Conflict,
            format!("Operation cannot be fulfilled on {resource} \"{name}\": {detail}"),
        )
    }

    /// The `metav1.Status` JSON body of this error.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{ApiError, Reason};
    ///
    /// let status = ApiError::new(Reason::Conflict, "stale").to_status();
    /// assert_eq!(status["kind"], "Status");
    /// assert_eq!(status["reason"], "Conflict");
    /// assert_eq!(status["status"], "Failure");
    /// ```
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason.as_str(),
            "code": self.reason.code().as_u16(),
        });
        if !self.causes.is_empty() {
            let causes: Vec<Value> = self
                .causes
                .iter()
                .map(|m| json!({"reason": "DisruptionBudget", "message": m}))
                .collect();
            status["details"] = json!({"causes": causes});
        }
        status
    }
}

/// An error from the cluster's direct-access methods (those that bypass HTTP).
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::{ClusterError, FakeCluster};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let cluster = FakeCluster::default();
/// let err = cluster.get("widgets", Some("default"), "w").unwrap_err();
/// assert!(matches!(err, ClusterError::UnknownResource { .. }));
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The resource name matches no registered resource type.
    #[error(
        "no resource type \"{resource}\" is registered: use a plural or kind such as \"pods\", \
         \"Deployment\" or \"deployments.apps\", or register it with FakeCluster::register"
    )]
    UnknownResource {
        /// The name that was looked up.
        resource: String,
    },
    /// The request failed the way an API request would.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A typed object could not be converted to or from JSON.
    #[error("object does not round-trip through JSON: {0}")]
    Json(#[from] serde_json::Error),
}
