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
//!
//! Which keys count as `status` and `message` is Go's case-insensitive matching,
//! [`go_json_key_matches`](nbv_core::health::go_json_key_matches), shared with
//! nbv-core.

use nbv_core::health::{HealthStatus, HealthStatusCode};

/// The message Argo CD gives a resource whose script returned a status that is not one
/// of the six codes (the status is then `Unknown`).
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthScript, HealthStatus, HealthStatusCode};
/// use nbv_lua::{INVALID_HEALTH_STATUS, LuaHealthRunner};
///
/// let script = HealthScript::new("lowercase", r#"return {status = "healthy"}"#);
/// let health = LuaHealthRunner::default().evaluate(&script, &serde_json::json!({}))?;
/// assert_eq!(health, Some(HealthStatus::new(HealthStatusCode::Unknown, INVALID_HEALTH_STATUS)));
/// # Ok::<(), nbv_lua::HealthScriptError>(())
/// ```
pub const INVALID_HEALTH_STATUS: &str = "Lua returned an invalid health status";

/// The health Argo CD derives from the decoded `status` and `message` fields.
pub(crate) fn decoded_health(status: Option<&str>, message: String) -> HealthStatus {
    match status.unwrap_or("").parse::<HealthStatusCode>() {
        Ok(code) => HealthStatus::new(code, message),
        Err(_) => HealthStatus::new(HealthStatusCode::Unknown, INVALID_HEALTH_STATUS),
    }
}

/// A Lua string as Go's `json.Marshal` writes it and `json.Unmarshal` reads it back:
/// each byte that is not part of valid UTF-8 becomes U+FFFD (Go decodes an invalid
/// sequence one byte at a time).
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
