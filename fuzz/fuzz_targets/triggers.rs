//! Any text as the value of `mlops.dev/on-success-trigger`.
//!
//! - `parse_triggers` never panics, whatever the bytes (invalid UTF-8 is not an
//!   annotation value: the API server only stores strings).
//! - A rejected value has at least one error, and every error message renders.
//! - An accepted value's canonical form (`to_annotation_value`) parses back to the same
//!   triggers in any job namespace, when it still fits the size limit.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nbv_core::triggers::{MAX_ANNOTATION_BYTES, parse_triggers};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    match parse_triggers(value, "ml-platform") {
        Ok(set) => {
            for warning in set.warnings() {
                let _ = warning.to_string();
            }
            let canonical = set.to_annotation_value();
            // Canonical form spells every namespace out and quotes every value, so a
            // compact value near the limit can outgrow it.
            if canonical.len() <= MAX_ANNOTATION_BYTES {
                let again = parse_triggers(&canonical, "elsewhere").unwrap_or_else(|errors| {
                    panic!("canonical form rejected: {errors}\n{canonical}")
                });
                assert_eq!(
                    again.triggers(),
                    set.triggers(),
                    "canonical form: {canonical}"
                );
                assert!(
                    again.warnings().is_empty(),
                    "canonical form warns: {canonical}"
                );
            }
        }
        Err(errors) => {
            assert!(!errors.errors().is_empty(), "rejected without an error");
            let _ = errors.to_string();
        }
    }
});
