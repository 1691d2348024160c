//! What decides the image's contents inside the build: the requirements file or
//! Dockerfile the build's `nbv build prepare` step looks for in the checkout.
//!
//! The rules of [`choose`], in order:
//!
//! 1. `dockerfile` set: that Dockerfile, which must exist.
//! 2. `preferDockerfile`: a `Dockerfile` in the notebook's directory, its parent (the
//!    tier directory) or the repository's root, the first found, wins over
//!    requirements.
//! 3. The first of the requirements [`candidates`] that is a file. A `requirementsFile`
//!    named explicitly must exist, whatever the fallback: a typo is not a missing file.
//! 4. None found: `fallbackStrategy` decides. `fail` is an error listing what was
//!    looked at, `warn` the base image as it is (a warning), `auto` a requirements file
//!    generated from the notebook's imports.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::imports::imported_packages;
use super::recipe::Recipe;
use super::repo_path::{clean, join, parent};
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

/// The file name of the default search (`autoGenerateRequirements`).
const REQUIREMENTS: &str = "requirements.txt";

/// The file name `preferDockerfile` looks for.
const DOCKERFILE: &str = "Dockerfile";

/// Field names, as an error names them.
const FIELD_NOTEBOOK: &str = "spec.notebook.path";
const FIELD_REQUIREMENTS_FILE: &str = "spec.podConfig.buildConfig.requirementsFile";
const FIELD_REQUIREMENTS_SOURCES: &str = "spec.podConfig.buildConfig.requirementsSources";
const FIELD_DOCKERFILE: &str = "spec.podConfig.buildConfig.dockerfile";

/// The repository's checkout as [`choose`] sees it. Paths are relative to the
/// repository's root and `/`-separated, as [`candidates`] returns them.
///
/// # Examples
///
/// An in-memory repository, as the tests use:
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::build::RepoView;
///
/// struct Files(BTreeMap<String, String>);
///
/// impl RepoView for Files {
///     fn is_file(&self, path: &str) -> bool {
///         self.0.contains_key(path)
///     }
///     fn read(&self, path: &str) -> Option<String> {
///         self.0.get(path).cloned()
///     }
/// }
///
/// let repo = Files(BTreeMap::from([("requirements.txt".into(), "numpy\n".into())]));
/// assert!(repo.is_file("requirements.txt"));
/// ```
pub trait RepoView {
    /// Whether `path` is a regular file of the repository (a directory is not).
    fn is_file(&self, path: &str) -> bool;
    /// The text of the file at `path`, or `None` when it cannot be read.
    fn read(&self, path: &str) -> Option<String>;
}

/// Why the build's source cannot be decided: each names the job's field to fix.
///
/// # Examples
///
/// ```
/// use nbv_core::api::FallbackStrategy;
/// use nbv_core::build::{SourceConfig, candidates};
///
/// let config = SourceConfig {
///     notebook_path: "train.ipynb".into(),
///     base_image: "quay.io/jupyter/minimal-notebook:latest".into(),
///     requirements_file: Some("../secrets.txt".into()),
///     requirements_sources: None,
///     auto_generate: true,
///     dockerfile: None,
///     prefer_dockerfile: false,
///     fallback: FallbackStrategy::Warn,
/// };
/// let error = candidates(&config).unwrap_err();
/// assert_eq!(error.field(), "spec.podConfig.buildConfig.requirementsFile");
/// assert!(error.to_string().contains("leaves the repository"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// A path of the job is not a file path inside the repository.
    #[error("{field}: {problem}")]
    BadPath {
        /// The field, e.g. `spec.podConfig.buildConfig.requirementsSources[2]`.
        field: String,
        /// What is wrong and what to write instead.
        problem: String,
    },
    /// A file the job names explicitly is not in the repository.
    #[error(
        "{field}: {path} is not a file of the repository at the commit built; fix the \
         path, or add the file"
    )]
    Missing {
        /// The field that names it.
        field: String,
        /// The path, relative to the repository's root.
        path: String,
    },
    /// No requirements file was found and `fallbackStrategy` is `fail`.
    #[error(
        "spec.podConfig.buildConfig.fallbackStrategy is fail and no requirements file was \
         found{}: add one, name one with requirementsFile, or set fallbackStrategy to \
         warn (the base image as it is) or auto (requirements from the notebook's imports)",
        looked_at_text(.looked_at)
    )]
    NothingFound {
        /// The requirements files looked for, in order.
        looked_at: Vec<String>,
    },
    /// The notebook, whose imports `fallbackStrategy: auto` reads, cannot be read.
    #[error(
        "spec.notebook.path: {path} {problem}; fallbackStrategy auto reads the notebook's \
         imports: fix the path, or add a requirements file"
    )]
    Notebook {
        /// The notebook's path.
        path: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The base image cannot be written into a Dockerfile's `FROM`.
    #[error("spec.podConfig.buildConfig.baseImage: {problem}")]
    BaseImage {
        /// What is wrong with it.
        problem: String,
    },
}

