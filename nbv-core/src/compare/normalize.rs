//! The `normalized` strategy's view of a text: object addresses and timestamps masked,
//! whitespace runs made one space, numbers compared within a relative tolerance.

use std::sync::LazyLock;

use regex_lite::{NoExpand, Regex};

use super::Settings;
use super::markers::{ADDRESS_MARKER, MARKER};

/// Built-in timestamp patterns, applied in this order (each in the subset both
/// engines read alike): ISO 8601 date-times, dates, times of day.
pub const BUILT_IN_TIMESTAMPS: [&str; 3] = [
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+\-][0-9]{2}:?[0-9]{2})?",
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}",
    r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?",
];
/// An object's address in a repr, e.g. `<Foo object at 0x7f3b2c1d9e80>`: `0x` that
/// starts a word (group 1 is what precedes it), so that the `0x` of `12:00:30x4` or
/// `10x400000` is text. No `\b`: the engines disagree on what a word is.
pub const ADDRESS: &str = r"(^|[^0-9A-Za-z_])0x[0-9a-fA-F]{6,16}";
/// A number in text: digits, an optional fraction, an optional exponent. A sign is
/// text: `-0.5` and `-0.50001` are `-` and two close numbers.
pub const NUMBER: &str = r"[0-9]+(?:\.[0-9]+)?(?:[eE][\-+]?[0-9]+)?";
/// The whitespace `normalized` makes one space (ASCII only, as both engines agree).
const WHITESPACE: [char; 6] = [' ', '\t', '\n', '\r', '\u{b}', '\u{c}'];

fn compiled(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

static TIMESTAMPS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    BUILT_IN_TIMESTAMPS
        .iter()
        .filter_map(|p| compiled(p))
        .collect()
});
static ADDRESSES: LazyLock<Option<Regex>> = LazyLock::new(|| compiled(ADDRESS));
static NUMBERS: LazyLock<Option<Regex>> = LazyLock::new(|| compiled(NUMBER));

/// `text` with every timestamp replaced by [`MARKER`]: the built-in patterns, then
/// the custom ones, each over the result of the one before.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::{mask_timestamps, Settings};
///
/// let text = "saved at 2026-01-24T22:30:05.120Z, took 3ms";
/// assert_eq!(mask_timestamps(text, &Settings::default()), "saved at <timestamp>, took 3ms");
/// ```
pub fn mask_timestamps(text: &str, settings: &Settings) -> String {
    let custom = settings.timestamp_patterns.iter().map(|p| p.regex());
    TIMESTAMPS
        .iter()
        .chain(custom)
        .fold(text.to_owned(), |text, regex| {
            regex.replace_all(&text, NoExpand(MARKER)).into_owned()
        })
}

/// `text` as the `normalized` strategy sees it: whitespace runs made one space and
/// trimmed (first, so that a date and a time on two lines still read as one
/// timestamp), then addresses masked, then timestamps when
/// [`Settings::ignore_timestamps`]. The markers hold no whitespace, so doing it twice
/// changes nothing.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::{normalize, Settings};
///
/// let text = "<Model object at 0x7f3b2c1d9e80>\n  loss:\t0.25  \n";
/// assert_eq!(normalize(text, &Settings::default()), "<Model object at 0x<address>> loss: 0.25");
/// // `0x` inside a word is not an address.
/// let glued = "at 12:00:30x400000, 10x4000000";
/// assert_eq!(normalize(glued, &Settings::default()), "at <timestamp>x400000, 10x4000000");
/// ```
pub fn normalize(text: &str, settings: &Settings) -> String {
    let text = text
        .split(WHITESPACE)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let text = match ADDRESSES.as_ref() {
        Some(regex) => regex
            .replace_all(&text, |caps: &regex_lite::Captures| {
                format!("{}{ADDRESS_MARKER}", &caps[1])
            })
            .into_owned(),
        None => text,
    };
    if settings.ignore_timestamps {
        mask_timestamps(&text, settings)
    } else {
        text
    }
}

/// Whether two normalized texts match: the same text between numbers, and numbers
/// that are the same or within `tolerance` of each other, relatively:
/// `|a − b| ≤ tolerance × max(|a|, |b|)`.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::numbers_match;
///
/// assert!(numbers_match("accuracy 0.93001", "accuracy 0.93", 0.0001));
/// assert!(!numbers_match("accuracy 0.95", "accuracy 0.93", 0.0001));
/// assert!(!numbers_match("accuracy 0.93", "loss 0.93", 1.0));
/// ```
pub fn numbers_match(actual: &str, expected: &str, tolerance: f64) -> bool {
    if actual == expected {
        return true;
    }
    let Some(numbers) = NUMBERS.as_ref() else {
        return false;
    };
    let (actual_texts, actual_numbers) = split(numbers, actual);
    let (expected_texts, expected_numbers) = split(numbers, expected);
    actual_texts == expected_texts
        && actual_numbers.len() == expected_numbers.len()
        && actual_numbers
            .iter()
            .zip(&expected_numbers)
            .all(|(a, b)| a == b || close(a, b, tolerance))
}

/// The texts around the numbers of `text`, and the numbers.
fn split<'t>(numbers: &Regex, text: &'t str) -> (Vec<&'t str>, Vec<&'t str>) {
    let mut texts = Vec::new();
    let mut found = Vec::new();
    let mut last = 0;
    for m in numbers.find_iter(text) {
        texts.push(&text[last..m.start()]);
        found.push(m.as_str());
        last = m.end();
    }
    texts.push(&text[last..]);
    (texts, found)
}

fn close(a: &str, b: &str, tolerance: f64) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(a), Ok(b)) => (a - b).abs() <= tolerance * a.abs().max(b.abs()),
        _ => false,
    }
}
