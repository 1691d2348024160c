//! What a reader that bounds nesting keeps of a JSON value: the oracle of the tests
//! and fuzz targets of nbv's depth bound on answers.

use serde_json::Value;

/// `value` with every array or object nested deeper than `max` levels replaced by
/// `null` (the value itself is level 1).
///
/// # Examples
///
/// ```
/// use serde_json::json;
/// use nbv_testkit::depth::cut;
///
/// assert_eq!(cut(&json!({"a": {"b": [1]}}), 2), json!({"a": {"b": null}}));
/// assert_eq!(cut(&json!([1, "x"]), 1), json!([1, "x"]));
/// assert_eq!(cut(&json!([[1]]), 0), json!(null));
/// ```
pub fn cut(value: &Value, max: usize) -> Value {
    cut_at(value, max, 0)
}

fn cut_at(value: &Value, max: usize, depth: usize) -> Value {
    let nested = matches!(value, Value::Array(_) | Value::Object(_));
    if nested && depth + 1 > max {
        return Value::Null;
    }
    match value {
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| cut_at(v, max, depth + 1)).collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), cut_at(v, max, depth + 1)))
                .collect(),
        ),
        other => other.clone(),
    }
}
