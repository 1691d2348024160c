//! Which fields a change touched: the paths where two JSON documents differ.

use serde_json::{Map, Value};

/// A path into a JSON document: object keys, outermost first. Keys are kept whole, so
/// an annotation key such as `mlops.dev/wave-complete` is one segment.
pub(crate) type Path = Vec<String>;

/// Every leaf path where `before` and `after` differ. Objects are compared key by key
/// (a missing key reads as an empty object when the other side is an object, so adding
/// a map lists its keys); anything else that differs (a scalar, an array, a type change)
/// is reported at its own path.
pub(crate) fn changed_paths(before: &Value, after: &Value) -> Vec<Path> {
    let mut out = Vec::new();
    walk(&mut Vec::new(), before, after, &mut out);
    out
}

fn walk(prefix: &mut Path, before: &Value, after: &Value, out: &mut Vec<Path>) {
    if before == after {
        return;
    }
    let empty = Map::new();
    let as_map = |v: &'_ Value, other: &Value| -> Option<Map<String, Value>> {
        match v {
            Value::Object(map) => Some(map.clone()),
            Value::Null if other.is_object() => Some(empty.clone()),
            _ => None,
        }
    };
    match (as_map(before, after), as_map(after, before)) {
        (Some(b), Some(a)) => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                prefix.push(key.clone());
                walk(
                    prefix,
                    b.get(key).unwrap_or(&Value::Null),
                    a.get(key).unwrap_or(&Value::Null),
                    out,
                );
                prefix.pop();
            }
        }
        _ => out.push(prefix.clone()),
    }
}

/// Whether `path` starts with `prefix`.
pub(crate) fn starts_with(path: &Path, prefix: &[&str]) -> bool {
    path.len() >= prefix.len() && path.iter().zip(prefix).all(|(a, b)| a == b)
}

/// `a.b."c/d"` for messages.
pub(crate) fn show(path: &Path) -> String {
    path.iter()
        .map(|s| {
            if s.contains(['.', '/']) {
                format!("{s:?}")
            } else {
                s.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_leaves_of_added_maps_and_changed_scalars() {
        let before = json!({"metadata": {"name": "a"}, "spec": {"x": 1}});
        let after =
            json!({"metadata": {"name": "a", "annotations": {"k/v": "1"}}, "spec": {"x": 2}});
        let paths: Vec<String> = changed_paths(&before, &after).iter().map(show).collect();
        assert_eq!(paths, ["metadata.annotations.\"k/v\"", "spec.x"]);
    }

    #[test]
    fn removal_and_type_change_are_reported_at_their_path() {
        let before = json!({"a": {"b": [1]}, "c": "x"});
        let after = json!({"a": {"b": [2]}});
        let paths: Vec<String> = changed_paths(&before, &after).iter().map(show).collect();
        assert_eq!(paths, ["a.b", "c"]);
        assert!(changed_paths(&before, &before).is_empty());
    }
}
