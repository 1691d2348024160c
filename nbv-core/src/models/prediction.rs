//! The prediction check of `spec.modelValidation.predictionValidation`: the model's
//! answer to `testData` is compared with `expectedOutput` within `tolerance`.
//!
//! The rule, which the validation Pod applies to the model's answer and the core
//! applies wherever it judges one:
//!
//! - numbers match when `|actual - expected| <= tolerance` (an absolute tolerance:
//!   predictions are usually probabilities or class indices, where a relative one
//!   would make 0 match only 0);
//! - arrays match when they have the same length and match element by element;
//! - objects match when they have the same keys and match key by key;
//! - strings, booleans and `null` match only themselves.
//!
//! What is compared is the model's *outputs* ([`response_outputs`]): V1's
//! `predictions`, V2's `outputs[].data`. `expectedOutput` may be written either as
//! those outputs or as a whole response body of the model's protocol; a body is reduced
//! to its outputs the same way, so `{"predictions": [1]}` and `[1]` expect the same.

use serde_json::Value;
use thiserror::Error;

use super::Protocol;

/// The path of the model's predict endpoint for `protocol`, relative to the model's
/// URL.
///
/// # Examples
///
/// ```
/// use nbv_core::models::{Protocol, predict_path};
///
/// assert_eq!(predict_path(Protocol::V1, "fraud"), "/v1/models/fraud:predict");
/// assert_eq!(predict_path(Protocol::V2, "fraud"), "/v2/models/fraud/infer");
/// ```
pub fn predict_path(protocol: Protocol, model: &str) -> String {
    match protocol {
        Protocol::V1 => format!("/v1/models/{model}:predict"),
        Protocol::V2 => format!("/v2/models/{model}/infer"),
    }
}

/// The outputs of a model's response body: V1's `predictions`; V2's `outputs`, each
/// reduced to its `data` (one output: its data alone). `None` when the body is not a
/// response of `protocol`.
///
/// # Examples
///
/// ```
/// use nbv_core::models::{Protocol, response_outputs};
/// use serde_json::json;
///
/// assert_eq!(response_outputs(Protocol::V1, &json!({"predictions": [1, 0]})), Some(json!([1, 0])));
/// let v2 = json!({"model_name": "m", "outputs": [{"name": "out", "datatype": "INT64", "shape": [2], "data": [1, 0]}]});
/// assert_eq!(response_outputs(Protocol::V2, &v2), Some(json!([1, 0])));
/// assert_eq!(response_outputs(Protocol::V2, &json!({"predictions": [1]})), None);
/// ```
pub fn response_outputs(protocol: Protocol, body: &Value) -> Option<Value> {
    match protocol {
        Protocol::V1 => body.get("predictions").cloned(),
        Protocol::V2 => {
            let outputs = body.get("outputs")?.as_array()?;
            let mut data = outputs
                .iter()
                .map(|output| output.get("data").cloned())
                .collect::<Option<Vec<_>>>()?;
            Some(if data.len() == 1 {
                data.remove(0)
            } else {
                Value::Array(data)
            })
        }
    }
}

/// `expectedOutput` as outputs: a whole response body of `protocol` is reduced to its
/// outputs, anything else is taken as the outputs themselves.
///
/// # Examples
///
/// ```
/// use nbv_core::models::{Protocol, expected_outputs};
/// use serde_json::json;
///
/// assert_eq!(expected_outputs(Protocol::V1, &json!({"predictions": [1]})), json!([1]));
/// assert_eq!(expected_outputs(Protocol::V1, &json!([1])), json!([1]));
/// ```
pub fn expected_outputs(protocol: Protocol, expected: &Value) -> Value {
    response_outputs(protocol, expected).unwrap_or_else(|| expected.clone())
}

