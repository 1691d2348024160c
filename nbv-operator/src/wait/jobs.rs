//! What the gate needs from the jobs of a namespace, read leniently.
//!
//! Jobs are read as [`DynamicObject`]s rather than as typed `NotebookValidationJob`s:
//! a job whose status this version cannot parse (a phase added by a newer operator, a
//! field of an unexpected type) must count as a job that has not finished, not break
//! the watch of the whole namespace.

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::api::DynamicObject;
use nbv_core::api::{JobPhase, Phase};
use nbv_core::waves::{GateDecision, GateJob, Wave, gate};

/// The annotations of a job without any.
static NO_ANNOTATIONS: BTreeMap<String, String> = BTreeMap::new();

/// The phase of the job's run, from `status.phase`: `Succeeded` and `Failed` end the
/// run; any other phase, no phase or one this version cannot read means it has not
/// ended (the gate waits on it).
pub(super) fn run_phase(job: &DynamicObject) -> JobPhase {
    let phase = job
        .data
        .get("status")
        .and_then(|status| status.get("phase"))
        .and_then(serde_json::Value::as_str)
        .and_then(|phase| phase.parse::<Phase>().ok());
    JobPhase::of(phase)
}

/// The job's annotations, empty when it has none.
pub(super) fn annotations(job: &DynamicObject) -> &BTreeMap<String, String> {
    job.metadata.annotations.as_ref().unwrap_or(&NO_ANNOTATIONS)
}

/// The job's name; the API server always sets one, an empty name stands for none.
pub(super) fn name(job: &DynamicObject) -> &str {
    job.metadata.name.as_deref().unwrap_or("")
}

/// Evaluates the gate of `wave` over `jobs`.
pub(super) fn decide(wave: Wave, jobs: &[Arc<DynamicObject>]) -> GateDecision {
    gate(
        wave,
        jobs.iter().map(|job| GateJob {
            name: name(job),
            annotations: annotations(job),
            phase: run_phase(job),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(status: serde_json::Value) -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "mlops.mlops.dev/v1alpha1",
            "kind": "NotebookValidationJob",
            "metadata": {"name": "train"},
            "status": status,
        }))
        .expect("a valid object")
    }

    #[test]
    fn phases_map_to_run_phases() {
        let cases = [
            (
                serde_json::json!({"phase": "Succeeded"}),
                JobPhase::Succeeded,
            ),
            (serde_json::json!({"phase": "Failed"}), JobPhase::Failed),
            (
                serde_json::json!({"phase": "ValidationRunning"}),
                JobPhase::Running,
            ),
            (serde_json::json!({"phase": "Pending"}), JobPhase::Running),
            (serde_json::json!({"phase": "Exploded"}), JobPhase::Running),
            (serde_json::json!({"phase": 3}), JobPhase::Running),
            (serde_json::json!({}), JobPhase::Running),
            (serde_json::json!(null), JobPhase::Running),
        ];
        for (status, expected) in cases {
            assert_eq!(run_phase(&job(status.clone())), expected, "status {status}");
        }
    }

    #[test]
    fn a_job_without_annotations_blocks_nothing() {
        let jobs = [Arc::new(job(serde_json::json!({"phase": "Failed"})))];
        assert!(annotations(&jobs[0]).is_empty());
        assert!(decide(Wave::new(1), &jobs).is_open());
    }
}
