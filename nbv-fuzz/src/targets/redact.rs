//! Any text as an Event message that may echo a clone URL or an environment.
//!
//! - `redact_secrets` never panics, whatever the text (multi-byte characters next to
//!   `=`, `:` and `@` included).
//! - No URL in the output keeps user information: wherever `://` occurs, the authority
//!   that follows (up to `/`, whitespace or a quote, the rule `redact_secrets`
//!   documents) has no `@`, or has exactly `***` before its last `@`.
//! - The output is at most three times as long as the input: every `***` stands for
//!   at least one byte of a secret, or for an empty user part that took four bytes
//!   (`://@`). A message cannot grow without bound.

use nbv_core::events::redact_secrets;

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "redact",
    run,
    dictionary: &[
        "://",
        "@",
        ":",
        "=",
        " = ",
        "\"",
        "'",
        "/",
        " ",
        "\n",
        "https://",
        "git@",
        "user:pass@",
        "token=",
        "password: ",
        "\"password\": \"",
        "Authorization: Bearer ",
        "ghp_",
        "glpat-",
        "eyJ",
        "AKIA",
        "***",
        "\u{e9}",
        "\u{1f600}",
    ],
    max_len: 4096,
};

/// The user information left in `text`'s URLs, if any: the first authority whose part
/// before its last `@` is not `***`.
pub(crate) fn leaked_userinfo(text: &str) -> Option<&str> {
    text.match_indices("://").find_map(|(i, _)| {
        let rest = &text[i + 3..];
        let end = rest
            .find(|c: char| c == '/' || c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        let at = authority.rfind('@')?;
        (authority[..at] != *"***").then_some(&authority[..at])
    })
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(text) = crate::text(data) else {
        return Outcome::Skipped;
    };
    let redacted = redact_secrets(text);
    if let Some(userinfo) = leaked_userinfo(&redacted) {
        panic!("user information {userinfo:?} left in {redacted:?} (from {text:?})");
    }
    assert!(
        redacted.len() <= 3 * text.len().max(1),
        "{text:?} -> {redacted:?}"
    );
    if redacted == text {
        Outcome::Refused
    } else {
        Outcome::Read
    }
}
