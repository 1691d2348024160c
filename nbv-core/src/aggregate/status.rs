//! The `mlops.dev/notebook-status` and `mlops.dev/notebook-summary` annotations.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::index::Aggregate;
use crate::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};

/// The most bytes the status annotation may take, as a [`StatusLimit`].
///
/// All annotations of an object share 256 KiB; the status takes at most an eighth of it
/// and leaves the rest to Argo CD and the Application's owners.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::StatusLimit;
///
/// assert_eq!(StatusLimit::DEFAULT.bytes(), 32 * 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StatusLimit(usize);

impl StatusLimit {
    /// 32 KiB.
    pub const DEFAULT: StatusLimit = StatusLimit(32 * 1024);
    /// The smallest limit accepted: room for every count at its largest and an empty
    /// `failedJobs`.
    pub const MIN_BYTES: usize = 512;

    /// A limit of `bytes`.
    ///
    /// # Errors
    ///
    /// [`StatusLimitTooSmall`] when `bytes` is below [`StatusLimit::MIN_BYTES`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::StatusLimit;
    ///
    /// assert_eq!(StatusLimit::new(4096)?.bytes(), 4096);
    /// assert!(StatusLimit::new(100).is_err());
    /// # Ok::<(), nbv_core::aggregate::StatusLimitTooSmall>(())
    /// ```
    pub fn new(bytes: usize) -> Result<Self, StatusLimitTooSmall> {
        if bytes < Self::MIN_BYTES {
            return Err(StatusLimitTooSmall { bytes });
        }
        Ok(StatusLimit(bytes))
    }

    /// The limit in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::StatusLimit;
    ///
    /// assert_eq!(StatusLimit::new(512)?.bytes(), 512);
    /// # Ok::<(), nbv_core::aggregate::StatusLimitTooSmall>(())
    /// ```
    pub fn bytes(self) -> usize {
        self.0
    }
}

impl Default for StatusLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A [`StatusLimit`] below [`StatusLimit::MIN_BYTES`].
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::StatusLimit;
///
/// let err = StatusLimit::new(10).unwrap_err();
/// assert!(err.to_string().contains("10 bytes"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a status limit of {bytes} bytes cannot hold the counts; use at least {} bytes",
    StatusLimit::MIN_BYTES
)]
pub struct StatusLimitTooSmall {
    bytes: usize,
}

/// The value of `mlops.dev/notebook-status`: the aggregate at a point in time, with
/// `failedJobs` capped to a byte budget.
///
/// Serialized as compact JSON with the fields, in order, `total`, `succeeded`, `failed`,
/// `running`, `lastUpdate` (RFC 3339, seconds, `Z`), `failedJobs` (sorted
/// `namespace/name`) and `failedJobsOmitted` (how many failed jobs did not fit; always
/// present, 0 when none were left out). Kept `failedJobs` are the first ones in sorted
/// order, so the list is stable while the set is.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::aggregate::{Aggregate, StatusLimit};
///
/// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let status = Aggregate::default().status(at, StatusLimit::DEFAULT);
/// assert_eq!(
///     status.to_json(),
///     r#"{"total":0,"succeeded":0,"failed":0,"running":0,"lastUpdate":"2026-01-24T22:30:00Z","failedJobs":[],"failedJobsOmitted":0}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotebookStatus {
    total: u64,
    succeeded: u64,
    failed: u64,
    running: u64,
    #[serde(serialize_with = "crate::time::serialize_rfc3339")]
    last_update: DateTime<Utc>,
    failed_jobs: Vec<String>,
    failed_jobs_omitted: u64,
}

