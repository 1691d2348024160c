//! Any text as the value of `mlops.dev/on-success-trigger`.
//!
//! - `parse_triggers` never panics, whatever the bytes (invalid UTF-8 is not an
//!   annotation value: the API server only stores strings).
//! - A rejected value has at least one error, and every error message renders.
//! - An accepted value's canonical form (`to_annotation_value`) parses back to the same
//!   triggers in any job namespace, when it still fits the size limit.

use nbv_core::triggers::{MAX_ANNOTATION_BYTES, parse_triggers};

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "triggers",
    run,
    dictionary: &[
        "- ",
        "\n",
        "  ",
        "apiVersion: ",
        "kind: ",
        "name: ",
        "namespace: ",
        "action: ",
        "serving.kserve.io/v1beta1",
        "argoproj.io/v1alpha1",
        "apps/v1",
        "v1",
        "InferenceService",
        "Application",
        "Deployment",
        "ConfigMap",
        "restart",
        "sync",
        "refresh",
        "hard-refresh",
        "[",
        "]",
        "{",
        "}",
        ",",
        ": ",
        "\"",
        "'",
        "&a ",
        "*a",
        "<<: ",
        "---",
        "#",
        "~",
        "null",
        "|",
        ">",
        "!!str ",
    ],
    max_len: 4096,
};

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(value) = crate::text(data) else {
        return Outcome::Skipped;
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
            Outcome::Read
        }
        Err(errors) => {
            assert!(!errors.errors().is_empty(), "rejected without an error");
            let _ = errors.to_string();
            Outcome::Refused
        }
    }
}
