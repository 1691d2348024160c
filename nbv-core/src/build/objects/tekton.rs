//! Tekton: one PipelineRun whose only task clones, prepares and builds with buildah,
//! defined inline so that nothing has to be installed beside Tekton.

use k8s_openapi::api::core::v1::Container;
use serde_json::{Value, json};

use super::checkout::{PREPARED_DOCKERFILE, env, nbv_steps};
use super::{Route, meta};
use crate::build::{BuildDefaults, BuildPlan, PlanError};
use crate::pod::PodDefaults;

/// The workspace the repository is cloned into, and where the task mounts it.
const SOURCE_WORKSPACE: (&str, &str) = ("source", "/workspace/source");
/// The checkout, in [`SOURCE_WORKSPACE`].
const CHECKOUT: &str = "/workspace/source/repo";
/// The workspace of the push Secret (`.dockerconfigjson`).
const DOCKERCONFIG_WORKSPACE: &str = "dockerconfig";
/// The only task.
const TASK: &str = "build";
/// The task's and the pipeline's results.
const RESULTS: [(&str, &str); 3] = [
    ("IMAGE_DIGEST", "The digest of the image pushed"),
    ("IMAGE_URL", "The image pushed"),
    ("SUMMARY", "What nbv build prepare decided to build"),
];
/// buildah's storage, as in OpenShift Pipelines' buildah task.
const STORAGE_VOLUME: (&str, &str) = ("varlibcontainers", "/var/lib/containers");

/// The build step's script: fixed text, its inputs in environment variables, so that
/// no value of the job is ever read as shell. `$(results…)` are Tekton's own paths.
const BUILD_SCRIPT: &str = r#"set -eu
buildah --storage-driver=vfs bud --format=oci --tls-verify=true --no-cache \
  -f "$DOCKERFILE" -t "$IMAGE" "$CONTEXT"
buildah --storage-driver=vfs push --tls-verify=true \
  --digestfile "$(results.IMAGE_DIGEST.path)" "$IMAGE" "docker://$IMAGE"
printf '%s' "$IMAGE" > "$(results.IMAGE_URL.path)"
"#;

