//! Compatibility with the upstream operator's CRD and sample manifests.
//!
//! The files under `tests/data/upstream/` are the upstream CRD and samples, unchanged.

use std::collections::BTreeSet;
use std::path::PathBuf;

use nbv_core::api::NotebookValidationJob;
use serde_json::Value;

fn upstream_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream")
}

/// Every NotebookValidationJob document in the upstream samples, with its file name.
fn upstream_jobs() -> Vec<(String, Value)> {
    let mut jobs = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(upstream_dir().join("samples"))
        .expect("samples dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable sample");
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: Value = match serde::Deserialize::deserialize(doc) {
                Ok(Value::Null) => continue,
                Ok(v) => v,
                Err(e) => panic!("{}: not YAML: {e}", path.display()),
            };
            if value["kind"] == "NotebookValidationJob" {
                jobs.push((
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    value,
                ));
            }
        }
    }
    jobs
}

#[test]
fn every_upstream_sample_round_trips_without_losing_a_field() {
    let jobs = upstream_jobs();
    assert!(
        jobs.len() >= 12,
        "expected the upstream samples, found {}",
        jobs.len()
    );
    for (file, original) in jobs {
        let job: NotebookValidationJob = serde_json::from_value(original.clone())
            .unwrap_or_else(|e| panic!("{file}: does not deserialize: {e}"));
        let back = serde_json::to_value(&job).expect("serializes");
        assert_eq!(back, original, "{file}: round trip changed the manifest");
    }
}

#[test]
fn fields_unknown_to_the_crd_are_kept_not_dropped() {
    let (_, original) = upstream_jobs()
        .into_iter()
        .find(|(_, v)| v["metadata"]["name"] == "train-sentiment-model")
        .expect("model-training-job sample");
    let job: NotebookValidationJob = serde_json::from_value(original).unwrap();
    let unknown: BTreeSet<_> = job.spec.unknown_fields.keys().cloned().collect();
    assert_eq!(
        unknown,
        BTreeSet::from(["retryPolicy".to_owned(), "validation".to_owned()])
    );
}

fn upstream_crd() -> Value {
    let text =
        std::fs::read_to_string(upstream_dir().join("notebookvalidationjobs.crd.yaml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

fn our_crd() -> Value {
    serde_json::to_value(nbv_core::api::crd()).unwrap()
}

#[test]
fn names_scope_versions_and_columns_match_upstream() {
    let (up, ours) = (upstream_crd(), our_crd());
    assert_eq!(ours["metadata"]["name"], up["metadata"]["name"]);
    assert_eq!(ours["spec"]["group"], up["spec"]["group"]);
    assert_eq!(ours["spec"]["scope"], up["spec"]["scope"]);
    assert_eq!(ours["spec"]["names"], up["spec"]["names"]);
    let (uv, ov) = (&up["spec"]["versions"][0], &ours["spec"]["versions"][0]);
    for key in [
        "name",
        "served",
        "storage",
        "subresources",
        "additionalPrinterColumns",
    ] {
        assert_eq!(ov[key], uv[key], "versions[0].{key} differs");
    }
}

/// The JSON types a schema node admits.
fn admitted_types(node: &Value) -> BTreeSet<String> {
    let mut types = BTreeSet::new();
    if node["x-kubernetes-int-or-string"] == true {
        types.extend(["integer".to_owned(), "string".to_owned()]);
    }
    match &node["type"] {
        Value::String(t) => {
            types.insert(t.clone());
        }
        Value::Array(ts) => types.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned))),
        _ => {}
    }
    if types.contains("integer") {
        types.insert("number".to_owned());
    }
    types
}

