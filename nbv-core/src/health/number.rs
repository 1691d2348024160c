//! How a Lua VM turns a number into text when a script concatenates it.
//!
//! The object a health script reads comes from JSON, so every number in it is a
//! float64, even `retryCount: 3`. Concatenating a number prints it, and the two VMs
//! that matter print differently:
//!
//! - gopher-lua (Argo CD) prints a value that survives a round trip through `int64` as
//!   an integer (Go `fmt.Sprint(int64(n))`: `3`, `1000000000000000`), anything else with
//!   Go's shortest representation (`fmt.Sprint(float64(n))`: `0.1`, `1.2345675e+06`,
//!   `1e+100`);
//! - C Lua 5.1 as released (nbv-lua's embedded VM swaps in gopher-lua's rule) prints
//!   `sprintf("%.14g")` (`LUAI_NUMFMT`): `3`, `1e+15`, `1234567.5`, `0.33333333333333`.
//!
//! They agree on every integer below 10^14 in magnitude and on short decimals such as
//! `1.5`; they differ on large integers, on numbers with more than 14 significant
//! digits, on non-integers of 10^6 and more, and on `-0` (`0` versus `-0`).

/// The number-to-text conversion of a Lua VM.
///
/// # Examples
///
/// ```
/// use nbv_core::health::NumberFormat;
///
/// assert_eq!(NumberFormat::GopherLua.format(3.0), "3");
/// assert_eq!(NumberFormat::Lua51.format(3.0), "3");
/// assert_eq!(NumberFormat::GopherLua.format(1e15), "1000000000000000");
/// assert_eq!(NumberFormat::Lua51.format(1e15), "1e+15");
/// assert_eq!(NumberFormat::GopherLua.format(1234567.5), "1.2345675e+06");
/// assert_eq!(NumberFormat::Lua51.format(1234567.5), "1234567.5");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumberFormat {
    /// gopher-lua, the VM of Argo CD (on amd64: see [`NumberFormat::format`]).
    GopherLua,
    /// C Lua 5.1: `%.14g` with glibc's spelling of infinities and NaN.
    Lua51,
}

impl NumberFormat {
    /// The text of `n` in a concatenation.
    ///
    /// For [`GopherLua`](NumberFormat::GopherLua), whether `n` is "an integer" is
    /// gopher-lua's test `float64(int64(n)) == n`. Go's conversion of an out-of-range
    /// float to `int64` depends on the processor; this follows amd64, where it yields
    /// the minimum `int64`. The only value that prints differently on arm64 is 2^63
    /// (`9.223372036854776e+18` here, `9223372036854775807` there).
    pub fn format(self, n: f64) -> String {
        match self {
            NumberFormat::GopherLua => gopher_lua(n),
            NumberFormat::Lua51 => lua51(n),
        }
    }
}

/// gopher-lua's `LNumber.String()`.
fn gopher_lua(n: f64) -> String {
    let truncated = go_amd64_int64(n);
    // gopher-lua's `isInteger`: the value survives the trip through int64.
    if truncated as f64 == n {
        truncated.to_string()
    } else {
        go_shortest(n)
    }
}

/// Go's `int64(f)` on amd64: truncation toward zero, and the minimum `int64` for NaN and
/// for values out of range (the "integer indefinite" result of `CVTTSD2SQ`).
fn go_amd64_int64(n: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if n.is_nan() || !(-TWO_POW_63..TWO_POW_63).contains(&n) {
        i64::MIN
    } else {
        // In range by the test above, so `as` truncates without saturating.
        n as i64
    }
}

