//! Cutting text to a byte budget: Kubernetes bounds messages in bytes, and a cut must
//! fall on a character boundary so the result stays valid UTF-8.

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

/// `text` with control characters but newline and tab made spaces, cut to `limit`
/// UTF-8 bytes (ending in `...` when cut). `limit` is at least 3.
pub(crate) fn clean(text: &str, limit: usize) -> String {
    let text: String = text
        .chars()
        .map(|c| {
            if c < ' ' && c != '\n' && c != '\t' {
                ' '
            } else {
                c
            }
        })
        .collect();
    truncate(&text, limit, "...").into_owned()
}

#[cfg(test)]
mod tests {
    use super::{clean, truncate};

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
}
