//! The container that runs the notebook and reports the outcome: `nbv pod run`, from
//! the copy the `nbv-tools` init container made, in the job's image.

use k8s_openapi::api::core::v1::{Container, EnvFromSource, EnvVar, SecretEnvSource, VolumeMount};

use crate::api::NotebookValidationJob;
use crate::checks::CheckPolicy;
use crate::compare::Settings;

use super::PodDefaults;
use super::container::{
    GOLDEN_DIR, GOLDEN_VOLUME, TERMINATION_LOG, TOOLS_DIR, TOOLS_VOLUME, WORKSPACE,
    WORKSPACE_VOLUME, env, mount, restricted_container,
};
use super::resources::merge_resources;

/// Name of the container that runs the notebook.
pub const NOTEBOOK_CONTAINER: &str = "notebook";
/// Environment variable holding the golden notebook's path in the Pod.
pub(super) const GOLDEN_ENV: &str = "NBV_GOLDEN";
/// Environment variable holding the comparison [`Settings`] as JSON.
pub(super) const COMPARISON_ENV: &str = "NBV_COMPARISON";
/// Environment variable holding the job's [`CheckPolicy`] as JSON.
pub(super) const CHECKS_ENV: &str = "NBV_CHECKS";

/// The comparison a notebook container makes after the run.
pub(super) struct GoldenComparison<'a> {
    /// The golden notebook's path in the Pod.
    pub path: String,
    /// Its path in its repository (`spec.goldenNotebook.path`), for messages.
    pub name: &'a str,
    /// How to compare.
    pub settings: &'a Settings,
}
/// Environment variable holding `spec.notebook.path`.
pub(super) const NOTEBOOK_ENV: &str = "NBV_NOTEBOOK";

/// The notebook container of `job`, running `image`.
///
/// The environment is, in order: nbv's defaults (`HOME` in the workspace, since the
/// image's user may not own its home directory; unbuffered Python output), the job's
/// `env`, then the run's settings ([`RunSettings`](super::RunSettings) reads them).
/// Later entries win, so the job may override the defaults but not the settings.
///
/// A job with a `validationConfig` also gets its resolved check policy in
/// `NBV_CHECKS`, as JSON: computed by the core, read by `nbv pod run`, never by a
/// shell.
/// A job with model validation gets `model_env` last
/// ([`model_env`](crate::models::model_env)): like nbv's settings, the job's `env`
/// cannot override what the gate found.
///
/// Its requests and limits are the job's `podConfig.resources`, completed from
/// `defaults` ([`merge_resources`]).
pub(super) fn notebook_container(
    job: &NotebookValidationJob,
    image: &str,
    golden: Option<&GoldenComparison<'_>>,
    checks: Option<&CheckPolicy>,
    model_env: &[EnvVar],
    defaults: &PodDefaults,
) -> Container {
    let config = &job.spec.pod_config;
    let mut vars = vec![
        env("HOME", &format!("{WORKSPACE}/home")),
        env("PYTHONUNBUFFERED", "1"),
    ];
    vars.extend(config.env.iter().flatten().cloned());
    vars.extend([
        env("NBV_REPOSITORY", &format!("{WORKSPACE}/repo")),
        env(NOTEBOOK_ENV, &job.spec.notebook.path),
        env("NBV_OUTPUT", &format!("{WORKSPACE}/out.ipynb")),
        env("NBV_RESULT", TERMINATION_LOG),
    ]);
    if let Some(golden) = golden {
        vars.extend([
            env(GOLDEN_ENV, &golden.path),
            env("NBV_GOLDEN_NAME", golden.name),
            env(COMPARISON_ENV, &golden.settings.to_json()),
        ]);
    }
    if let Some(policy) = checks {
        // A struct of strings, numbers and enums: serialization cannot fail.
        let json = serde_json::to_string(policy).unwrap_or_default();
        vars.push(env(CHECKS_ENV, &json));
    }
    vars.extend(model_env.iter().cloned());

    // `credentials` is shorthand for `envFrom[].secretRef`; explicit `envFrom` entries
    // come after it and so win for keys both define.
    let env_from: Vec<EnvFromSource> = config
        .credentials
        .iter()
        .flatten()
        .map(|secret| EnvFromSource {
            secret_ref: Some(SecretEnvSource {
                name: secret.clone(),
                optional: None,
            }),
            ..EnvFromSource::default()
        })
        .chain(config.env_from.iter().flatten().cloned())
        .collect();

    let mut mounts: Vec<VolumeMount> = vec![
        mount(WORKSPACE_VOLUME, WORKSPACE, false),
        mount(TOOLS_VOLUME, TOOLS_DIR, true),
    ];
    if golden.is_some() {
        // Read-only: the notebook cannot change what it is compared with.
        mounts.push(mount(GOLDEN_VOLUME, GOLDEN_DIR, true));
    }
    mounts.extend(config.volume_mounts.iter().flatten().cloned());

    let mut container = restricted_container(NOTEBOOK_CONTAINER, image);
    container.command = Some(
        [&format!("{TOOLS_DIR}/nbv"), "pod", "run"]
            .map(|s| s.to_string())
            .to_vec(),
    );
    container.working_dir = Some(WORKSPACE.to_owned());
    container.env = Some(vars);
    container.env_from = (!env_from.is_empty()).then_some(env_from);
    container.resources = Some(merge_resources(
        config.resources.as_ref(),
        &defaults.notebook_resources,
    ));
    container.volume_mounts = Some(mounts);
    container
}
