//! The building blocks every container of the validation Pod shares: the workspace
//! they mount, where they write their termination message, the restricted profile's
//! settings and literal environment variables.

use k8s_openapi::api::core::v1::{Capabilities, Container, EnvVar, SecurityContext, VolumeMount};

/// Where the repository is cloned and the notebook runs.
pub(super) const WORKSPACE: &str = "/workspace";
/// The emptyDir volume mounted at [`WORKSPACE`].
pub(super) const WORKSPACE_VOLUME: &str = "nbv-workspace";
/// Where a container writes its termination message (the Kubernetes default).
pub(super) const TERMINATION_LOG: &str = "/dev/termination-log";
/// nbv in nbv's own image.
pub(super) const NBV_IN_IMAGE: &str = "/nbv";
/// The emptyDir nbv's binary is copied into, mounted at [`TOOLS_DIR`].
pub(super) const TOOLS_VOLUME: &str = "nbv-tools";
/// Where the copied binary and the runner are, in every container that uses them.
pub(super) const TOOLS_DIR: &str = "/nbv-tools";
/// The emptyDir the golden notebook is put into, read-only to the notebook.
pub(super) const GOLDEN_VOLUME: &str = "nbv-golden";
/// Where [`GOLDEN_VOLUME`] is mounted.
pub(super) const GOLDEN_DIR: &str = "/nbv-golden";

/// A mount of `volume` at `path`.
pub(super) fn mount(volume: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: volume.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

/// A container with the restricted profile's settings and a termination message that
/// falls back to the log tail when the container fails without writing one.
pub(super) fn restricted_container(name: &str, image: &str) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                add: None,
            }),
            run_as_non_root: Some(true),
            ..SecurityContext::default()
        }),
        termination_message_path: Some(TERMINATION_LOG.to_owned()),
        termination_message_policy: Some("FallbackToLogsOnError".to_owned()),
        ..Container::default()
    }
}

/// An environment variable with a literal value.
pub(super) fn env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.to_owned()),
        value_from: None,
    }
}
