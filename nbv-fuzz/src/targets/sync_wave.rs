//! Any text as the value of `argocd.argoproj.io/sync-wave` and `mlops.dev/block-wave`.
//!
//! - Parsing never panics.
//! - It accepts exactly what Go's `strconv.Atoi` accepts on 64-bit platforms (Argo CD's
//!   parser): an optional `+` or `-`, one or more ASCII digits, within `i64`.
//! - An accepted wave displays in canonical form and parses back to itself.
//! - Both annotations are read with the same rules.
//! - An error message stays short whatever the value's size.

use std::collections::BTreeMap;

use nbv_core::annotations::{ARGOCD_SYNC_WAVE, BLOCK_WAVE};
use nbv_core::waves::{Wave, block_wave, sync_wave};

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "sync_wave",
    run,
    dictionary: &[
        "-",
        "+",
        "0",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        " ",
        "\u{661}",
        "1_000",
        "0x10",
        "1e3",
    ],
    max_len: 256,
};

/// Go's `strconv.Atoi` on a 64-bit platform, written independently of nbv-core.
pub(crate) fn atoi(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Accumulate towards the sign so that i64::MIN is reachable.
    digits.bytes().try_fold(0i64, |n, b| {
        let d = i64::from(b - b'0');
        n.checked_mul(10)?
            .checked_add(if negative { -d } else { d })
    })
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(text) = crate::text(data) else {
        return Outcome::Skipped;
    };
    let parsed = text.parse::<Wave>();
    assert_eq!(
        parsed.as_ref().ok().map(|w| w.get()),
        atoi(text),
        "{text:?}"
    );
    match &parsed {
        Ok(wave) => {
            let canonical = wave.to_string();
            assert_eq!(canonical.parse::<Wave>().as_ref(), Ok(wave));
            assert_eq!(canonical, wave.get().to_string());
        }
        Err(error) => {
            let message = error.to_string();
            // At most 64 characters of the value, each escaped to at most 10 bytes,
            // plus the explanation.
            assert!(message.len() <= 1024, "{} bytes: {message}", message.len());
        }
    }

    let annotations = BTreeMap::from([
        (ARGOCD_SYNC_WAVE.to_owned(), text.to_owned()),
        (BLOCK_WAVE.to_owned(), text.to_owned()),
    ]);
    let outcome = if parsed.is_ok() {
        Outcome::Read
    } else {
        Outcome::Refused
    };
    let expected = parsed.ok();
    assert_eq!(sync_wave(&annotations).ok().flatten(), expected);
    assert_eq!(block_wave(&annotations).ok().flatten(), expected);
    if let Err(error) = sync_wave(&annotations) {
        assert_eq!(error.annotation(), ARGOCD_SYNC_WAVE);
    }
    outcome
}
