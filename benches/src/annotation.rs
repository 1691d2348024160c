//! Values of `mlops.dev/on-success-trigger`: a typical one, one of almost 64 KiB, an
//! alias bomb, and the same entries as JSON for the baseline.
//!
//! The baseline is `serde_json::from_str` of the same entries into [`Entry`]: a parser
//! with no validation, no YAML and no error reporting, the least any trigger parser must
//! do.

use std::fmt::Write as _;

use nbv_core::triggers::MAX_ANNOTATION_BYTES;
use serde::{Deserialize, Serialize};

/// The namespace the annotated job lives in.
pub const JOB_NAMESPACE: &str = "ml-platform";

/// One trigger entry, as the baseline deserializes it: the fields, nothing checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// `apiVersion` of the target.
    pub api_version: String,
    /// `kind` of the target.
    pub kind: String,
    /// `name` of the target.
    pub name: String,
    /// `namespace` of the target, if not the job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// `restart`, `sync` or `refresh`.
    pub action: String,
}

/// The two entries of a typical annotation: restart the model server, sync the
/// serving Application.
///
/// # Examples
///
/// ```
/// let entries = nbv_benches::annotation::typical();
/// assert_eq!(entries.len(), 2);
/// assert_eq!(entries[1].action, "sync");
/// ```
pub fn typical() -> Vec<Entry> {
    vec![
        Entry {
            api_version: "serving.kserve.io/v1beta1".to_owned(),
            kind: "InferenceService".to_owned(),
            name: "fraud-model".to_owned(),
            namespace: None,
            action: "restart".to_owned(),
        },
        Entry {
            api_version: "argoproj.io/v1alpha1".to_owned(),
            kind: "Application".to_owned(),
            name: "fraud-serving".to_owned(),
            namespace: Some("argocd".to_owned()),
            action: "sync".to_owned(),
        },
    ]
}

/// `n` distinct, valid entries of every supported kind and action.
///
/// # Examples
///
/// ```
/// let entries = nbv_benches::annotation::many(10);
/// assert_eq!(entries.len(), 10);
/// assert_ne!(entries[0], entries[3]);
/// ```
pub fn many(n: usize) -> Vec<Entry> {
    (0..n)
        .map(|i| {
            let (api_version, kind, action, namespace) = match i % 4 {
                0 => (
                    "serving.kserve.io/v1beta1",
                    "InferenceService",
                    "restart",
                    None,
                ),
                1 => ("apps/v1", "Deployment", "restart", Some("serving")),
                2 => (
                    "argoproj.io/v1alpha1",
                    "Application",
                    "sync",
                    Some("argocd"),
                ),
                _ => ("apps/v1", "StatefulSet", "refresh", None),
            };
            Entry {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                name: format!("model-server-{i:05}"),
                namespace: namespace.map(str::to_owned),
                action: action.to_owned(),
            }
        })
        .collect()
}

/// As many entries as fit in [`MAX_ANNOTATION_BYTES`] once written as YAML: the largest
/// annotation that is parsed at all.
///
/// # Examples
///
/// ```
/// use nbv_benches::annotation::{largest, to_yaml};
/// use nbv_core::triggers::MAX_ANNOTATION_BYTES;
///
/// let entries = largest();
/// let yaml = to_yaml(&entries);
/// assert!(yaml.len() <= MAX_ANNOTATION_BYTES);
/// assert!(yaml.len() > MAX_ANNOTATION_BYTES - 200);
/// ```
pub fn largest() -> Vec<Entry> {
    // Every entry is longer than 64 bytes, so this many are more than fit.
    let candidates = many(MAX_ANNOTATION_BYTES / 64);
    let mut bytes = 0;
    candidates
        .into_iter()
        .take_while(|entry| {
            bytes += to_yaml(std::slice::from_ref(entry)).len();
            bytes <= MAX_ANNOTATION_BYTES
        })
        .collect()
}

/// `entries` as the annotation a user writes: a block-style YAML list.
///
/// # Examples
///
/// ```
/// use nbv_benches::annotation::{to_yaml, typical, JOB_NAMESPACE};
/// use nbv_core::triggers::parse_triggers;
///
/// let yaml = to_yaml(&typical());
/// assert!(yaml.starts_with("- apiVersion: serving.kserve.io/v1beta1\n  kind: InferenceService\n"));
/// assert_eq!(parse_triggers(&yaml, JOB_NAMESPACE).unwrap().len(), 2);
/// ```
pub fn to_yaml(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "- apiVersion: {}\n  kind: {}\n  name: {}\n",
            entry.api_version, entry.kind, entry.name
        );
        if let Some(namespace) = &entry.namespace {
            let _ = writeln!(out, "  namespace: {namespace}");
        }
        let _ = writeln!(out, "  action: {}", entry.action);
    }
    out
}

/// `entries` as compact JSON: the baseline's input.
///
/// # Examples
///
/// ```
/// use nbv_benches::annotation::{to_json, typical, Entry};
///
/// let json = to_json(&typical());
/// assert_eq!(serde_json::from_str::<Vec<Entry>>(&json).unwrap(), typical());
/// ```
pub fn to_json(entries: &[Entry]) -> String {
    // Plain strings only: serializing cannot fail.
    serde_json::to_string(entries).unwrap_or_default()
}

/// A "billion laughs" YAML list: `levels` anchored lists of nine, each made of nine
/// aliases of the previous one, so that expanding it makes 9^`levels` scalars from a
/// few hundred bytes.
///
/// # Examples
///
/// ```
/// use nbv_benches::annotation::{alias_bomb, JOB_NAMESPACE};
/// use nbv_core::triggers::{parse_triggers, TriggerError};
///
/// let bomb = alias_bomb(9);
/// assert!(bomb.len() < 512);
/// let errors = parse_triggers(&bomb, JOB_NAMESPACE).unwrap_err();
/// assert!(matches!(errors.errors(), [TriggerError::AliasNotAllowed { .. }]));
/// // A general-purpose YAML parser expands it until its own limit stops it.
/// let expanded = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&bomb).unwrap_err();
/// assert!(expanded.to_string().contains("repetition limit"), "{expanded}");
/// ```
pub fn alias_bomb(levels: usize) -> String {
    let mut out = String::from("- &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for level in 1..levels {
        let previous = format!("*l{}", level - 1);
        let _ = writeln!(out, "- &l{level} [{}]", vec![previous; 9].join(", "));
    }
    out
}
