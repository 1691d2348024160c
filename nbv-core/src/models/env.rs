//! The environment the notebook container gets for `spec.modelValidation`: the
//! upstream operator's `MODEL_VALIDATION_*` variables, which notebooks written for it
//! read, and [`MODELS_ENV`], the one document the Pod's prediction check reads.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::EnvVar;
use serde_json::json;

use super::{ModelSettings, ServedModel};
use crate::api::ModelValidation;

/// Environment variable holding the prediction check as one JSON document:
/// `{"tolerance", "testData", "expectedOutput", "models": [{"model", "name", "url",
/// "protocol"}]}`. Set only when the prediction check is on.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::models::MODELS_ENV, "NBV_MODELS");
/// ```
pub const MODELS_ENV: &str = "NBV_MODELS";

/// The model validation variables of the notebook container of a job in
/// `job_namespace`, whose `spec.modelValidation` is `spec` and resolves to
/// `settings`, for the `models` the gate opened for.
///
/// In order:
///
/// - `MODEL_VALIDATION_ENABLED` (`true`), `MODEL_VALIDATION_PLATFORM` (`kserve` or
///   `openshift-ai`), `MODEL_VALIDATION_NAMESPACE` (the job's),
///   `MODEL_VALIDATION_PHASE` (`clean`, `existing` or `both`);
/// - with targets: `MODEL_VALIDATION_TARGET_MODELS` (`ns/name,...`, resolved),
///   `MODEL_VALIDATION_TARGET_MODELS_ORIGINAL` (as the spec wrote them) and
///   `MODEL_VALIDATION_TARGET_NAMESPACES` (each namespace once, sorted);
/// - `MODEL_VALIDATION_TIMEOUT` (as written, or `5m`);
/// - with the prediction check: `MODEL_VALIDATION_PREDICTION_ENABLED` (`true`),
///   `MODEL_VALIDATION_PREDICTION_TEST_DATA` and `..._EXPECTED_OUTPUT` (as written),
///   `..._TOLERANCE` (as written, or `0.01`);
/// - per model, `MODEL_VALIDATION_<NAME>_URL`: the name upper-cased, every other
///   character than a letter or digit made `_` (`fraud-v2` → `FRAUD_V2`). When two
///   models map to the same variable (the same name in two namespaces), the first
///   keeps it: [`MODELS_ENV`] has every URL;
/// - with the prediction check, [`MODELS_ENV`].
///
/// # Examples
///
/// ```
/// use nbv_core::api::ModelValidation;
/// use nbv_core::models::{ModelRef, ModelSettings, Protocol, ServedModel, model_env};
///
/// let spec = ModelValidation { target_models: Some(vec!["fraud-v2".into()]), ..Default::default() };
/// let settings = ModelSettings::resolve(&spec, "ml").unwrap().unwrap();
/// let served = ServedModel {
///     model: ModelRef::new("ml", "fraud-v2"),
///     url: "http://fraud-v2.ml.svc.cluster.local".into(),
///     protocol: Protocol::V1,
///     version: None,
/// };
/// let env = model_env(&settings, "ml", &spec, &[served]);
/// let value = |name: &str| env.iter().find(|e| e.name == name).and_then(|e| e.value.clone());
/// assert_eq!(value("MODEL_VALIDATION_TARGET_MODELS").as_deref(), Some("ml/fraud-v2"));
/// assert_eq!(value("MODEL_VALIDATION_FRAUD_V2_URL").as_deref(), Some("http://fraud-v2.ml.svc.cluster.local"));
/// assert_eq!(value("MODEL_VALIDATION_TIMEOUT").as_deref(), Some("5m"));
/// assert_eq!(value("NBV_MODELS"), None); // no prediction check
/// ```
pub fn model_env(
    settings: &ModelSettings,
    job_namespace: &str,
    spec: &ModelValidation,
    models: &[ServedModel],
) -> Vec<EnvVar> {
    let mut vars = vec![
        var("MODEL_VALIDATION_ENABLED", "true"),
        var("MODEL_VALIDATION_PLATFORM", settings.platform.as_str()),
        var("MODEL_VALIDATION_NAMESPACE", job_namespace),
        var("MODEL_VALIDATION_PHASE", settings.phase.as_str()),
    ];
    if !settings.targets.is_empty() {
        let resolved: Vec<String> = settings.targets.iter().map(|t| t.to_string()).collect();
        let written = spec.target_models.as_deref().unwrap_or_default();
        let namespaces: BTreeSet<&str> = settings
            .targets
            .iter()
            .map(|t| t.namespace.as_str())
            .collect();
        let namespaces: Vec<&str> = namespaces.into_iter().collect();
        vars.extend([
            var("MODEL_VALIDATION_TARGET_MODELS", &resolved.join(",")),
            var(
                "MODEL_VALIDATION_TARGET_MODELS_ORIGINAL",
                &written.join(","),
            ),
            var("MODEL_VALIDATION_TARGET_NAMESPACES", &namespaces.join(",")),
        ]);
    }
    vars.push(var(
        "MODEL_VALIDATION_TIMEOUT",
        spec.timeout.as_deref().unwrap_or("5m"),
    ));
    let written = spec.prediction_validation.as_ref();
    if let (Some(prediction), Some(written)) = (&settings.prediction, written) {
        let tolerance = written
            .tolerance
            .clone()
            .unwrap_or_else(|| prediction.tolerance.to_string());
        vars.extend([
            var("MODEL_VALIDATION_PREDICTION_ENABLED", "true"),
            var(
                "MODEL_VALIDATION_PREDICTION_TEST_DATA",
                written.test_data.as_deref().unwrap_or_default(),
            ),
            var(
                "MODEL_VALIDATION_PREDICTION_EXPECTED_OUTPUT",
                written.expected_output.as_deref().unwrap_or_default(),
            ),
            var("MODEL_VALIDATION_PREDICTION_TOLERANCE", &tolerance),
        ]);
    }
    let mut named = BTreeSet::new();
    for served in models {
        let name = format!("MODEL_VALIDATION_{}_URL", env_name(&served.model.name));
        if named.insert(name.clone()) {
            vars.push(var(&name, &served.url));
        }
    }
    if let Some(prediction) = &settings.prediction {
        let models: Vec<_> = models
            .iter()
            .map(|m| {
                json!({
                    "model": m.model.to_string(),
                    "name": m.model.name,
                    "url": m.url,
                    "protocol": m.protocol,
                })
            })
            .collect();
        let document = json!({
            "tolerance": prediction.tolerance,
            "testData": prediction.test_data,
            "expectedOutput": prediction.expected_output,
            "models": models,
        });
        vars.push(var(MODELS_ENV, &document.to_string()));
    }
    vars
}

/// `name` as part of an environment variable's name: upper case, `_` for anything
/// but ASCII letters and digits.
fn env_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

fn var(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        value_from: None,
    }
}
