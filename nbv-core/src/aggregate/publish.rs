//! When to publish an Application's status: rate-limited, never stale.

use chrono::{DateTime, TimeDelta, Utc};

/// At most one publish per Application in this interval.
pub const MIN_INTERVAL: TimeDelta = TimeDelta::seconds(60);

/// Publish at least this often, even with no change, to repair a status that someone
/// else overwrote or that a lost update left stale.
pub const RESYNC_INTERVAL: TimeDelta = TimeDelta::minutes(5);

/// What the shell should do about one Application's status.
///
/// # Examples
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use nbv_core::aggregate::{decide_publish, PublishDecision, MIN_INTERVAL};
///
/// let published = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let now = published + TimeDelta::seconds(10);
/// assert_eq!(
///     decide_publish(Some(published), Some(now), now, true),
///     PublishDecision::At(published + MIN_INTERVAL)
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublishDecision {
    /// Publish now (then record `now` as the last publish).
    Now,
    /// A change is waiting but the last publish is too recent: call again at this time
    /// (the trailing update that makes sure the final state is published).
    At(DateTime<Utc>),
    /// Nothing to publish; call again at `resync_at` for the periodic resync, or sooner
    /// if a change arrives.
    Idle {
        /// When the periodic resync is due.
        resync_at: DateTime<Utc>,
    },
}

/// Decides when to publish one Application's status.
///
/// - `last_publish`: when the status was last published (`None`: never, since start).
/// - `last_change`: when the Application's aggregate last changed, if known.
/// - `pending`: whether the aggregate holds a change not yet published.
///
/// A change is unpublished when `pending` is true **or** `last_change` is later than
/// `last_publish`, so a shell may track either a flag or a timestamp.
///
/// The rules, with [`MIN_INTERVAL`] = 60 s and [`RESYNC_INTERVAL`] = 5 min:
///
/// 1. Never published: [`PublishDecision::Now`].
/// 2. Unpublished change: `Now` if the last publish is at least 60 s old, else
///    [`PublishDecision::At`]`(last_publish + 60 s)`. Changes are never dropped, only
///    delayed, so the final state is always published within 60 s of the last change.
/// 3. No change: `Now` if the last publish is at least 5 min old (resync), else
///    [`PublishDecision::Idle`] until then.
///
/// A `last_publish` later than `now` (the clock stepped back, or it came from another
/// replica whose clock runs ahead) is disregarded, as if never published, so that the
/// policy can never stall. The publish itself is cheap when nothing changed:
/// [`NotebookStatus::application_patch`](super::NotebookStatus::application_patch) is
/// `None` then.
///
/// # Examples
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use nbv_core::aggregate::{decide_publish, PublishDecision, RESYNC_INTERVAL};
///
/// let published = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let now = published + TimeDelta::seconds(90);
/// assert_eq!(decide_publish(Some(published), None, now, true), PublishDecision::Now);
/// assert_eq!(
///     decide_publish(Some(published), None, now, false),
///     PublishDecision::Idle { resync_at: published + RESYNC_INTERVAL }
/// );
/// assert_eq!(decide_publish(None, None, now, false), PublishDecision::Now);
/// ```
pub fn decide_publish(
    last_publish: Option<DateTime<Utc>>,
    last_change: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    pending: bool,
) -> PublishDecision {
    let Some(published) = last_publish.filter(|published| *published <= now) else {
        return PublishDecision::Now;
    };
    let unpublished = pending || last_change.is_some_and(|changed| changed > published);
    let (interval, wait): (TimeDelta, fn(DateTime<Utc>) -> PublishDecision) = if unpublished {
        (MIN_INTERVAL, PublishDecision::At)
    } else {
        (RESYNC_INTERVAL, |resync_at| PublishDecision::Idle {
            resync_at,
        })
    };
    match published.checked_add_signed(interval) {
        Some(due) if due > now => wait(due),
        // Due, or so close to the end of time that it cannot be represented: publish.
        _ => PublishDecision::Now,
    }
}