/// The PipelineRun that builds `plan`.
pub(super) fn pipeline_run(
    plan: &BuildPlan,
    pods: &PodDefaults,
    defaults: &BuildDefaults,
) -> Result<Value, PlanError> {
    refuse_substitutions(plan)?;
    let steps = nbv_steps(
        plan,
        CHECKOUT,
        SOURCE_WORKSPACE,
        "$(results.SUMMARY.path)",
        pods,
    )?;
    let mut build_env = vec![
        env("IMAGE", &plan.image),
        env("DOCKERFILE", &format!("{CHECKOUT}/{PREPARED_DOCKERFILE}")),
        env("CONTEXT", CHECKOUT),
    ];
    let mut run_workspaces = vec![json!({
        "name": SOURCE_WORKSPACE.0,
        // A claim of the run's own: concurrent builds never share a volume, and it
        // goes with the PipelineRun.
        "volumeClaimTemplate": {"spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": defaults.workspace_size}},
        }},
    })];
    let mut task_workspaces =
        vec![json!({"name": SOURCE_WORKSPACE.0, "mountPath": SOURCE_WORKSPACE.1})];
    if let Some(secret) = &plan.push_secret {
        build_env.push(env(
            "REGISTRY_AUTH_FILE",
            &format!("$(workspaces.{DOCKERCONFIG_WORKSPACE}.path)/.dockerconfigjson"),
        ));
        run_workspaces
            .push(json!({"name": DOCKERCONFIG_WORKSPACE, "secret": {"secretName": secret}}));
        task_workspaces.push(json!({"name": DOCKERCONFIG_WORKSPACE, "readOnly": true}));
    }
    let build = json!({
        "name": "build",
        "image": defaults.buildah_image,
        "workingDir": CHECKOUT,
        "env": build_env,
        "script": BUILD_SCRIPT,
        // OpenShift Pipelines' buildah task: buildah sets file capabilities of the
        // image's files.
        "securityContext": {"capabilities": {"add": ["SETFCAP"]}},
        "volumeMounts": [{"name": STORAGE_VOLUME.0, "mountPath": STORAGE_VOLUME.1}],
    });
    let mut volumes = vec![json!({"name": STORAGE_VOLUME.0, "emptyDir": {}})];
    volumes.extend(steps.ssh_volume.iter().map(|v| json!(v)));
    let names =
        |w: &Vec<Value>| -> Vec<Value> { w.iter().map(|w| json!({"name": w["name"]})).collect() };
    let bindings: Vec<Value> = run_workspaces
        .iter()
        .map(|w| json!({"name": w["name"], "workspace": w["name"]}))
        .collect();
    let results = |value: fn(&str) -> Value| -> Vec<Value> {
        RESULTS.iter().map(|(name, _)| value(name)).collect()
    };
    let mut template = serde_json::Map::new();
    if let Some(account) = &plan.service_account {
        template.insert("serviceAccountName".to_owned(), json!(account));
    }
    if let Some(user) = pods.clone_run_as_user() {
        // The claim's root directory belongs to root; the clone runs as this user.
        template.insert(
            "podTemplate".to_owned(),
            json!({"securityContext": {"fsGroup": user}}),
        );
    }
    let mut spec = json!({
        "timeouts": {"pipeline": format!("{}s", plan.timeout.as_secs())},
        "workspaces": run_workspaces,
        "pipelineSpec": {
            "workspaces": names(&run_workspaces),
            "results": results(|name| json!({"name": name, "value": format!("$(tasks.{TASK}.results.{name})")})),
            "tasks": [{
                "name": TASK,
                "workspaces": bindings,
                "taskSpec": {
                    "workspaces": task_workspaces,
                    "results": RESULTS.iter().map(|(name, description)| json!({"name": name, "description": description})).collect::<Vec<_>>(),
                    "volumes": volumes,
                    "steps": [step(steps.clone, SOURCE_WORKSPACE.0), step(steps.prepare, SOURCE_WORKSPACE.0), build],
                },
            }],
        },
    });
    if !template.is_empty() {
        spec["taskRunTemplate"] = template.into();
    }
    Ok(json!({
        "apiVersion": Route::Tekton.api(),
        "kind": "PipelineRun",
        "metadata": meta::metadata(plan, Route::Tekton, &plan.name, &[], &[]),
        "spec": spec,
    }))
}

/// `container` as a Tekton step: the workspace is mounted by Tekton, not as a volume;
/// resources are `computeResources`; Tekton owns the termination message.
fn step(container: Container, workspace_volume: &str) -> Value {
    let mut value = json!(container);
    let step = value.as_object_mut().expect("a container is an object");
    step.remove("terminationMessagePath");
    step.remove("terminationMessagePolicy");
    if let Some(resources) = step.remove("resources") {
        step.insert("computeResources".to_owned(), resources);
    }
    if let Some(Value::Array(mounts)) = step.get_mut("volumeMounts") {
        mounts.retain(|m| m["name"] != workspace_volume);
        if mounts.is_empty() {
            step.remove("volumeMounts");
        }
    }
    value
}

/// Refuses a job value that Tekton would read as one of its `$(…)` variables: Tekton
/// substitutes them in every string of the run, environment variables included.
fn refuse_substitutions(plan: &BuildPlan) -> Result<(), PlanError> {
    let source = serde_json::to_string(&plan.source).expect("a SourceConfig is JSON");
    let values = [
        ("spec.notebook.git.url", plan.git.url.as_str()),
        ("spec.notebook.git.ref", plan.git.git_ref.as_str()),
        (
            "spec.podConfig.buildConfig.strategyConfig.outputImage",
            plan.image.as_str(),
        ),
        ("spec.podConfig.buildConfig", source.as_str()),
    ];
    match values.iter().find(|(_, value)| value.contains("$(")) {
        None => Ok(()),
        Some((field, _)) => Err(PlanError::Field {
            field: (*field).to_owned(),
            problem: "contains \"$(\", which Tekton reads as one of its variables; \
                      use another strategy or remove it"
                .to_owned(),
        }),
    }
}
