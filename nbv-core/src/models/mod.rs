//! Model-aware validation (`spec.modelValidation`): the notebook is checked against the
//! models it serves.
//!
//! The shell observes; this module decides. The shell keeps a watch cache of the
//! InferenceServices jobs name (`serving.kserve.io/v1beta1`), trimmed to
//! [`InferenceService`], and answers [`ModelFacts`] from it. From those facts the core
//! decides whether the job's validation Pod may start, must wait for a model, or fails
//! naming the model; what the Pod is told about the models (environment variables);
//! and what `status.modelValidationResult` says.

mod facts;
mod prediction;
mod settings;

pub use facts::{InferenceService, ModelFacts, ModelRef, Platform, Protocol, Readiness};
pub use prediction::{
    Mismatch, MismatchKind, compare_outputs, expected_outputs, predict_path, response_outputs,
};
pub use settings::{
    DEFAULT_TIMEOUT, DEFAULT_TOLERANCE, ModelSettings, ModelSpecError, PredictionSettings,
};
