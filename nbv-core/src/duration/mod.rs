//! Durations: the two grammars nbv reads and how it writes them.
//!
//! [`parse_duration`] reads durations written as in `spec.timeout`: `30s`, `10m`,
//! `1h30m`, `1.5h`, `250ms`. It is nbv's own reading of a duration: `spec.timeout`
//! ([`crate::pod::timeout_seconds`]), `nbv wait --timeout` and the scenario files of the
//! simulation use it. Its syntax is the CRD's pattern for `spec.timeout`,
//! `^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`: one or more numbers, each with an optional decimal
//! fraction and a unit, without spaces or signs. It is the subset of Go's
//! `time.ParseDuration` that the CRD admits.
//!
//! [`parse_go`] reads all of Go's `time.ParseDuration`, for text that Argo CD reads
//! with Go (a sync window's `duration`): it accepts more, by design. Both read numbers
//! and units with the same scanner. [`format()`] and [`format_go_seconds`] write
//! durations back.

mod format;
mod go;
mod scan;

use std::fmt;
use std::time::Duration;

pub use format::{format, format_go_seconds};
pub use go::{InvalidGoDuration, parse_go};
use scan::{NANOS_PER_HOUR, NANOS_PER_MILLI, NANOS_PER_MINUTE, NANOS_PER_SEC, nanos, number};

/// A string that is not a duration; the message says where and what was expected.
///
/// # Examples
///
/// ```
/// use nbv_core::duration::parse_duration;
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

    /// Whether the text is a duration, only one too long to hold (over `u64::MAX`
    /// seconds).
    pub fn is_too_long(&self) -> bool {
        self.problem == Problem::TooLong
    }

    /// What is wrong, without the text (for a reader with its own message).
    pub fn problem(&self) -> impl fmt::Display + '_ {
        &self.problem
    }

    fn new(text: &str, problem: Problem) -> Self {
        let shown = crate::text::quoted_head(text, Self::MAX_SHOWN_CHARS);
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
/// use nbv_core::duration::parse_duration;
///
/// assert_eq!(parse_duration("1h30m")?, Duration::from_secs(5400));
/// assert_eq!(parse_duration("1.5h")?, Duration::from_secs(5400));
/// assert_eq!(parse_duration("250ms")?, Duration::from_millis(250));
/// assert!(parse_duration("-1s").is_err());
/// assert!(parse_duration("30").is_err());
/// # Ok::<(), nbv_core::duration::InvalidDuration>(())
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, InvalidDuration> {
    parse_exact(text).map(|exact| exact.duration)
}

/// A duration as [`parse_exact`] reads it: to the nanosecond, and whether the text
/// had digits finer than that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exact {
    /// The duration, fractions finer than a nanosecond truncated.
    pub duration: Duration,
    /// Whether a non-zero digit finer than a nanosecond was truncated: the text means
    /// a little more than [`Exact::duration`] (which matters to a reader that rounds
    /// up, as `spec.timeout` does).
    pub finer: bool,
}

/// Parses a duration as [`parse_duration`] does, and tells whether digits finer than
/// a nanosecond were cut.
///
/// # Errors
///
/// As [`parse_duration`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_core::duration::parse_exact;
///
/// let tiny = parse_exact("0.0000000001s")?;
/// assert_eq!((tiny.duration, tiny.finer), (Duration::ZERO, true));
/// assert!(!parse_exact("1.5s")?.finer);
/// # Ok::<(), nbv_core::duration::InvalidDuration>(())
/// ```
pub fn parse_exact(text: &str) -> Result<Exact, InvalidDuration> {
    let fail = |problem| InvalidDuration::new(text, problem);
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return Err(fail(Problem::Empty));
    }
    let mut total: u128 = 0;
    let mut finer = false;
    let mut pos = 0;
    while pos < bytes.len() {
        let number = number(bytes, pos);
        if number.whole.is_empty() {
            let found = char_at(text, pos).unwrap_or('\u{fffd}');
            return Err(fail(Problem::NumberExpected { at: pos, found }));
        }
        if let Some(dot) = number.dot
            && number.fraction.is_empty()
        {
            let at = dot + 1;
            let found = char_at(text, at);
            return Err(fail(Problem::FractionExpected { at, found }));
        }
        pos = number.end;
        let (unit_nanos, unit_len) = match &bytes[pos..] {
            [b'm', b's', ..] => (NANOS_PER_MILLI, 2),
            [b'h', ..] => (NANOS_PER_HOUR, 1),
            [b'm', ..] => (NANOS_PER_MINUTE, 1),
            [b's', ..] => (NANOS_PER_SEC, 1),
            [] => return Err(fail(Problem::UnitExpected { at: pos })),
            _ => {
                let found = char_at(text, pos).unwrap_or('\u{fffd}');
                return Err(fail(Problem::UnknownUnit { at: pos, found }));
            }
        };
        pos += unit_len;
        let (term, cut) = nanos(&number, unit_nanos).ok_or_else(|| fail(Problem::TooLong))?;
        finer |= cut;
        total = total
            .checked_add(term)
            .ok_or_else(|| fail(Problem::TooLong))?;
    }
    let secs = u64::try_from(total / NANOS_PER_SEC).map_err(|_| fail(Problem::TooLong))?;
    // The remainder is below one second, so it fits in u32.
    let subsec = u32::try_from(total % NANOS_PER_SEC).map_err(|_| fail(Problem::TooLong))?;
    Ok(Exact {
        duration: Duration::new(secs, subsec),
        finer,
    })
}

/// The character at byte `pos`, which is always a boundary here: the parser only
/// stops after ASCII bytes.
fn char_at(text: &str, pos: usize) -> Option<char> {
    text.get(pos..).and_then(|rest| rest.chars().next())
}
