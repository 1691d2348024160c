//! Job objects as Argo CD's health check receives them: the whole resource as JSON.
//!
//! The whole object, not only its status, because that is what Argo CD hands the Lua
//! VM (as the global `obj`), so converting it is part of the cost of a Lua assessment.

use serde_json::{Value, json};

/// A job whose last attempt failed and that will be retried: the basic script's
/// longest path (message and retry count concatenated).
///
/// # Examples
///
/// ```
/// use nbv_core::health::{assess, HealthStatusCode};
///
/// let health = assess(&nbv_benches::object::failed()).unwrap().unwrap();
/// assert_eq!(health.status, HealthStatusCode::Degraded);
/// assert_eq!(health.message, "Cell 12 raised KeyError: 'amount' (retry 2/3)");
/// ```
pub fn failed() -> Value {
    with_status(json!({
        "phase": "Failed",
        "message": "Cell 12 raised KeyError: 'amount'",
        "retryCount": 2,
        "startTime": "2026-01-24T22:29:00Z",
        "completionTime": "2026-01-24T22:30:00Z",
        "validationPodName": "train-fraud-model-validation-3"
    }))
}

/// A failed job with `cells` cell results of which only the last failed: the advanced
/// script scans them all before it finds the failure.
///
/// # Examples
///
/// ```
/// use nbv_core::health::assess_advanced;
///
/// let health = assess_advanced(&nbv_benches::object::failed_at_last_cell(40)).unwrap().unwrap();
/// assert_eq!(health.message, "Failed at cell 39: KeyError: 'amount'");
/// ```
pub fn failed_at_last_cell(cells: usize) -> Value {
    let results: Vec<Value> = (0..cells)
        .map(|cell| {
            if cell + 1 == cells {
                json!({"cellIndex": cell, "status": "Failure", "errorMessage": "KeyError: 'amount'"})
            } else {
                json!({"cellIndex": cell, "status": "Success", "executionTime": 0.25})
            }
        })
        .collect();
    with_status(json!({
        "phase": "Failed",
        "message": "Notebook execution failed",
        "retryCount": 3,
        "results": results
    }))
}

/// The whole resource around `status`.
fn with_status(status: Value) -> Value {
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {
            "name": "train-fraud-model",
            "namespace": "ml-platform",
            "generation": 1,
            "annotations": {"argocd.argoproj.io/sync-wave": "3"},
            "labels": {"app.kubernetes.io/instance": "fraud-detection"}
        },
        "spec": {
            "notebook": {
                "git": {"url": "https://example.com/ml/notebooks.git", "ref": "main"},
                "path": "train.ipynb"
            },
            "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:latest"}
        },
        "status": status
    })
}
