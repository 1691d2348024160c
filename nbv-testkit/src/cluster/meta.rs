//! Reading and writing `metadata` fields of objects held as JSON.

use serde_json::{Map, Value};

/// A string field of `metadata`.
pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// `metadata` as a mutable map, created (and replacing a non-object) when needed.
pub(crate) fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let Value::Object(root) = object else {
        unreachable!("object was just made a JSON object")
    };
    let metadata = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    match metadata {
        Value::Object(map) => map,
        _ => unreachable!("metadata was just made a JSON object"),
    }
}

/// Sets a `metadata` field, or removes it when `value` is `None`.
pub(crate) fn set_meta(object: &mut Value, field: &str, value: Option<Value>) {
    let metadata = metadata_mut(object);
    match value {
        Some(v) => {
            metadata.insert(field.to_owned(), v);
        }
        None => {
            metadata.remove(field);
        }
    }
}

/// The object's finalizers (non-string entries ignored).
pub(crate) fn finalizers(object: &Value) -> Vec<&str> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// UIDs named by the object's `ownerReferences`.
pub(crate) fn owner_uids(object: &Value) -> Vec<&str> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// Everything but `metadata` (and `status` when it belongs to a subresource): the part
/// whose changes bump `metadata.generation`.
pub(crate) fn generation_relevant(object: &Value, status_subresource: bool) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("metadata");
        map.remove("apiVersion");
        map.remove("kind");
        if status_subresource {
            map.remove("status");
        }
    }
    copy
}

/// `metadata.generation` as a number (0 when absent or not a number).
pub(crate) fn generation(object: &Value) -> i64 {
    object
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
}
