//! Spec fields nbv does not carry out yet. A job that asks for one fails at once and
//! names the field, rather than succeed without the check it asked for.

use crate::api::NotebookValidationJobSpec;

use super::error::PodSpecError;

/// The first field of `spec` that asks for something nbv does not do, in the order of
/// the CRD; `Ok` when nbv carries out everything the spec asks for.
///
/// - any field the CRD does not know (kept in `spec.unknownFields`).
///
/// `podConfig.buildConfig` is refused by the phase machine instead
/// ([`build_unsupported`](super::build_unsupported)); `modelValidation` when the Pod
/// is built without the models the gate opened for (`super::models`): a job whose
/// model servers were never checked must never show Healthy in Argo CD and open the
/// next sync wave.
pub(super) fn check_implemented(spec: &NotebookValidationJobSpec) -> Result<(), PodSpecError> {
    let refuse = |field: &str, check: &'static str| {
        Err(PodSpecError::NotImplemented {
            field: field.to_owned(),
            check,
        })
    };
    if let Some(field) = spec.unknown_fields.keys().next() {
        return refuse(&format!("spec.{field}"), "a field nbv does not know");
    }
    Ok(())
}
