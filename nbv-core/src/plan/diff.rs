//! The smallest JSON merge patch between two documents.

use serde_json::{Map, Value};

/// The JSON merge patch (RFC 7386) that turns `before` into `after`, or `None` when
/// they are equal.
///
/// Only changed members appear; removed members are `null`; arrays and scalars are
/// replaced whole (merge patches cannot edit arrays). A `null` *value* in `after`
/// cannot be expressed by a merge patch (it means "remove"), so members whose value
/// is `null` count as absent, as the API server treats them.
///
/// The shell uses it to write a job's status with a patch of only what changed.
///
/// # Examples
///
/// ```
/// use nbv_core::plan::merge_patch;
/// use serde_json::json;
///
/// let before = json!({"phase": "ValidationRunning", "retryCount": 0, "message": "Validating"});
/// let after = json!({"phase": "Succeeded", "retryCount": 0, "completionTime": "2026-01-24T22:30:00Z"});
/// assert_eq!(
///     merge_patch(&before, &after),
///     Some(json!({"phase": "Succeeded", "message": null, "completionTime": "2026-01-24T22:30:00Z"}))
/// );
/// assert_eq!(merge_patch(&after, &after), None);
/// ```
pub fn merge_patch(before: &Value, after: &Value) -> Option<Value> {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            let mut patch = Map::new();
            for (key, old) in b {
                if !old.is_null() && a.get(key).is_none_or(Value::is_null) {
                    patch.insert(key.clone(), Value::Null);
                }
            }
            for (key, new) in a {
                if new.is_null() {
                    continue;
                }
                match b.get(key) {
                    Some(old) if !old.is_null() => {
                        if let Some(p) = merge_patch(old, new) {
                            patch.insert(key.clone(), p);
                        }
                    }
                    _ => {
                        patch.insert(key.clone(), strip_nulls(new));
                    }
                }
            }
            (!patch.is_empty()).then_some(Value::Object(patch))
        }
        _ if before == after => None,
        _ => Some(strip_nulls(after)),
    }
}

/// `value` without `null` members: in a merge patch they would mean "remove".
fn strip_nulls(value: &Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}
