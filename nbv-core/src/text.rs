//! Cutting text to a size, on a character boundary so the result stays valid UTF-8.
//!
//! Kubernetes bounds messages in bytes ([`truncate`], [`tail`]); a message that repeats
//! a value from a user bounds it in characters ([`truncate_chars`], [`head_chars`],
//! [`quoted_head`]). Each caller keeps its own limit and marker as named constants.

use std::borrow::Cow;

/// `text` cut to at most `max_bytes` bytes on a character boundary, ending in `marker`
/// when it was cut (the marker counts towards the budget). When no character fits
/// before the marker the result is empty: a marker alone tells nothing.
///
/// # Examples
///
/// ```
/// use nbv_core::text::truncate;
///
/// assert_eq!(truncate("cell 3 failed", 64, "…"), "cell 3 failed");
/// assert_eq!(truncate("cell 3 failed", 9, "..."), "cell 3...");
/// // "é" is two bytes: the cut never splits it.
/// assert_eq!(truncate("ééé", 5, "."), "éé.");
/// assert_eq!(truncate("ééé", 4, "."), "é.");
/// ```
pub fn truncate<'a>(text: &'a str, max_bytes: usize, marker: &str) -> Cow<'a, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let mut end = max_bytes.saturating_sub(marker.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        return Cow::Borrowed("");
    }
    Cow::Owned(format!("{}{marker}", &text[..end]))
}

/// Ends a text of a report that [`clean`] cut.
const CLEAN_CUT_MARKER: &str = "...";

/// `text` redacted ([`redact_secrets`](crate::redact::redact_secrets)), with control
/// characters but newline and tab made spaces, cut to `limit` UTF-8 bytes (ending in
/// [`CLEAN_CUT_MARKER`] when cut). `limit` is at least 3. Redacted before it is cut: a
/// secret cut in half no longer has a shape the redaction knows.
pub(crate) fn clean(text: &str, limit: usize) -> String {
    let text: String = crate::redact::redact_secrets(text)
        .chars()
        .map(|c| {
            if c < ' ' && c != '\n' && c != '\t' {
                ' '
            } else {
                c
            }
        })
        .collect();
    truncate(&text, limit, CLEAN_CUT_MARKER).into_owned()
}

/// The end of `text` within `max_bytes` bytes, starting on a character boundary (so it
/// may be a little shorter): for output where only the last lines matter.
///
/// # Examples
///
/// ```
/// use nbv_core::text::tail;
///
/// assert_eq!(tail("step 1\nstep 2", 6), "step 2");
/// assert_eq!(tail("short", 64), "short");
/// // "é" is two bytes: the cut never splits it.
/// assert_eq!(tail("aéé", 3), "é");
/// ```
pub fn tail(text: &str, max_bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(max_bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The first `max_chars` characters of `text`, and whether any were left out.
///
/// # Examples
///
/// ```
/// use nbv_core::text::head_chars;
///
/// assert_eq!(head_chars("née", 2), ("né", true));
/// assert_eq!(head_chars("née", 3), ("née", false));
/// ```
pub fn head_chars(text: &str, max_chars: usize) -> (&str, bool) {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// `text` cut to its first `max_chars` characters, followed by `marker` when it was
/// cut (the marker does not count towards the limit).
///
/// # Examples
///
/// ```
/// use nbv_core::text::truncate_chars;
///
/// assert_eq!(truncate_chars("abcdef", 3, "…"), "abc…");
/// assert_eq!(truncate_chars("abc", 3, "…"), "abc");
/// ```
pub fn truncate_chars<'a>(text: &'a str, max_chars: usize, marker: &str) -> Cow<'a, str> {
    match head_chars(text, max_chars) {
        (head, true) => Cow::Owned(format!("{head}{marker}")),
        (whole, false) => Cow::Borrowed(whole),
    }
}

/// A value as an error message repeats it: quoted and escaped as Rust's `{:?}` does (one
/// line, no terminal escapes), cut to `max_chars` characters, and when cut followed by
/// its whole length, so that a huge value cannot bury the message.
///
/// # Examples
///
/// ```
/// use nbv_core::text::quoted_head;
///
/// assert_eq!(quoted_head("1h\n", 64), r#""1h\n""#);
/// assert_eq!(quoted_head("abcdef", 3), r#""abc" (cut; 6 bytes in all)"#);
/// ```
pub fn quoted_head(value: &str, max_chars: usize) -> String {
    match head_chars(value, max_chars) {
        (head, true) => format!("{head:?} (cut; {} bytes in all)", value.len()),
        (whole, false) => format!("{whole:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_fits_and_ends_on_a_character_boundary() {
        let text = "aé€😀".repeat(50);
        for max in 0..=text.len() + 1 {
            for marker in ["", ".", "...", "…"] {
                let cut = truncate(&text, max, marker);
                assert!(cut.len() <= max, "{max} {marker:?}: {cut}");
                if max >= text.len() {
                    assert_eq!(cut, text);
                } else if !cut.is_empty() {
                    assert!(cut.ends_with(marker));
                    let kept = &cut[..cut.len() - marker.len()];
                    assert!(text.starts_with(kept) && !kept.is_empty());
                    // The longest prefix that fits was kept.
                    let next = text[kept.len()..].chars().next().map_or(0, char::len_utf8);
                    assert!(kept.len() + next + marker.len() > max);
                }
            }
        }
    }

    #[test]
    fn a_marker_alone_is_never_the_result() {
        assert_eq!(truncate("😀😀", 5, "..."), "");
        assert_eq!(truncate("abc", 2, "..."), "");
        assert_eq!(truncate("abcd", 3, ""), "abc");
    }

    #[test]
    fn cleaning_cuts_on_a_char_boundary_and_marks_the_cut() {
        assert_eq!(clean("abcdef", 6), "abcdef");
        assert_eq!(clean("abcdefg", 6), "abc...");
        assert_eq!(clean("ééé", 6), "ééé");
        assert_eq!(clean("éééé", 6), "é...");
        assert_eq!(clean("a\u{1}b\nc\td", 10), "a b\nc\td");
    }

    #[test]
    fn the_tail_fits_and_starts_on_a_character_boundary() {
        let text = "aé€😀".repeat(20);
        for max in 0..=text.len() + 1 {
            let end = tail(&text, max);
            assert!(end.len() <= max && text.ends_with(end), "{max}: {end}");
            // The longest suffix that fits was kept.
            let before = text[..text.len() - end.len()].chars().next_back();
            assert!(before.is_none_or(|c| end.len() + c.len_utf8() > max));
        }
    }

    #[test]
    fn character_cuts_count_characters_not_bytes() {
        let text = "é😀a".repeat(10);
        for max in 0..=31 {
            let (head, cut) = head_chars(&text, max);
            assert_eq!(head.chars().count(), max.min(30));
            assert_eq!(cut, max < 30);
            let marked = truncate_chars(&text, max, "...");
            assert_eq!(marked.ends_with("..."), cut);
        }
        assert_eq!(quoted_head("", 0), r#""""#);
        assert_eq!(quoted_head("ab", 0), r#""" (cut; 2 bytes in all)"#);
    }
}
