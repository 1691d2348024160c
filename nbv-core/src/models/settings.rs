//! `spec.modelValidation` resolved: defaults applied, every field checked, and the
//! platforms nbv does not check refused by name.

use std::time::Duration;

use serde_json::Value;
use thiserror::Error;

use super::ModelRef;
use crate::api::{ModelPlatform, ModelValidation, ModelValidationPhase};
use crate::duration::parse_duration;
use crate::triggers::NameKind;

/// How long a job waits for its models when `timeout` is not set (upstream's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The tolerance of the prediction check when `tolerance` is not set (the CRD's
/// default).
pub const DEFAULT_TOLERANCE: f64 = 0.01;

/// What a job's model validation asks for, resolved.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{ModelValidation, ModelValidationPhase};
/// use nbv_core::models::{ModelRef, ModelSettings};
///
/// let spec = ModelValidation { target_models: Some(vec!["fraud".into(), "serving/iris".into()]), ..Default::default() };
/// let settings = ModelSettings::resolve(&spec, "ml").unwrap().expect("enabled by default");
/// assert_eq!(settings.phase, ModelValidationPhase::Both);
/// assert_eq!(settings.targets, [ModelRef::new("ml", "fraud"), ModelRef::new("serving", "iris")]);
/// assert_eq!(settings.timeout.as_secs(), 300);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ModelSettings {
    /// The platform: KServe, or OpenShift AI, which serves the same API.
    pub platform: ModelPlatform,
    /// Which checks run.
    pub phase: ModelValidationPhase,
    /// The models, each once, in the order given.
    pub targets: Vec<ModelRef>,
    /// How long the job waits for its models to be ready, from the start of its run.
    pub timeout: Duration,
    /// The prediction check, when asked for.
    pub prediction: Option<PredictionSettings>,
}

/// The prediction check of `predictionValidation`.
///
/// # Examples
///
/// ```
/// use nbv_core::models::PredictionSettings;
/// use serde_json::json;
///
/// let check = PredictionSettings { test_data: json!({"instances": [[1, 2]]}), expected_output: json!([0]), tolerance: 0.01 };
/// assert_eq!(check.tolerance, 0.01);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionSettings {
    /// The request body sent to each model.
    pub test_data: Value,
    /// What each model must answer ([`expected_outputs`](super::expected_outputs)).
    pub expected_output: Value,
    /// How far apart numbers may be ([`compare_outputs`](super::compare_outputs)).
    pub tolerance: f64,
}

/// A `spec.modelValidation` that nbv cannot carry out, naming the field.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{ModelPlatform, ModelValidation};
/// use nbv_core::models::ModelSettings;
///
/// let spec = ModelValidation { platform: Some(ModelPlatform::Triton), ..Default::default() };
/// let error = ModelSettings::resolve(&spec, "ml").unwrap_err();
/// assert_eq!(error.field(), "spec.modelValidation.platform");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ModelSpecError {
    /// A platform whose models nbv does not check.
    #[error(
        "spec.modelValidation.platform: {platform} is not implemented by nbv, so its models \
         could not be checked; nbv checks KServe InferenceServices (platform kserve or \
         openshift-ai)"
    )]
    UnsupportedPlatform {
        /// The platform as the spec spells it.
        platform: &'static str,
    },
    /// `platform: custom`: what a custom platform's resources report is not defined.
    #[error(
        "spec.modelValidation.customPlatform: a custom platform is not implemented by nbv: \
         nothing defines how its resources report readiness or where their endpoints are, \
         so nbv could not tell a ready model from a broken one; use platform kserve if the \
         models are InferenceServices"
    )]
    CustomPlatform,
    /// A field with a value nbv cannot use.
    #[error("{field}: {problem}")]
    Invalid {
        /// The field's path, as `spec.modelValidation.targetModels[1]`.
        field: String,
        /// What is wrong and what to write instead.
        problem: String,
    },
}

