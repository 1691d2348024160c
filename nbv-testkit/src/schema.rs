//! Manifests checked against a CustomResourceDefinition's schema as strictly as an
//! API server with pruning would keep them: a field the schema does not know is an
//! error, not silently dropped.

use serde_json::Value;

/// The `openAPIV3Schema` of `version` of the CRD `crd`, made strict: an object schema
/// that lists its properties and does not preserve unknown fields gets
/// `additionalProperties: false`, which is what the API server's pruning and
/// `kubectl --validate=strict` make of a field it does not know. `None` when the CRD
/// has no such version.
///
/// # Examples
///
/// ```
/// use nbv_testkit::schema::{schema_errors, strict_schema};
/// use serde_json::json;
///
/// let crd = json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
///     "type": "object", "properties": {"spec": {"type": "object",
///         "properties": {"size": {"type": "integer"}}}}}}}]}});
/// let schema = strict_schema(&crd, "v1").expect("version v1");
/// assert!(schema_errors(&schema, &json!({"spec": {"size": 3}})).is_empty());
/// assert_eq!(schema_errors(&schema, &json!({"spec": {"sise": 3}})).len(), 1);
/// assert!(strict_schema(&crd, "v2").is_none());
/// ```
pub fn strict_schema(crd: &Value, version: &str) -> Option<Value> {
    let mut schema = crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == version)?["schema"]["openAPIV3Schema"]
        .clone();
    strict(&mut schema);
    Some(schema)
}

fn strict(schema: &mut Value) {
    if let Some(map) = schema.as_object_mut() {
        let preserves = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
        if map.contains_key("properties") && !preserves && !map.contains_key("additionalProperties")
        {
            map.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        map.values_mut().for_each(strict);
    } else if let Some(items) = schema.as_array_mut() {
        items.iter_mut().for_each(strict);
    }
}

/// The errors of `doc` against `schema` (empty when it is valid), each with its JSON
/// path.
///
/// # Panics
///
/// When `schema` is not a JSON schema (a CRD's always is).
///
/// # Examples
///
/// ```
/// use nbv_testkit::schema::schema_errors;
/// use serde_json::json;
///
/// let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
/// assert_eq!(schema_errors(&schema, &json!({"n": "x"})), ["/n: \"x\" is not of type \"integer\""]);
/// ```
pub fn schema_errors(schema: &Value, doc: &Value) -> Vec<String> {
    let validator =
        jsonschema::validator_for(schema).unwrap_or_else(|e| panic!("not a JSON schema: {e}"));
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}
