//! Tests of the `mlops.dev/on-success-trigger` annotation: properties that
//! hold for every input, snapshots of the messages users read, and the
//! examples of the ADR and the user guide.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use nbv_core::annotations::ON_SUCCESS_TRIGGER;
use nbv_core::triggers::{
    Action, ApiVersion, Field, InvalidApiVersion, MAX_ANNOTATION_BYTES, NamespaceDefaults,
    TargetRef, Trigger, TriggerError, TriggerErrors, TriggerSet, from_annotations, parse_triggers,
};
use proptest::prelude::*;
use proptest::sample::select;
use serde_yaml_ng::{Mapping, Value};

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// DNS labels, including ones a YAML 1.1 or 1.2 resolver would read as
/// something other than a string if they were not quoted.
fn label() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?",
        1 => "[a-z0-9]{63}",
        1 => select(vec![
            "true", "false", "null", "yes", "no", "on", "off", "y", "n", "0x1f", "0o17",
            "0b101", "1e3", "123", "007", "nan", "inf", "1-2", "12e-3", "01e310", "0e0",
        ])
        .prop_map(str::to_owned),
    ]
}

fn subdomain() -> impl Strategy<Value = String> {
    prop::collection::vec(label(), 1..4).prop_map(|labels| labels.join("."))
}

fn kind() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Z][A-Za-z0-9]{0,20}",
        select(vec![
            "Deployment",
            "InferenceService",
            "StatefulSet",
            "ConfigMap"
        ])
        .prop_map(str::to_owned),
    ]
}

fn api_version() -> impl Strategy<Value = ApiVersion> {
    let core = "v[1-9][0-9]{0,2}((alpha|beta)[1-9][0-9]?)?";
    let grouped = (subdomain(), "[a-z]([a-z0-9-]{0,10}[a-z0-9])?");
    prop_oneof![
        core.prop_map(|v| ApiVersion::new("", &v).expect("core version")),
        grouped.prop_map(|(g, v)| ApiVersion::new(&g, &v).expect("grouped version")),
    ]
}

/// Valid triggers: Argo CD Applications get `sync` or `refresh`, other
/// kinds `restart` or `refresh`.
fn trigger() -> impl Strategy<Value = Trigger> {
    let application = (
        "v1(alpha|beta)?1".prop_map(|v| ApiVersion::new("argoproj.io", &v).expect("argo")),
        Just("Application".to_owned()),
        select(vec![Action::Sync, Action::Refresh]),
    );
    let workload = (
        api_version(),
        kind().prop_filter("not an Application", |k| k != "Application"),
        select(vec![Action::Restart, Action::Refresh]),
    );
    (
        prop_oneof![1 => application, 3 => workload],
        subdomain(),
        label(),
    )
        .prop_map(|((api_version, kind, action), name, namespace)| {
            let target = TargetRef::new(
                api_version,
                kind.parse().expect("kind"),
                name.parse().expect("name"),
                namespace.parse().expect("namespace"),
            );
            Trigger::new(target, action).expect("action fits the kind")
        })
}

/// Valid trigger sets (collecting drops repeated keys, as parsing does).
fn trigger_set(max: usize) -> impl Strategy<Value = TriggerSet> {
    prop::collection::vec(trigger(), 0..max).prop_map(|triggers| triggers.into_iter().collect())
}

/// The annotation form of one trigger, optionally without its namespace.
fn entry_value(trigger: &Trigger, with_namespace: bool) -> Value {
    let target = trigger.target();
    let mut map = Mapping::new();
    map.insert("apiVersion".into(), target.api_version().to_string().into());
    map.insert("kind".into(), target.kind().as_str().into());
    map.insert("name".into(), target.name().as_str().into());
    if with_namespace {
        map.insert("namespace".into(), target.namespace().as_str().into());
    }
    map.insert("action".into(), trigger.action().as_str().into());
    Value::Mapping(map)
}

/// Renders entries in block style with every key and scalar written as a
/// JSON string, number, boolean or null (JSON is YAML 1.2), so that each
/// value keeps its type whatever it looks like (`"1e3"` stays a string).
fn render(entries: &[Value]) -> String {
    let json = |value: &Value| serde_json::to_string(value).expect("JSON-compatible value");
    let mut out = String::new();
    for entry in entries {
        match entry {
            Value::Mapping(map) if !map.is_empty() => {
                for (i, (key, value)) in map.iter().enumerate() {
                    let prefix = if i == 0 { "- " } else { "  " };
                    let _ = writeln!(out, "{prefix}{}: {}", json(key), json(value));
                }
            }
            other => {
                let _ = writeln!(out, "- {}", json(other));
            }
        }
    }
    out
}

