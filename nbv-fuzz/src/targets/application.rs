//! Any JSON text as an Argo CD Application in the API server's answer, read as the
//! operator's client and watch cache read it: the depth bound rewrites the answer,
//! then `CachedApplication` decodes it.
//!
//! - The depth bound changes a JSON text that parses only by replacing the values
//!   nested deeper than its limit with `null`; whatever it passes has no value nested
//!   deeper.
//! - One Application, whatever its `spec`, `status` and `operation` hold (nesting,
//!   types, sizes), never fails the listing it is part of: the listing decodes, and
//!   the other Application in it reads as it would alone. The metadata is taken as the
//!   API server guarantees it (an `ObjectMeta`), and keys are unique, as the API
//!   server writes them.
//! - What the cache keeps is what a reading written here from the documented rule
//!   expects: `spec.project`, `spec.destination`, `spec.syncPolicy`, `operation`,
//!   `status.operationState` without `syncResult`, the namespaces of
//!   `status.resources` each once; and the metadata's name, namespace, labels and
//!   annotations (without kubectl's last-applied copy).

use std::collections::BTreeSet;

use kube::api::{ObjectList, ObjectMeta};
use nbv_operator::operator::projection::{CachedApplication, LAST_APPLIED};
use nbv_operator::runtime::depth::{DepthLimit, MAX_DEPTH};
use nbv_testkit::depth::cut;
use serde_json::{Map, Value, json};

use super::JSON_TOKENS;
use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "application",
    run,
    dictionary: JSON_TOKENS,
    max_len: 8192,
};

/// How deep arrays and objects nest in `value`.
pub(crate) fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(fields) => 1 + fields.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `text` as the operator's client passes it on.
pub(crate) fn bounded(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    DepthLimit::new(MAX_DEPTH).feed(text, &mut out);
    out
}

/// Checks the depth bound on `data`; the document it passes, when it parses.
pub(crate) fn through_depth_bound(data: &[u8]) -> Option<Value> {
    let passed = serde_json::from_slice::<Value>(&bounded(data)).ok();
    if let Some(value) = &passed {
        assert!(depth(value) <= MAX_DEPTH, "{} levels passed", depth(value));
    }
    if let Ok(original) = serde_json::from_slice::<Value>(data) {
        assert_eq!(
            passed.as_ref(),
            Some(&cut(&original, MAX_DEPTH)),
            "the depth bound changed more than the values nested too deep"
        );
    }
    passed
}

/// What the cache should keep of `app` beyond its metadata.
fn expected_fields(app: &Value) -> Map<String, Value> {
    let present = |v: &Value| (!v.is_null()).then(|| v.clone());
    let mut fields = Map::new();
    if app["spec"].is_object() {
        let spec: Map<String, Value> = ["project", "destination", "syncPolicy"]
            .iter()
            .filter_map(|k| Some(((*k).to_owned(), present(&app["spec"][*k])?)))
            .collect();
        if !spec.is_empty() {
            fields.insert("spec".to_owned(), Value::Object(spec));
        }
    }
    if let Some(operation) = present(&app["operation"]) {
        fields.insert("operation".to_owned(), operation);
    }
    let mut status = Map::new();
    if let Some(state) = app["status"]["operationState"].as_object() {
        let mut state = state.clone();
        state.remove("syncResult");
        status.insert("operationState".to_owned(), Value::Object(state));
    }
    if let Some(resources) = app["status"]["resources"].as_array() {
        let namespaces: BTreeSet<&str> = resources
            .iter()
            .filter_map(|r| r["namespace"].as_str())
            .collect();
        if !namespaces.is_empty() {
            let entries = namespaces.iter().map(|n| json!({ "namespace": n }));
            status.insert("resources".to_owned(), Value::Array(entries.collect()));
        }
    }
    if app["status"].is_object() && !status.is_empty() {
        fields.insert("status".to_owned(), Value::Object(status));
    }
    fields
}

/// Checks that `read` keeps what it should of `app`.
fn check_kept(app: &Value, read: &CachedApplication) {
    let json = read.to_json();
    for (field, expected) in expected_fields(app) {
        assert_eq!(json[&field], expected, "{field} of {app}");
    }
    for field in ["spec", "operation", "status"] {
        if !json[field].is_null() {
            assert!(
                expected_fields(app).contains_key(field),
                "{field} kept from {app}: {json}"
            );
        }
    }
    let metadata = &app["metadata"];
    let text = |v: &Value| v.as_str().map(str::to_owned);
    assert_eq!(read.metadata.name, text(&metadata["name"]));
    assert_eq!(read.metadata.namespace, text(&metadata["namespace"]));
    let labels = serde_json::from_value(metadata["labels"].clone()).ok();
    assert_eq!(read.metadata.labels, labels);
    let mut annotations: Option<std::collections::BTreeMap<String, String>> =
        serde_json::from_value(metadata["annotations"].clone()).ok();
    if let Some(annotations) = &mut annotations {
        annotations.remove(LAST_APPLIED);
    }
    let read_annotations = read.metadata.annotations.clone().filter(|a| !a.is_empty());
    assert_eq!(read_annotations, annotations.filter(|a| !a.is_empty()));
}

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(app) = through_depth_bound(data) else {
        return Outcome::Skipped;
    };
    if !app.is_object()
        || !(app["metadata"].is_null()
            || serde_json::from_value::<ObjectMeta>(app["metadata"].clone()).is_ok())
    {
        return Outcome::Skipped;
    }
    let good = json!({
        "metadata": {"name": "models", "namespace": "argocd", "resourceVersion": "7"},
        "spec": {"project": "ml", "destination": {"namespace": "ml"}},
        "status": {"resources": [{"namespace": "ml"}]}
    });
    let listing = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationList",
        "metadata": {"resourceVersion": "9"}, "items": [app, good]
    });
    let answer = bounded(listing.to_string().as_bytes());
    let passed: Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("the bounded listing is not JSON: {e}"));
    let list: ObjectList<CachedApplication> = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("one Application fails the listing: {e}\n{app}"));
    assert_eq!(list.items.len(), 2);
    check_kept(&passed["items"][0], &list.items[0]);
    check_kept(&good, &list.items[1]);
    Outcome::Read
}
