//! Writing a build object's status, as its controller does, and the condition both
//! Tekton and Shipwright report the outcome with (`Succeeded`, Knative's shape).

use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::support::container::now;

/// Writes `status` (a merge patch) on `name`; retried while the API server refuses
/// it, as a controller requeues.
pub async fn write(api: &Api<DynamicObject>, name: &str, status: Value) {
    let patch = json!({"status": status});
    for _ in 0..120 {
        match api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return,
            Err(kube::Error::Api(e)) if e.code == 404 => return,
            Err(e) => {
                eprintln!("build stand-in: the status of {name}: {e}");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    }
}

/// The `Succeeded` condition with `status` (`True`, `False`, `Unknown`), `reason` and
/// `message`, alone in the list.
pub fn succeeded(status: &str, reason: &str, message: &str) -> Value {
    json!([{"type": "Succeeded", "status": status, "reason": reason, "message": message,
            "lastTransitionTime": now()}])
}
