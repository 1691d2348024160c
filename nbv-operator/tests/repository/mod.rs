//! Files of the repository and of the reference material beside it, for the tests
//! that check shipped files (`config/`, `bundle/`, `catalog/`): reading them, keeping
//! generated ones equal to what the code renders, and validating manifests against the
//! schemas of the CRDs that define them.
#![allow(dead_code)] // Each test binary uses its own part.

use std::path::{Path, PathBuf};

pub use nbv_testkit::schema::schema_errors;
use nbv_testkit::schema::strict_schema;
use serde_json::Value;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A file of the repository, by its path from the root.
pub fn read(relative: &str) -> String {
    let path = root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}

/// Every document of a YAML text, as JSON values (empty documents skipped).
pub fn parse_documents(text: &str, what: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .enumerate()
        .map(|(i, document)| {
            serde::Deserialize::deserialize(document)
                .unwrap_or_else(|e| panic!("{what}: document {i} is not valid YAML: {e}"))
        })
        .filter(|v: &Value| !v.is_null())
        .collect()
}

/// Every document of a YAML file of the repository.
pub fn documents(relative: &str) -> Vec<Value> {
    parse_documents(&read(relative), relative)
}

/// Compares a generated file with what the code renders; rewrites it when
/// `NBV_UPDATE_CONFIG` is set. `how` says how to regenerate it, `test` is the test
/// target that checks it.
pub fn assert_generated(relative: &str, expected: &str, how: &str, test: &str) {
    let path = root().join(relative);
    if std::env::var_os("NBV_UPDATE_CONFIG").is_some() {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(&path, expected).unwrap_or_else(|e| panic!("cannot write {relative}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != expected {
        let line = committed
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "the length".to_owned(), |i| format!("line {}", i + 1));
        panic!(
            "{relative} is out of date (it first differs at {line}); regenerate it with\n  {how}\n\
             or with\n  NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test {test}"
        );
    }
}

/// The reference material beside the repository (`../shared/reference/`), never
/// copied into it.
pub fn reference(relative: &str) -> PathBuf {
    root().join("../shared/reference").join(relative)
}

/// The `openAPIV3Schema` of version `version` of the CRD in `reference/<crd>`, made
/// strict ([`strict_schema`]: a typo would otherwise pass the schema and be dropped
/// silently).
pub fn crd_schema(crd: &str, version: &str) -> Value {
    let path = reference(crd);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (shared/ must be beside the repository)",
            path.display()
        )
    });
    let doc = &parse_documents(&text, crd)[0];
    strict_schema(doc, version).unwrap_or_else(|| panic!("{crd} has no version {version}"))
}

/// Panics unless `doc` (described as `what`) is valid against version `version` of
/// the CRD `crd`; returns the schema for further checks.
pub fn assert_valid(crd: &str, version: &str, doc: &Value, what: &str) -> Value {
    let schema = crd_schema(crd, version);
    let errors = schema_errors(&schema, doc);
    assert!(
        errors.is_empty(),
        "{what} does not validate against {crd}:\n{}",
        errors.join("\n")
    );
    schema
}
