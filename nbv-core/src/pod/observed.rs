//! What nbv keeps of a validation Pod: the fields its readers use, nothing more.
//!
//! A watch cache holds each Pod for as long as it exists, and a finished Pod is kept
//! (its logs stay readable), so every field nbv does not read costs memory once per
//! job for the life of the process; the Pod spec alone is several KiB. The readers,
//! and what they read:
//!
//! - [`pod_ref`](super::pod_ref): the name and the [`ATTEMPT_LABEL`];
//! - [`is_controlled_by`](super::is_controlled_by) and the controller's mapping of a
//!   Pod to its job: `ownerReferences`;
//! - [`observe_pod`](super::observe_pod) and
//!   [`reported_predictions`](super::reported_predictions): `creationTimestamp`;
//!   `spec.activeDeadlineSeconds`; of the notebook container, whether it sets the
//!   golden, checks or models variables (their names, not their values) and its
//!   memory limit; of each clone container, the Secret its credentials come from (an
//!   environment variable's `secretKeyRef` or the SSH volume's Secret); the status's
//!   phase, reason, message and start time, its `DisruptionTarget` and `PodScheduled`
//!   conditions, and each container status's name, image and waiting or terminated
//!   state (the notebook's report is the terminated state's message);
//! - a cache keyed by name and namespace, a watch resumed at a `resourceVersion`, a
//!   left-over Pod deleted with a precondition on its `uid`.
//!
//! `tests/pod/observed.rs` checks that these readers answer the same for a Pod and
//! for what is kept of it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus,
    EnvVar, EnvVarSource, Pod, PodCondition, PodSpec, PodStatus, ResourceRequirements,
    SecretKeySelector, SecretVolumeSource, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::git::CHECKOUTS;
use super::observe::{NOTEBOOK_SWITCHES, READ_CONDITIONS};
use super::{ATTEMPT_LABEL, JOB_LABEL, MANAGED_BY_LABEL, NOTEBOOK_CONTAINER};

/// What nbv reads of a validation Pod, as a Pod: identity (name, namespace, uid,
/// resourceVersion, creationTimestamp, nbv's labels, ownerReferences), the few spec
/// fields [`observe_pod`](super::observe_pod) reads, and the status without what no
/// reader uses (IPs, QoS class, probes' times, container ids and start times). The
/// managed fields, annotations, scripts, images, volumes and environment values are
/// dropped.
///
/// [`observe_pod`](super::observe_pod), [`reported_predictions`](super::reported_predictions),
/// [`pod_ref`](super::pod_ref) and [`is_controlled_by`](super::is_controlled_by) answer the
/// same for a Pod and for its observed part, so a watch cache can keep this instead of
/// the Pod (the operator's does). Applying it twice changes nothing.
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::phase::Attempt;
/// use nbv_core::pod::{observe_pod, observed_part, validation_pod, PodDefaults, DEFAULT_START_GRACE};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml", "uid": "4b1c"},
///     "spec": {
///         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
///         "podConfig": {"containerImage": "quay.io/example/papermill:1"}
///     }
/// }))?;
/// let mut pod = validation_pod(&job, Attempt::new(1, 0), None, None, &PodDefaults::default())?;
/// pod.status = Some(serde_json::from_value(serde_json::json!({
///     "phase": "Succeeded", "podIP": "10.0.0.7", "qosClass": "Burstable",
///     "containerStatuses": [{"name": "notebook", "image": "quay.io/example/papermill:1",
///         "imageID": "sha256:0f", "ready": false, "restartCount": 0,
///         "containerID": "containerd://9a",
///         "state": {"terminated": {"exitCode": 0, "message": "{\"cells\":[{\"i\":0,\"s\":\"ok\"}]}"}}}]
/// }))?);
///
/// let kept = observed_part(&pod);
/// assert!(serde_json::to_vec(&kept)?.len() < serde_json::to_vec(&pod)?.len() / 4);
/// assert_eq!(kept.metadata.owner_references, pod.metadata.owner_references);
/// assert!(kept.status.as_ref().unwrap().pod_ip.is_none());
/// let now = Utc::now();
/// assert_eq!(
///     observe_pod(&kept, now, DEFAULT_START_GRACE)?,
///     observe_pod(&pod, now, DEFAULT_START_GRACE)?,
/// );
/// assert_eq!(observed_part(&kept), kept);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn observed_part(pod: &Pod) -> Pod {
    Pod {
        metadata: identity(&pod.metadata),
        spec: pod.spec.as_ref().map(read_spec),
        status: pod.status.as_ref().map(read_status),
    }
}

/// The labels nbv gives its Pods: the attempt is read, the others select and name.
const KEPT_LABELS: [&str; 3] = [ATTEMPT_LABEL, JOB_LABEL, MANAGED_BY_LABEL];

