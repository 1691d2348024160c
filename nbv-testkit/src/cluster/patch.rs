//! Applying PATCH bodies.
//!
//! Merge and JSON patches follow their RFCs exactly. Server-side apply and strategic
//! merge are approximations (see `docs/testing.md`):
//!
//! - server-side apply is a JSON merge patch of the applied configuration that also
//!   records the field manager in `metadata.managedFields`; it does not remove fields a
//!   manager stopped applying, does not merge lists by key and never reports
//!   field-ownership conflicts;
//! - strategic merge patch is a JSON merge patch: lists are replaced, not merged by key,
//!   and `$patch` directives are not interpreted.

use chrono::{DateTime, Utc};
use nbv_core::time::rfc3339;
use serde_json::{Value, json};

use super::error::ApiError;
use super::log::PatchType;

/// Applies `body` (the raw PATCH request body) of type `patch_type` to `current`.
pub(crate) fn apply_patch(
    patch_type: PatchType,
    current: &Value,
    body: &[u8],
) -> Result<Value, ApiError> {
    let mut doc = current.clone();
    match patch_type {
        PatchType::Merge | PatchType::Strategic | PatchType::Apply => {
            let patch: Value = parse_body(body)?;
            if !patch.is_object() {
                return Err(ApiError::bad_request(format!(
                    "a {} body must be a JSON object, got {}",
                    patch_type.content_type(),
                    json_type(&patch)
                )));
            }
            json_patch::merge(&mut doc, &patch);
        }
        PatchType::Json => {
            let patch: json_patch::Patch = serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!(
                    "the JSON patch is not a list of RFC 6902 operations: {e}"
                ))
            })?;
            json_patch::patch(&mut doc, &patch)
                .map_err(|e| ApiError::invalid(format!("the JSON patch cannot be applied: {e}")))?;
        }
    }
    Ok(doc)
}

/// Parses a JSON request body, answering 400 when it is not JSON.
pub(crate) fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))
}

/// Records `manager` as an `Apply` manager in `metadata.managedFields`, replacing its
/// previous entry. `fieldsV1` is left empty: ownership of individual fields is not tracked.
pub(crate) fn record_apply_manager(object: &mut Value, manager: &str, now: DateTime<Utc>) {
    let api_version = object.get("apiVersion").cloned().unwrap_or(Value::Null);
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let entry = json!({
        "manager": manager,
        "operation": "Apply",
        "apiVersion": api_version,
        "time": rfc3339(now),
        "fieldsType": "FieldsV1",
        "fieldsV1": {},
    });
    let fields = metadata
        .entry("managedFields")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !fields.is_array() {
        *fields = Value::Array(Vec::new());
    }
    if let Value::Array(entries) = fields {
        entries.retain(|e| {
            !(e.get("manager").and_then(Value::as_str) == Some(manager)
                && e.get("operation").and_then(Value::as_str) == Some("Apply"))
        });
        entries.push(entry);
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_removes_nulls_and_replaces_lists() {
        let current = json!({"a": {"b": 1, "c": 2}, "l": [1, 2]});
        let out = apply_patch(PatchType::Merge, &current, br#"{"a":{"b":null},"l":[3]}"#).unwrap();
        assert_eq!(out, json!({"a": {"c": 2}, "l": [3]}));
    }

    #[test]
    fn json_patch_test_failure_is_invalid() {
        let current = json!({"a": 1});
        let err = apply_patch(
            PatchType::Json,
            &current,
            br#"[{"op":"test","path":"/a","value":2}]"#,
        )
        .unwrap_err();
        assert_eq!(err.reason, super::super::Reason::Invalid);
        let ok = apply_patch(
            PatchType::Json,
            &current,
            br#"[{"op":"replace","path":"/a","value":2}]"#,
        )
        .unwrap();
        assert_eq!(ok, json!({"a": 2}));
    }

    #[test]
    fn malformed_bodies_are_bad_requests() {
        let current = json!({});
        for (t, body) in [
            (PatchType::Merge, &b"not json"[..]),
            (PatchType::Merge, &b"[1]"[..]),
            (PatchType::Json, &b"{}"[..]),
        ] {
            let err = apply_patch(t, &current, body).unwrap_err();
            assert_eq!(
                err.reason,
                super::super::Reason::BadRequest,
                "{t:?} {body:?}"
            );
        }
    }

    #[test]
    fn apply_manager_entry_is_replaced_not_duplicated() {
        let mut obj = json!({"apiVersion": "v1", "metadata": {}});
        let t = DateTime::<Utc>::UNIX_EPOCH;
        record_apply_manager(&mut obj, "nbv", t);
        record_apply_manager(&mut obj, "nbv", t);
        record_apply_manager(&mut obj, "other", t);
        let managers: Vec<_> = obj["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["nbv", "other"]);
    }
}
