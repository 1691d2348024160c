//! What the validation Pod reports of the prediction check (the `mdl` key of its
//! termination message), and how it is written into `status.modelValidationResult`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::api::{ExistingEnvironmentCheck, ModelValidationResult, PredictionCheck};
use crate::text::clean;

/// The most the `mdl` key of the termination message takes, serialized.
pub const MAX_MDL_BYTES: usize = 512;
/// Longest model reference kept (`namespace/name`), in bytes.
const MAX_MODEL: usize = 128;
/// Longest detail kept, in bytes.
const MAX_DETAIL: usize = 200;
/// Longest actual outputs kept, in bytes.
const MAX_ACTUAL: usize = 96;

/// What one model answered to the prediction check, as the Pod reports it.
///
/// # Examples
///
/// ```
/// use nbv_core::models::ReportedPrediction;
///
/// let failed: ReportedPrediction = serde_json::from_str(
///     r#"{"m":"ml/fraud","ok":false,"d":"at $[0]: expected 1, the model answered 0 (tolerance 0.01)","a":"[0]"}"#)?;
/// assert!(!failed.ok);
/// assert_eq!(failed.actual.as_deref(), Some("[0]"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedPrediction {
    /// The model, `namespace/name`.
    #[serde(rename = "m")]
    pub model: String,
    /// Whether its answer matched `expectedOutput`.
    pub ok: bool,
    /// Why not: the [`Mismatch`](super::Mismatch), or the HTTP or connection error.
    #[serde(rename = "d", default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The outputs it answered, as compact JSON (cut to 96 bytes).
    #[serde(rename = "a", default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

impl ReportedPrediction {
    fn cut(&self) -> ReportedPrediction {
        ReportedPrediction {
            model: clean(&self.model, MAX_MODEL),
            ok: self.ok,
            detail: self.detail.as_deref().map(|d| clean(d, MAX_DETAIL)),
            actual: self.actual.as_deref().map(|a| clean(a, MAX_ACTUAL)),
        }
    }
}

/// The predictions as the termination message carries them: texts cleaned of control
/// characters and cut (models to 128 bytes, details to 200, answers to 96), failures
/// before passes (each in model order), then as many as fit in [`MAX_MDL_BYTES`]. The
/// Pod's script does the same, byte for byte; the first failure is also the run's
/// error, so it is never lost.
///
/// # Examples
///
/// ```
/// use nbv_core::models::{MAX_MDL_BYTES, ReportedPrediction, capped_predictions};
///
/// let pass = |i| ReportedPrediction { model: format!("ml/model-{i}"), ok: true, detail: None, actual: None };
/// let mut all: Vec<_> = (0..40).map(pass).collect();
/// all.push(ReportedPrediction { model: "ml/fraud".into(), ok: false, detail: Some("HTTP 503".into()), actual: None });
/// let capped = capped_predictions(&all);
/// assert!(serde_json::to_string(&capped)?.len() <= MAX_MDL_BYTES);
/// assert_eq!(capped[0].model, "ml/fraud");
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn capped_predictions(reports: &[ReportedPrediction]) -> Vec<ReportedPrediction> {
    let (failed, passed): (Vec<_>, Vec<_>) = reports
        .iter()
        .map(ReportedPrediction::cut)
        .partition(|r| !r.ok);
    let mut kept: Vec<ReportedPrediction> = Vec::new();
    for report in failed.into_iter().chain(passed) {
        kept.push(report);
        if json_len(&kept) > MAX_MDL_BYTES {
            kept.pop();
            break;
        }
    }
    kept
}

/// Writes what the Pod reported of the prediction check into `result` (what the gate
/// recorded before the Pod started), as
/// `existingEnvironmentCheck.predictionValidation`: a success when every model
/// answered `expected_output` (the resolved `expectedOutput`); otherwise a failure
/// with the first failing model's difference and answer, which also fails
/// `existingEnvironmentCheck` and `result` itself, naming the model. Nothing changes
/// when nothing was reported.
///
/// # Examples
///
/// ```
/// use nbv_core::api::ModelValidationResult;
/// use nbv_core::models::{ReportedPrediction, record_predictions};
/// use serde_json::json;
///
/// let mut result = ModelValidationResult { success: true, ..Default::default() };
/// let reports = [ReportedPrediction {
///     model: "ml/fraud".into(), ok: false,
///     detail: Some("at $[0]: expected 1, the model answered 0 (tolerance 0.01)".into()),
///     actual: Some("[0]".into()),
/// }];
/// record_predictions(&mut result, &json!([1]), &reports);
/// assert!(!result.success);
/// assert_eq!(result.message.as_deref(), Some(
///     "the prediction check failed: model ml/fraud: at $[0]: expected 1, the model answered 0 (tolerance 0.01)"));
/// let check = result.existing_environment_check.unwrap().prediction_validation.unwrap();
/// assert_eq!(check.expected_output.as_deref(), Some("[1]"));
/// assert_eq!(check.actual_output.as_deref(), Some("[0]"));
/// ```
pub fn record_predictions(
    result: &mut ModelValidationResult,
    expected_output: &Value,
    reports: &[ReportedPrediction],
) {
    if reports.is_empty() {
        return;
    }
    let failed: Vec<&ReportedPrediction> = reports.iter().filter(|r| !r.ok).collect();
    let check = match failed.first() {
        None => {
            let models: Vec<&str> = reports.iter().map(|r| r.model.as_str()).collect();
            PredictionCheck {
                success: true,
                expected_output: Some(expected_output.to_string()),
                actual_output: None,
                difference: None,
                message: Some(format!(
                    "the predictions of {} match expectedOutput",
                    models.join(", ")
                )),
            }
        }
        Some(first) => {
            let mut message = format!(
                "model {}: {}",
                first.model,
                first
                    .detail
                    .as_deref()
                    .unwrap_or("its answer did not match")
            );
            if failed.len() > 1 {
                let more = failed.len() - 1;
                message.push_str(&format!(
                    "; {more} more {} failed",
                    if more == 1 { "model" } else { "models" }
                ));
            }
            PredictionCheck {
                success: false,
                expected_output: Some(expected_output.to_string()),
                actual_output: first.actual.clone(),
                difference: first.detail.clone(),
                message: Some(message),
            }
        }
    };
    let success = check.success;
    let message = check.message.clone();
    let existing =
        result
            .existing_environment_check
            .get_or_insert_with(|| ExistingEnvironmentCheck {
                // A check made only now: it is as good as its one part.
                success,
                ..ExistingEnvironmentCheck::default()
            });
    existing.success &= success;
    existing.prediction_validation = Some(check);
    if !success {
        result.success = false;
        result.message = message.map(|m| format!("the prediction check failed: {m}"));
    }
}

fn json_len<T: Serialize>(value: &T) -> usize {
    // Plain structs of strings and booleans: serialization cannot fail.
    serde_json::to_string(value).map_or(0, |s| s.len())
}