fn identity(metadata: &ObjectMeta) -> ObjectMeta {
    let labels = metadata.labels.as_ref().map(|labels| {
        labels
            .iter()
            .filter(|(key, _)| KEPT_LABELS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect::<BTreeMap<_, _>>()
    });
    ObjectMeta {
        name: metadata.name.clone(),
        namespace: metadata.namespace.clone(),
        uid: metadata.uid.clone(),
        resource_version: metadata.resource_version.clone(),
        creation_timestamp: metadata.creation_timestamp.clone(),
        labels: labels.filter(|labels| !labels.is_empty()),
        owner_references: metadata.owner_references.clone(),
        ..ObjectMeta::default()
    }
}

fn read_spec(spec: &PodSpec) -> PodSpec {
    let init_containers: Vec<Container> = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| {
            CHECKOUTS
                .iter()
                .any(|checkout| checkout.container == c.name)
        })
        .map(clone_container)
        .collect();
    let volumes: Vec<Volume> = spec
        .volumes
        .iter()
        .flatten()
        .filter(|v| {
            CHECKOUTS
                .iter()
                .any(|checkout| checkout.ssh_volume == v.name)
        })
        .map(|v| Volume {
            name: v.name.clone(),
            secret: v.secret.as_ref().map(|s| SecretVolumeSource {
                secret_name: s.secret_name.clone(),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        })
        .collect();
    PodSpec {
        active_deadline_seconds: spec.active_deadline_seconds,
        containers: spec
            .containers
            .iter()
            .filter(|c| c.name == NOTEBOOK_CONTAINER)
            .map(notebook_container)
            .collect(),
        init_containers: (!init_containers.is_empty()).then_some(init_containers),
        volumes: (!volumes.is_empty()).then_some(volumes),
        ..PodSpec::default()
    }
}

/// The notebook container: which of the variables that say what it does it sets (by
/// name; the values can be long), and its memory limit.
fn notebook_container(container: &Container) -> Container {
    let env: Vec<EnvVar> = container
        .env
        .iter()
        .flatten()
        .filter(|e| NOTEBOOK_SWITCHES.contains(&e.name.as_str()))
        .map(|e| EnvVar {
            name: e.name.clone(),
            ..EnvVar::default()
        })
        .collect();
    let memory = container
        .resources
        .as_ref()
        .and_then(|r| r.limits.as_ref())
        .and_then(|limits| limits.get("memory"));
    Container {
        name: container.name.clone(),
        env: (!env.is_empty()).then_some(env),
        resources: memory.map(|memory| ResourceRequirements {
            limits: Some([("memory".to_owned(), memory.clone())].into()),
            ..ResourceRequirements::default()
        }),
        ..Container::default()
    }
}

/// A clone container: the Secrets its variables come from.
fn clone_container(container: &Container) -> Container {
    let env: Vec<EnvVar> = container
        .env
        .iter()
        .flatten()
        .filter_map(|e| {
            let secret = e.value_from.as_ref()?.secret_key_ref.as_ref()?;
            Some(EnvVar {
                name: e.name.clone(),
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: secret.name.clone(),
                        key: secret.key.clone(),
                        optional: None,
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            })
        })
        .collect();
    Container {
        name: container.name.clone(),
        env: (!env.is_empty()).then_some(env),
        ..Container::default()
    }
}

fn read_status(status: &PodStatus) -> PodStatus {
    let containers = |statuses: &Option<Vec<ContainerStatus>>| {
        statuses
            .as_ref()
            .map(|statuses| statuses.iter().map(container_status).collect())
    };
    let conditions: Vec<PodCondition> = status
        .conditions
        .iter()
        .flatten()
        .filter(|c| READ_CONDITIONS.contains(&c.type_.as_str()))
        .map(|c| PodCondition {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone(),
            message: c.message.clone(),
            ..PodCondition::default()
        })
        .collect();
    PodStatus {
        phase: status.phase.clone(),
        reason: status.reason.clone(),
        message: status.message.clone(),
        start_time: status.start_time.clone(),
        conditions: (!conditions.is_empty()).then_some(conditions),
        init_container_statuses: containers(&status.init_container_statuses),
        container_statuses: containers(&status.container_statuses),
        ..PodStatus::default()
    }
}

fn container_status(status: &ContainerStatus) -> ContainerStatus {
    ContainerStatus {
        name: status.name.clone(),
        image: status.image.clone(),
        state: status.state.as_ref().and_then(state),
        last_state: status.last_state.as_ref().and_then(state),
        ..ContainerStatus::default()
    }
}

/// A container's state as the classification reads it: waiting (why) or terminated
/// (how, and its message); running is never read.
fn state(state: &ContainerState) -> Option<ContainerState> {
    let waiting = state.waiting.as_ref().map(|w| ContainerStateWaiting {
        reason: w.reason.clone(),
        message: w.message.clone(),
    });
    let terminated = state.terminated.as_ref().map(|t| ContainerStateTerminated {
        exit_code: t.exit_code,
        reason: t.reason.clone(),
        message: t.message.clone(),
        ..ContainerStateTerminated::default()
    });
    (waiting.is_some() || terminated.is_some()).then_some(ContainerState {
        waiting,
        terminated,
        running: None,
    })
}
