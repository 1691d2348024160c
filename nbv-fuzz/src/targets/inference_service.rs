//! Any JSON text as a KServe InferenceService in the API server's answer, read as the
//! operator reads it: through the depth bound, then trimmed for the watch cache, then
//! read by model validation (`InferenceService::from_object`).
//!
//! - Reading never panics, whatever the types of the fields.
//! - The projection the cache keeps reads as the whole object reads
//!   (`from_object(projection(o)) == from_object(o)`), and projecting twice keeps the
//!   same.
//! - Through the operator's path (a `DynamicObject`, trimmed) the object reads the same
//!   as before trimming, and as `from_object` reads the JSON.

use kube::api::DynamicObject;
use nbv_core::models::InferenceService;
use nbv_operator::operator::projection::{inference_service_of, trim_inference_service};

use super::JSON_TOKENS;
use super::application::through_depth_bound;
use crate::{Outcome, Target};

/// See the module documentation.
pub const TARGET: Target = Target {
    name: "inference_service",
    run,
    dictionary: JSON_TOKENS,
    max_len: 8192,
};

/// See the module documentation.
pub fn run(data: &[u8]) -> Outcome {
    let Some(object) = through_depth_bound(data) else {
        return Outcome::Skipped;
    };
    let read = InferenceService::from_object(&object);
    let kept = InferenceService::projection(&object);
    assert_eq!(
        InferenceService::from_object(&kept),
        read,
        "the projection {kept} reads differently from {object}"
    );
    assert_eq!(
        InferenceService::projection(&kept),
        kept,
        "projecting twice"
    );
    let Ok(mut dynamic) = serde_json::from_value::<DynamicObject>(object.clone()) else {
        return Outcome::Refused;
    };
    let whole = inference_service_of(&dynamic);
    trim_inference_service(&mut dynamic);
    assert_eq!(inference_service_of(&dynamic), whole, "trimming {object}");
    assert_eq!(whole, read, "the operator's reading of {object}");
    Outcome::Read
}
