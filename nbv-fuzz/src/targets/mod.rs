//! The targets, one module each; every module has a `TARGET` and a `run` function.

pub mod application;
pub mod cron;
pub mod glob;
pub mod health_native;
pub mod inference_service;
pub mod merge_patch;
pub mod redact;
pub mod sync_wave;
pub mod termination_message;
pub mod timestamp_pattern;
pub mod triggers;
pub mod yaml;

/// JSON's syntax, for the targets that read JSON.
pub(crate) const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\\"",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "false",
    "0",
    "-1",
    "1e309",
    "-0.0",
    "18446744073709551616",
    "9223372036854775807",
    "\"\"",
    "{}",
    "[]",
    "[[[[[[[[",
    "]]]]]]]]",
    "{\"a\":",
    "\u{e9}",
    "\u{1f600}",
];
