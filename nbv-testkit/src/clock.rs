//! Virtual wall-clock time for tests and simulation.
//!
//! Kubernetes objects carry wall-clock timestamps (`creationTimestamp`,
//! `deletionTimestamp`), but tests want time they control. [`VirtualClock`] maps Tokio's
//! monotonic clock onto a fixed epoch: under `#[tokio::test(start_paused = true)]` Tokio's
//! clock only moves when the test sleeps or the runtime is idle, so the timestamps the
//! in-memory cluster writes are deterministic and minutes pass instantly.

use chrono::{DateTime, Utc};
use tokio::time::Instant;

/// A wall clock that starts at a fixed epoch and advances with Tokio's clock.
///
/// `now()` is `epoch + (tokio::time::Instant::now() - instant at creation)`. With a paused
/// Tokio clock this is virtual time; with a running clock it advances in real time from the
/// epoch.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_testkit::clock::VirtualClock;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let epoch = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
/// let clock = VirtualClock::new(epoch);
/// tokio::time::sleep(std::time::Duration::from_secs(300)).await;
/// assert_eq!(clock.now(), Utc.with_ymd_and_hms(2026, 1, 1, 0, 5, 0).unwrap());
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct VirtualClock {
    epoch: DateTime<Utc>,
    start: Instant,
}

impl VirtualClock {
    /// Starts a clock that reads `epoch` now.
    ///
    /// Create it inside the Tokio runtime whose clock it should follow: a paused runtime's
    /// clock and the real clock have different origins.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_testkit::clock::VirtualClock;
    ///
    /// let epoch = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    /// assert_eq!(VirtualClock::new(epoch).epoch(), epoch);
    /// ```
    pub fn new(epoch: DateTime<Utc>) -> Self {
        Self {
            epoch,
            start: Instant::now(),
        }
    }

    /// The time the clock read when it was created.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_testkit::clock::VirtualClock;
    ///
    /// let epoch = Utc.with_ymd_and_hms(2030, 6, 1, 12, 0, 0).unwrap();
    /// assert_eq!(VirtualClock::new(epoch).epoch(), epoch);
    /// ```
    pub fn epoch(&self) -> DateTime<Utc> {
        self.epoch
    }

    /// The current virtual time.
    ///
    /// Saturates at the largest representable time rather than overflowing.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_testkit::clock::VirtualClock;
    ///
    /// let epoch = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    /// let clock = VirtualClock::new(epoch);
    /// assert!(clock.now() >= epoch);
    /// ```
    pub fn now(&self) -> DateTime<Utc> {
        let elapsed = Instant::now().saturating_duration_since(self.start);
        chrono::Duration::from_std(elapsed)
            .ok()
            .and_then(|d| self.epoch.checked_add_signed(d))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }
}
