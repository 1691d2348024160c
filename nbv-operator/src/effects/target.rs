//! Addressing trigger targets and the job, and the small conversions every effect needs.

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use nbv_core::api::NotebookValidationJob;
use nbv_core::triggers::TargetRef;

use super::EffectError;

/// A trigger target's API, with the resource name guessed from its kind (see the
/// module documentation of [`crate::effects`] for the rule).
pub(super) fn target_api(client: &Client, target: &TargetRef) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(
        target.api_version().group(),
        target.api_version().version(),
        target.kind().as_str(),
    );
    Api::namespaced_with(
        client.clone(),
        target.namespace().as_str(),
        &ApiResource::from_gvk(&gvk),
    )
}

/// How messages name a target: `InferenceService ml/x`.
pub(super) fn describe(target: &TargetRef) -> String {
    format!("{} {}/{}", target.kind(), target.namespace(), target.name())
}

/// The job an effect belongs to, with the fields every effect needs.
pub(super) struct JobRef {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) uid: Option<String>,
}

impl JobRef {
    pub(super) fn of(job: &NotebookValidationJob) -> Result<JobRef, EffectError> {
        let (Some(namespace), Some(name)) = (&job.metadata.namespace, &job.metadata.name) else {
            return Err(EffectError::invalid(
                "act for a NotebookValidationJob",
                "the job has no metadata.namespace or metadata.name; pass the job as read \
                 from the API server",
            ));
        };
        Ok(JobRef {
            namespace: namespace.clone(),
            name: name.clone(),
            uid: job.metadata.uid.clone(),
        })
    }
}

/// The RFC 3339 form nbv writes for a run's completion time: whole seconds, `Z`.
pub(super) fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The time already written in `current` when it is not older than `completed_at`
/// (both compared at the whole seconds nbv writes): the target then already carries
/// this run's effect or a newer run's, and writing would move it backwards. A value
/// that is absent or not an RFC 3339 time is not nbv's and gives `None`.
pub(super) fn not_older(current: Option<&str>, completed_at: DateTime<Utc>) -> Option<String> {
    let current = current?;
    let existing = DateTime::parse_from_rfc3339(current).ok()?;
    let ours = DateTime::parse_from_rfc3339(&rfc3339(completed_at)).ok()?;
    (existing >= ours).then(|| current.to_owned())
}

/// `metadata.resourceVersion` of `object`, which a conditional patch must carry.
pub(super) fn resource_version(
    object: &DynamicObject,
    target: &TargetRef,
) -> Result<String, EffectError> {
    object.metadata.resource_version.clone().ok_or_else(|| {
        EffectError::invalid(
            format!("patch {}", describe(target)),
            "it has no metadata.resourceVersion",
        )
    })
}

/// `time` as the timestamp type of Kubernetes objects.
pub(super) fn timestamp(time: DateTime<Utc>) -> Result<Timestamp, EffectError> {
    let nanos = i32::try_from(time.timestamp_subsec_nanos()).unwrap_or(0);
    Timestamp::new(time.timestamp(), nanos).map_err(|e| {
        EffectError::invalid(
            format!("use the time {}", rfc3339(time)),
            format!("it cannot be written in a Kubernetes object: {e}"),
        )
    })
}

/// `value` cut to at most `max` bytes at a character boundary.
pub(super) fn cut(value: &str, max: usize) -> &str {
    if value.len() <= max {
        return value;
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    &value[..end]
}