/// Walks the upstream schema and checks that ours admits every property with the same
/// type, never requires more, and keeps every enum value. Returns the problems found.
fn compare(up: &Value, ours: &Value, path: &str, problems: &mut Vec<String>) {
    let (ut, ot) = (admitted_types(up), admitted_types(ours));
    // An untyped node of ours (preserve-unknown-fields) admits anything.
    let ours_open = ot.is_empty() && ours["x-kubernetes-preserve-unknown-fields"] == true;
    if !ours_open && !ut.is_subset(&ot) {
        problems.push(format!("{path}: upstream type {ut:?}, ours {ot:?}"));
        return;
    }
    if let (Some(ue), Some(oe)) = (up["enum"].as_array(), ours["enum"].as_array()) {
        for v in ue {
            if !oe.contains(v) {
                problems.push(format!("{path}: enum value {v} of upstream missing"));
            }
        }
    }
    let our_required: BTreeSet<_> = ours["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let up_required: BTreeSet<_> = up["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for r in our_required.difference(&up_required) {
        problems.push(format!("{path}: ours requires {r}, upstream does not"));
    }
    if let Some(props) = up["properties"].as_object() {
        for (name, child) in props {
            match ours["properties"].get(name) {
                Some(ours_child) => compare(child, ours_child, &format!("{path}.{name}"), problems),
                None if ours_open => {}
                None => problems.push(format!("{path}.{name}: missing in ours")),
            }
        }
    }
    if up["items"].is_object() {
        compare(&up["items"], &ours["items"], &format!("{path}[]"), problems);
    }
    if up["additionalProperties"].is_object() {
        compare(
            &up["additionalProperties"],
            &ours["additionalProperties"],
            &format!("{path}{{}}"),
            problems,
        );
    }
}

#[test]
fn our_schema_admits_every_upstream_property_with_its_type() {
    let (up, ours) = (upstream_crd(), our_crd());
    let schema = |crd: &Value| crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
    let mut problems = Vec::new();
    compare(&schema(&up), &schema(&ours), "", &mut problems);
    // The API server validates apiVersion, kind and metadata itself; and a job without a
    // spec cannot run, so ours rejects it at admission instead of failing later.
    let deliberate = [
        ": ours requires spec, upstream does not",
        ".apiVersion: missing in ours",
        ".kind: missing in ours",
        ".metadata: missing in ours",
    ];
    problems.retain(|p| !deliberate.contains(&p.as_str()));
    assert!(
        problems.is_empty(),
        "schema incompatibilities:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_schema_comparison_notices_a_dropped_or_retyped_property() {
    let up = upstream_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
    let mut ours = up.clone();
    ours["properties"]["spec"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("timeout");
    ours["properties"]["status"]["properties"]["retryCount"]["type"] = "string".into();
    let mut problems = Vec::new();
    compare(&up, &ours, "", &mut problems);
    assert_eq!(
        problems,
        vec![
            ".spec.timeout: missing in ours".to_owned(),
            ".status.retryCount: upstream type {\"integer\", \"number\"}, ours {\"string\"}"
                .to_owned()
        ]
    );
}

#[test]
fn upstream_defaults_are_kept() {
    let (up, ours) = (upstream_crd(), our_crd());
    let spec = |crd: &Value| {
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
    };
    let (us, os) = (spec(&up), spec(&ours));
    for path in [
        "/properties/timeout/default",
        "/properties/podConfig/properties/serviceAccountName/default",
        "/properties/comparisonConfig/properties/strategy/default",
        "/properties/modelValidation/properties/platform/default",
        "/properties/validationConfig/properties/level/default",
    ] {
        assert_eq!(os.pointer(path), us.pointer(path), "default at {path}");
    }
}

#[test]
fn the_crd_fits_what_kubectl_apply_can_store() {
    // `kubectl apply` keeps the whole object in an annotation, and annotations of an
    // object share 256 KiB; leave ample room.
    let yaml = serde_yaml_ng::to_string(&nbv_core::api::crd()).unwrap();
    assert!(yaml.len() < 160 * 1024, "the CRD is {} bytes", yaml.len());
    assert!(
        !yaml.contains("nbv_core"),
        "rustdoc examples leaked into the schema"
    );
}
