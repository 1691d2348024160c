//! The building blocks every container of the validation Pod shares: the workspace
//! they mount, where they write their termination message, the restricted profile's
//! settings and literal environment variables.

use k8s_openapi::api::core::v1::{Capabilities, Container, EnvVar, SecurityContext};

/// Where the repository is cloned and the notebook runs.
pub(super) const WORKSPACE: &str = "/workspace";
/// The emptyDir volume mounted at [`WORKSPACE`].
pub(super) const WORKSPACE_VOLUME: &str = "nbv-workspace";
/// Where a container writes its termination message (the Kubernetes default).
pub(super) const TERMINATION_LOG: &str = "/dev/termination-log";

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
