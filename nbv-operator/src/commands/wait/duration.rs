//! Durations written as in `spec.timeout`: `30s`, `10m`, `1h30m`, `1.5h`, `250ms`.
//!
//! The syntax is the CRD's pattern for `spec.timeout`, `^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`:
//! one or more numbers, each with an optional decimal fraction and a unit, without
//! spaces or signs. It is the subset of Go's `time.ParseDuration` that the CRD admits.

use std::fmt;
use std::time::Duration;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// A string that is not a duration; the message says where and what was expected.
///
/// # Examples
///
/// ```
/// use nbv_operator::commands::wait::parse_duration;
///
/// let err = parse_duration("10 m").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid duration \"10 m\": unknown unit ' ' at byte 2; write numbers each followed \
///      by a unit (h, m, s or ms) without spaces, such as \"30s\", \"10m\" or \"1h30m\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid duration {shown}: {problem}; write numbers each followed by a unit (h, m, s or ms) \
     without spaces, such as \"30s\", \"10m\" or \"1h30m\""
)]
pub struct InvalidDuration {
    shown: String,
    problem: Problem,
}

impl InvalidDuration {
    /// How many characters of the offending text an error keeps.
    pub const MAX_SHOWN_CHARS: usize = 64;

    fn new(text: &str, problem: Problem) -> Self {
        let mut chars = text.chars();
        let head: String = chars.by_ref().take(Self::MAX_SHOWN_CHARS).collect();
        let shown = if chars.next().is_some() {
            format!("{head:?} (cut; {} bytes in all)", text.len())
        } else {
            format!("{head:?}")
        };
        InvalidDuration { shown, problem }
    }
}

/// What is wrong with a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    Empty,
    NumberExpected { at: usize, found: char },
    FractionExpected { at: usize, found: Option<char> },
    UnitExpected { at: usize },
    UnknownUnit { at: usize, found: char },
    TooLong,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Empty => f.write_str("it is empty"),
            Problem::NumberExpected { at, found } => {
                write!(f, "a number was expected at byte {at}, not {found:?}")
            }
            Problem::FractionExpected {
                at,
                found: Some(found),
            } => write!(
                f,
                "digits were expected after the decimal point at byte {at}, not {found:?}"
            ),
            Problem::FractionExpected { at, found: None } => {
                write!(
                    f,
                    "digits were expected after the decimal point at byte {at}"
                )
            }
            Problem::UnitExpected { at } => write!(f, "a unit was expected at byte {at}"),
            Problem::UnknownUnit { at, found } => write!(f, "unknown unit {found:?} at byte {at}"),
            Problem::TooLong => write!(f, "it is longer than {} seconds", u64::MAX),
        }
    }
}

/// Parses a duration such as `30s`, `10m`, `1h30m`, `1.5h` or `250ms`.
///
/// Fractions finer than a nanosecond are truncated. Zero (`0s`) is a valid duration.
/// The work is linear in the length of the text.
///
/// # Errors
///
/// [`InvalidDuration`] for anything outside the syntax above, or a total beyond
/// `u64::MAX` seconds.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_operator::commands::wait::parse_duration;
///
/// assert_eq!(parse_duration("1h30m")?, Duration::from_secs(5400));
/// assert_eq!(parse_duration("1.5h")?, Duration::from_secs(5400));
/// assert_eq!(parse_duration("250ms")?, Duration::from_millis(250));
/// assert!(parse_duration("-1s").is_err());
/// assert!(parse_duration("30").is_err());
/// # Ok::<(), nbv_operator::commands::wait::InvalidDuration>(())
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, InvalidDuration> {
    let fail = |problem| InvalidDuration::new(text, problem);
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Err(fail(Problem::Empty));
    }
    let mut total: u128 = 0;
    let mut pos = 0;
    while pos < bytes.len() {
        let whole_start = pos;
        pos += digits(&bytes[pos..]);
        if pos == whole_start {
            let found = char_at(text, pos).unwrap_or('\u{fffd}');
            return Err(fail(Problem::NumberExpected { at: pos, found }));
        }
        let whole = &bytes[whole_start..pos];
        let mut fraction: &[u8] = &[];
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            let start = pos;
            pos += digits(&bytes[pos..]);
            if pos == start {
                let found = char_at(text, pos);
                return Err(fail(Problem::FractionExpected { at: pos, found }));
            }
            fraction = &bytes[start..pos];
        }
        let (unit_nanos, unit_len) = match &bytes[pos..] {
            [b'm', b's', ..] => (1_000_000, 2),
            [b'h', ..] => (3600 * NANOS_PER_SEC, 1),
            [b'm', ..] => (60 * NANOS_PER_SEC, 1),
            [b's', ..] => (NANOS_PER_SEC, 1),
            [] => return Err(fail(Problem::UnitExpected { at: pos })),
            _ => {
                let found = char_at(text, pos).unwrap_or('\u{fffd}');
                return Err(fail(Problem::UnknownUnit { at: pos, found }));
            }
        };
        pos += unit_len;
        let term = amount(whole, fraction, unit_nanos).ok_or_else(|| fail(Problem::TooLong))?;
        total = total
            .checked_add(term)
            .ok_or_else(|| fail(Problem::TooLong))?;
    }
    let secs = u64::try_from(total / NANOS_PER_SEC).map_err(|_| fail(Problem::TooLong))?;
    // The remainder is below one second, so it fits in u32.
    let nanos = u32::try_from(total % NANOS_PER_SEC).map_err(|_| fail(Problem::TooLong))?;
    Ok(Duration::new(secs, nanos))
}

/// The character at byte `pos`, which is always a boundary here: the parser only
/// stops after ASCII bytes.
fn char_at(text: &str, pos: usize) -> Option<char> {
    text.get(pos..).and_then(|rest| rest.chars().next())
}

/// How many ASCII digits `bytes` starts with.
fn digits(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// `whole.fraction` units in nanoseconds, or `None` on overflow. The fraction is
/// truncated to whole nanoseconds: each digit is worth a tenth of the previous one.
fn amount(whole: &[u8], fraction: &[u8], unit_nanos: u128) -> Option<u128> {
    let mut number: u128 = 0;
    for digit in whole {
        number = number
            .checked_mul(10)?
            .checked_add(u128::from(digit - b'0'))?;
    }
    let mut nanos = number.checked_mul(unit_nanos)?;
    let mut place = unit_nanos;
    for digit in fraction {
        place /= 10;
        if place == 0 {
            break;
        }
        nanos = nanos.checked_add(u128::from(digit - b'0') * place)?;
    }
    Some(nanos)
}

/// Writes a duration in the syntax [`parse_duration`] reads, for messages: hours,
/// minutes and seconds with a decimal fraction when needed (`1h30m`, `45s`,
/// `0.25s`, `0s`).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_operator::commands::wait::{format_duration, parse_duration};
///
/// assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
/// assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
/// assert_eq!(parse_duration(&format_duration(Duration::from_nanos(7)))?, Duration::from_nanos(7));
/// # Ok::<(), nbv_operator::commands::wait::InvalidDuration>(())
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
