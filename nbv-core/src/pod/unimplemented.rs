//! Spec fields nbv does not carry out yet. A job that asks for one fails at once and
//! names the field, rather than succeed without the check it asked for: a job whose
//! model servers were never checked must never show Healthy in Argo CD and open the
//! next sync wave.

use crate::api::NotebookValidationJobSpec;

use super::error::PodSpecError;

/// The first field of `spec` that asks for something nbv does not do, in the order of
/// the CRD; `Ok` when nbv carries out everything the spec asks for.
///
/// - `modelValidation`, unless `enabled: false`: checks against model servers;
/// - any field the CRD does not know (kept in `spec.unknownFields`).
///
/// `podConfig.buildConfig` is refused by the phase machine instead
/// ([`build_unsupported`](super::build_unsupported)).
pub(super) fn check_implemented(spec: &NotebookValidationJobSpec) -> Result<(), PodSpecError> {
    let refuse = |field: &str, check: &'static str| {
        Err(PodSpecError::NotImplemented {
            field: field.to_owned(),
            check,
        })
    };
    if spec
        .model_validation
        .as_ref()
        .is_some_and(|m| m.enabled != Some(false))
    {
        return refuse("spec.modelValidation", "validation against model servers");
    }
    if let Some(field) = spec.unknown_fields.keys().next() {
        return refuse(&format!("spec.{field}"), "a field nbv does not know");
    }
    Ok(())
}
