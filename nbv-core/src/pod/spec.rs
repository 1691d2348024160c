//! The validation Pod as a whole: identity, scheduling, volumes and the restricted
//! Pod Security profile.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{
    EmptyDirVolumeSource, LocalObjectReference, Pod, PodSecurityContext, PodSpec, SeccompProfile,
    Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::{API_VERSION, KIND, NotebookSource, NotebookValidationJob};
use crate::compare::{InvalidComparison, STRATEGY_ANNOTATION, Settings};
use crate::models::ServedModel;
use crate::phase::Attempt;

use super::container::{GOLDEN_VOLUME, TOOLS_VOLUME, WORKSPACE, WORKSPACE_VOLUME};
use super::error::PodSpecError;
use super::executor::{GoldenComparison, notebook_container};
use super::git::{GOLDEN_CHECKOUT, GOLDEN_COPY, GitAccess, NOTEBOOK_CHECKOUT, clone_container};
use super::models::model_environment;
use super::names::{job_label_value, pod_name};
use super::policy::{RESTRICTED_VOLUME_SOURCES, api_token_requested, volume_sources};
use super::timeout::timeout_seconds;
use super::tools::tools_container;
use super::unimplemented::check_implemented;
use super::{ATTEMPT_LABEL, JOB_LABEL, MANAGED_BY, MANAGED_BY_LABEL, PodDefaults};

/// Prefix of the volume names nbv uses.
const RESERVED_PREFIX: &str = "nbv-";

