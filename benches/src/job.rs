//! Jobs to plan for: a run that just succeeded, before and after its effects were
//! carried out and recorded.

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::annotations::{ARGOCD_SYNC_WAVE, ON_SUCCESS_TRIGGER};
use nbv_core::api::NotebookValidationJob;
use nbv_core::plan::{Effect, Outcome, PlanContext, plan, record};
use serde_json::{Value, json};

use crate::annotation::{JOB_NAMESPACE, many, to_yaml};

/// The time the benchmarks plan at: five seconds after the run completed.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_benches::job::now().to_rfc3339(), "2026-01-24T22:30:05+00:00");
/// ```
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

/// A job in sync wave 3 whose run has just succeeded, with `triggers` on-success
/// triggers, and nothing carried out yet.
///
/// # Examples
///
/// ```
/// use nbv_benches::job::{now, succeeded};
/// use nbv_core::plan::{plan, PlanContext};
///
/// // The wave patch, one effect per trigger, and the notification.
/// let owed = plan(&succeeded(10), &PlanContext::default(), now());
/// assert_eq!(owed.effects.len(), 12);
/// assert!(owed.diagnostics.is_empty());
/// ```
pub fn succeeded(triggers: usize) -> NotebookValidationJob {
    let mut annotations = json!({ ARGOCD_SYNC_WAVE: "3" });
    if triggers > 0 {
        annotations[ON_SUCCESS_TRIGGER] = Value::String(to_yaml(&many(triggers)));
    }
    let job = json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {
            "name": "train-fraud-model",
            "namespace": JOB_NAMESPACE,
            "generation": 1,
            "uid": "0b6c1c2e-7d43-4a55-9f0e-3b8a8f6f2a10",
            "annotations": annotations,
        },
        "spec": {
            "notebook": {
                "git": {"url": "https://example.com/ml/notebooks.git", "ref": "main"},
                "path": "train.ipynb"
            },
            "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:latest"}
        },
        "status": {
            "phase": "Succeeded",
            "observedGeneration": 1,
            "startTime": "2026-01-24T22:29:00Z",
            "completionTime": "2026-01-24T22:30:00Z",
            "retryCount": 0,
            "validationPodName": "train-fraud-model-validation-1"
        }
    });
    // A fixed, valid manifest: failing here is a bug of this crate, not bad input.
    serde_json::from_value(job).expect("the benchmark job is a valid NotebookValidationJob")
}

/// `job` after a shell carried out every effect its plan owed and recorded them: the
/// wave annotations written, the ledger in `status.effects`. Planning it again owes
/// nothing.
///
/// # Examples
///
/// ```
/// use nbv_benches::job::{now, recorded, succeeded};
/// use nbv_core::plan::{plan, PlanContext};
///
/// let ctx = PlanContext::default();
/// let done = recorded(succeeded(10), &ctx);
/// assert!(plan(&done, &ctx, now()).is_empty());
/// ```
pub fn recorded(mut job: NotebookValidationJob, ctx: &PlanContext) -> NotebookValidationJob {
    // An effect may owe a next step once it is done (a sync owes the report of its
    // result): record rounds until nothing is owed.
    for _ in 0..4 {
        let owed = plan(&job, ctx, now());
        if owed.is_empty() {
            break;
        }
        let mut ledger = owed.ledger();
        for planned in &owed.effects {
            ledger = record(ledger, &planned.key, Outcome::Done, now(), &ctx.retry).ledger;
            if let Effect::PatchJob { patch } = &planned.effect {
                let changes = patch["metadata"]["annotations"].as_object();
                let annotations = job
                    .metadata
                    .annotations
                    .get_or_insert_with(Default::default);
                for (key, value) in changes.into_iter().flatten() {
                    match value.as_str() {
                        Some(value) => annotations.insert(key.clone(), value.to_owned()),
                        None => annotations.remove(key),
                    };
                }
            }
        }
        if let Some(status) = job.status.as_mut() {
            status.effects = Some(ledger);
        }
    }
    job
}