impl Aggregate {
    /// The status to publish at `now`, with `failedJobs` cut so that the JSON takes at
    /// most `limit` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    ///
    /// let status = Aggregate::default().status(Utc::now(), StatusLimit::DEFAULT);
    /// assert_eq!(status.failed_jobs_omitted(), 0);
    /// ```
    pub fn status(&self, now: DateTime<Utc>, limit: StatusLimit) -> NotebookStatus {
        let mut status = NotebookStatus {
            total: self.total(),
            succeeded: self.succeeded(),
            failed: self.failed(),
            running: self.running(),
            last_update: now,
            failed_jobs: Vec::new(),
            // The largest value `failedJobsOmitted` can take, so that the measured base
            // size is an upper bound whatever is finally omitted.
            failed_jobs_omitted: self.failed(),
        };
        let mut used = status.to_json().len();
        for job in self.failed_jobs() {
            let separator = usize::from(!status.failed_jobs.is_empty());
            let cost = serde_json::to_string(job).map_or(usize::MAX, |s| s.len()) + separator;
            if used.saturating_add(cost) > limit.bytes() {
                break;
            }
            used += cost;
            status.failed_jobs.push(job.to_owned());
        }
        let kept = u64::try_from(status.failed_jobs.len()).unwrap_or(u64::MAX);
        status.failed_jobs_omitted = self.failed().saturating_sub(kept);
        status
    }

    /// The one-line summary, `30/32 succeeded (93.75% success rate)`, or
    /// `No notebook validation jobs` when there are none.
    ///
    /// The rate is rounded half-up to at most two decimals, without trailing zeros
    /// (`100%`, `50%`, `12.5%`, `33.33%`, `66.67%`), computed in integers so that no
    /// floating-point artefact can show. Rounding never claims a perfect or a null
    /// record that is not: the rate is `100%` only when every job succeeded (otherwise at
    /// most `99.99%`) and `0%` only when none did (otherwise at least `0.01%`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AggregateIndex, AppId, AppRef, JobKey, JobPhase, ParentSource};
    ///
    /// let app = AppId::new(None, "ml")?;
    /// let parent = AppRef { app: app.clone(), source: ParentSource::InstanceLabel };
    /// let mut index = AggregateIndex::new();
    /// for (name, phase) in [("a", JobPhase::Succeeded), ("b", JobPhase::Succeeded), ("c", JobPhase::Failed)] {
    ///     index.upsert(JobKey::new("ml", name), Some(parent.clone()), phase);
    /// }
    /// assert_eq!(index.aggregate(&app).summary(), "2/3 succeeded (66.67% success rate)");
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn summary(&self) -> String {
        summary(self.succeeded(), self.total())
    }
}

fn summary(succeeded: u64, total: u64) -> String {
    if total == 0 {
        return "No notebook validation jobs".to_owned();
    }
    format!(
        "{succeeded}/{total} succeeded ({}% success rate)",
        success_rate(succeeded, total)
    )
}

/// `succeeded / total` as a percentage with at most two decimals (see [`summary`]).
fn success_rate(succeeded: u64, total: u64) -> String {
    let (succeeded, total) = (u128::from(succeeded), u128::from(total.max(1)));
    // Hundredths of a percent, rounded half-up: floor(x * 10000 / total + 1/2).
    let mut hundredths = (succeeded * 20_000 + total) / (2 * total);
    if succeeded < total {
        hundredths = hundredths.min(9_999);
    }
    if succeeded > 0 {
        hundredths = hundredths.max(1);
    }
    let (whole, fraction) = (hundredths / 100, hundredths % 100);
    match fraction {
        0 => format!("{whole}"),
        f if f % 10 == 0 => format!("{whole}.{}", f / 10),
        f => format!("{whole}.{f:02}"),
    }
}

