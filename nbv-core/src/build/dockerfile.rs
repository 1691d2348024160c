//! The Dockerfile a build builds, and where `nbv build prepare` leaves it in the
//! checkout. The build context is always the repository's root.

use super::SourceError;
use super::recipe::Recipe;
use crate::pod::syntax::image_problem;

/// The directory of the checkout that `nbv build prepare` writes into, relative to the
/// repository's root (and so to the build context).
///
/// # Examples
///
/// ```
/// assert!(nbv_core::build::PREPARED_DOCKERFILE.starts_with(nbv_core::build::PREPARED_DIR));
/// ```
pub const PREPARED_DIR: &str = ".nbv-build";

/// The Dockerfile the build step builds, relative to the build context (the
/// repository's root): generated, or a copy of the repository's own.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::build::PREPARED_DOCKERFILE, ".nbv-build/Dockerfile");
/// ```
pub const PREPARED_DOCKERFILE: &str = ".nbv-build/Dockerfile";

/// The requirements file a generated Dockerfile installs, relative to the build
/// context: a copy of the repository's, or the one generated from the notebook's
/// imports.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::build::PREPARED_REQUIREMENTS, ".nbv-build/requirements.txt");
/// ```
pub const PREPARED_REQUIREMENTS: &str = ".nbv-build/requirements.txt";

/// Where a generated Dockerfile puts the requirements file inside the image.
const IN_IMAGE_REQUIREMENTS: &str = "/tmp/nbv-build/requirements.txt";

/// The papermill nbv's runner is tested with, installed when the image has none.
const PAPERMILL: &str = "papermill==2.7.0";

/// The Dockerfile generated for `recipe` on `base_image`, or `None` for
/// [`Recipe::Dockerfile`] (the repository's own is built). It installs the requirements
/// file at [`PREPARED_REQUIREMENTS`] when the recipe has one, and papermill, which
/// nbv's runner needs, when the image lacks it.
///
/// # Errors
///
/// A `base_image` that is not an image reference: it is written into the file's
/// `FROM`, so a line break or space would add instructions.
///
/// # Examples
///
/// ```
/// use nbv_core::build::{Recipe, generate_dockerfile};
///
/// let recipe = Recipe::Requirements { path: "requirements.txt".into() };
/// let dockerfile = generate_dockerfile("quay.io/jupyter/minimal-notebook:latest", &recipe)
///     .unwrap()
///     .unwrap();
/// assert!(dockerfile.starts_with("FROM quay.io/jupyter/minimal-notebook:latest\n"));
/// assert!(dockerfile.contains("COPY .nbv-build/requirements.txt "));
///
/// let own = Recipe::Dockerfile { path: "docker/Dockerfile".into() };
/// assert_eq!(generate_dockerfile("python:3.12", &own).unwrap(), None);
/// assert!(generate_dockerfile("python:3.12\nRUN id", &recipe).is_err());
/// ```
pub fn generate_dockerfile(
    base_image: &str,
    recipe: &Recipe,
) -> Result<Option<String>, SourceError> {
    if let Some(problem) = image_problem(base_image) {
        return Err(SourceError::BaseImage { problem });
    }
    let installs = match recipe {
        Recipe::Dockerfile { .. } => return Ok(None),
        Recipe::Requirements { .. } => true,
        Recipe::Imports { packages } => !packages.is_empty(),
        Recipe::BaseImage { .. } => false,
    };
    let mut text = format!("FROM {base_image}\n");
    if installs {
        text.push_str(&format!(
            "COPY {PREPARED_REQUIREMENTS} {IN_IMAGE_REQUIREMENTS}\n\
             RUN pip install --no-cache-dir -r {IN_IMAGE_REQUIREMENTS}\n"
        ));
    }
    text.push_str(&format!(
        "RUN python3 -c 'import papermill' 2>/dev/null || pip install --no-cache-dir {PAPERMILL}\n"
    ));
    Ok(Some(text))
}
