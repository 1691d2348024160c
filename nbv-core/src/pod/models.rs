//! The models a validation Pod is told about: what the gate opened for, as the
//! notebook container's environment.

use k8s_openapi::api::core::v1::EnvVar;

use crate::api::NotebookValidationJobSpec;
use crate::models::{ModelSettings, ServedModel, model_env};

use super::error::PodSpecError;

/// The model validation variables of the notebook container of a job in `namespace`
/// ([`model_env`]); none without an enabled `spec.modelValidation`.
///
/// The Pod of a job with model validation starts only once the gate opened for every
/// model the job names: built without them (`models` empty, or a target missing), it
/// would run the notebook unchecked, so it is refused naming the field. A job that
/// names no model (`phase: clean`) is refused too: nothing here shows that the gate
/// checked the platform.
pub(super) fn model_environment(
    spec: &NotebookValidationJobSpec,
    namespace: &str,
    models: &[ServedModel],
) -> Result<Vec<EnvVar>, PodSpecError> {
    let Some(validation) = spec.model_validation.as_ref() else {
        return Ok(Vec::new());
    };
    if validation.enabled == Some(false) {
        return Ok(Vec::new());
    }
    let unchecked = || PodSpecError::NotImplemented {
        field: "spec.modelValidation".to_owned(),
        check: "validation against model servers",
    };
    if models.is_empty() {
        return Err(unchecked());
    }
    let Some(settings) = ModelSettings::resolve(validation, namespace)? else {
        return Ok(Vec::new());
    };
    let served = |target| models.iter().any(|m| &m.model == target);
    if settings.targets.is_empty() || !settings.targets.iter().all(served) {
        return Err(unchecked());
    }
    Ok(model_env(&settings, namespace, validation, models))
}
