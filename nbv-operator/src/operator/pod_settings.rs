//! The settings of validation Pods in `nbv run`: the Pod defaults file
//! (`--pod-defaults`) and `--nbv-image`, read and checked once at start, and the
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
    /// `--nbv-image` is not an image reference.
    #[error("--nbv-image (NBV_IMAGE): {0}")]
    NbvImage(InvalidPodDefaults),
    /// `--clone-image` was given: it is gone.
    #[error(
        "--clone-image (NBV_CLONE_IMAGE) is no longer read: the validation Pod clones with \
         nbv's own image; remove it, and set --nbv-image (NBV_IMAGE) for a mirror of nbv's image"
    )]
    CloneImageRemoved,
}

/// The Pod defaults of `nbv run`: the file's, or nbv's built-in ones without a file;
/// then `nbv_image`, which wins over the file's `image`. `clone_image`, the removed
/// `--clone-image`, is refused by name.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::pod_settings::load;
///
/// let defaults = load(None, Some("mirror.example.com/nbv:0.2.0"), None)?;
/// assert_eq!(defaults.nbv_image, "mirror.example.com/nbv:0.2.0");
/// assert!(load(None, Some("not an image"), None).is_err());
/// assert!(load(None, None, Some("docker.io/alpine/git")).is_err());
/// # Ok::<(), nbv_operator::operator::pod_settings::PodSettingsError>(())
/// ```
///
/// # Errors
///
/// [`PodSettingsError`] when the file cannot be read, or it or `nbv_image` is not
/// valid, or `clone_image` is given: the message names the field.
pub fn load(
    file: Option<&Path>,
    nbv_image: Option<&str>,
    clone_image: Option<&str>,
) -> Result<PodDefaults, PodSettingsError> {
    if clone_image.is_some() {
        return Err(PodSettingsError::CloneImageRemoved);
    }
    let defaults = match file {
        None => PodDefaults::default(),
        Some(path) => {
            let text = read_bounded(path).map_err(|source| PodSettingsError::Read {
                path: path.to_owned(),
                source,
            })?;
            PodDefaults::from_yaml(&text).map_err(|source| PodSettingsError::Invalid {
                path: path.to_owned(),
                source,
            })?
        }
    };
    match nbv_image {
        Some(image) => defaults
            .with_nbv_image(image)
            .map_err(PodSettingsError::NbvImage),
        None => Ok(defaults),
    }
}

/// The text of `path`, read no further than one byte past
/// [`nbv_core::yaml::MAX_INPUT_BYTES`]: a longer file is refused by the YAML reader
/// without being read whole (a ConfigMap holds at most 1 MiB anyway).
fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let limit = u64::try_from(nbv_core::yaml::MAX_INPUT_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    if bytes.len() > nbv_core::yaml::MAX_INPUT_BYTES {
        // Cut anywhere, perhaps inside a character: still refused as too large.
        return Ok(String::from_utf8_lossy(&bytes).into_owned());
    }
    String::from_utf8(bytes)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use nbv_core::yaml::{BoundsError, MAX_INPUT_BYTES};

    #[test]
    fn a_file_over_the_size_bound_is_refused_after_reading_one_byte_past_it() {
        let path = std::env::temp_dir().join(format!("nbv-pod-defaults-{}", std::process::id()));
        // A comment as long as the bound allows, the bound falling inside its `é`.
        let text = format!(
            "#{}é\nlabels: {{team: ml}}\n",
            "x".repeat(MAX_INPUT_BYTES - 1)
        );
        std::fs::write(&path, &text).unwrap();
        assert!(read_bounded(&path).unwrap().len() > MAX_INPUT_BYTES);
        let error = load(Some(&path), None, None).unwrap_err();
        let _ = std::fs::remove_file(&path);
        assert!(
            matches!(
                error,
                PodSettingsError::Invalid {
                    source: InvalidPodDefaults::Bounds(BoundsError::TooLarge { .. }),
                    ..
                }
            ),
            "{error}"
        );
    }
}
