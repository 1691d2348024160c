//! OpenShift builds: a BuildConfig and its first Build, made as OpenShift makes one
//! (`oc start-build`), with Source-to-Image from a requirements file or a Dockerfile.

use serde_json::{Value, json};

use super::context::{Named, named};
use super::{Route, meta};
use crate::build::{BuildPlan, PlanError};

/// The labels and annotation OpenShift puts on a BuildConfig's builds.
const BUILD_CONFIG_LABEL: &str = "openshift.io/build-config.name";
const BUILD_CONFIG_SHORT_LABEL: &str = "buildconfig";
const BUILD_NUMBER_ANNOTATION: &str = "openshift.io/build.number";

/// The Build's name: the BuildConfig's first build.
pub(super) fn build_name(plan: &BuildPlan) -> String {
    format!("{}-1", plan.name)
}

/// The BuildConfig whose Build `build` is, by OpenShift's own labels.
pub(super) fn build_config_of(build: &Value) -> Option<&str> {
    let metadata = &build["metadata"];
    metadata["annotations"][BUILD_CONFIG_LABEL]
        .as_str()
        .or_else(|| metadata["labels"][BUILD_CONFIG_LABEL].as_str())
        .or_else(|| metadata["labels"][BUILD_CONFIG_SHORT_LABEL].as_str())
}

/// The BuildConfig and the Build of `plan`.
pub(super) fn objects(plan: &BuildPlan) -> Result<Vec<Value>, PlanError> {
    let input = named(plan, Route::OpenShift)?;
    let strategy = match &input {
        Named::Dockerfile(path) => json!({
            "type": "Docker",
            "dockerStrategy": {"dockerfilePath": path},
        }),
        // The base image must be a Python S2I builder: it installs requirements.txt.
        Named::Requirements { .. } => json!({
            "type": "Source",
            "sourceStrategy": {"from": {"kind": "DockerImage", "name": plan.source.base_image}},
        }),
    };
    let mut source = json!({
        "type": "Git",
        "git": {"uri": plan.git.url, "ref": plan.git.git_ref},
    });
    if let Some(dir) = input.context_dir() {
        source["contextDir"] = json!(dir);
    }
    if let Some(secret) = plan
        .git
        .credentials_secret
        .as_ref()
        .filter(|s| !s.is_empty())
    {
        source["sourceSecret"] = json!({"name": secret});
    }
    let mut output = json!({"to": {"kind": "DockerImage", "name": plan.image}});
    if let Some(secret) = &plan.push_secret {
        output["pushSecret"] = json!({"name": secret});
    }
    let mut common = json!({
        "source": source,
        "strategy": strategy,
        "output": output,
        "completionDeadlineSeconds": plan.timeout.as_secs(),
    });
    if let Some(account) = &plan.service_account {
        common["serviceAccount"] = json!(account);
    }
    let mut config_spec = common.clone();
    config_spec["runPolicy"] = json!("Serial");
    config_spec["triggers"] = json!([]);
    let config = json!({
        "apiVersion": Route::OpenShift.api(),
        "kind": "BuildConfig",
        "metadata": meta::metadata(plan, Route::OpenShift, &plan.name, &[], &[]),
        "spec": config_spec,
    });
    let mut build_spec = common;
    build_spec["triggeredBy"] = json!([{"message": "Started by nbv"}]);
    let build = json!({
        "apiVersion": Route::OpenShift.api(),
        "kind": "Build",
        "metadata": meta::metadata(
            plan,
            Route::OpenShift,
            &build_name(plan),
            &[(BUILD_CONFIG_SHORT_LABEL, &plan.name), (BUILD_CONFIG_LABEL, &plan.name)],
            &[(BUILD_CONFIG_LABEL, &plan.name), (BUILD_NUMBER_ANNOTATION, "1")],
        ),
        "spec": build_spec,
    });
    Ok(vec![config, build])
}
