//! Which images a job may run: repositories named by registry and path prefix, and
//! image references read as container runtimes read them.

use std::fmt;
use std::str::FromStr;

use crate::pod::syntax::image_repository;

/// The registry a reference without one means: Docker Hub.
const DOCKER_HUB: &str = "docker.io";

/// An entry of `nbv run --allowed-images`: a registry, or a repository path prefix in
/// a registry. It allows every image whose repository is that registry or path, or
/// lies under it: `quay.io/ml` allows `quay.io/ml/papermill:1` and
/// `quay.io/ml/team/nb@sha256:…`, not `quay.io/ml-other/x`. A trailing `/` or `/*` means
/// the same. Tags and digests are not part of a pattern: pin images in the jobs.
///
/// The registry is always written out, because a runtime reads `python:3` as
/// `docker.io/library/python:3`: a pattern `python` would look like it allows what it
/// does not. Write `docker.io/library/python` for that.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::ImagePattern;
///
/// let pattern: ImagePattern = "quay.io/ml/".parse()?;
/// assert!(pattern.allows("quay.io/ml/papermill:1.2"));
/// assert!(!pattern.allows("quay.io/ml-other/papermill:1.2"));
/// let hub: ImagePattern = "docker.io/library/python".parse()?;
/// assert!(hub.allows("python:3.11"));
/// assert!("python".parse::<ImagePattern>().is_err());
/// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ImagePattern(String);

impl ImagePattern {
    /// Whether the image reference `image` (as a job writes it) is this pattern's
    /// repository or under it. A reference that does not parse is allowed by none.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::ImagePattern;
    ///
    /// let registry: ImagePattern = "registry.example.com".parse()?;
    /// assert!(registry.allows("registry.example.com/any/path:1"));
    /// assert!(!registry.allows("registry.example.com.evil.io/x:1"));
    /// assert!(!registry.allows("registry.example.com/x:1; rm -rf /"));
    /// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
    /// ```
    pub fn allows(&self, image: &str) -> bool {
        normalized_repository(image).is_some_and(|repository| self.covers(&repository))
    }

    /// Whether the normalized `repository` is this pattern's or under it.
    fn covers(&self, repository: &str) -> bool {
        repository
            .strip_prefix(self.0.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// The pattern as nbv compares it: registry lowercase, no trailing `/`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::ImagePattern;
    ///
    /// let pattern: ImagePattern = "Quay.io/ml/*".parse()?;
    /// assert_eq!(pattern.as_str(), "quay.io/ml");
    /// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
    /// ```
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ImagePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ImagePattern {
    type Err = super::InvalidPodPolicy;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = |problem: String| super::InvalidPodPolicy {
            setting: "--allowed-images",
            entry: text.to_owned(),
            problem,
        };
        let trimmed = text.trim();
        let pattern = trimmed
            .strip_suffix("/*")
            .or_else(|| trimmed.strip_suffix('/'))
            .unwrap_or(trimmed);
        let (registry, path) = match pattern.split_once('/') {
            Some((registry, path)) => (registry, Some(path)),
            None => (pattern, None),
        };
        if !is_registry(registry) {
            return Err(invalid(format!(
                "{registry:?} is not a registry (no `.` or `:`, not localhost); write the \
                 registry out, e.g. docker.io/library/{registry} or quay.io/{registry}"
            )));
        }
        if let Some(path) = path {
            if path.contains([':', '@']) {
                return Err(invalid(
                    "a pattern names a repository or a prefix of one, without tag or digest"
                        .to_owned(),
                ));
            }
            // A repository with a tag, to reuse the reference grammar for the path.
            if image_repository(&format!("{pattern}:t")).is_none() {
                return Err(invalid(
                    "not a repository: lowercase path components of letters, digits, `.`, \
                     `_` and `-`, separated by `/`"
                        .to_owned(),
                ));
            }
        } else if image_repository(&format!("{registry}/x")).is_none() {
            return Err(invalid("not a registry host[:port]".to_owned()));
        }
        let registry = canonical_registry(registry);
        Ok(ImagePattern(match path {
            Some(path) => format!("{registry}/{path}"),
            None => registry,
        }))
    }
}

/// Whether the first component of a reference names a registry, as container
/// runtimes decide it.
fn is_registry(component: &str) -> bool {
    component.contains(['.', ':']) || component == "localhost"
}

/// A registry as nbv compares it: lowercase (host names are), Docker Hub's aliases as
/// `docker.io`.
fn canonical_registry(registry: &str) -> String {
    let registry = registry.to_ascii_lowercase();
    match registry.as_str() {
        "index.docker.io" | "registry-1.docker.io" => DOCKER_HUB.to_owned(),
        _ => registry,
    }
}

/// The repository `image` pulls from, with the registry written out as a runtime
/// reads it: `python:3` is `docker.io/library/python`, `org/nb` is `docker.io/org/nb`.
/// `None` when `image` is not a reference.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::normalized_repository;
///
/// assert_eq!(normalized_repository("python:3").as_deref(), Some("docker.io/library/python"));
/// assert_eq!(normalized_repository("Quay.IO/ml/nb@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef").as_deref(), Some("quay.io/ml/nb"));
/// assert_eq!(normalized_repository("no spaces please"), None);
/// ```
pub fn normalized_repository(image: &str) -> Option<String> {
    let name = image_repository(image)?;
    Some(match name.split_once('/') {
        Some((first, rest)) if is_registry(first) => {
            let registry = canonical_registry(first);
            if registry == DOCKER_HUB && !rest.contains('/') {
                format!("{DOCKER_HUB}/library/{rest}")
            } else {
                format!("{registry}/{rest}")
            }
        }
        Some(_) => format!("{DOCKER_HUB}/{name}"),
        None => format!("{DOCKER_HUB}/library/{name}"),
    })
}
