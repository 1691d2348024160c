//! What decides the image's contents inside the build: the requirements file or
//! Dockerfile the build's `nbv build prepare` step looks for in the checkout.

use serde::{Deserialize, Serialize};

use crate::api::FallbackStrategy;

/// The inputs of `buildConfig` that decide which requirements file or Dockerfile a
/// build uses, as `nbv build prepare` reads them (JSON in its `NBV_BUILD` variable).
/// Every path is relative to the repository's root.
///
/// # Examples
///
/// ```
/// use nbv_core::api::FallbackStrategy;
/// use nbv_core::build::SourceConfig;
///
/// let config = SourceConfig {
///     notebook_path: "notebooks/tier2/train.ipynb".into(),
///     base_image: "quay.io/jupyter/minimal-notebook:latest".into(),
///     requirements_file: None,
///     requirements_sources: None,
///     auto_generate: true,
///     dockerfile: None,
///     prefer_dockerfile: false,
///     fallback: FallbackStrategy::Warn,
/// };
/// let json = serde_json::to_value(&config).unwrap();
/// assert_eq!(json["notebookPath"], "notebooks/tier2/train.ipynb");
/// assert_eq!(serde_json::from_value::<SourceConfig>(json).unwrap(), config);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceConfig {
    /// `spec.notebook.path`: where the default search starts.
    pub notebook_path: String,
    /// `baseImage`: the `FROM` of a generated Dockerfile.
    pub base_image: String,
    /// `requirementsFile`: used as it is, without a search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements_file: Option<String>,
    /// `requirementsSources`: the search, in order, in place of the default one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements_sources: Option<Vec<String>>,
    /// `autoGenerateRequirements`: search for a requirements file (notebook directory,
    /// its parent, the repository's root) when none is named.
    pub auto_generate: bool,
    /// `dockerfile`: the repository's Dockerfile to build with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dockerfile: Option<String>,
    /// `preferDockerfile`: a Dockerfile found wins over a requirements file.
    pub prefer_dockerfile: bool,
    /// `fallbackStrategy`: what to do when no requirements file is found.
    pub fallback: FallbackStrategy,
}
