//! Durations in the messages of `nbv wait`.

use std::time::Duration;

/// Writes a duration in the syntax [`parse_duration`](nbv_core::duration::parse_duration) reads, for messages: hours,
/// minutes and seconds with a decimal fraction when needed (`1h30m`, `45s`,
/// `0.25s`, `0s`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::duration::parse_duration;
/// use nbv_operator::commands::wait::format_duration;
///
/// assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
/// assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
/// assert_eq!(parse_duration(&format_duration(Duration::from_nanos(7)))?, Duration::from_nanos(7));
/// # Ok::<(), nbv_core::duration::InvalidDuration>(())
/// ```
pub fn format_duration(duration: Duration) -> String {
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
