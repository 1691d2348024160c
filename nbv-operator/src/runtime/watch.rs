//! How every watch of nbv is configured.
//!
//! kube's watcher replaces a watch that stays silent for its timeout plus 5 s. With
//! the API server's default (290 s), a watch whose connection stalled (half-open, a
//! proxy that stopped forwarding, a link that drops every packet) left nbv blind to
//! every change of its kind for about five minutes: jobs that ended were not acted on,
//! and said nothing. [`config`] asks the API server to end each watch after
//! [`WATCH_TIMEOUT_SECONDS`], so a silent one is given up within about a minute. The
//! next watch starts from the last resourceVersion seen (bookmarks keep it fresh), so
//! this costs one WATCH request per kind and minute, and no LIST.

use kube::runtime::watcher;

/// How long the API server keeps one watch open before nbv starts the next.
pub const WATCH_TIMEOUT_SECONDS: u32 = 60;

/// The watcher configuration of every watch of nbv.
///
/// # Examples
///
/// ```
/// use nbv_operator::runtime::watch::{WATCH_TIMEOUT_SECONDS, config};
///
/// assert_eq!(config().timeout, Some(WATCH_TIMEOUT_SECONDS));
/// assert!(config().bookmarks);
/// ```
pub fn config() -> watcher::Config {
    watcher::Config::default().timeout(WATCH_TIMEOUT_SECONDS)
}
