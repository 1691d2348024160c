//! Addressing trigger targets and the job, and the small conversions every effect needs.

use chrono::{DateTime, Utc};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use nbv_core::actions::{Decision, Run, TriggerOutcome, describe};
use nbv_core::aggregate::JobKey;
use nbv_core::api::NotebookValidationJob;
use nbv_core::time::rfc3339;
use nbv_core::triggers::TargetRef;
use serde_json::Value;

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

/// The job an effect belongs to, with the fields every effect needs.
pub(super) struct JobRef {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) uid: Option<String>,
}

impl JobRef {
    pub(super) fn of(job: &NotebookValidationJob) -> Result<JobRef, EffectError> {
        let Some(key) = JobKey::of(job) else {
            return Err(EffectError::invalid(
                "act for a NotebookValidationJob",
                "the job has no metadata.namespace or metadata.name; pass the job as read \
                 from the API server",
            ));
        };
        Ok(JobRef {
            namespace: key.namespace().to_owned(),
            name: key.name().to_owned(),
            uid: job.metadata.uid.clone(),
        })
    }

    /// The job's run that ended at `completed_at`.
    pub(super) fn run(&self, completed_at: DateTime<Utc>) -> Run {
        Run::new(&self.namespace, &self.name, completed_at)
    }
}

/// The target as JSON, as the decisions of [`nbv_core::actions`] read it.
pub(super) fn as_json(object: &DynamicObject, target: &TargetRef) -> Result<Value, EffectError> {
    serde_json::to_value(object).map_err(|e| {
        EffectError::invalid(
            format!("read {}", describe(target)),
            format!("cannot read it: {e}"),
        )
    })
}

/// The write a decision asks for, or (`Err`) what to answer without one.
pub(super) fn settle<W>(decision: Decision<W>) -> Result<W, Result<TriggerOutcome, EffectError>> {
    decision
        .into_write()
        .map_err(|settled| settled.map_err(EffectError::from))
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
