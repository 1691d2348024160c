//! Any JSON document as the object Argo CD hands the health check.
//!
//! - The native assessments (`assess`, `assess_advanced`, and `assess_with` in every
//!   VM the native code imitates) never panic, whatever the document: wrongly typed
//!   fields, unknown phases, huge numbers, deep nesting.
//! - A health they return has a message that renders, and errors render.
//! - They are deterministic: the same document gives the same result twice.

use nbv_core::health::{NumberFormat, Semantics, Variant, assess, assess_advanced, assess_with};
use serde_json::Value;

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "health_native",
    run,
    dictionary: &[
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "\"",
        "null",
        "true",
        "false",
        "0",
        "-1",
        "1e309",
        "\"status\":",
        "\"phase\":",
        "\"Succeeded\"",
        "\"Failed\"",
        "\"Running\"",
        "\"Pending\"",
        "\"ValidationFailed\"",
        "\"results\":",
        "\"errorMessage\":",
        "\"message\":",
        "\"metadata\":",
        "\"generation\":",
        "\"observedGeneration\":",
        "\"conditions\":",
        "\"type\":",
        "\"Ready\"",
        "\"cellIndex\":",
        "\"deletionTimestamp\":",
        "\"spec\":",
        "1.5",
        "18446744073709551616",
        "\"\\u0000\"",
    ],
    max_len: 8192,
};

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Ok(obj) = serde_json::from_slice::<Value>(data) else {
        return Outcome::Skipped;
    };
    let basic = assess(&obj);
    assert_eq!(basic, assess_with(&obj, Variant::Basic, Semantics::ARGO_CD));
    let advanced = assess_advanced(&obj);
    assert_eq!(
        advanced,
        assess_with(&obj, Variant::Advanced, Semantics::ARGO_CD)
    );
    for result in [&basic, &advanced] {
        match result {
            Ok(health) => {
                let _ = health.as_ref().map(|h| h.message.len());
            }
            Err(error) => {
                let _ = error.to_string();
            }
        }
    }

    for variant in Variant::ALL {
        for numbers in [NumberFormat::GopherLua, NumberFormat::Lua51] {
            for open_libs in [false, true] {
                let semantics = Semantics { numbers, open_libs };
                let first = assess_with(&obj, variant, semantics);
                assert_eq!(first, assess_with(&obj, variant, semantics));
            }
        }
    }
    if basic.is_ok() {
        Outcome::Read
    } else {
        Outcome::Refused
    }
}
