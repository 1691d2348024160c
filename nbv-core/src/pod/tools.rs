//! The init container that puts nbv into the Pod, as Tekton's entrypoint does: nbv's
//! own image copies its `/nbv` (a static binary) and the papermill runner into an
//! emptyDir, from which the notebook container, in the user's image, runs `nbv pod run`.

use k8s_openapi::api::core::v1::Container;

use super::PodDefaults;
use super::container::{NBV_IN_IMAGE, TOOLS_DIR, TOOLS_VOLUME, mount, restricted_container};

/// Name of the init container that copies nbv into the Pod.
pub const TOOLS_CONTAINER: &str = "nbv-tools";

/// The `nbv-tools` init container: `/nbv pod install /nbv-tools` in nbv's image.
pub(super) fn tools_container(defaults: &PodDefaults) -> Container {
    let mut container = restricted_container(TOOLS_CONTAINER, &defaults.nbv_image);
    container.command = Some(
        [NBV_IN_IMAGE, "pod", "install", TOOLS_DIR]
            .map(str::to_owned)
            .to_vec(),
    );
    container.volume_mounts = Some(vec![mount(TOOLS_VOLUME, TOOLS_DIR, false)]);
    container.resources = Some(defaults.clone_resources.clone());
    if let Some(security) = container.security_context.as_mut() {
        security.run_as_user = defaults.clone_run_as_user();
    }
    container
}
