//! Model-aware validation (`spec.modelValidation`): the notebook is checked against the
//! models it serves.
//!
//! The shell observes; this module decides. The shell keeps a watch cache of the
//! InferenceServices jobs name (`serving.kserve.io/v1beta1`), trimmed to
//! [`InferenceService`], and answers [`ModelFacts`] from it. From those facts the core
//! resolves the spec ([`ModelSettings`]), decides whether the job's validation Pod may
//! start, must wait for a model, or fails naming it ([`gate`]), and defines how a
//! model's answer is judged ([`compare_outputs`]).
//!
//! Once the gate opens, the validation Pod is built with the models it opened for
//! ([`validation_pod`](crate::pod::validation_pod)): the notebook gets their URLs
//! ([`model_env`]), and after the notebook ran through, the Pod asks each model for a
//! prediction and reports what it answered ([`ReportedPrediction`]), which
//! [`record_predictions`] writes into `status.modelValidationResult`. A Pod built
//! without the gate's models is refused, naming the field, rather than run the notebook
//! without the check it asked for; so is a `modelValidation` the core cannot carry out
//! (another platform, a custom one, a field with a value it cannot use).

mod env;
mod facts;
mod gate;
mod prediction;
mod report;
mod settings;
mod status;

pub use env::{MODELS_ENV, model_env};
pub use facts::{InferenceService, ModelFacts, ModelRef, Platform, Protocol, Readiness};
pub use gate::{ModelGate, ServedModel, gate};
pub use prediction::{
    Mismatch, MismatchKind, compare_outputs, expected_outputs, predict_path, response_outputs,
};
pub use report::{MAX_MDL_BYTES, ReportedPrediction, capped_predictions, record_predictions};
pub use settings::{
    DEFAULT_TIMEOUT, DEFAULT_TOLERANCE, ModelSettings, ModelSpecError, PredictionSettings,
};
pub use status::{WAITING_FOR_MODELS, gate_failure, record_result, record_wait};
