//! Shared by `health.rs` and nbv-lua's `tests/health_lua` (which includes this file by
//! path): the YAML table of cases and generators of job objects as Argo CD's VM may
//! receive them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use nbv_core::health::{HealthStatus, RuntimeErrorKind, Variant};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// What Argo CD ends up with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The script's health.
    Health(HealthStatus),
    /// The empty health status.
    Empty,
    /// The script raised an error of this kind.
    Error(RuntimeErrorKind),
}

impl Outcome {
    pub fn of(result: Result<Option<HealthStatus>, RuntimeErrorKind>) -> Outcome {
        match result {
            Ok(Some(health)) => Outcome::Health(health),
            Ok(None) => Outcome::Empty,
            Err(kind) => Outcome::Error(kind),
        }
    }
}

/// One file of `tests/data/health`: what Argo CD shows for the object, with each
/// shipped check.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub object: Value,
    pub basic: Outcome,
    pub advanced: Outcome,
    /// The guide's exact script, where it differs from `basic` (a status of an older
    /// generation).
    #[serde(default)]
    pub guide: Option<Outcome>,
}

impl Case {
    pub fn expected(&self, variant: Variant) -> &Outcome {
        match variant {
            Variant::Basic => &self.basic,
            Variant::Advanced => &self.advanced,
            Variant::Guide => self.guide.as_ref().unwrap_or(&self.basic),
        }
    }
}

/// nbv-core's `tests/data/health`, from nbv-core's tests and from nbv-lua's (a sibling
/// directory of the workspace).
pub fn data_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let core = if env!("CARGO_PKG_NAME") == "nbv-core" {
        manifest.to_path_buf()
    } else {
        manifest.join("../nbv-core")
    };
    core.join("tests/data/health")
}

/// Every case, by file name, sorted.
pub fn cases() -> Vec<(String, Case)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("tests/data/health exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            // Through JSON, so that an outcome is written as a one-key map
            // (`health: {...}`, `error: Index`) rather than with a YAML tag.
            let value: Value =
                serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let case = serde_json::from_value(value).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, case)
        })
        .collect()
}

pub const PHASES: [&str; 8] = [
    "Initializing",
    "Building",
    "BuildComplete",
    "ValidationRunning",
    "Succeeded",
    "Failed",
    "Pending",
    "Running",
];

/// Text as people write it: empty, plain, or any printable Unicode.
pub fn text() -> BoxedStrategy<String> {
    prop_oneof![
        1 => Just(String::new()),
        3 => "[A-Za-z0-9 :._'()-]{1,24}",
        2 => "\\PC{1,12}",
    ]
    .boxed()
}

/// Numbers a field may hold, with the ones where VMs and truthiness differ.
pub fn number() -> BoxedStrategy<Value> {
    prop_oneof![
        3 => Just(json!(0)),
        3 => (1_i64..10).prop_map(Value::from),
        1 => (-5_i64..0).prop_map(Value::from),
        1 => any::<i64>().prop_map(Value::from),
        1 => Just(json!(u64::MAX)),
        1 => Just(json!(1e15)),
        1 => Just(json!(-0.0)),
        1 => Just(json!(0.1)),
        1 => (-1e7..1e7_f64).prop_map(|n| json!(n)),
        1 => any::<f64>().prop_filter("JSON has no NaN or infinity", |n| n.is_finite()).prop_map(|n| json!(n)),
    ]
    .boxed()
}

/// A value of the wrong type for any field.
pub fn odd() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        Just(json!({})),
        Just(json!([])),
        Just(json!({"a": 1})),
        Just(json!([1, "x"])),
    ]
    .boxed()
}

fn string_or_odd(strings: BoxedStrategy<String>) -> BoxedStrategy<Value> {
    prop_oneof![4 => strings.prop_map(Value::String), 1 => odd()].boxed()
}

/// A phase: the branches with the most logic (Failed, Succeeded, ValidationRunning) come
/// up most often.
pub fn phase() -> BoxedStrategy<Value> {
    let weighted = PHASES.iter().map(|phase| {
        let weight = match *phase {
            "Failed" => 5,
            "Succeeded" | "ValidationRunning" => 4,
            _ => 1,
        };
        (weight, Just(Value::from(*phase)).boxed())
    });
    let known = prop::strategy::Union::new_weighted(weighted.collect());
    prop_oneof![
        10 => known,
        2 => text().prop_map(Value::String),
        1 => odd(),
    ]
    .boxed()
}

