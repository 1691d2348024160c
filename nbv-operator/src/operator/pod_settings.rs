//! The settings of validation Pods in `nbv run`: the Pod defaults file
//! (`--pod-defaults`) and `--clone-image`, read and checked once at start, and the
//! platform, detected once when the controller starts.

use std::path::{Path, PathBuf};

use nbv_core::pod::{CloneUser, InvalidPodDefaults, Platform, PodDefaults};

/// Why `nbv run` cannot start with the Pod settings it was given.
#[derive(Debug, thiserror::Error)]
pub enum PodSettingsError {
    /// The file cannot be read.
    #[error("cannot read the Pod defaults file {} (--pod-defaults, NBV_POD_DEFAULTS): {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file's content is not valid.
    #[error("the Pod defaults file {} (--pod-defaults, NBV_POD_DEFAULTS): {source}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field and what is wrong with it.
        source: InvalidPodDefaults,
    },
    /// `--clone-image` is not an image reference.
    #[error("--clone-image (NBV_CLONE_IMAGE): {0}")]
    CloneImage(InvalidPodDefaults),
}

/// The Pod defaults of `nbv run`: the file's, or nbv's built-in ones without a file;
/// then `clone_image`, which wins over the file's `clone.image`.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::pod_settings::load;
///
/// let defaults = load(None, Some("mirror.example.com/alpine/git:2.47.2"))?;
/// assert_eq!(defaults.git_image, "mirror.example.com/alpine/git:2.47.2");
/// assert!(load(None, Some("not an image")).is_err());
/// # Ok::<(), nbv_operator::operator::pod_settings::PodSettingsError>(())
/// ```
///
/// # Errors
///
/// [`PodSettingsError`] when the file cannot be read, or it or `clone_image` is not
/// valid: the message names the field.
pub fn load(
    file: Option<&Path>,
    clone_image: Option<&str>,
) -> Result<PodDefaults, PodSettingsError> {
    let defaults = match file {
        None => PodDefaults::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|source| PodSettingsError::Read {
                path: path.to_owned(),
                source,
            })?;
            PodDefaults::from_yaml(&text).map_err(|source| PodSettingsError::Invalid {
                path: path.to_owned(),
                source,
            })?
        }
    };
    match clone_image {
        Some(image) => defaults
            .with_git_image(image)
            .map_err(PodSettingsError::CloneImage),
        None => Ok(defaults),
    }
}

/// `defaults` for the cluster behind `client`: when the clone user is `auto`, the
/// platform is detected from the API groups the cluster serves (one discovery
/// request). A cluster that cannot be asked counts as plain Kubernetes, with a warning.
pub async fn for_cluster(client: &kube::Client, mut defaults: PodDefaults) -> PodDefaults {
    if defaults.clone_user != CloneUser::Auto {
        return defaults;
    }
    defaults.platform = match client.list_api_groups().await {
        Ok(list) => Platform::serving(list.groups.iter().map(|g| g.name.as_str())),
        Err(error) => {
            tracing::warn!(
                %error,
                "cannot list the API groups to tell OpenShift apart; clone containers run as \
                 user 65534, which OpenShift refuses: set clone.user in the Pod defaults \
                 (docs/configuration.md)"
            );
            Platform::Kubernetes
        }
    };
    tracing::info!(
        platform = ?defaults.platform,
        clone_run_as_user = ?defaults.clone_run_as_user(),
        "validation Pods' clone user"
    );
    defaults
}
