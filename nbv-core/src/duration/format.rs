//! Durations written for people, in the units the parsers read.

use std::time::Duration;

/// Writes a duration in the syntax [`parse_duration`](super::parse_duration) reads:
/// hours, minutes and seconds with a decimal fraction when needed (`1h30m`, `45s`,
/// `0.25s`, `0s`), leaving out the units whose part is zero.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::duration::{format, parse_duration};
///
/// assert_eq!(format(Duration::from_secs(5400)), "1h30m");
/// assert_eq!(format(Duration::from_secs(90)), "1m30s");
/// assert_eq!(format(Duration::from_millis(1500)), "1.5s");
/// assert_eq!(format(Duration::ZERO), "0s");
/// assert_eq!(parse_duration(&format(Duration::from_nanos(7)))?, Duration::from_nanos(7));
/// # Ok::<(), nbv_core::duration::InvalidDuration>(())
/// ```
pub fn format(duration: Duration) -> String {
    let secs = duration.as_secs();
    let nanos = duration.subsec_nanos();
    let (hours, minutes, seconds) = (secs / 3600, secs / 60 % 60, secs % 60);
    let mut text = String::new();
    if hours > 0 {
        text.push_str(&format!("{hours}h"));
    }
    if minutes > 0 {
        text.push_str(&format!("{minutes}m"));
    }
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        text.push_str(&format!("{seconds}.{}s", fraction.trim_end_matches('0')));
    } else if seconds > 0 || text.is_empty() {
        text.push_str(&format!("{seconds}s"));
    }
    text
}

/// Writes whole seconds as Go's `Duration.String` does (`45s`, `10m0s`, `1h0m0s`), the
/// form Kubernetes and Argo CD print durations in.
///
/// # Examples
///
/// ```
/// use nbv_core::duration::format_go_seconds;
///
/// assert_eq!(format_go_seconds(45), "45s");
/// assert_eq!(format_go_seconds(600), "10m0s");
/// assert_eq!(format_go_seconds(3723), "1h2m3s");
/// ```
pub fn format_go_seconds(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{}s", s / 60, s % 60),
        s => format!("{}h{}m{}s", s / 3600, (s % 3600) / 60, s % 60),
    }
}