/// The first place where a model's outputs differ from the expected ones.
///
/// # Examples
///
/// ```
/// use nbv_core::models::compare_outputs;
/// use serde_json::json;
///
/// let mismatch = compare_outputs(&json!([0.5, 1]), &json!([0.5, 2]), 0.01).unwrap_err();
/// assert_eq!(mismatch.to_string(), "at $[1]: expected 1, the model answered 2 (tolerance 0.01)");
/// ```
#[derive(Clone, Debug, PartialEq, Error)]
#[error("at {path}: expected {expected}, the model answered {actual}{}", detail(*.kind, *.tolerance))]
pub struct Mismatch {
    /// Where, as a JSONPath (`$` is the whole output; `$[1]`, `$.scores[0]`).
    pub path: String,
    /// What was expected there, as compact JSON.
    pub expected: String,
    /// What the model answered there, as compact JSON.
    pub actual: String,
    /// How the two differ.
    pub kind: MismatchKind,
    /// The tolerance numbers were compared within.
    pub tolerance: f64,
}

/// How an answer differs from the expected output at a [`Mismatch`]'s path.
///
/// # Examples
///
/// ```
/// use nbv_core::models::{MismatchKind, compare_outputs};
/// use serde_json::json;
///
/// let mismatch = compare_outputs(&json!([1, 2]), &json!([1]), 0.0).unwrap_err();
/// assert_eq!(mismatch.kind, MismatchKind::Length);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MismatchKind {
    /// Two numbers further apart than the tolerance.
    Number,
    /// Arrays of different lengths.
    Length,
    /// Objects with different keys.
    Keys,
    /// Values of different JSON types, or strings, booleans that differ.
    Value,
}

fn detail(kind: MismatchKind, tolerance: f64) -> String {
    match kind {
        MismatchKind::Number => format!(" (tolerance {tolerance})"),
        MismatchKind::Length => " (arrays of different lengths)".to_owned(),
        MismatchKind::Keys => " (objects with different keys)".to_owned(),
        MismatchKind::Value => String::new(),
    }
}

/// Compares a model's outputs with the expected ones by the rule of this module.
///
/// # Examples
///
/// ```
/// use nbv_core::models::compare_outputs;
/// use serde_json::json;
///
/// assert!(compare_outputs(&json!({"score": [0.91]}), &json!({"score": [0.905]}), 0.01).is_ok());
/// assert!(compare_outputs(&json!({"score": [0.91]}), &json!({"score": [0.8]}), 0.01).is_err());
/// ```
pub fn compare_outputs(expected: &Value, actual: &Value, tolerance: f64) -> Result<(), Mismatch> {
    compare_at("$".to_owned(), expected, actual, tolerance)
}

fn compare_at(
    path: String,
    expected: &Value,
    actual: &Value,
    tolerance: f64,
) -> Result<(), Mismatch> {
    let mismatch = |path: String, kind| Mismatch {
        path,
        expected: expected.to_string(),
        actual: actual.to_string(),
        kind,
        tolerance,
    };
    match (expected, actual) {
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (e.as_f64(), a.as_f64());
            match (e, a) {
                // `<=` rather than `<`: a tolerance of 0 asks for equality. NaN never
                // matches, so a model answering NaN fails whatever the tolerance.
                (Some(e), Some(a)) if (a - e).abs() <= tolerance => Ok(()),
                _ => Err(mismatch(path, MismatchKind::Number)),
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(mismatch(path, MismatchKind::Length));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .try_for_each(|(i, (e, a))| compare_at(format!("{path}[{i}]"), e, a, tolerance))
        }
        (Value::Object(e), Value::Object(a)) => {
            if e.len() != a.len() || e.keys().any(|k| !a.contains_key(k)) {
                return Err(mismatch(path, MismatchKind::Keys));
            }
            e.iter().try_for_each(|(k, e)| {
                compare_at(format!("{path}{}", member(k)), e, &a[k], tolerance)
            })
        }
        (e, a) if e == a => Ok(()),
        _ => Err(mismatch(path, MismatchKind::Value)),
    }
}

/// A JSONPath member step: `.name` for a plain identifier, `["a key"]` otherwise.
fn member(key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!(".{key}")
    } else {
        format!("[{}]", Value::String(key.to_owned()))
    }
}
