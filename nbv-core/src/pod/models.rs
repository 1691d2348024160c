//! The models a validation Pod is told about: what the gate opened for, as the
//! notebook container's environment.

use k8s_openapi::api::core::v1::EnvVar;

use crate::api::{ModelValidationPhase, NotebookValidationJobSpec};
use crate::models::{ModelSettings, ServedModel, model_env};

use super::error::PodSpecError;

/// The model validation variables of the notebook container of a job in `namespace`
/// ([`model_env`]); none without an enabled `spec.modelValidation`.
///
/// The Pod of a job with model validation starts only once the gate opened for it
/// (`models` is `Some`), and, where the phase checks the models, for every model the
/// job names: built without them, it would run the notebook unchecked, so it is
/// refused naming the field.
pub(super) fn model_environment(
    spec: &NotebookValidationJobSpec,
    namespace: &str,
    models: Option<&[ServedModel]>,
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
    let Some(settings) = ModelSettings::resolve(validation, namespace)? else {
        return Ok(Vec::new());
    };
    let Some(models) = models else {
        return Err(unchecked());
    };
    let served = |target| models.iter().any(|m| &m.model == target);
    if settings.phase != ModelValidationPhase::Clean && !settings.targets.iter().all(served) {
        return Err(unchecked());
    }
    Ok(model_env(&settings, namespace, validation, models))
}
