//! How Argo CD's Go code matches the keys of the JSON and YAML it reads.
//!
//! Go's `encoding/json` decodes an object key into a struct field whose name matches it
//! case-insensitively; `nbv health` reads Argo CD's test files with that rule, and the
//! Lua sandbox (nbv-lua) reads a script's returned `status` and `message` with it.

/// Whether Go's `encoding/json` decodes the object key `key` into the struct field whose
/// folded name is `folded_field` (`"STATUS"`, `"MESSAGE"`).
///
/// Go matches keys case-insensitively with Unicode simple folding (`foldName`: ASCII
/// letters upper-cased, other runes mapped to the smallest rune of their fold orbit).
/// The only non-ASCII runes that fold onto ASCII letters are U+017F (ſ, onto `S`) and
/// U+212A (Kelvin sign, onto `K`), so `"ſtatus"` is a status field for Argo CD.
fn go_key_matches(key: &str, folded_field: &str) -> bool {
    let mut folded = key.chars().map(|c| match c {
        'a'..='z' => c.to_ascii_uppercase(),
        '\u{17F}' => 'S',
        '\u{212A}' => 'K',
        other => other,
    });
    folded_field
        .chars()
        .all(|expected| folded.next() == Some(expected))
        && folded.next().is_none()
}

/// Whether Go's `encoding/json` decodes the object key `key` into the struct field
/// named `field` (an ASCII name such as `inputPath`): the keys Argo CD accepts in the
/// JSON and YAML it reads, `inputpath` and `INPUTPATH` included.
///
/// # Examples
///
/// ```
/// use nbv_core::health::go_json_key_matches;
///
/// assert!(go_json_key_matches("inputpath", "inputPath"));
/// assert!(go_json_key_matches("HealthStatus", "healthStatus"));
/// assert!(!go_json_key_matches("input_path", "inputPath"));
/// ```
pub fn go_json_key_matches(key: &str, field: &str) -> bool {
    go_key_matches(key, &field.to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_like_go_encoding_json() {
        for key in [
            "status",
            "Status",
            "STATUS",
            "sTaTuS",
            "\u{17F}tatus",
            "statu\u{17F}",
        ] {
            assert!(go_key_matches(key, "STATUS"), "{key}");
        }
        for key in ["statuses", "statu", "stätus", "", "message"] {
            assert!(!go_key_matches(key, "STATUS"), "{key}");
        }
        assert!(go_key_matches("me\u{17F}\u{17F}age", "MESSAGE"));
    }
}
