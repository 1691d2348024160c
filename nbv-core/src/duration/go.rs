//! Go's `time.ParseDuration`, the grammar of an Argo CD sync window's `duration`.
//!
//! It is wider than `spec.timeout`'s on purpose, because Argo CD reads it with Go: a
//! sign, `0` without a unit, `ns`/`us`/`µs` units and numbers without digits on one
//! side of the point (`.5s`, `1.s`).

use super::scan::{
    NANOS_PER_HOUR, NANOS_PER_MICRO, NANOS_PER_MILLI, NANOS_PER_MINUTE, NANOS_PER_SEC, nanos,
    number,
};

/// The units Go reads, in nanoseconds (`µs` is written with either micro sign).
const UNITS: [(&str, u128); 8] = [
    ("ns", 1),
    ("us", NANOS_PER_MICRO),
    ("µs", NANOS_PER_MICRO),
    ("μs", NANOS_PER_MICRO),
    ("ms", NANOS_PER_MILLI),
    ("s", NANOS_PER_SEC),
    ("m", NANOS_PER_MINUTE),
    ("h", NANOS_PER_HOUR),
];

/// A text that Go's `time.ParseDuration` rejects (or a duration beyond ±292 years,
/// which Go cannot hold either).
///
/// # Examples
///
/// ```
/// use nbv_core::duration::parse_go;
///
/// let err = parse_go("1d").unwrap_err();
/// assert_eq!(err.text(), "1d");
/// assert_eq!(
///     err.to_string(),
///     "\"1d\" is not a Go duration (for example \"1h\", \"90m\" or \"1h30m\")"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a Go duration (for example \"1h\", \"90m\" or \"1h30m\")")]
pub struct InvalidGoDuration {
    text: String,
}

impl InvalidGoDuration {
    /// The text as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text as written, for an error of the caller's own.
    pub fn into_text(self) -> String {
        self.text
    }
}

/// Parses a Go duration (`time.ParseDuration`): an optional sign, then one or more
/// decimal numbers, each with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`); `0` alone
/// needs no unit. Fractions finer than a nanosecond are truncated.
///
/// # Errors
///
/// [`InvalidGoDuration`] for anything else, and for a duration beyond ±292 years.
///
/// # Examples
///
/// ```
/// use chrono::Duration;
/// use nbv_core::duration::{InvalidGoDuration, parse_go};
///
/// assert_eq!(parse_go("1h30m")?, Duration::minutes(90));
/// assert_eq!(parse_go("1.5h")?, Duration::minutes(90));
/// assert_eq!(parse_go("-2m")?, Duration::minutes(-2));
/// assert!(parse_go("1d").is_err());
/// assert!(parse_go("").is_err());
/// # Ok::<(), InvalidGoDuration>(())
/// ```
pub fn parse_go(text: &str) -> Result<chrono::Duration, InvalidGoDuration> {
    let fail = || InvalidGoDuration {
        text: text.to_owned(),
    };
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return Err(fail());
    }
    let bytes = rest.as_bytes();
    let mut total: u128 = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let number = number(bytes, pos);
        if number.whole.is_empty() && number.fraction.is_empty() {
            return Err(fail());
        }
        // Go's unit is everything up to the next digit or point.
        let unit_len = rest[number.end..]
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len() - number.end);
        let unit = &rest[number.end..number.end + unit_len];
        let (_, unit_nanos) = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .ok_or_else(fail)?;
        pos = number.end + unit_len;
        let (term, _) = nanos(&number, *unit_nanos).ok_or_else(fail)?;
        total = total.checked_add(term).ok_or_else(fail)?;
        if i64::try_from(total).is_err() {
            return Err(fail());
        }
    }
    // At most i64::MAX by the check above, so both signs fit.
    let nanos = i64::try_from(total).map_err(|_| fail())?;
    Ok(chrono::Duration::nanoseconds(if negative {
        -nanos
    } else {
        nanos
    }))
}
