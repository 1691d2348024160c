//! The human-readable `status.message` of each state, in one place so that the wording
//! stays consistent (and is reviewed in the snapshots of `tests/phase/sequences.rs`).

use chrono::{DateTime, Utc};

use super::Failure;
use crate::time::rfc3339;

pub(super) const WAITING_FOR_POD: &str = "Waiting for the validation pod to start";
pub(super) const WAITING_FOR_BUILD: &str = "Waiting for the image build to start";
pub(super) const SUCCEEDED: &str = "Notebook validation succeeded";
pub(super) const FAILED: &str = "Notebook validation failed";

/// The start of the message of a run whose pod the API server refuses, while it is
/// tried again.
pub(super) const WAITING_FOR_ADMISSION: &str = "Waiting for the validation pod to be admitted";

pub(super) fn waiting_for_admission(reason: &str, refusal: &str) -> String {
    format!("{WAITING_FOR_ADMISSION}: {reason}: {refusal}")
}

/// A run started because the job was asked to run again with `request`.
pub(super) fn rerun(request: &str, waiting: &str) -> String {
    format!(
        "Running again as asked (mlops.dev/rerun: {request:?}); {}",
        lowercase_first(waiting)
    )
}

fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

pub(super) fn building(build_name: &str) -> String {
    format!("Building image (build: {build_name})")
}

pub(super) fn built(image: &str) -> String {
    format!("Image built ({image}); waiting for the validation pod to start")
}

pub(super) fn validating(pod_name: &str) -> String {
    format!("Validating notebook (pod: {pod_name})")
}

pub(super) fn succeeded(retries: i32, summary: Option<&str>) -> String {
    let mut message = SUCCEEDED.to_owned();
    if retries > 0 {
        message.push_str(" after ");
        message.push_str(&retries_text(retries));
    }
    if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
        message.push_str(": ");
        message.push_str(summary);
    }
    message
}

/// A permanent failure, or a transient one with retries disabled.
pub(super) fn failed(failure: &Failure) -> String {
    format!("Validation failed: {}", detail(failure))
}

pub(super) fn retries_exhausted(retries: i32, failure: &Failure) -> String {
    format!(
        "Validation failed after {}: {}",
        retries_text(retries),
        detail(failure)
    )
}

pub(super) fn build_failed(failure: &Failure) -> String {
    format!("Image build failed: {}", detail(failure))
}

pub(super) fn retry_scheduled(
    retry: i32,
    max: u32,
    at: DateTime<Utc>,
    failure: &Failure,
) -> String {
    format!(
        "Retry {retry}/{max} scheduled for {} after a transient failure: {}",
        rfc3339(at),
        detail(failure)
    )
}

pub(super) fn retry_started(retry: i32, max: u32) -> String {
    format!("Retry {retry}/{max} started; waiting for the validation pod to start")
}

pub(super) fn retry_succeeded(retry: i32, max: u32) -> String {
    format!("Succeeded on retry {retry}/{max}")
}

pub(super) fn retry_gave_up(retries: i32) -> String {
    format!("Gave up after {}", retries_text(retries))
}

pub(super) fn retry_stopped(retry: i32, max: u32) -> String {
    format!("Retry {retry}/{max} failed permanently; no further retries")
}

/// `reason: message`, or the reason alone when the message is empty.
fn detail(failure: &Failure) -> String {
    let message = failure.message.trim();
    if message.is_empty() {
        failure.reason.to_string()
    } else {
        format!("{}: {message}", failure.reason)
    }
}

fn retries_text(retries: i32) -> String {
    if retries == 1 {
        "1 retry".to_owned()
    } else {
        format!("{retries} retries")
    }
}
