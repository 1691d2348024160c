//! kaniko: one Pod, where nbv's `clone` and `prepare` init containers leave the
//! checkout and its Dockerfile for the kaniko executor.
//!
//! nbv's containers keep the restricted profile; the executor builds as root, as kaniko
//! must, so the namespace's Pod Security level must admit it (`baseline`).

use serde_json::{Value, json};

use super::checkout::{PREPARED_DOCKERFILE, nbv_steps};
use super::{Route, meta};
use crate::build::{BuildDefaults, BuildPlan, PlanError};
use crate::pod::PodDefaults;

/// The emptyDir the repository is cloned into, and where it is mounted.
const WORKSPACE: (&str, &str) = ("nbv-workspace", "/workspace");
/// The checkout, in [`WORKSPACE`].
const CHECKOUT: &str = "/workspace/repo";
/// Where a container's termination message is read from (Kubernetes' default).
const TERMINATION_LOG: &str = "/dev/termination-log";
/// The volume of the push Secret, and where kaniko reads registry credentials.
const PUSH_SECRET: (&str, &str) = ("nbv-push-secret", "/kaniko/.docker");
/// The name of the kaniko Pod's executor container, whose termination message is the
/// image's digest, or its log's tail when it fails.
pub const KANIKO_CONTAINER: &str = "kaniko";

/// The Pod that builds `plan`.
pub(super) fn pod(
    plan: &BuildPlan,
    pods: &PodDefaults,
    defaults: &BuildDefaults,
) -> Result<Value, PlanError> {
    let steps = nbv_steps(plan, CHECKOUT, WORKSPACE, TERMINATION_LOG, pods)?;
    let mut volumes = vec![json!({"name": WORKSPACE.0, "emptyDir": {}})];
    volumes.extend(steps.ssh_volume.iter().map(|v| json!(v)));
    let mut mounts = vec![json!({"name": WORKSPACE.0, "mountPath": WORKSPACE.1})];
    if let Some(secret) = &plan.push_secret {
        volumes.push(json!({
            "name": PUSH_SECRET.0,
            "secret": {
                "secretName": secret,
                "items": [{"key": ".dockerconfigjson", "path": "config.json"}],
            },
        }));
        mounts.push(json!({"name": PUSH_SECRET.0, "mountPath": PUSH_SECRET.1, "readOnly": true}));
    }
    // Arguments, not a shell: the job's values are never parsed by one.
    let kaniko = json!({
        "name": KANIKO_CONTAINER,
        "image": defaults.kaniko_image,
        "args": [
            format!("--context=dir://{CHECKOUT}"),
            format!("--dockerfile={CHECKOUT}/{PREPARED_DOCKERFILE}"),
            format!("--destination={}", plan.image),
            format!("--digest-file={TERMINATION_LOG}"),
        ],
        "volumeMounts": mounts,
        "terminationMessagePath": TERMINATION_LOG,
        // A failure's message is the log's tail.
        "terminationMessagePolicy": "FallbackToLogsOnError",
    });
    let mut spec = json!({
        "restartPolicy": "Never",
        "activeDeadlineSeconds": plan.timeout.as_secs(),
        "automountServiceAccountToken": false,
        "initContainers": [steps.clone, steps.prepare],
        "containers": [kaniko],
        "volumes": volumes,
    });
    if let Some(account) = &plan.service_account {
        spec["serviceAccountName"] = json!(account);
    }
    if !pods.image_pull_secrets.is_empty() {
        spec["imagePullSecrets"] = pods
            .image_pull_secrets
            .iter()
            .map(|name| json!({"name": name}))
            .collect();
    }
    Ok(json!({
        "apiVersion": Route::Kaniko.api(),
        "kind": "Pod",
        "metadata": meta::metadata(plan, Route::Kaniko, &plan.name, &[], &[]),
        "spec": spec,
    }))
}
