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
//! A `modelValidation` the core cannot carry out (another platform, a custom one, a
//! field with a value it cannot use) fails the job at once naming the field, when its
//! Pod is built (`nbv_core::pod`), rather than succeed without the check it asked for.

mod facts;
mod gate;
mod prediction;
mod record;
mod settings;

pub use facts::{InferenceService, ModelFacts, ModelRef, Platform, Protocol, Readiness};
pub use gate::{ModelGate, ServedModel, gate};
pub use prediction::{
    Mismatch, MismatchKind, compare_outputs, expected_outputs, predict_path, response_outputs,
};
pub use record::{WAITING_FOR_MODELS, gate_failure, record_result, record_wait};
pub use settings::{
    DEFAULT_TIMEOUT, DEFAULT_TOLERANCE, ModelSettings, ModelSpecError, PredictionSettings,
};