fn looked_at_text(looked_at: &[String]) -> String {
    if looked_at.is_empty() {
        " (none is named, and autoGenerateRequirements is false)".to_owned()
    } else {
        format!(" (looked at {})", looked_at.join(", "))
    }
}

impl SourceError {
    /// The job's field to fix.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::SourceError;
    ///
    /// let error = SourceError::NothingFound { looked_at: vec!["requirements.txt".into()] };
    /// assert_eq!(error.field(), "spec.podConfig.buildConfig.fallbackStrategy");
    /// ```
    pub fn field(&self) -> String {
        match self {
            SourceError::BadPath { field, .. } | SourceError::Missing { field, .. } => {
                field.clone()
            }
            SourceError::NothingFound { .. } => {
                "spec.podConfig.buildConfig.fallbackStrategy".to_owned()
            }
            SourceError::Notebook { .. } => FIELD_NOTEBOOK.to_owned(),
            SourceError::BaseImage { .. } => "spec.podConfig.buildConfig.baseImage".to_owned(),
        }
    }
}

fn checked(field: &str, path: &str) -> Result<String, SourceError> {
    clean(path).map_err(|problem| SourceError::BadPath {
        field: field.to_owned(),
        problem,
    })
}

/// The directories of the default search, in order: the notebook's, its parent (the
/// tier directory), the repository's root (`""`), without repeats.
fn search_dirs(notebook: &str) -> Vec<&str> {
    let dir = parent(notebook);
    let mut dirs = vec![dir];
    if !dir.is_empty() {
        dirs.push(parent(dir));
    }
    dirs.push("");
    let mut seen = BTreeSet::new();
    dirs.retain(|d| seen.insert(*d));
    dirs
}

/// The requirements files the build looks for, in order, made canonical (`./a` → `a`):
/// `requirementsFile` alone when it is set; else `requirementsSources` when it lists
/// any; else, with `autoGenerateRequirements`, `requirements.txt` in the notebook's
/// directory, its parent and the repository's root; else none.
///
/// Every path of the config (the notebook's and `dockerfile` too) is checked to be a
/// file path inside the repository: relative, without `..` above the root, empty
/// segments, NUL or line breaks.
///
/// # Examples
///
/// ```
/// use nbv_core::api::FallbackStrategy;
/// use nbv_core::build::{SourceConfig, candidates};
///
/// let mut config = SourceConfig {
///     notebook_path: "notebooks/tier2/train.ipynb".into(),
///     base_image: "quay.io/jupyter/minimal-notebook:latest".into(),
///     requirements_file: None,
///     requirements_sources: None,
///     auto_generate: true,
///     dockerfile: None,
///     prefer_dockerfile: false,
///     fallback: FallbackStrategy::Warn,
/// };
/// assert_eq!(
///     candidates(&config).unwrap(),
///     [
///         "notebooks/tier2/requirements.txt",
///         "notebooks/requirements.txt",
///         "requirements.txt",
///     ]
/// );
/// config.requirements_sources = Some(vec!["env/base.txt".into(), "/etc/x".into()]);
/// let error = candidates(&config).unwrap_err();
/// assert_eq!(error.field(), "spec.podConfig.buildConfig.requirementsSources[1]");
/// ```
pub fn candidates(config: &SourceConfig) -> Result<Vec<String>, SourceError> {
    let notebook = checked(FIELD_NOTEBOOK, &config.notebook_path)?;
    if let Some(dockerfile) = &config.dockerfile {
        checked(FIELD_DOCKERFILE, dockerfile)?;
    }
    let mut found = if let Some(file) = &config.requirements_file {
        vec![checked(FIELD_REQUIREMENTS_FILE, file)?]
    } else if let Some(sources) = config
        .requirements_sources
        .as_ref()
        .filter(|s| !s.is_empty())
    {
        sources
            .iter()
            .enumerate()
            .map(|(i, s)| checked(&format!("{FIELD_REQUIREMENTS_SOURCES}[{i}]"), s))
            .collect::<Result<Vec<_>, _>>()?
    } else if config.auto_generate {
        search_dirs(&notebook)
            .into_iter()
            .map(|dir| join(dir, REQUIREMENTS))
            .collect()
    } else {
        Vec::new()
    };
    // A list that names a file twice looks at it once.
    let mut seen = BTreeSet::new();
    found.retain(|path| seen.insert(path.clone()));
    Ok(found)
}

