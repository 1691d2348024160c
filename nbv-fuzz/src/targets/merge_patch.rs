//! Two JSON documents, `before` and `after`, built from the fuzzer's bytes (small key
//! and value alphabets, so that the two often share members and differ in depth).
//!
//! - `merge_patch(before, after)` never panics.
//! - Applying the patch to `before` with an independent RFC 7386 implementation
//!   (the `json-patch` crate) yields `after`, reading `null` members as absent on both
//!   sides, as the API server does.
//! - There is no patch exactly when the two documents are equal in that reading.

use nbv_core::plan::merge_patch;
use serde_json::{Map, Value};

use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "merge_patch",
    run,
    dictionary: &["\0", "\u{5}", "\u{6}", "\u{ff}", "\0\0\0\0\0\0\0\0"],
    max_len: 512,
};

const KEYS: [&str; 6] = ["metadata", "annotations", "status", "phase", "a", ""];
const MAX_DEPTH: usize = 6;

/// The fuzzer's bytes read as choices; past the end every choice is 0.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        *first
    }

    /// A number in `0..=max`.
    fn upto(&mut self, max: u8) -> u8 {
        self.byte() % (max + 1)
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |n, _| (n << 8) | u64::from(self.byte()))
    }
}

/// A JSON value of at most `depth` levels.
fn value(c: &mut Choices<'_>, depth: usize) -> Value {
    let pick = if depth == 0 { c.upto(4) } else { c.upto(6) };
    match pick {
        0 => Value::Null,
        1 => Value::Bool(c.byte() & 1 == 1),
        2 => Value::from(c.u64() as i64),
        3 => Value::from(f64::from_bits(c.u64())), // non-finite floats become null
        4 => Value::String(KEYS[usize::from(c.upto(5))].to_owned()),
        5 => Value::Array((0..c.upto(3)).map(|_| value(c, depth - 1)).collect()),
        _ => {
            let mut members = Map::new();
            for _ in 0..c.upto(4) {
                let key = KEYS[usize::from(c.upto(5))].to_owned();
                members.insert(key, value(c, depth - 1));
            }
            Value::Object(members)
        }
    }
}

/// `value` with `null` members of objects removed, recursively through objects (arrays
/// are replaced whole by a merge patch, so their contents are compared as they are).
fn without_null_members(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_null_members(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let mut choices = Choices(data);
    let before = value(&mut choices, MAX_DEPTH);
    let after = value(&mut choices, MAX_DEPTH);
    let patch = merge_patch(&before, &after);
    let same = without_null_members(&before) == without_null_members(&after);
    assert_eq!(
        patch.is_none(),
        same,
        "before {before}\nafter {after}\npatch {patch:?}"
    );

    let mut patched = before.clone();
    if let Some(patch) = &patch {
        json_patch::merge(&mut patched, patch);
    }
    assert_eq!(
        without_null_members(&patched),
        without_null_members(&after),
        "before {before}\nafter {after}\npatch {patch:?}"
    );
    assert_eq!(merge_patch(&after, &after), None, "after {after}");
    if patch.is_some() {
        Outcome::Read
    } else {
        Outcome::Refused
    }
}