/// Optional object fields: each is present with probability 0.7.
fn fields(entries: Vec<(&'static str, BoxedStrategy<Value>)>) -> BoxedStrategy<Value> {
    let parts: Vec<_> = entries
        .into_iter()
        .map(|(key, strategy)| prop::option::weighted(0.7, strategy).prop_map(move |v| (key, v)))
        .collect();
    parts
        .prop_map(|parts| {
            let map: Map<String, Value> = parts
                .into_iter()
                .filter_map(|(key, value)| value.map(|v| (key.to_owned(), v)))
                .collect();
            Value::Object(map)
        })
        .boxed()
}

pub fn cell() -> BoxedStrategy<Value> {
    let statuses = prop::sample::select(vec![
        "Success", "Failure", "Skipped", "success", "error", "running",
    ])
    .prop_map(str::to_owned)
    .boxed();
    let cell = fields(vec![
        (
            "cellIndex",
            prop_oneof![6 => (0_i64..50).prop_map(Value::from), 1 => odd(), 1 => text().prop_map(Value::String)].boxed(),
        ),
        ("status", string_or_odd(statuses)),
        ("errorMessage", string_or_odd(text())),
        ("errorType", string_or_odd(text())),
        ("executionTime", Just(json!("1.2s")).boxed()),
    ]);
    prop_oneof![10 => cell, 1 => odd(), 1 => text().prop_map(Value::String)].boxed()
}

pub fn results() -> BoxedStrategy<Value> {
    prop_oneof![
        6 => prop::collection::vec(cell(), 0..6).prop_map(Value::Array),
        1 => odd(),
        1 => text().prop_map(Value::String),
    ]
    .boxed()
}

pub fn status_object() -> BoxedStrategy<Value> {
    let time = prop_oneof![
        1 => Just(String::new()),
        4 => (2020_u32..2030, 1_u32..13, 1_u32..29, 0_u32..24, 0_u32..60)
            .prop_map(|(y, mo, d, h, mi)| format!("{y}-{mo:02}-{d:02}T{h:02}:{mi:02}:00Z")),
    ]
    .boxed();
    let pod = text().prop_map(|t| format!("train-validation-{t}")).boxed();
    fields(vec![
        ("phase", phase()),
        ("message", string_or_odd(text())),
        ("retryCount", prop_oneof![4 => number(), 1 => odd()].boxed()),
        ("completionTime", string_or_odd(time)),
        (
            "validationPodName",
            prop_oneof![3 => pod.prop_map(Value::String), 1 => Just(json!("")), 1 => odd()].boxed(),
        ),
        ("results", results()),
        ("observedGeneration", generation()),
    ])
}

/// A generation: usually a small integer (so that it is often below, at or above the
/// other one), sometimes any number or a value of the wrong type.
pub fn generation() -> BoxedStrategy<Value> {
    prop_oneof![
        8 => (0_i64..4).prop_map(Value::from),
        1 => number(),
        1 => odd(),
    ]
    .boxed()
}

/// A job object: usually with a status object, sometimes without, with `null`, or with
/// a status of the wrong type.
pub fn job_object() -> BoxedStrategy<Value> {
    let status = prop_oneof![
        1 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => odd().prop_map(Some),
        1 => prop::sample::select(PHASES.to_vec()).prop_map(|p| Some(Value::from(p))),
        14 => status_object().prop_map(Some),
    ];
    // `metadata`: with a generation (usually), without one, or of the wrong type.
    let with_generation =
        generation().prop_map(|g| json!({"name": "train", "namespace": "ml", "generation": g}));
    let metadata = prop_oneof![
        2 => Just(json!({"name": "train", "namespace": "ml"})),
        6 => with_generation,
        1 => odd(),
    ];
    (status, metadata)
        .prop_map(|(status, metadata)| {
            let mut obj = json!({
                "apiVersion": "mlops.mlops.dev/v1alpha1",
                "kind": "NotebookValidationJob",
                "metadata": metadata,
            });
            if let (Some(status), Some(map)) = (status, obj.as_object_mut()) {
                map.insert("status".to_owned(), status);
            }
            obj
        })
        .boxed()
}
