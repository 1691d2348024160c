//! Small text helpers for user-facing messages: quoting hostile values and
//! suggesting the closest known word.

use std::fmt;

/// How many characters of a user-supplied value a message repeats.
///
/// A value can be up to 64 KiB long; echoing it whole would bury the actual
/// problem and could overflow an Event message.
const MAX_SHOWN_CHARS: usize = 64;

/// Displays a user-supplied string in double quotes, with control characters,
/// quotes and backslashes escaped (so a message is always one line and cannot
/// inject terminal escapes), cut to [`MAX_SHOWN_CHARS`] characters.
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (shown, cut) = crate::text::head_chars(self.0, MAX_SHOWN_CHARS);
        if cut {
            // `{:?}` on the prefix escapes exactly like the full value would.
            let escaped = format!("{shown:?}");
            let without_closing_quote = &escaped[..escaped.len() - 1];
            write!(f, "{without_closing_quote}…\"")
        } else {
            write!(f, "{shown:?}")
        }
    }
}

/// Replaces control characters by their escapes so that text produced by the
/// YAML parser (which may repeat parts of the input) stays on one line.
pub(crate) fn sanitize(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Levenshtein distance, giving up (returning `None`) when the inputs are
/// too long to be a plausible typo of a short keyword. This keeps the cost
/// bounded whatever the input length.
fn edit_distance(a: &str, b: &str) -> Option<usize> {
    const MAX_LEN: usize = 32;
    let a: Vec<char> = a.chars().take(MAX_LEN + 1).collect();
    let b: Vec<char> = b.chars().take(MAX_LEN + 1).collect();
    if a.len() > MAX_LEN || b.len() > MAX_LEN {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous.last().copied()
}

/// The candidate that `value` most plausibly misspells: equal ignoring ASCII
/// case and surrounding whitespace, or within two edits of it (ties: the
/// first candidate wins, so the result is deterministic).
pub(crate) fn closest<'c>(value: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let normalized = value.trim().to_ascii_lowercase();
    if let Some(exact) = candidates
        .iter()
        .find(|c| c.to_ascii_lowercase() == normalized)
    {
        return Some(exact);
    }
    candidates
        .iter()
        .filter_map(|c| {
            edit_distance(&normalized, &c.to_ascii_lowercase()).map(|distance| (distance, *c))
        })
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_escapes_and_truncates() {
        assert_eq!(Quoted("a\"b\n").to_string(), r#""a\"b\n""#);
        let long = "x".repeat(100);
        let shown = Quoted(&long).to_string();
        assert!(shown.ends_with("…\""), "{shown}");
        assert_eq!(shown.chars().filter(|c| *c == 'x').count(), MAX_SHOWN_CHARS);
    }

    #[test]
    fn sanitize_removes_control_characters() {
        assert_eq!(sanitize("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\n");
    }

    #[test]
    fn edit_distance_basics() {
        assert_eq!(edit_distance("restart", "restart"), Some(0));
        assert_eq!(edit_distance("restrat", "restart"), Some(2));
        assert_eq!(edit_distance("", "sync"), Some(4));
        assert_eq!(edit_distance(&"a".repeat(33), "a"), None);
    }

    #[test]
    fn closest_prefers_case_insensitive_match() {
        let words = ["restart", "sync", "refresh"];
        assert_eq!(closest("Restart", &words), Some("restart"));
        assert_eq!(closest(" SYNC ", &words), Some("sync"));
        assert_eq!(closest("refesh", &words), Some("refresh"));
        assert_eq!(closest("delete", &words), None);
    }
}