impl ModelSpecError {
    /// The path of the field the error is about.
    pub fn field(&self) -> &str {
        match self {
            ModelSpecError::UnsupportedPlatform { .. } => "spec.modelValidation.platform",
            ModelSpecError::CustomPlatform => "spec.modelValidation.customPlatform",
            ModelSpecError::Invalid { field, .. } => field,
        }
    }
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> ModelSpecError {
    ModelSpecError::Invalid {
        field: field.into(),
        problem: problem.into(),
    }
}

impl ModelSettings {
    /// Resolves `spec` for a job in `namespace`: `Ok(None)` when it is switched off
    /// (`enabled: false`).
    pub fn resolve(
        spec: &ModelValidation,
        namespace: &str,
    ) -> Result<Option<Self>, ModelSpecError> {
        if spec.enabled == Some(false) {
            return Ok(None);
        }
        let platform = spec.platform.unwrap_or(ModelPlatform::Kserve);
        check_platform(platform)?;
        let phase = spec.phase.unwrap_or(ModelValidationPhase::Both);
        let targets = targets(spec.target_models.as_deref().unwrap_or_default(), namespace)?;
        if targets.is_empty() && phase != ModelValidationPhase::Clean {
            return Err(invalid(
                "spec.modelValidation.targetModels",
                "name at least one InferenceService to check (name, or namespace/name), or \
                 set phase: clean to check only the platform",
            ));
        }
        let timeout = match &spec.timeout {
            None => DEFAULT_TIMEOUT,
            Some(text) => parse_duration(text)
                .map_err(|e| invalid("spec.modelValidation.timeout", e.to_string()))?,
        };
        let prediction = match &spec.prediction_validation {
            Some(p) if p.enabled != Some(false) => Some(PredictionSettings {
                test_data: json_field("testData", p.test_data.as_deref())?,
                expected_output: json_field("expectedOutput", p.expected_output.as_deref())?,
                tolerance: tolerance(p.tolerance.as_deref())?,
            }),
            _ => None,
        };
        if prediction.is_some() && targets.is_empty() {
            return Err(invalid(
                "spec.modelValidation.predictionValidation",
                "a prediction check needs the models to ask: name them in targetModels",
            ));
        }
        Ok(Some(ModelSettings {
            platform,
            phase,
            targets,
            timeout,
            prediction,
        }))
    }
}

fn check_platform(platform: ModelPlatform) -> Result<(), ModelSpecError> {
    match platform {
        ModelPlatform::Kserve | ModelPlatform::OpenshiftAi => Ok(()),
        ModelPlatform::Custom => Err(ModelSpecError::CustomPlatform),
        other => Err(ModelSpecError::UnsupportedPlatform {
            platform: other.as_str(),
        }),
    }
}

/// The targets as references, each once: `name` is in the job's namespace.
fn targets(given: &[String], namespace: &str) -> Result<Vec<ModelRef>, ModelSpecError> {
    let mut targets: Vec<ModelRef> = Vec::with_capacity(given.len());
    for (i, text) in given.iter().enumerate() {
        let field = || format!("spec.modelValidation.targetModels[{i}]");
        let (ns, name) = match text.trim().split_once('/') {
            Some((ns, name)) => (ns, name),
            None => (namespace, text.trim()),
        };
        NameKind::Namespace
            .validate(ns)
            .map_err(|e| invalid(field(), e.to_string()))?;
        NameKind::ObjectName
            .validate(name)
            .map_err(|e| invalid(field(), e.to_string()))?;
        let model = ModelRef::new(ns, name);
        if !targets.contains(&model) {
            targets.push(model);
        }
    }
    Ok(targets)
}

fn json_field(name: &str, text: Option<&str>) -> Result<Value, ModelSpecError> {
    let field = format!("spec.modelValidation.predictionValidation.{name}");
    let text = text.ok_or_else(|| invalid(&field, "required by the prediction check"))?;
    serde_json::from_str(text).map_err(|e| {
        invalid(
            &field,
            format!("{e}: write the value as JSON, as the model's API takes it"),
        )
    })
}

fn tolerance(text: Option<&str>) -> Result<f64, ModelSpecError> {
    let Some(text) = text else {
        return Ok(DEFAULT_TOLERANCE);
    };
    match text.trim().parse::<f64>() {
        Ok(t) if t.is_finite() && t >= 0.0 => Ok(t),
        _ => Err(invalid(
            "spec.modelValidation.predictionValidation.tolerance",
            format!("{text:?} is not a non-negative number; write it as 0.01"),
        )),
    }
}
