//! What Argo CD does with the table a health script returns.
//!
//! `ExecuteHealthLua` (argo-cd `util/lua/lua.go`) encodes the returned table to JSON
//! with gopher-json, decodes that JSON into gitops-engine's
//! `HealthStatus{Status, Message string}` with Go's `encoding/json`, and then:
//!
//! - a decoding type error (a non-string `status` or `message`, or a table that encodes
//!   as an array, such as the empty table) yields an *empty* health status: Argo CD
//!   checks `errors.As(err, &*json.UnmarshalTypeError)`, which matches every type error;
//! - a status that is not one of the six codes yields `Unknown` with the message
//!   [`INVALID_HEALTH_STATUS`];
//! - otherwise the decoded status is the resource's health.
//!
//! A script that returns `nil` also yields the empty health status. Argo CD records
//! an empty status as the resource's health: the UI shows none, and the Application's
//! aggregated health treats it like `Healthy`.

use super::{HealthStatus, HealthStatusCode};

/// The message Argo CD gives a resource whose script returned a status that is not one
/// of the six codes (the status is then `Unknown`).
pub const INVALID_HEALTH_STATUS: &str = "Lua returned an invalid health status";

/// The health Argo CD derives from the decoded `status` and `message` fields.
#[cfg_attr(not(feature = "lua"), allow(dead_code))]
pub(crate) fn decoded_health(status: Option<&str>, message: String) -> HealthStatus {
    match status.unwrap_or("").parse::<HealthStatusCode>() {
        Ok(code) => HealthStatus::new(code, message),
        Err(_) => HealthStatus::new(HealthStatusCode::Unknown, INVALID_HEALTH_STATUS),
    }
}

/// A Lua string as Go's `json.Marshal` writes it and `json.Unmarshal` reads it back:
/// each byte that is not part of valid UTF-8 becomes U+FFFD (Go decodes an invalid
/// sequence one byte at a time).
#[cfg_attr(not(feature = "lua"), allow(dead_code))]
pub(crate) fn go_json_string(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return out;
            }
            Err(error) => {
                let (valid, invalid) = rest.split_at(error.valid_up_to());
                // `valid_up_to` marks the end of the longest valid prefix.
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                rest = invalid.get(1..).unwrap_or_default();
            }
        }
    }
}

/// Whether Go's `encoding/json` decodes the object key `key` into the struct field whose
/// folded name is `folded_field` (`"STATUS"`, `"MESSAGE"`).
///
/// Go matches keys case-insensitively with Unicode simple folding (`foldName`: ASCII
/// letters upper-cased, other runes mapped to the smallest rune of their fold orbit).
/// The only non-ASCII runes that fold onto ASCII letters are U+017F (ſ, onto `S`) and
/// U+212A (Kelvin sign, onto `K`), so `"ſtatus"` is a status field for Argo CD.
pub(crate) fn go_key_matches(key: &str, folded_field: &str) -> bool {
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
    fn invalid_bytes_become_one_replacement_character_each() {
        assert_eq!(go_json_string(b"ok"), "ok");
        assert_eq!(go_json_string(b"a\xffb"), "a\u{FFFD}b");
        // A truncated 4-byte sequence: Go replaces each of its three bytes.
        assert_eq!(
            go_json_string(b"\xf0\x9f\x98!"),
            "\u{FFFD}\u{FFFD}\u{FFFD}!"
        );
        assert_eq!(go_json_string("é".as_bytes()), "é");
    }

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

    #[test]
    fn an_unknown_status_becomes_unknown_with_argo_cds_message() {
        let health = decoded_health(Some("healthy"), "ignored".to_owned());
        assert_eq!(
            health,
            HealthStatus::new(HealthStatusCode::Unknown, INVALID_HEALTH_STATUS)
        );
        assert_eq!(
            decoded_health(None, String::new()).status,
            HealthStatusCode::Unknown
        );
        assert_eq!(
            decoded_health(Some("Suspended"), "paused".to_owned()),
            HealthStatus::new(HealthStatusCode::Suspended, "paused")
        );
    }
}
