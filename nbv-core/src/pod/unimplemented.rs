//! Spec fields nbv does not carry out yet. A job that asks for one fails at once and
//! names the field, rather than succeed without the check it asked for: a job whose
//! model servers were never checked must never show Healthy in Argo CD and open the
//! next sync wave.

use crate::api::NotebookValidationJobSpec;
use crate::models::ModelSettings;

use super::error::PodSpecError;

/// The first field of `spec` (of a job in `namespace`) that asks for something nbv
/// does not do, in the order of the CRD; `Ok` when nbv carries out everything the
/// spec asks for.
///
/// - `modelValidation` on a platform nbv does not check, or that cannot be carried out
///   as written ([`ModelSettings::resolve`] names the field);
/// - any field the CRD does not know (kept in `spec.unknownFields`).
///
/// `podConfig.buildConfig` is the build's ([`crate::build::BuildPlan::resolve`] names
/// what it cannot carry out).
pub(super) fn check_implemented(
    spec: &NotebookValidationJobSpec,
    namespace: &str,
) -> Result<(), PodSpecError> {
    if let Some(models) = &spec.model_validation {
        ModelSettings::resolve(models, namespace)?;
    }
    if let Some(field) = spec.unknown_fields.keys().next() {
        return Err(PodSpecError::NotImplemented {
            field: format!("spec.{field}"),
            check: "a field nbv does not know",
        });
    }
    Ok(())
}
