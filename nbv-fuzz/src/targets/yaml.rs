//! Any text as a YAML file `nbv health` (and every other YAML reader of nbv) reads:
//! `nbv_core::yaml`, the bounded reader.
//!
//! - Reading never panics, and (with the runner's limits) never takes more than the
//!   time and memory limits, whatever aliases and nesting the text holds.
//! - What the bounds check refuses (size, depth, aliasing) is refused by every reader,
//!   with the same error; what it passes is never refused for a bound.
//! - What is read nests no deeper than the depth limit, with what aliases insert,
//!   under the default limits and under a limit of 4 levels.
//! - What is read has at most 100 nodes for each byte of text, or 400,000 more than it
//!   writes out: an alias bomb cannot pass.
//! - The documents of a stream read one by one stop after the first error.

use nbv_core::yaml::{self, BoundsError, Limits, MAX_DEPTH, YamlError};
use serde::Deserialize;
use serde_yaml_ng::Value;

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "yaml",
    run,
    dictionary: &[
        "&a ",
        "*a",
        "&b ",
        "*b",
        "[*a, *a, *a, *a, *a, *a, *a, *a, *a]",
        "<<: *a",
        "{",
        "}",
        "[",
        "]",
        ", ",
        ": ",
        "- ",
        "\n",
        "\n  ",
        "---\n",
        "...\n",
        "? ",
        "|\n  ",
        ">\n  ",
        "!!str ",
        "!!map ",
        "!tag ",
        "%YAML 1.2\n",
        "#",
        "\"",
        "'",
        "~",
        "null",
        "tests:\n",
        "- inputPath: ",
        "expectedHealth:\n",
        "data:\n",
        "resource.customizations: |\n",
        "[[[[[[[[[[[[[[[[",
        "]]]]]]]]]]]]]]]]",
        "{a: {a: {a: {a: ",
    ],
    max_len: 8192,
};

/// How deep sequences and mappings nest in `value` (a scalar is 0, `[]` is 1).
fn depth(value: &Value) -> usize {
    match value {
        Value::Sequence(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Mapping(map) => {
            1 + map
                .iter()
                .map(|(k, v)| depth(k).max(depth(v)))
                .max()
                .unwrap_or(0)
        }
        Value::Tagged(tagged) => depth(&tagged.value),
        _ => 0,
    }
}

/// How many nodes `value` has.
fn nodes(value: &Value) -> usize {
    1 + match value {
        Value::Sequence(items) => items.iter().map(nodes).sum(),
        Value::Mapping(map) => map.iter().map(|(k, v)| nodes(k) + nodes(v)).sum(),
        Value::Tagged(tagged) => nodes(&tagged.value),
        _ => 0,
    }
}

/// Whether the check stopped for a bound (rather than at a syntax error, which the
/// readers report in their own words).
fn is_bound(error: &BoundsError) -> bool {
    !matches!(
        error,
        BoundsError::Syntax { .. } | BoundsError::Unchecked { .. }
    )
}

fn check_read(text: &str, value: &Value, max_depth: usize) {
    let deep = depth(value);
    assert!(
        deep <= max_depth,
        "read {deep} levels deep, past the limit of {max_depth}"
    );
    let count = nodes(value);
    let bound = 400_000 + 100 * (text.len() + 2);
    assert!(
        count <= bound,
        "read {count} nodes from {} bytes",
        text.len()
    );
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(text) = crate::text(data) else {
        return Outcome::Skipped;
    };
    let checked = yaml::check(text);
    let read = yaml::from_str::<Value>(text);
    match (&checked, &read) {
        (Err(bound), read) if is_bound(bound) => match read {
            Err(YamlError::Bounds(error)) => assert_eq!(error, bound),
            other => panic!("the check refused ({bound}) but the reader gave {other:?}"),
        },
        (Ok(()), Err(YamlError::Bounds(error))) => {
            panic!("the check passed but the reader refused: {error}")
        }
        _ => {}
    }
    if let Ok(value) = &read {
        check_read(text, value, MAX_DEPTH);
    }
    let _ = yaml::from_str::<serde_json::Value>(text).map(|v| v.to_string().len());

    let shallow = Limits {
        max_depth: 4,
        ..Limits::DEFAULT
    };
    if let Ok(value) = yaml::from_str_within::<Value>(text, &shallow) {
        check_read(text, &value, 4);
    }

    let mut documents = yaml::documents(text);
    for document in documents.by_ref() {
        match document {
            Ok(deserializer) => {
                if let Ok(value) = Value::deserialize(deserializer) {
                    check_read(text, &value, MAX_DEPTH);
                }
            }
            Err(_) => break,
        }
    }
    assert!(
        documents.next().is_none(),
        "a document was read after an error"
    );
    if read.is_ok() {
        Outcome::Read
    } else {
        Outcome::Refused
    }
}