/// Decides what the build's image is made from, by the rules of this module's
/// documentation: an explicit `dockerfile`, else a `Dockerfile` found with
/// `preferDockerfile`, else the first requirements file found, else the
/// `fallbackStrategy`.
///
/// # Errors
///
/// A path that is not inside the repository ([`candidates`]), an explicit
/// `dockerfile` or `requirementsFile` that is not a file, nothing found with
/// `fallbackStrategy: fail`, and with `auto` a notebook that cannot be read.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::api::FallbackStrategy;
/// use nbv_core::build::{Recipe, RepoView, SourceConfig, choose};
///
/// struct Files(BTreeMap<&'static str, &'static str>);
/// impl RepoView for Files {
///     fn is_file(&self, path: &str) -> bool { self.0.contains_key(path) }
///     fn read(&self, path: &str) -> Option<String> { self.0.get(path).map(|s| s.to_string()) }
/// }
///
/// let mut config = SourceConfig {
///     notebook_path: "notebooks/tier2/train.ipynb".into(),
///     base_image: "quay.io/jupyter/minimal-notebook:latest".into(),
///     requirements_file: None,
///     requirements_sources: None,
///     auto_generate: true,
///     dockerfile: None,
///     prefer_dockerfile: false,
///     fallback: FallbackStrategy::Warn,
/// };
/// let repo = Files(BTreeMap::from([
///     ("notebooks/requirements.txt", "numpy\n"),
///     ("notebooks/tier2/Dockerfile", "FROM python:3.12\n"),
/// ]));
/// assert_eq!(
///     choose(&config, &repo).unwrap(),
///     Recipe::Requirements { path: "notebooks/requirements.txt".into() }
/// );
/// config.prefer_dockerfile = true;
/// assert_eq!(
///     choose(&config, &repo).unwrap(),
///     Recipe::Dockerfile { path: "notebooks/tier2/Dockerfile".into() }
/// );
/// ```
pub fn choose(config: &SourceConfig, repo: &impl RepoView) -> Result<Recipe, SourceError> {
    let looked_at = candidates(config)?;
    let notebook = checked(FIELD_NOTEBOOK, &config.notebook_path)?;
    if let Some(dockerfile) = &config.dockerfile {
        let path = checked(FIELD_DOCKERFILE, dockerfile)?;
        return if repo.is_file(&path) {
            Ok(Recipe::Dockerfile { path })
        } else {
            Err(SourceError::Missing {
                field: FIELD_DOCKERFILE.to_owned(),
                path,
            })
        };
    }
    if config.prefer_dockerfile
        && let Some(path) = search_dirs(&notebook)
            .into_iter()
            .map(|dir| join(dir, DOCKERFILE))
            .find(|path| repo.is_file(path))
    {
        return Ok(Recipe::Dockerfile { path });
    }
    if let Some(path) = looked_at.iter().find(|path| repo.is_file(path)) {
        return Ok(Recipe::Requirements { path: path.clone() });
    }
    if config.requirements_file.is_some() {
        return Err(SourceError::Missing {
            field: FIELD_REQUIREMENTS_FILE.to_owned(),
            path: looked_at.into_iter().next().unwrap_or_default(),
        });
    }
    match config.fallback {
        FallbackStrategy::Fail => Err(SourceError::NothingFound { looked_at }),
        FallbackStrategy::Warn => Ok(Recipe::BaseImage { looked_at }),
        FallbackStrategy::Auto => notebook_imports(&notebook, repo),
    }
}

/// The packages the notebook imports, its repository's own modules left out (a
/// `name.py` or `name/__init__.py` beside the notebook or at the root).
fn notebook_imports(notebook: &str, repo: &impl RepoView) -> Result<Recipe, SourceError> {
    let unreadable = |problem: String| SourceError::Notebook {
        path: notebook.to_owned(),
        problem,
    };
    let text = repo
        .read(notebook)
        .ok_or_else(|| unreadable("cannot be read (no such file, or not UTF-8 text)".into()))?;
    let dirs = [parent(notebook), ""];
    let is_local = |module: &str| {
        dirs.iter().any(|dir| {
            repo.is_file(&join(dir, &format!("{module}.py")))
                || repo.is_file(&join(dir, &format!("{module}/__init__.py")))
        })
    };
    let packages = imported_packages(&text, is_local).map_err(|e| unreadable(e.0))?;
    Ok(Recipe::Imports { packages })
}
