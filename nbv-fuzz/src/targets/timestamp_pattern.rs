//! A custom timestamp pattern of `spec.comparisonConfig` and a text, cut at the first
//! NUL byte.
//!
//! - `TimestampPattern::new` never panics; a refusal says why.
//! - An accepted pattern reaches the validation Pod intact: its rewritten form, which
//!   the operator sends in `NBV_COMPARISON`, reads back (as the Pod reads it) and
//!   rewrites to itself, and the settings read back from that JSON equal those sent.
//! - An accepted pattern matches neither the empty string nor nbv's own marker.
//! - Normalizing a text with it never panics and (with the runner's limits) stays
//!   within the time and memory limits; each masking step at most multiplies the
//!   length by the marker's; a text compares equal to itself.

use nbv_core::compare::{
    MARKER, Settings, TimestampPattern, mask_timestamps, normalize, numbers_match,
};

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "timestamp_pattern",
    run,
    dictionary: &[
        "\0",
        "\\d",
        "\\w",
        "\\s",
        "\\n",
        "\\",
        "[",
        "]",
        "[^",
        "-",
        "(",
        ")",
        "(?:",
        "(?=",
        "|",
        "*",
        "+",
        "?",
        "*?",
        "{",
        "}",
        "{2}",
        "{1,3}",
        "{,3}",
        "{1000}",
        "{1001}",
        "^",
        "$",
        ".",
        "\\.",
        "[0-9]",
        "[a-z]",
        "&&",
        "--",
        "~~",
        "<timestamp>",
        "<address>",
        "2026-01-24T22:30:05Z",
        "12:00:30",
        "took 3ms",
        "0x7f3b2c1d9e80",
        "\u{e9}",
        "\u{661}",
    ],
    max_len: 2048,
};

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some((pattern, text)) = crate::two_texts(data) else {
        return Outcome::Skipped;
    };
    let accepted = match TimestampPattern::new(pattern) {
        Ok(accepted) => accepted,
        Err(why) => {
            assert!(!why.is_empty(), "{pattern:?} refused without a reason");
            return Outcome::Refused;
        }
    };
    let rewritten = accepted.as_str();
    // Read back as the Pod reads it.
    let again: TimestampPattern = serde_json::from_value(serde_json::json!(rewritten))
        .unwrap_or_else(|why| {
            panic!("{pattern:?} is accepted, its rewritten form {rewritten:?} is not: {why}")
        });
    assert_eq!(again.as_str(), rewritten, "rewriting {pattern:?} twice");

    let settings = Settings {
        timestamp_patterns: vec![accepted],
        ..Settings::default()
    };
    let sent = settings.to_json();
    let received: Settings =
        serde_json::from_str(&sent).unwrap_or_else(|e| panic!("the Pod cannot read {sent}: {e}"));
    assert_eq!(
        received, settings,
        "the settings changed on the way: {sent}"
    );

    let regex = &settings.timestamp_patterns[0];
    let only = Settings {
        timestamp_patterns: vec![regex.clone()],
        ..Settings::default()
    };
    for probe in ["", MARKER] {
        assert_eq!(
            mask_timestamps(probe, &only).replace(MARKER, ""),
            "",
            "{pattern:?} changes {probe:?}"
        );
    }

    let masked = mask_timestamps(text, &settings);
    // Three built-in patterns and one custom one, each replacing at least one byte
    // with the marker.
    let most = (text.len().max(1)).saturating_mul(MARKER.len().pow(4));
    assert!(
        masked.len() <= most,
        "{text:?} masked to {} bytes",
        masked.len()
    );
    let normalized = normalize(text, &settings);
    assert!(
        numbers_match(&normalized, &normalized, settings.tolerance),
        "{normalized:?} differs from itself"
    );
    Outcome::Read
}
