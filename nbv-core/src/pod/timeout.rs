//! `spec.timeout`: a duration such as `30m`, `1h30m`, `1.5h` or `500ms`.

use std::fmt;

/// The timeout of a job that sets none (the CRD's default).
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 30 * 60;

/// Longest timeout string read; the CRD pattern allows any length, but no sensible
/// duration needs more, and a bound keeps the work on hostile input small.
const MAX_TIMEOUT_LEN: usize = 64;

/// Attoseconds per unit: fine enough that every fraction the CRD pattern can express
/// with up to 15 decimals is exact (a millisecond is 10¹⁵ attoseconds).
const ATTOS_PER_SECOND: u128 = 1_000_000_000_000_000_000;

/// The run's deadline in whole seconds, for the Pod's `activeDeadlineSeconds`:
/// `spec.timeout` rounded up, or 30 minutes when it is not set.
///
/// The syntax is the CRD's: one or more `<number><unit>` with a decimal number and a
/// unit `ms`, `s`, `m` or `h`, as in Go's `time.ParseDuration` (`1h30m`, `1.5h`, `90s`).
///
/// # Examples
///
/// ```
/// use nbv_core::pod::timeout_seconds;
///
/// assert_eq!(timeout_seconds(None), Ok(1800));
/// assert_eq!(timeout_seconds(Some("1h30m")), Ok(5400));
/// assert_eq!(timeout_seconds(Some("1.5h")), Ok(5400));
/// assert_eq!(timeout_seconds(Some("500ms")), Ok(1));
/// assert!(timeout_seconds(Some("30 minutes")).is_err());
/// ```
///
/// # Errors
///
/// [`InvalidTimeout`] when the value does not follow the syntax, is zero, or does not
/// fit `activeDeadlineSeconds`.
pub fn timeout_seconds(timeout: Option<&str>) -> Result<i64, InvalidTimeout> {
    let Some(text) = timeout else {
        return Ok(DEFAULT_TIMEOUT_SECONDS);
    };
    let invalid = |problem| InvalidTimeout {
        value: text.chars().take(MAX_TIMEOUT_LEN).collect(),
        problem,
    };
    if text.len() > MAX_TIMEOUT_LEN {
        return Err(invalid(TimeoutProblem::TooLong));
    }
    let mut rest = text;
    if rest.is_empty() {
        return Err(invalid(TimeoutProblem::Syntax));
    }
    let mut total: u128 = 0;
    while !rest.is_empty() {
        let (attos, after) = component(rest).ok_or_else(|| invalid(TimeoutProblem::Syntax))?;
        total = total
            .checked_add(attos)
            .ok_or_else(|| invalid(TimeoutProblem::TooLarge))?;
        rest = after;
    }
    if total == 0 {
        return Err(invalid(TimeoutProblem::Zero));
    }
    let seconds = total.div_ceil(ATTOS_PER_SECOND);
    i64::try_from(seconds).map_err(|_| invalid(TimeoutProblem::TooLarge))
}

/// One `<number><unit>` at the start of `text`: its length in attoseconds (fractions
/// beyond attoseconds rounded up) and the rest of the text.
fn component(text: &str) -> Option<(u128, &str)> {
    let int_len = text.bytes().take_while(u8::is_ascii_digit).count();
    let (int_digits, after_int) = text.split_at(int_len);
    let (frac_digits, after_number) = match after_int.strip_prefix('.') {
        Some(after_dot) => {
            let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
            if frac_len == 0 {
                return None;
            }
            after_dot.split_at(frac_len)
        }
        None => ("", after_int),
    };
    if int_digits.is_empty() {
        return None;
    }
    // "ms" before "m", or "5ms" would read as five minutes and a stray "s".
    let (unit, rest) = [
        ("ms", ATTOS_PER_SECOND / 1000),
        ("s", ATTOS_PER_SECOND),
        ("m", 60 * ATTOS_PER_SECOND),
        ("h", 3600 * ATTOS_PER_SECOND),
    ]
    .into_iter()
    .find_map(|(name, attos)| after_number.strip_prefix(name).map(|rest| (attos, rest)))?;

    // With at most 64 characters, the integer part has at most 62 digits, more than a
    // u128 holds: saturate, and let the total report that it is too large.
    let int: u128 = int_digits.parse().unwrap_or(u128::MAX);
    let mut attos = int.saturating_mul(unit);
    let mut scale = unit;
    let mut remainder = false;
    for digit in frac_digits.bytes().map(|b| u128::from(b - b'0')) {
        if scale >= 10 {
            scale /= 10;
            attos = attos.saturating_add(digit * scale);
        } else {
            remainder |= digit != 0;
        }
    }
    if remainder {
        attos = attos.saturating_add(1);
    }
    Some((attos, rest))
}

/// A `spec.timeout` that cannot become the Pod's deadline.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::timeout_seconds;
///
/// let err = timeout_seconds(Some("0s")).unwrap_err();
/// assert_eq!(err.to_string(),
///     "spec.timeout \"0s\" is zero; set a positive duration such as \"30m\", \"1h30m\" or \"90s\"");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "spec.timeout {value:?} {problem}; set a positive duration such as \"30m\", \"1h30m\" or \"90s\""
)]
pub struct InvalidTimeout {
    /// The value (its first 64 characters).
    pub value: String,
    /// What is wrong with it.
    pub problem: TimeoutProblem,
}

/// What is wrong with a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutProblem {
    /// It does not match `^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`.
    Syntax,
    /// It is zero: the Pod would be stopped at once.
    Zero,
    /// It does not fit `activeDeadlineSeconds` (a 64-bit number of seconds).
    TooLarge,
    /// It is longer than 64 characters.
    TooLong,
}

impl fmt::Display for TimeoutProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutProblem::Syntax => {
                "is not a duration: write numbers with a unit ms, s, m or h (pattern ^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$)"
            }
            TimeoutProblem::Zero => "is zero",
            TimeoutProblem::TooLarge => "is too large",
            TimeoutProblem::TooLong => "is longer than 64 characters",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_up_to_whole_seconds() {
        for (text, seconds) in [
            ("30m", 1800),
            ("1h30m", 5400),
            ("90s", 90),
            ("1.5h", 5400),
            ("500ms", 1),
            ("1000ms", 1),
            ("1001ms", 2),
            ("0.001ms", 1),
            ("2h", 7200),
            ("1m0.5s", 61),
            ("0.000000000000000001s", 1),
            ("0.0000000000000000001s", 1),
            ("00010s", 10),
        ] {
            assert_eq!(timeout_seconds(Some(text)), Ok(seconds), "{text}");
        }
    }

    #[test]
    fn what_the_pattern_rejects_is_rejected() {
        for text in [
            "", "30", "m", "1.h", ".5h", "1h 30m", "-1h", "+1h", "1d", "1us", "1H", "1hm", "30mm",
        ] {
            let err = timeout_seconds(Some(text)).unwrap_err();
            assert!(
                matches!(err.problem, TimeoutProblem::Syntax),
                "{text}: {err}"
            );
        }
        assert_eq!(
            timeout_seconds(Some("0h0m0.0s")).unwrap_err().problem,
            TimeoutProblem::Zero
        );
        assert_eq!(
            timeout_seconds(Some(&format!("{}h", "9".repeat(40))))
                .unwrap_err()
                .problem,
            TimeoutProblem::TooLarge
        );
        assert_eq!(
            timeout_seconds(Some(&"1s".repeat(40))).unwrap_err().problem,
            TimeoutProblem::TooLong
        );
    }
}
