//! Two JSON documents, `before` and `after`, built from the fuzzer's bytes (small key
//! and value alphabets, so that the two often share members and differ in depth).
//!
//! - `merge_patch(before, after)` never panics.
//! - Applying the patch to `before` with an independent RFC 7386 implementation
//!   (the `json-patch` crate) yields `after`, reading `null` members as absent on both
//!   sides, as the API server does.
//! - There is no patch exactly when the two documents are equal in that reading.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use nbv_core::plan::merge_patch;
use serde_json::{Map, Value};

const KEYS: [&str; 6] = ["metadata", "annotations", "status", "phase", "a", ""];
const MAX_DEPTH: usize = 6;

/// A JSON value of at most `depth` levels.
fn value(u: &mut Unstructured<'_>, depth: usize) -> arbitrary::Result<Value> {
    let pick = if depth == 0 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=6)?
    };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(u)?),
        2 => Value::from(i64::arbitrary(u)?),
        3 => Value::from(f64::arbitrary(u)?), // non-finite floats become null
        4 => Value::String(u.choose(&KEYS)?.to_string()),
        5 => {
            let len = u.int_in_range(0..=3)?;
            Value::Array(
                (0..len)
                    .map(|_| value(u, depth - 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => {
            let mut members = Map::new();
            for _ in 0..u.int_in_range(0..=4)? {
                members.insert(u.choose(&KEYS)?.to_string(), value(u, depth - 1)?);
            }
            Value::Object(members)
        }
    })
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

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let (Ok(before), Ok(after)) = (value(&mut u, MAX_DEPTH), value(&mut u, MAX_DEPTH)) else {
        return;
    };
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
});
