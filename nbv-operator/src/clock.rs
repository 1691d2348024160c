//! Where the shell gets the time from.
//!
//! The core never reads a clock; the shell passes `now` in. Production uses the system
//! clock; simulation and tests use [`VirtualClock`], which follows tokio's clock so that
//! a paused runtime (`tokio::time::pause`) moves both together.

use chrono::{DateTime, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that starts at `epoch` and advances with tokio's (possibly paused) clock.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_operator::clock::{Clock, VirtualClock};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let epoch = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let clock = VirtualClock::new(epoch);
/// tokio::time::sleep(std::time::Duration::from_secs(90)).await;
/// assert_eq!((clock.now() - epoch).num_seconds(), 90);
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct VirtualClock {
    epoch: DateTime<Utc>,
    start: tokio::time::Instant,
}

impl VirtualClock {
    /// A clock reading `epoch` now. Must be created inside a tokio runtime.
    pub fn new(epoch: DateTime<Utc>) -> Self {
        VirtualClock {
            epoch,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> DateTime<Utc> {
        let elapsed = tokio::time::Instant::now() - self.start;
        self.epoch + chrono::Duration::from_std(elapsed).unwrap_or(chrono::Duration::MAX)
    }
}

/// A clock that always reads the same time (for tests of effects that write the time).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_operator::clock::{Clock, FixedClock};
///
/// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
/// assert_eq!(FixedClock(at).now(), at);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}
