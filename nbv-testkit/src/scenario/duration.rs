//! Durations as scenario files write them: `90s`, `2m`, `1h30m`, `500ms`.

use std::time::Duration;

/// The longest duration a scenario may use anywhere (one virtual day). A simulation
/// advances its clock in steps, so the bound keeps the work of a hostile file bounded.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// A duration that is not written as `<number><unit>...` with units `h`, `m`, `s`,
/// `ms`, or that exceeds [`MAX_DURATION`].
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::parse_duration;
///
/// let err = parse_duration("10").unwrap_err();
/// assert_eq!(err.to_string(),
///     "invalid duration \"10\": a unit was expected at byte 2; write e.g. 90s, 2m, 1h30m or 500ms");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {text:?}: {problem}; write e.g. 90s, 2m, 1h30m or 500ms")]
pub struct InvalidDuration {
    /// The text as written.
    pub text: String,
    /// What is wrong with it.
    pub problem: String,
}

/// Parses a duration such as `90s`, `2m`, `1h30m` or `500ms` (`0` alone means zero).
///
/// # Errors
///
/// [`InvalidDuration`] for anything else, and for durations above [`MAX_DURATION`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_testkit::scenario::parse_duration;
///
/// assert_eq!(parse_duration("1h30m")?, Duration::from_secs(5400));
/// assert_eq!(parse_duration("2m5s")?, Duration::from_secs(125));
/// assert_eq!(parse_duration("250ms")?, Duration::from_millis(250));
/// assert!(parse_duration("25h").is_err());
/// # Ok::<(), nbv_testkit::scenario::InvalidDuration>(())
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, InvalidDuration> {
    let invalid = |problem: String| InvalidDuration {
        text: text.to_owned(),
        problem,
    };
    let trimmed = text.trim();
    if trimmed == "0" {
        return Ok(Duration::ZERO);
    }
    // Whole numbers only: a scenario's times are counted in milliseconds at the finest.
    if let Some(at) = trimmed.find('.') {
        return Err(invalid(format!(
            "a fraction at byte {at} (write 1500ms, not 1.5s)"
        )));
    }
    let total = nbv_core::duration::parse_duration(trimmed).map_err(|e| {
        if e.is_too_long() {
            invalid("it is longer than 24h".to_owned())
        } else {
            invalid(e.problem().to_string())
        }
    })?;
    if total > MAX_DURATION {
        return Err(invalid("it is longer than 24h".to_owned()));
    }
    Ok(total)
}

/// Writes a duration the way [`parse_duration`] reads it (`0s`, `45s`, `2m`, `1h30m`),
/// leaving out the units whose part is zero.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_testkit::scenario::{format_duration, parse_duration};
///
/// assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
/// assert_eq!(format_duration(Duration::from_millis(61_500)), "1m1s500ms");
/// assert_eq!(format_duration(Duration::ZERO), "0s");
/// let d = Duration::from_secs(3725);
/// assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
/// ```
pub fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    let millis = duration.subsec_millis();
    // Whole seconds as nbv writes them everywhere; the rest in `ms`, since a scenario's
    // times take no fractions.
    let mut out = if secs > 0 {
        nbv_core::duration::format(Duration::from_secs(secs))
    } else {
        String::new()
    };
    if millis > 0 {
        out.push_str(&format!("{millis}ms"));
    }
    if out.is_empty() {
        out.push_str("0s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_what_it_cannot_read() {
        for bad in [
            "",
            " ",
            "s",
            "1x",
            "1.5s",
            "-1s",
            "1h-",
            "m5",
            "99999999999999999999s",
            "25h",
            "1h 30m",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reads_every_unit() {
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("3m"), Ok(Duration::from_secs(180)));
        assert_eq!(parse_duration(" 7s "), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        assert_eq!(parse_duration("24h"), Ok(MAX_DURATION));
    }

    #[test]
    fn writes_only_the_parts_that_are_not_zero() {
        assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(format_duration(Duration::from_millis(3_600_007)), "1h7ms");
        assert_eq!(format_duration(Duration::from_secs(125)), "2m5s");
        assert_eq!(format_duration(Duration::from_nanos(999_999)), "0s");
    }
}
