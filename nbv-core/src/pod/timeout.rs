//! `spec.timeout`: a duration such as `30m`, `1h30m`, `1.5h` or `500ms`.

use std::fmt;

use crate::duration::parse_exact;

/// The timeout of a job that sets none (the CRD's default).
pub const DEFAULT_TIMEOUT_SECONDS: i64 = 30 * 60;

/// Longest timeout string read; the CRD pattern allows any length, but no sensible
/// duration needs more, and a bound keeps the work on hostile input small.
const MAX_TIMEOUT_LEN: usize = 64;

/// The run's deadline in whole seconds, for the Pod's `activeDeadlineSeconds`:
/// `spec.timeout` rounded up, or 30 minutes when it is not set.
///
/// The syntax is the CRD's: one or more `<number><unit>` with a decimal number and a
/// unit `ms`, `s`, `m` or `h`, as in Go's `time.ParseDuration` (`1h30m`, `1.5h`, `90s`),
/// read by [`parse_exact`].
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
        value: crate::text::head_chars(text, MAX_TIMEOUT_LEN).0.to_owned(),
        problem,
    };
    if text.len() > MAX_TIMEOUT_LEN {
        return Err(invalid(TimeoutProblem::TooLong));
    }
    let exact = parse_exact(text).map_err(|e| {
        invalid(if e.is_too_long() {
            TimeoutProblem::TooLarge
        } else {
            TimeoutProblem::Syntax
        })
    })?;
    let whole = exact.duration.as_secs();
    // Rounded up: a deadline is never shorter than the timeout asked for.
    let rounded_up = u128::from(exact.duration.subsec_nanos() > 0 || exact.finer);
    if exact.duration.is_zero() && !exact.finer {
        return Err(invalid(TimeoutProblem::Zero));
    }
    i64::try_from(u128::from(whole) + rounded_up).map_err(|_| invalid(TimeoutProblem::TooLarge))
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