/// Arbitrary YAML values, up to a few levels deep.
fn yaml_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        select(vec![
            "restart",
            "sync",
            "refresh",
            "Restart",
            "v1",
            "apps/v1",
            "a/b/c",
            "/v1",
            "Deployment",
            "Foo_Bar",
            "ml",
            "",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Sequence),
            prop::collection::vec((yaml_key(), inner), 0..4)
                .prop_map(|pairs| Value::Mapping(pairs.into_iter().collect())),
        ]
    })
}

/// Keys: mostly the real fields (so entries get deep into validation), some
/// near misses, some of other types.
fn yaml_key() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => select(Field::ALL.map(Field::as_str).to_vec()).prop_map(Value::from),
        2 => select(vec!["Name", "apiversion", "namspace", "replicas", "<<"]).prop_map(Value::from),
        1 => "[a-zA-Z]{1,8}".prop_map(Value::String),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::Bool),
    ]
}

/// An entry: usually a mapping with most fields, sometimes anything at all.
fn yaml_entry() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::collection::vec((yaml_key(), yaml_value()), 0..7)
            .prop_map(|pairs| Value::Mapping(pairs.into_iter().collect())),
        1 => yaml_value(),
    ]
}

/// One entry that is invalid in exactly one way.
fn invalid_entry() -> impl Strategy<Value = Value> {
    (trigger(), 0..12usize).prop_map(|(trigger, flaw)| {
        let Value::Mapping(mut map) = entry_value(&trigger, true) else {
            unreachable!("entry_value returns a mapping")
        };
        let mut set = |key: &str, value: Value| {
            map.insert(key.into(), value);
        };
        match flaw {
            0 => set("action", "Restart".into()),
            1 => set("action", "delete".into()),
            2 => set("name", 5.into()),
            3 => set("name", Value::Sequence(vec!["a".into()])),
            4 => set("name", "Foo_Bar".into()),
            5 => set("apiVersion", "apps/v1/extra".into()),
            6 => set("apiVersion", "/v1".into()),
            7 => set("kind", "deployment".into()),
            8 => set("namespace", "Not.A.Label".into()),
            9 => set("namespace", Value::Null),
            10 => {
                map.remove("name");
            }
            _ => return Value::String("restart".into()),
        }
        Value::Mapping(map)
    })
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Asserts the invariants every error list has, whatever the input:
/// one line per error, entry errors naming their entry and field.
fn check_error_invariants(errors: &TriggerErrors, entries: Option<usize>) {
    assert!(!errors.errors().is_empty());
    let text = errors.to_string();
    assert_eq!(text.lines().count(), errors.errors().len(), "{text}");
    for error in errors {
        let message = error.to_string();
        assert!(!message.is_empty());
        if let Some(index) = error.entry_index() {
            assert!(
                message.starts_with(&format!("entry {index}")),
                "entry error without its index: {message}"
            );
            if let Some(count) = entries {
                assert!(index < count, "{message}");
            }
        }
        if let Some(field) = error.field() {
            assert!(
                message.contains(&format!("field \"{field}\"")),
                "field error without its field: {message}"
            );
        }
    }
}

/// Parses and checks the universal invariants; returns the outcome.
fn parse_checked(value: &str, entries: Option<usize>) -> Result<TriggerSet, TriggerErrors> {
    let started = Instant::now();
    let result = parse_triggers(value, "job-ns");
    // Generous: the real bound is structural (size limit, no alias
    // expansion, depth limit); this only catches a pathological slowdown.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "parse took {:?}",
        started.elapsed()
    );
    match &result {
        Ok(set) => {
            let mut keys: Vec<String> = set.iter().map(Trigger::key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), set.len(), "duplicate triggers in a set");
            if let Some(count) = entries {
                assert!(set.len() <= count);
            }
            for warning in set.warnings() {
                assert!(
                    warning
                        .to_string()
                        .starts_with(&format!("entry {}", warning.entry_index()))
                );
            }
        }
        Err(errors) => check_error_invariants(errors, entries),
    }
    result
}

mod examples;
mod hostile;
mod messages;
mod properties;