impl NotebookStatus {
    /// How many jobs it counts.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    ///
    /// assert_eq!(Aggregate::default().status(Utc::now(), StatusLimit::DEFAULT).total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The annotation value: compact JSON.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    ///
    /// let json = Aggregate::default().status(Utc::now(), StatusLimit::DEFAULT).to_json();
    /// assert!(json.starts_with(r#"{"total":0,"#));
    /// ```
    pub fn to_json(&self) -> String {
        // Serializing plain integers, strings and a list of strings cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The failed jobs that fit in the budget, sorted.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    ///
    /// let status = Aggregate::default().status(Utc::now(), StatusLimit::DEFAULT);
    /// assert!(status.failed_jobs().is_empty());
    /// ```
    pub fn failed_jobs(&self) -> &[String] {
        &self.failed_jobs
    }

    /// How many failed jobs were left out of [`NotebookStatus::failed_jobs`].
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    ///
    /// let status = Aggregate::default().status(Utc::now(), StatusLimit::DEFAULT);
    /// assert_eq!(status.failed_jobs_omitted(), 0);
    /// ```
    pub fn failed_jobs_omitted(&self) -> u64 {
        self.failed_jobs_omitted
    }

    /// The value of `mlops.dev/notebook-summary` for this status.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::Utc;
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    ///
    /// let status = Aggregate::default().status(Utc::now(), StatusLimit::DEFAULT);
    /// assert_eq!(status.summary(), "No notebook validation jobs");
    /// ```
    pub fn summary(&self) -> String {
        summary(self.succeeded, self.total)
    }

    /// Everything but `lastUpdate`: what decides whether the status changed.
    fn content(&self) -> (u64, u64, u64, u64, &[String], u64) {
        (
            self.total,
            self.succeeded,
            self.failed,
            self.running,
            &self.failed_jobs,
            self.failed_jobs_omitted,
        )
    }

    /// The JSON merge patch that publishes this status on an Application whose current
    /// annotations are `current`, or `None` when it already shows it.
    ///
    /// `lastUpdate` is ignored in the comparison: an aggregate that did not change is not
    /// republished just because time moved (the resync then costs no API call), so
    /// `lastUpdate` is the time of the last publish that changed something. A current
    /// status that cannot be read (hand-edited, or written in another format) is
    /// replaced. The patch holds only the annotations that change.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use chrono::{TimeDelta, TimeZone, Utc};
    /// use nbv_core::aggregate::{Aggregate, StatusLimit};
    /// use serde_json::json;
    ///
    /// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    /// let status = Aggregate::default().status(at, StatusLimit::DEFAULT);
    /// let patch = status.application_patch(&BTreeMap::new()).unwrap();
    /// assert_eq!(
    ///     patch["metadata"]["annotations"]["mlops.dev/notebook-summary"],
    ///     json!("No notebook validation jobs")
    /// );
    ///
    /// // Once published, the same counts a minute later need no patch.
    /// let published = BTreeMap::from([
    ///     ("mlops.dev/notebook-status".to_string(), status.to_json()),
    ///     ("mlops.dev/notebook-summary".to_string(), status.summary()),
    /// ]);
    /// let later = Aggregate::default().status(at + TimeDelta::minutes(1), StatusLimit::DEFAULT);
    /// assert_eq!(later.application_patch(&published), None);
    /// ```
    pub fn application_patch(&self, current: &BTreeMap<String, String>) -> Option<Value> {
        let mut changes = Map::new();
        let status_current = current
            .get(NOTEBOOK_STATUS)
            .and_then(|json| serde_json::from_str::<NotebookStatus>(json).ok())
            .is_some_and(|published| published.content() == self.content());
        if !status_current {
            changes.insert(NOTEBOOK_STATUS.to_owned(), Value::String(self.to_json()));
        }
        let summary = self.summary();
        if current.get(NOTEBOOK_SUMMARY) != Some(&summary) {
            changes.insert(NOTEBOOK_SUMMARY.to_owned(), Value::String(summary));
        }
        (!changes.is_empty()).then(|| json!({ "metadata": { "annotations": changes } }))
    }
}

#[cfg(test)]
mod tests {
    use super::success_rate;

    #[test]
    fn rate_examples() {
        for (s, t, want) in [
            (30, 32, "93.75"),
            (1, 1, "100"),
            (1, 2, "50"),
            (1, 3, "33.33"),
            (2, 3, "66.67"),
            (1, 8, "12.5"),
            (1, 32, "3.13"),
            (0, 5, "0"),
            (9_999_999, 10_000_000, "99.99"),
            (1, 10_000_000, "0.01"),
            (u64::MAX, u64::MAX, "100"),
            (u64::MAX - 1, u64::MAX, "99.99"),
        ] {
            assert_eq!(success_rate(s, t), want, "{s}/{t}");
        }
    }
}