/// The validation Pod of `attempt` of `job`: an init container clones the repository,
/// the notebook container runs the notebook with papermill and reports the outcome in
/// its termination message.
///
/// `image` is the image a build produced; without one, the notebook container runs
/// `spec.podConfig.containerImage`. `models` are the models the gate opened for
/// ([`gate`](crate::models::gate)), `None` when the gate did not run (a job without
/// `spec.modelValidation` needs none): the notebook gets their URLs and the prediction
/// check's settings ([`model_env`](crate::models::model_env)). The Pod
///
/// - is named [`pod_name`]`(job, attempt)` (what `status.validationPodName` holds), in
///   the job's namespace, labelled with [`MANAGED_BY_LABEL`], [`JOB_LABEL`] and
///   [`ATTEMPT_LABEL`], and owned by the job (deleting the job deletes its Pods);
/// - meets the restricted Pod Security profile and OpenShift's `restricted-v2`:
///   non-root, `RuntimeDefault` seccomp, no privilege escalation, every capability
///   dropped, only the volume types they allow, and no user or group pinned but the
///   clone containers' user where [`PodDefaults::clone_run_as_user`] asks for one;
/// - carries what `defaults` sets for every Pod: its labels and annotations (never in
///   place of nbv's labels), image pull secrets, placement merged with the job's
///   ([`Placement::merged_with`](super::Placement::merged_with)), requests and limits on
///   every container ([`merge_resources`](super::merge_resources) for the notebook);
/// - has no API token unless the job asks for one
///   ([`SERVICE_ACCOUNT_TOKEN_ANNOTATION`](super::SERVICE_ACCOUNT_TOKEN_ANNOTATION)),
///   whichever service account it runs as;
/// - never interpolates a value of the job into a script: URL, ref and path reach the
///   scripts as environment variables;
/// - stops after `spec.timeout` (`activeDeadlineSeconds`, 30 minutes by default).
///
/// `podConfig.buildConfig` is not read here: the run's build ([`crate::build`]) gives
/// `image`.
///
/// # Examples
///
/// ```
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::phase::Attempt;
/// use nbv_core::pod::{validation_pod, PodDefaults};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "uid": "4b1c"},
///     "spec": {
///         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
///         "podConfig": {"containerImage": "quay.io/example/papermill:1"},
///         "timeout": "1h"
///     }
/// }))?;
/// let pod = validation_pod(&job, Attempt::new(3, 1), None, None, &PodDefaults::default())?;
/// assert_eq!(pod.metadata.name.as_deref(), Some("train-g3-r1"));
/// let spec = pod.spec.unwrap();
/// assert_eq!(spec.active_deadline_seconds, Some(3600));
/// assert_eq!(spec.containers[0].image.as_deref(), Some("quay.io/example/papermill:1"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`PodSpecError`] naming the field when the job lacks its identity (name, namespace,
/// uid), puts in its Pod what the admin's policy does not allow
/// ([`PodSpecError::Policy`], [`PodDefaults::policy`]), has a token annotation that is
/// not a boolean, asks for a check nbv does not carry out yet
/// ([`PodSpecError::NotImplemented`]: an enabled `modelValidation` without the models
/// the gate opened for, a field nbv does not know), a `modelValidation` nbv cannot
/// carry out as written ([`PodSpecError::Models`]), a comparison nbv cannot carry out as written
/// ([`PodSpecError::Comparison`]), a `validationConfig` that cannot be checked
/// ([`PodSpecError::Checks`]), has no
/// image, an invalid timeout, a Git URL or ref that cannot be cloned
/// safely, a notebook path outside the repository, credentials over an unencrypted
/// transport, or volumes the restricted profile forbids.
pub fn validation_pod(
    job: &NotebookValidationJob,
    attempt: Attempt,
    image: Option<&str>,
    models: Option<&[ServedModel]>,
    defaults: &PodDefaults,
) -> Result<Pod, PodSpecError> {
    let identity = |field| PodSpecError::Identity { field };
    let name = job
        .metadata
        .name
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or(identity("metadata.name"))?;
    let namespace = job
        .metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .ok_or(identity("metadata.namespace"))?;
    let uid = job
        .metadata
        .uid
        .as_deref()
        .filter(|u| !u.is_empty())
        .ok_or(identity("metadata.uid"))?;

    // The cluster admin's policy first: a job it refuses learns that before anything
    // else about its spec.
    defaults.policy.check(job)?;
    let api_token = api_token_requested(job)?;
    let spec = &job.spec;
    check_implemented(spec, namespace)?;
    let model_env = model_environment(spec, namespace, models)?;
    let checks = crate::checks::policy_of(spec)?;
    let config = &spec.pod_config;
    let image = image
        .filter(|i| !i.trim().is_empty())
        .or(Some(config.container_image.as_str()).filter(|i| !i.trim().is_empty()))
        .ok_or(PodSpecError::EmptyImage)?;
    let deadline = timeout_seconds(spec.timeout.as_deref())?;
    let access = GitAccess::of(&spec.notebook.git, NOTEBOOK_CHECKOUT.origin)?;
    check_notebook_path(&spec.notebook.path, NOTEBOOK_CHECKOUT.origin)?;
    let golden = golden_plan(job)?;
    let user_volumes = config.volumes.as_deref().unwrap_or_default();
    check_volumes(user_volumes)?;
    check_mounts(job, user_volumes)?;

    let empty_dir = |name: &str| Volume {
        name: name.to_owned(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Volume::default()
    };
    let mut volumes = vec![empty_dir(WORKSPACE_VOLUME), empty_dir(TOOLS_VOLUME)];
    if golden.is_some() {
        volumes.push(empty_dir(GOLDEN_VOLUME));
    }
    volumes.extend(access.volume(NOTEBOOK_CHECKOUT));
    // The golden notebook in the notebook's checkout is copied out of it by the clone.
    let golden_copy = match &golden {
        Some(GoldenPlan {
            clone: None,
            source_path,
            ..
        }) => Some(source_path.as_str()),
        _ => None,
    };
    let mut init_containers = vec![
        tools_container(defaults),
        clone_container(
            &spec.notebook.git,
            &access,
            NOTEBOOK_CHECKOUT,
            golden_copy,
            defaults,
        ),
    ];
    if let Some(GoldenPlan {
        clone: Some((source, access)),
        ..
    }) = &golden
    {
        volumes.extend(access.volume(GOLDEN_CHECKOUT));
        init_containers.push(clone_container(
            &source.git,
            access,
            GOLDEN_CHECKOUT,
            None,
            defaults,
        ));
    }
    volumes.extend(user_volumes.iter().cloned());
    let comparison = golden.as_ref().map(|plan| GoldenComparison {
        path: plan.path.clone(),
        name: &plan.source_path,
        settings: &plan.settings,
    });

    // nbv's labels last: they find the Pod again, so no configured label replaces them.
    let mut labels = defaults.labels.clone();
    labels.extend([
        (MANAGED_BY_LABEL.to_owned(), MANAGED_BY.to_owned()),
        (JOB_LABEL.to_owned(), job_label_value(name)),
        (ATTEMPT_LABEL.to_owned(), attempt.to_string()),
    ]);
    let placement = defaults.placement.merged_with(config);
    let pull_secrets: Vec<LocalObjectReference> = defaults
        .image_pull_secrets
        .iter()
        .map(|name| LocalObjectReference { name: name.clone() })
        .collect();
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(name, attempt)),
            namespace: Some(namespace.to_owned()),
            labels: Some(labels),
            annotations: (!defaults.annotations.is_empty()).then(|| defaults.annotations.clone()),
            owner_references: Some(vec![OwnerReference {
                api_version: API_VERSION.to_owned(),
                kind: KIND.to_owned(),
                name: name.to_owned(),
                uid: uid.to_owned(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            restart_policy: Some("Never".to_owned()),
            active_deadline_seconds: Some(deadline),
            service_account_name: config.service_account_name.clone(),
            // No API token unless the job asks for one (SERVICE_ACCOUNT_TOKEN_ANNOTATION),
            // whichever service account it names: a token is a credential every package
            // the notebook installs could use.
            automount_service_account_token: Some(api_token),
            node_selector: (!placement.node_selector.is_empty()).then_some(placement.node_selector),
            tolerations: (!placement.tolerations.is_empty()).then_some(placement.tolerations),
            affinity: placement.affinity,
            priority_class_name: placement.priority_class_name,
            runtime_class_name: placement.runtime_class_name,
            image_pull_secrets: (!pull_secrets.is_empty()).then_some(pull_secrets),
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_owned(),
                    localhost_profile: None,
                }),
                ..PodSecurityContext::default()
            }),
            init_containers: Some(init_containers),
            containers: vec![notebook_container(
                job,
                image,
                comparison.as_ref(),
                checks.as_ref(),
                &model_env,
                defaults,
            )],
            volumes: Some(volumes),
            ..PodSpec::default()
        }),
        status: None,
    })
}

