//! Any text as the termination message of a validation Pod's notebook container (what
//! the kubelet copies into `state.terminated.message`, which any notebook can write).
//!
//! - `RunReport::parse` never panics; a refusal renders.
//! - What it reads carries no URL with user information in any string: every string a
//!   Pod writes is redacted on the way in.
//! - A report read re-encodes within the kubelet's 4096 bytes, and that encoding reads
//!   back: no cell is lost without being counted in `dropped`, and encoding what was
//!   read from an encoding gives the same encoding (the writer's caps are a fixed
//!   point).
//! - `summary` and `cell_results` never panic.

use nbv_core::pod::{MAX_REPORT_BYTES, RunReport};
use serde_json::Value;

use super::redact::leaked_userinfo;
use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "termination_message",
    run,
    dictionary: &[
        "{\"cells\":[",
        "{\"i\":",
        "\"s\":\"ok\"",
        "\"s\":\"err\"",
        "\"s\":\"skip\"",
        "\"t\":",
        "\"e\":\"",
        "\"error\":{",
        "\"kind\":\"cell\"",
        "\"kind\":\"model\"",
        "\"kind\":\"check\"",
        "\"cell\":",
        "\"ename\":\"",
        "\"evalue\":\"",
        "\"dropped\":",
        "\"cmp\":",
        "\"chk\":",
        "\"mdl\":",
        "https://user:token@git.example.com/",
        "}",
        "]",
        ",",
        "\"",
        "1e308",
        "-1",
        "18446744073709551615",
        "NaN",
        "\\n",
    ],
    max_len: 8192,
};

/// Every string of `value`.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(fields) => fields.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings(v, out);
        }),
        _ => {}
    }
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(text) = crate::text(data) else {
        return Outcome::Skipped;
    };
    let report = match RunReport::parse(text) {
        Ok(report) => report,
        Err(error) => {
            let _ = error.to_string();
            return Outcome::Refused;
        }
    };
    let mut read = Vec::new();
    strings(
        &serde_json::to_value(&report).unwrap_or_default(),
        &mut read,
    );
    for string in &read {
        assert!(
            leaked_userinfo(string).is_none(),
            "user information kept in {string:?}"
        );
    }
    let _ = (report.summary(), report.cell_results());

    let encoded = report.encode();
    assert!(
        encoded.len() <= MAX_REPORT_BYTES,
        "encoded in {} bytes: {encoded}",
        encoded.len()
    );
    let again = RunReport::parse(&encoded)
        .unwrap_or_else(|e| panic!("its own encoding does not read: {e}\n{encoded}"));
    let count = |r: &RunReport| (r.cells.len() as u64).saturating_add(r.dropped);
    assert_eq!(
        count(&again),
        count(&report),
        "cells lost in the encoding: {encoded}"
    );
    assert_eq!(again.encode(), encoded, "encoding what was read changes it");
    Outcome::Read
}
