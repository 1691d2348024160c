//! Shipwright's controller, for nbv's BuildRuns (`shipwright.io/v1beta1`).
//!
//! As Shipwright does: it validates the BuildRun's Build (its strategy must exist, else
//! `ClusterBuildStrategyNotFound` / `BuildStrategyNotFound`) and marks it registered,
//! marks the BuildRun started (`startTime`, `Succeeded=Unknown` `Pending`, the Build's
//! spec in `buildSpec`, its TaskRun in `executor`), then ends it `Succeeded` with
//! `output.digest` and `completionTime`. The strategy's steps run nothing of nbv, so
//! none is run here: the digest "pushed" is the SHA-256 of the Build's spec, so that
//! equal Builds give equal images. Its timeout (`spec.timeout` of the BuildRun, else of
//! the Build) ends it `BuildRunTimeout`; `spec.state: BuildRunCanceled` ends it
//! `BuildRunCanceled`; a hook fails it with `failureDetails`.

use std::time::Duration;

use kube::api::{Api, DynamicObject};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use super::runs::run_each;
use super::status::{succeeded, write};
use super::{Hook, Hooks, go_duration};
use crate::support::container::now;
use crate::support::objects::resource;

/// How long a build takes when nothing holds it.
const BUILD_TIME: Duration = Duration::from_secs(1);

/// Watches the BuildRuns of `namespace` and runs each once.
pub async fn run(client: kube::Client, namespace: String, hooks: Hooks) {
    let shipwright = |kind: &str, plural: &str| -> Api<DynamicObject> {
        Api::namespaced_with(
            client.clone(),
            &namespace,
            &resource("shipwright.io", "v1beta1", kind, plural),
        )
    };
    let runs = shipwright("BuildRun", "buildruns");
    let builds = shipwright("Build", "builds");
    let cancelled = |run: &DynamicObject| run.data["spec"]["state"] == "BuildRunCanceled";
    run_each(runs.clone(), cancelled, |run, cancelled_rx| {
        let hook = hooks.of(run.metadata.labels.as_ref());
        tokio::spawn(build_run(
            client.clone(),
            runs.clone(),
            builds.clone(),
            run,
            hook,
            cancelled_rx,
        ))
    })
    .await;
}

async fn build_run(
    client: kube::Client,
    runs: Api<DynamicObject>,
    builds: Api<DynamicObject>,
    run: DynamicObject,
    hook: Option<Hook>,
    mut cancelled: watch::Receiver<bool>,
) {
    let name = run.metadata.name.clone().unwrap_or_default();
    let namespace = run.metadata.namespace.clone().unwrap_or_default();
    let fail = |reason: &str, message: &str| {
        json!({"conditions": succeeded("False", reason, message), "completionTime": now(),
               "failureDetails": {"reason": reason, "message": message,
                                  "location": {"pod": format!("{name}-pod"), "container": "step-build"}}})
    };
    let Some(build_name) = run.data["spec"]["build"]["name"].as_str() else {
        let message = "the BuildRun names no Build (spec.build.name)";
        write(&runs, &name, fail("BuildNotFound", message)).await;
        return;
    };
    let Ok(build) = builds.get(build_name).await else {
        let message = format!("build.shipwright.io \"{build_name}\" not found");
        write(&runs, &name, fail("BuildNotFound", &message)).await;
        return;
    };
    let build_spec = build.data["spec"].clone();
    if let Err((reason, message)) = strategy_exists(&client, &namespace, &build_spec).await {
        write(
            &builds,
            build_name,
            json!({"registered": "False", "reason": reason, "message": message}),
        )
        .await;
        write(&runs, &name, fail(&reason, &message)).await;
        return;
    }
    write(
        &builds,
        build_name,
        json!({"registered": "True", "reason": "Succeeded", "message": "all validations succeeded"}),
    )
    .await;
    write(
        &runs,
        &name,
        json!({"startTime": now(), "buildSpec": build_spec,
               "executor": {"kind": "TaskRun", "name": format!("{name}-run")},
               "conditions": succeeded("Unknown", "Pending", "Pending")}),
    )
    .await;

    let timeout_text = run.data["spec"]["timeout"]
        .as_str()
        .or(build_spec["timeout"].as_str())
        .map(str::to_owned);
    let timeout = timeout_text
        .as_deref()
        .and_then(go_duration)
        .filter(|t| !t.is_zero());
    let length = match hook {
        Some(Hook::Stall) => None,
        Some(Hook::Hold) => {
            let _ = cancelled.wait_for(|c| *c).await;
            write(&runs, &name, canceled()).await;
            return;
        }
        _ => Some(BUILD_TIME),
    };
    let sleep = |d: Option<Duration>| async move {
        match d {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = sleep(timeout) => {
            let message = format!("BuildRun {name} failed to finish within {}", timeout_text.unwrap_or_default());
            write(&runs, &name, fail("BuildRunTimeout", &message)).await;
        }
        _ = async { let _ = cancelled.wait_for(|c| *c).await; } => write(&runs, &name, canceled()).await,
        _ = sleep(length) => {
            let status = match hook {
                Some(Hook::Fail(reason, message)) => fail(&reason, &message),
                _ => json!({"conditions": succeeded("True", "Succeeded", "All Steps have completed executing"),
                            "completionTime": now(),
                            "output": {"digest": digest_of(&build_spec), "size": 1024}}),
            };
            write(&runs, &name, status).await;
        }
    }
}

fn canceled() -> Value {
    json!({"conditions": succeeded("False", "BuildRunCanceled",
                                   "The user requested the BuildRun to be canceled"),
           "completionTime": now()})
}

/// The image "pushed" for a Build: the SHA-256 of its spec.
pub fn digest_of(build_spec: &Value) -> String {
    let hex: String = Sha256::digest(build_spec.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Whether the Build's strategy is installed, else Shipwright's reason and message.
async fn strategy_exists(
    client: &kube::Client,
    namespace: &str,
    spec: &Value,
) -> Result<(), (String, String)> {
    let name = spec["strategy"]["name"].as_str().unwrap_or_default();
    let kind = spec["strategy"]["kind"]
        .as_str()
        .unwrap_or("NamespacedBuildStrategy");
    let (api, reason, what): (Api<DynamicObject>, _, _) = if kind == "ClusterBuildStrategy" {
        (
            Api::all_with(
                client.clone(),
                &resource(
                    "shipwright.io",
                    "v1beta1",
                    "ClusterBuildStrategy",
                    "clusterbuildstrategies",
                ),
            ),
            "ClusterBuildStrategyNotFound",
            "clusterBuildStrategy",
        )
    } else {
        (
            Api::namespaced_with(
                client.clone(),
                namespace,
                &resource(
                    "shipwright.io",
                    "v1beta1",
                    "BuildStrategy",
                    "buildstrategies",
                ),
            ),
            "BuildStrategyNotFound",
            "buildStrategy",
        )
    };
    match api.get(name).await {
        Ok(_) => Ok(()),
        Err(_) => Err((
            reason.to_owned(),
            format!("{what} {name} does not exist in namespace {namespace}"),
        )),
    }
}