/// How a Pod compares with the golden notebook.
struct GoldenPlan<'a> {
    /// The golden notebook's path in the Pod.
    path: String,
    /// The golden notebook's path in its repository.
    source_path: String,
    /// The settings, resolved.
    settings: Settings,
    /// The clone to make, when the golden notebook is not in the notebook's checkout.
    clone: Option<(&'a NotebookSource, GitAccess)>,
}

/// The comparison `job` asks for, checked: `None` without `spec.goldenNotebook`.
///
/// A golden notebook in the notebook's repository at the same ref is copied out of the
/// notebook's checkout: no second clone. Either way it ends in the golden volume,
/// which the notebook container mounts read-only.
fn golden_plan(job: &NotebookValidationJob) -> Result<Option<GoldenPlan<'_>>, PodSpecError> {
    let spec = &job.spec;
    let Some(golden) = spec.golden_notebook.as_ref() else {
        if spec.comparison_config.is_some() {
            return Err(PodSpecError::Comparison(InvalidComparison {
                field: "spec.comparisonConfig".to_owned(),
                problem: "there is no spec.goldenNotebook to compare with; add the golden \
                          notebook or remove comparisonConfig"
                    .to_owned(),
            }));
        }
        return Ok(None);
    };
    let annotation = job
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(STRATEGY_ANNOTATION))
        .map(String::as_str);
    let settings = Settings::resolve(spec.comparison_config.as_ref(), annotation)?;
    let origin = GOLDEN_CHECKOUT.origin;
    check_notebook_path(&golden.path, origin)?;
    let same =
        golden.git.url == spec.notebook.git.url && golden.git.git_ref == spec.notebook.git.git_ref;
    let (path, clone) = if same {
        (GOLDEN_COPY.to_owned(), None)
    } else {
        let access = GitAccess::of(&golden.git, origin)?;
        (
            format!("{}/{}", GOLDEN_CHECKOUT.dir, golden.path),
            Some((golden, access)),
        )
    };
    Ok(Some(GoldenPlan {
        path,
        source_path: golden.path.clone(),
        settings,
        clone,
    }))
}

fn check_notebook_path(path: &str, origin: &'static str) -> Result<(), PodSpecError> {
    let problem = if path.is_empty() {
        Some("is empty")
    } else if path.starts_with('/') {
        Some("is absolute")
    } else if path.split('/').any(|part| part == "..") {
        Some("leaves the repository (it contains \"..\")")
    } else if path.chars().any(char::is_control) {
        Some("contains control characters")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(PodSpecError::NotebookPath {
            origin,
            path: path.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

fn check_volumes(volumes: &[Volume]) -> Result<(), PodSpecError> {
    for (index, volume) in volumes.iter().enumerate() {
        if volume.name.starts_with(RESERVED_PREFIX) {
            return Err(PodSpecError::ReservedVolume {
                index,
                name: volume.name.clone(),
            });
        }
        let forbidden = volume_sources(volume)
            .into_iter()
            .find(|source| !RESTRICTED_VOLUME_SOURCES.contains(&source.as_str()));
        if let Some(volume_type) = forbidden {
            return Err(PodSpecError::ForbiddenVolume {
                index,
                name: volume.name.clone(),
                volume_type,
            });
        }
    }
    Ok(())
}

fn check_mounts(job: &NotebookValidationJob, volumes: &[Volume]) -> Result<(), PodSpecError> {
    let names: BTreeSet<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
    let mounts = job
        .spec
        .pod_config
        .volume_mounts
        .as_deref()
        .unwrap_or_default();
    for (index, mount) in mounts.iter().enumerate() {
        let path = mount.mount_path.trim_end_matches('/');
        if path.is_empty() || path == WORKSPACE || path.starts_with("/workspace/") {
            return Err(PodSpecError::ReservedMount {
                index,
                path: mount.mount_path.clone(),
            });
        }
        if !names.contains(mount.name.as_str()) {
            return Err(PodSpecError::UnknownVolume {
                index,
                name: mount.name.clone(),
            });
        }
    }
    Ok(())
}
