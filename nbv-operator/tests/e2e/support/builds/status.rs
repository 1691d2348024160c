//! Writing a build object's status, as its controller does, and the condition both
//! Tekton and Shipwright report the outcome with (`Succeeded`, Knative's shape).

use std::time::Duration;

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};

use crate::support::container::now;

/// Writes `status` (a merge patch) on `name`'s status subresource; retried while the
/// API server refuses it, as a controller requeues.
pub async fn write(api: &Api<DynamicObject>, name: &str, status: Value) {
    patch_retried(api, name, status, true).await;
}

/// The same for a kind without a status subresource (OpenShift's Builds: their
/// controller, and `oc cancel-build`, write `status` with the object).
pub async fn write_object(api: &Api<DynamicObject>, name: &str, status: Value) {
    patch_retried(api, name, status, false).await;
}

async fn patch_retried(api: &Api<DynamicObject>, name: &str, status: Value, subresource: bool) {
    let patch = Patch::Merge(json!({"status": status}));
    let params = PatchParams::default();
    for _ in 0..120 {
        let written = if subresource {
            api.patch_status(name, &params, &patch).await
        } else {
            api.patch(name, &params, &patch).await
        };
        match written {
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
