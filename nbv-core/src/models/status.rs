//! What the gate's decisions write into the job's status: the model check's result,
//! and while the job waits for a model, why.

use chrono::{DateTime, Utc};

use crate::api::{ModelValidationResult, NotebookValidationJobStatus};
use crate::phase::{ConditionStatus, ConditionType, Failure, FailureCause, Reason, set_condition};

/// The Ready condition's reason while a job waits for its models.
pub const WAITING_FOR_MODELS: &str = "WaitingForModels";

/// Records `result` as `status.modelValidationResult`; whether the status changed.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{ModelValidationResult, NotebookValidationJobStatus};
/// use nbv_core::models::record_result;
///
/// let mut status = NotebookValidationJobStatus::default();
/// let result = ModelValidationResult { success: true, ..Default::default() };
/// assert!(record_result(&mut status, &result));
/// assert!(!record_result(&mut status, &result), "recording it again changes nothing");
/// ```
pub fn record_result(
    status: &mut NotebookValidationJobStatus,
    result: &ModelValidationResult,
) -> bool {
    if status.model_validation_result.as_ref() == Some(result) {
        return false;
    }
    status.model_validation_result = Some(result.clone());
    true
}

/// Records that the job waits for its models: `status.message` and the Ready
/// condition (`False`, [`WAITING_FOR_MODELS`]) say what for, so that Argo CD shows the
/// job Progressing with the model named. Whether the status changed.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::NotebookValidationJobStatus;
/// use nbv_core::models::record_wait;
///
/// let now = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
/// let mut status = NotebookValidationJobStatus::default();
/// assert!(record_wait(&mut status, "waiting for the models: InferenceService ml/fraud is not Ready", now));
/// assert_eq!(status.message.as_deref(), Some("waiting for the models: InferenceService ml/fraud is not Ready"));
/// let ready = &status.conditions.as_ref().unwrap()[0];
/// assert_eq!((ready.status.as_str(), ready.reason.as_str()), ("False", "WaitingForModels"));
/// assert!(!record_wait(&mut status, "waiting for the models: InferenceService ml/fraud is not Ready", now));
/// ```
pub fn record_wait(
    status: &mut NotebookValidationJobStatus,
    message: &str,
    now: DateTime<Utc>,
) -> bool {
    let mut changed = status.message.as_deref() != Some(message);
    status.message = Some(message.to_owned());
    let generation = status.observed_generation;
    let reason = Reason::new(WAITING_FOR_MODELS).unwrap_or(Reason::VALIDATION_FAILED);
    changed |= set_condition(
        status.conditions.get_or_insert_with(Vec::new),
        &ConditionType::READY,
        ConditionStatus::False,
        &reason,
        message,
        now,
        generation,
    );
    changed
}

/// The failure of a job whose gate failed ([`ModelGate::Fail`](super::ModelGate::Fail)):
/// permanent, since waiting longer or running again does not change a refusal or an
/// elapsed timeout.
///
/// # Examples
///
/// ```
/// use nbv_core::models::gate_failure;
/// use nbv_core::phase::FailureKind;
///
/// let failure = gate_failure("spec.modelValidation.timeout: waited until …");
/// assert_eq!(failure.reason.as_str(), "ModelUnavailable");
/// assert_eq!(failure.kind, FailureKind::Permanent);
/// ```
pub fn gate_failure(message: &str) -> Failure {
    FailureCause::ModelUnavailable.failure(message)
}