/// Go's `fmt.Sprint(float64)`: `strconv.FormatFloat(n, 'g', -1, 64)`, that is the
/// shortest digits that read back as `n`, in exponent form when the decimal exponent is
/// below -4 or at least 6 (Go uses 6 as the precision of that decision for the shortest
/// form); `+Inf`, `-Inf` and `NaN` as `fmt` spells them.
fn go_shortest(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    // Rust's `{:e}` prints the shortest digits that round-trip, like Go's shortest mode.
    let (digits, exponent) = decimal_digits(&format!("{:e}", n.abs()));
    let sign = if n.is_sign_negative() { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        format!("{sign}{}", exponent_form(&digits, exponent))
    } else {
        format!("{sign}{}", positional_form(&digits, exponent))
    }
}

/// C Lua 5.1's `lua_number2str`: `sprintf("%.14g")`.
fn lua51(n: f64) -> String {
    if n.is_nan() {
        // glibc prints the sign of a NaN.
        return if n.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if n == 0.0 {
        return if n.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // 14 significant digits, correctly rounded (ties to even, like glibc); the exponent
    // is the one after rounding, which is what `%g` bases its choice on.
    let (digits, exponent) = decimal_digits(&format!("{:.13e}", n.abs()));
    let digits = digits.trim_end_matches('0');
    let sign = if n.is_sign_negative() { "-" } else { "" };
    if !(-4..14).contains(&exponent) {
        format!("{sign}{}", exponent_form(digits, exponent))
    } else {
        format!("{sign}{}", positional_form(digits, exponent))
    }
}

/// Splits Rust's `d.ddde±x` into the digits without the point and the exponent.
fn decimal_digits(scientific: &str) -> (String, i32) {
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let digits = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exponent.parse().unwrap_or(0))
}

/// `d.ddde±xx`: at least two exponent digits, as both C and Go print them.
fn exponent_form(digits: &str, exponent: i32) -> String {
    let (first, rest) = digits.split_at(digits.len().min(1));
    let point = if rest.is_empty() { "" } else { "." };
    let exponent_sign = if exponent < 0 { '-' } else { '+' };
    format!(
        "{first}{point}{rest}e{exponent_sign}{:02}",
        exponent.unsigned_abs()
    )
}

/// `ddd.ddd` for a value `0.digits × 10^(exponent + 1)`, without trailing zeros after
/// the point.
fn positional_form(digits: &str, exponent: i32) -> String {
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let integer_len = exponent.saturating_add(1);
    if integer_len <= 0 {
        let zeros = "0".repeat(integer_len.unsigned_abs() as usize);
        return format!("0.{zeros}{digits}");
    }
    let integer_len = integer_len.unsigned_abs() as usize;
    if digits.len() <= integer_len {
        let zeros = "0".repeat(integer_len - digits.len());
        format!("{digits}{zeros}")
    } else {
        let (integer, fraction) = digits.split_at(integer_len);
        format!("{integer}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gopher_lua_prints_integers_in_full_and_others_like_go() {
        let cases = [
            (3.0, "3"),
            (-0.0, "0"),
            (1e15, "1000000000000000"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (-9_223_372_036_854_775_808.0, "-9223372036854775808"),
            (9_223_372_036_854_775_808.0, "9.223372036854776e+18"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (123_456.5, "123456.5"),
            (1_234_567.5, "1.2345675e+06"),
            (0.0001, "0.0001"),
            (0.000_012_5, "1.25e-05"),
            (1.0 / 3.0, "0.3333333333333333"),
            (1e100, "1e+100"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
        ];
        for (n, text) in cases {
            assert_eq!(NumberFormat::GopherLua.format(n), text, "{n:e}");
        }
    }

    #[test]
    fn lua51_prints_fourteen_significant_digits() {
        let cases = [
            (3.0, "3"),
            (-0.0, "-0"),
            (1e14, "1e+14"),
            (99_999_999_999_999.0, "99999999999999"),
            (123_456_789_012_345.0, "1.2345678901234e+14"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (1.0 / 3.0, "0.33333333333333"),
            (1e100, "1e+100"),
            (-1e15, "-1e+15"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (n, text) in cases {
            assert_eq!(NumberFormat::Lua51.format(n), text, "{n:e}");
        }
    }
}
