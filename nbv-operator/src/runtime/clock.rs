//! Where the shell gets the time from.
//!
//! The core never reads a clock; the shell passes `now` in. Production uses the system
//! clock. Any `Fn() -> DateTime<Utc>` is a clock too: the simulation and the tests
//! pass a closure reading `nbv_testkit::clock::VirtualClock` (the one virtual clock,
//! following tokio's pausable clock), so that the operator and the in-memory cluster
//! read the same virtual time.

use chrono::{DateTime, Utc};

/// A source of the current time.
///
/// # Examples
///
/// A closure is a clock:
///
/// ```
/// use std::sync::Arc;
/// use chrono::{TimeZone, Utc};
/// use nbv_operator::runtime::clock::Clock;
///
/// let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let clock: Arc<dyn Clock> = Arc::new(move || at);
/// assert_eq!(clock.now(), at);
/// ```
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

impl<F> Clock for F
where
    F: Fn() -> DateTime<Utc> + Send + Sync + 'static,
{
    fn now(&self) -> DateTime<Utc> {
        self()
    }
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}
