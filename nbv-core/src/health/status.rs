//! Argo CD's health vocabulary: the six status codes and a status with its message.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The health of a resource as Argo CD spells it (gitops-engine `HealthStatusCode`).
///
/// Argo CD compares these strings case-sensitively: a script that returns
/// `"healthy"` is reported as [`Unknown`](HealthStatusCode::Unknown).
///
/// # Examples
///
/// ```
/// use nbv_core::health::HealthStatusCode;
///
/// let code: HealthStatusCode = "Degraded".parse()?;
/// assert_eq!(code.to_string(), "Degraded");
/// assert!(code.is_worse_than(HealthStatusCode::Progressing));
/// assert!("degraded".parse::<HealthStatusCode>().is_err());
/// # Ok::<(), nbv_core::health::UnknownHealthStatusCode>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HealthStatusCode {
    /// The resource is 100% healthy: for a job, the notebook run succeeded.
    Healthy,
    /// Not healthy yet, but it may still get there: the job is starting or running.
    Progressing,
    /// The resource failed or cannot become healthy: the run failed.
    Degraded,
    /// Suspended or paused (Argo CD uses it for a suspended CronJob, for example).
    Suspended,
    /// The resource is not in the cluster.
    Missing,
    /// The health could not be assessed, for instance because the health script failed.
    Unknown,
}

impl HealthStatusCode {
    /// Every code, in declaration order.
    pub const ALL: [HealthStatusCode; 6] = [
        HealthStatusCode::Healthy,
        HealthStatusCode::Progressing,
        HealthStatusCode::Degraded,
        HealthStatusCode::Suspended,
        HealthStatusCode::Missing,
        HealthStatusCode::Unknown,
    ];

    /// The spelling Argo CD uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            HealthStatusCode::Healthy => "Healthy",
            HealthStatusCode::Progressing => "Progressing",
            HealthStatusCode::Degraded => "Degraded",
            HealthStatusCode::Suspended => "Suspended",
            HealthStatusCode::Missing => "Missing",
            HealthStatusCode::Unknown => "Unknown",
        }
    }

    /// Rank in gitops-engine's `healthOrder`, from most (0) to least healthy (5).
    const fn rank(self) -> u8 {
        match self {
            HealthStatusCode::Healthy => 0,
            HealthStatusCode::Suspended => 1,
            HealthStatusCode::Progressing => 2,
            HealthStatusCode::Missing => 3,
            HealthStatusCode::Degraded => 4,
            HealthStatusCode::Unknown => 5,
        }
    }

    /// Whether `self` is a worse condition than `other`, as gitops-engine's `IsWorse`
    /// decides when it aggregates resource health into an Application's health
    /// (order: Healthy, Suspended, Progressing, Missing, Degraded, Unknown).
    pub const fn is_worse_than(self, other: HealthStatusCode) -> bool {
        self.rank() > other.rank()
    }
}

impl fmt::Display for HealthStatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of Argo CD's six health status codes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown health status {0:?}; Argo CD accepts exactly Healthy, Progressing, Degraded, \
     Suspended, Missing or Unknown (case-sensitive)"
)]
pub struct UnknownHealthStatusCode(pub String);

impl FromStr for HealthStatusCode {
    type Err = UnknownHealthStatusCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HealthStatusCode::ALL
            .into_iter()
            .find(|code| code.as_str() == s)
            .ok_or_else(|| UnknownHealthStatusCode(s.to_owned()))
    }
}

/// A health assessment: a status code and a human-readable message, serialized as
/// Argo CD's `{status, message}`.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatus, HealthStatusCode};
///
/// let health = HealthStatus::new(HealthStatusCode::Healthy, "Notebook validation succeeded");
/// assert_eq!(
///     serde_json::to_value(&health)?,
///     serde_json::json!({"status": "Healthy", "message": "Notebook validation succeeded"})
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HealthStatus {
    /// The status code.
    pub status: HealthStatusCode,
    /// What the status means for this resource; may be empty.
    #[serde(default)]
    pub message: String,
}

impl HealthStatus {
    /// A status with its message.
    pub fn new(status: HealthStatusCode, message: impl Into<String>) -> Self {
        HealthStatus {
            status,
            message: message.into(),
        }
    }
}
