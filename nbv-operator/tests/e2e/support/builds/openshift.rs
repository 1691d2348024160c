//! OpenShift's build controller, for nbv's Builds (`build.openshift.io/v1`, installed
//! as CRDs without a status subresource: OpenShift writes a Build's status with the
//! object, and so does `oc cancel-build`).
//!
//! As OpenShift does: a Build of a BuildConfig that does not exist ends `Error`
//! (`BuildConfigNotFound` here); otherwise the Build goes `Pending`, then `Running`
//! (`startTimestamp`, `outputDockerImageReference`, `config`), then `Complete` with
//! `output.to.imageDigest`, `completionTimestamp` and `duration`. The S2I builder's
//! `assemble` runs nothing of nbv, so nothing is run here: the digest "pushed" is the
//! SHA-256 of the Build's spec, as for Shipwright. `status.cancelled: true` ends it
//! `Cancelled`; a hook fails it `Failed` with the build log's last lines in
//! `logSnippet`. The build Pod's own deadline (`completionDeadlineSeconds`) is not
//! played: a build that stalls or is held runs until it is cancelled.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::runs::run_each;
use super::shipwright::digest_of;
use super::status::write_object;
use super::{Hook, Hooks};
use crate::support::container::now;
use crate::support::objects::resource;

/// How long a build takes when nothing holds it.
const BUILD_TIME: Duration = Duration::from_secs(1);

/// The label OpenShift puts on a BuildConfig's Builds.
const BUILD_CONFIG_LABEL: &str = "openshift.io/build-config.name";

/// Watches the Builds of `namespace` and runs each once.
pub async fn run(client: kube::Client, namespace: String, hooks: Hooks) {
    let openshift = |kind: &str, plural: &str| -> Api<DynamicObject> {
        Api::namespaced_with(
            client.clone(),
            &namespace,
            &resource("build.openshift.io", "v1", kind, plural),
        )
    };
    let builds = openshift("Build", "builds");
    let configs = openshift("BuildConfig", "buildconfigs");
    let cancelled = |build: &DynamicObject| build.data["status"]["cancelled"] == true;
    run_each(builds.clone(), cancelled, |build, cancelled_rx| {
        let hook = hooks.of(build.metadata.labels.as_ref());
        tokio::spawn(run_build(
            builds.clone(),
            configs.clone(),
            build,
            hook,
            cancelled_rx,
        ))
    })
    .await;
}

async fn run_build(
    builds: Api<DynamicObject>,
    configs: Api<DynamicObject>,
    build: DynamicObject,
    hook: Option<Hook>,
    mut cancelled: watch::Receiver<bool>,
) {
    let name = build.metadata.name.clone().unwrap_or_default();
    let namespace = build.metadata.namespace.clone().unwrap_or_default();
    let config = build
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(BUILD_CONFIG_LABEL))
        .cloned()
        .unwrap_or_default();
    if configs.get(&config).await.is_err() {
        let message = format!("buildconfig.build.openshift.io \"{config}\" not found");
        let status = json!({"phase": "Error", "reason": "BuildConfigNotFound",
                            "message": message, "completionTimestamp": now()});
        write_object(&builds, &name, status).await;
        return;
    }
    let spec = build.data["spec"].clone();
    write_object(&builds, &name, json!({"phase": "Pending"})).await;
    let started = Instant::now();
    write_object(
        &builds,
        &name,
        json!({"phase": "Running", "startTimestamp": now(),
               "outputDockerImageReference": spec["output"]["to"]["name"],
               "config": {"kind": "BuildConfig", "namespace": namespace, "name": config}}),
    )
    .await;
    let ended = |phase: &str| {
        json!({"phase": phase, "completionTimestamp": now(),
               "duration": u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX)})
    };
    let length = match hook {
        Some(Hook::Hold | Hook::Stall) => None,
        _ => Some(BUILD_TIME),
    };
    let finish = async {
        match length {
            Some(length) => tokio::time::sleep(length).await,
            None => std::future::pending().await,
        }
    };
    let status = tokio::select! {
        _ = cancelled.wait_for(|c| *c) => merged(ended("Cancelled"), json!({
            "reason": "CancelledBuild", "message": "The build was cancelled by the user."})),
        () = finish => match hook {
            Some(Hook::Fail(reason, log)) => merged(ended("Failed"), json!({
                "reason": reason,
                "message": "Generic Build failure - check logs for details.",
                "logSnippet": log})),
            _ => merged(ended("Complete"), json!({
                "output": {"to": {"imageDigest": digest_of(&spec)}}})),
        },
    };
    let complete = status["phase"] == "Complete";
    write_object(&builds, &name, status).await;
    if complete {
        // The push of the image, as the internal registry records it.
        let image = spec["output"]["to"]["name"].as_str().unwrap_or_default();
        super::registry::pushed(&builds.into_client(), image, &digest_of(&spec)).await;
    }
}

/// `base` with the fields of `more`.
fn merged(mut base: Value, more: Value) -> Value {
    if let (Some(base), Value::Object(more)) = (base.as_object_mut(), more) {
        base.extend(more);
    }
    base
}
