//! The parts both duration grammars share: units in nanoseconds, the decimal number
//! before a unit, and its worth to the nanosecond.

pub(super) const NANOS_PER_SEC: u128 = 1_000_000_000;
pub(super) const NANOS_PER_MILLI: u128 = 1_000_000;
pub(super) const NANOS_PER_MICRO: u128 = 1_000;
pub(super) const NANOS_PER_MINUTE: u128 = 60 * NANOS_PER_SEC;
pub(super) const NANOS_PER_HOUR: u128 = 3600 * NANOS_PER_SEC;

/// A decimal number as written before a unit: `whole[.fraction]`, either part possibly
/// empty (each grammar says which it allows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Number<'a> {
    /// The digits before the decimal point.
    pub whole: &'a [u8],
    /// Where the decimal point is, when there is one.
    pub dot: Option<usize>,
    /// The digits after the decimal point.
    pub fraction: &'a [u8],
    /// The byte after the number.
    pub end: usize,
}

/// Reads the number that starts at byte `pos` of `bytes`: ASCII digits, then an
/// optional `.` and more digits.
pub(super) fn number(bytes: &[u8], pos: usize) -> Number<'_> {
    let whole_end = pos + digits(&bytes[pos..]);
    let whole = &bytes[pos..whole_end];
    if bytes.get(whole_end) != Some(&b'.') {
        return Number {
            whole,
            dot: None,
            fraction: &[],
            end: whole_end,
        };
    }
    let start = whole_end + 1;
    let end = start + digits(&bytes[start..]);
    Number {
        whole,
        dot: Some(whole_end),
        fraction: &bytes[start..end],
        end,
    }
}

/// How many ASCII digits `bytes` starts with.
fn digits(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// `whole.fraction` units in nanoseconds, or `None` on overflow, and whether a non-zero
/// digit finer than a nanosecond was dropped. The fraction is truncated to whole
/// nanoseconds: each digit is worth a tenth of the previous one.
pub(super) fn nanos(number: &Number<'_>, unit_nanos: u128) -> Option<(u128, bool)> {
    let mut whole: u128 = 0;
    for digit in number.whole {
        whole = whole
            .checked_mul(10)?
            .checked_add(u128::from(digit - b'0'))?;
    }
    let mut nanos = whole.checked_mul(unit_nanos)?;
    let mut place = unit_nanos;
    let mut cut = false;
    for digit in number.fraction {
        place /= 10;
        if place == 0 {
            cut |= *digit != b'0';
            continue;
        }
        nanos = nanos.checked_add(u128::from(digit - b'0') * place)?;
    }
    Some((nanos, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_digits_with_an_optional_fraction() {
        let n = number(b"12.50s", 0);
        assert_eq!(
            (n.whole, n.dot, n.fraction, n.end),
            (&b"12"[..], Some(2), &b"50"[..], 5)
        );
        let n = number(b"1h.5s", 2);
        assert_eq!(
            (n.whole, n.dot, n.fraction, n.end),
            (&b""[..], Some(2), &b"5"[..], 4)
        );
        let n = number(b"h", 0);
        assert_eq!((n.whole, n.dot, n.end), (&b""[..], None, 0));
    }

    #[test]
    fn worth_is_exact_to_the_nanosecond_and_says_what_was_dropped() {
        let n = number(b"1.5", 0);
        assert_eq!(
            nanos(&n, NANOS_PER_HOUR),
            Some((5400 * NANOS_PER_SEC, false))
        );
        let n = number(b"0.0000000015", 0);
        assert_eq!(nanos(&n, NANOS_PER_SEC), Some((1, true)));
        let n = number(b"0.0000000010", 0);
        assert_eq!(nanos(&n, NANOS_PER_SEC), Some((1, false)));
        let huge = "9".repeat(40);
        assert_eq!(nanos(&number(huge.as_bytes(), 0), 1), None);
    }
}
