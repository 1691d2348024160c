//! Times as nbv writes them: RFC 3339 in UTC, to the whole second, with a `Z`.
//!
//! This is how the API server writes a `metav1.Time` (`creationTimestamp`,
//! `lastTransitionTime`), so everything nbv writes for people or for Argo CD (wave
//! annotations, `restartedAt`, run keys, messages) reads the same and compares as text.
//! A writer that needs finer precision on purpose (the nanoseconds of Argo CD's
//! `refresh` request) formats its own time and says why.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;

/// `at` in RFC 3339, UTC, whole seconds, `Z` suffix; a fraction of a second is dropped.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::time::rfc3339;
///
/// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// assert_eq!(rfc3339(at), "2026-01-24T22:30:00Z");
/// let later = at + chrono::Duration::milliseconds(999);
/// assert_eq!(rfc3339(later), "2026-01-24T22:30:00Z");
/// ```
pub fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Serializes a time as [`rfc3339`] writes it, for
/// `#[serde(serialize_with = "nbv_core::time::serialize_rfc3339")]` (chrono's own
/// serializer would keep the fraction of a second).
///
/// # Errors
///
/// Whatever the serializer returns for a string.
///
/// # Examples
///
/// ```
/// use chrono::{DateTime, TimeZone, Utc};
///
/// #[derive(serde::Serialize)]
/// struct Stamp {
///     #[serde(serialize_with = "nbv_core::time::serialize_rfc3339")]
///     at: DateTime<Utc>,
/// }
///
/// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let stamp = Stamp { at: at + chrono::Duration::milliseconds(250) };
/// assert_eq!(serde_json::to_string(&stamp)?, r#"{"at":"2026-01-24T22:30:00Z"}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn serialize_rfc3339<S: Serializer>(
    at: &DateTime<Utc>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&rfc3339(*at))
}
