//! The evidence `nbv wait` prints under a failed gate: what shows that a blocking
//! job's run failed. The gate's reason says *why* the gate is closed; the evidence
//! says *where to look* (`status.phase`, `mlops.dev/wave-failed`).

use std::sync::Arc;

use kube::api::DynamicObject;
use nbv_core::annotations::WAVE_FAILED;
use nbv_core::api::JobPhase;
use nbv_core::waves::{FailureReason, GateDecision, GateFailure};

use super::jobs;

/// How many characters of an annotation value a line shows.
const MAX_VALUE_CHARS: usize = 64;

/// One line per failed run among the first [`GateDecision::MAX_LISTED`] failures, as
/// `train: status.phase is Failed, mlops.dev/wave-failed is 3`. Misconfigured jobs
/// get no line: their reason already names the annotation at fault.
pub(super) fn evidence(failed: &[GateFailure], all: &[Arc<DynamicObject>]) -> Vec<String> {
    failed
        .iter()
        .take(GateDecision::MAX_LISTED)
        .filter(|failure| failure.reason == FailureReason::RunFailed)
        .filter_map(|failure| {
            let job = all.iter().find(|job| jobs::name(job) == failure.job)?;
            let mut facts = Vec::new();
            if jobs::run_phase(job) == JobPhase::Failed {
                facts.push("status.phase is Failed".to_owned());
            }
            if let Some(value) = jobs::annotations(job).get(WAVE_FAILED) {
                facts.push(format!("{WAVE_FAILED} is {}", shown(value)));
            }
            (!facts.is_empty()).then(|| format!("{}: {}", failure.job, facts.join(", ")))
        })
        .collect()
}

/// The value, quoted when it is not a plain wave number, cut when long.
fn shown(value: &str) -> String {
    let plain = !value.is_empty()
        && value.len() <= MAX_VALUE_CHARS
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+');
    if plain {
        value.to_owned()
    } else {
        let (head, _) = nbv_core::text::head_chars(value, MAX_VALUE_CHARS);
        format!("{head:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, phase: &str, wave_failed: Option<&str>) -> Arc<DynamicObject> {
        let mut annotations = serde_json::Map::new();
        if let Some(value) = wave_failed {
            annotations.insert(WAVE_FAILED.to_owned(), value.into());
        }
        Arc::new(
            serde_json::from_value(serde_json::json!({
                "apiVersion": "mlops.mlops.dev/v1alpha1",
                "kind": "NotebookValidationJob",
                "metadata": {"name": name, "annotations": annotations},
                "status": {"phase": phase},
            }))
            .expect("a valid object"),
        )
    }

    fn run_failed(job: &str) -> GateFailure {
        GateFailure {
            job: job.to_owned(),
            reason: FailureReason::RunFailed,
        }
    }

    #[test]
    fn each_failed_run_shows_where_its_failure_is_recorded() {
        let all = [
            job("a", "Failed", Some("3")),
            job("b", "ValidationRunning", Some("3")),
            job("c", "Failed", None),
        ];
        let lines = evidence(&[run_failed("a"), run_failed("b"), run_failed("c")], &all);
        assert_eq!(
            lines,
            [
                "a: status.phase is Failed, mlops.dev/wave-failed is 3",
                "b: mlops.dev/wave-failed is 3",
                "c: status.phase is Failed",
            ]
        );
    }

    #[test]
    fn evidence_is_listed_for_the_first_failures_only() {
        let names: Vec<String> = (0..GateDecision::MAX_LISTED + 5)
            .map(|i| format!("job-{i:02}"))
            .collect();
        let all: Vec<_> = names.iter().map(|n| job(n, "Failed", None)).collect();
        let failed: Vec<_> = names.iter().map(|n| run_failed(n)).collect();
        assert_eq!(evidence(&failed, &all).len(), GateDecision::MAX_LISTED);
    }

    #[test]
    fn hostile_annotation_values_are_quoted_and_cut() {
        assert_eq!(shown("3"), "3");
        assert_eq!(shown("3\nDONE"), "\"3\\nDONE\"");
        let long = "9".repeat(1000);
        assert_eq!(shown(&long).len(), MAX_VALUE_CHARS + 2);
    }
}
