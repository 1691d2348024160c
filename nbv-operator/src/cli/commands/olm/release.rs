//! The releases and their upgrade graph: the ones published before this build, kept in
//! `releases/`, then this build's, each replacing the one before it.

use super::package::{OlmError, PACKAGE, VERSION};
use super::semver::Version;

/// The releases published before this build's, oldest first, each with the
/// ClusterServiceVersion of its bundle. When a release ships, its CSV
/// (`bundle/manifests/nbv-operator.clusterserviceversion.yaml`) is added here before
/// the workspace version is bumped.
pub(super) const PUBLISHED: &[(&str, &str)] = &[(
    "0.1.0",
    include_str!("releases/nbv-operator.v0.1.0.clusterserviceversion.yaml"),
)];
pub(super) const PUBLISHED_DIR: &str = "nbv-operator/src/cli/commands/olm/releases/";

/// One release in the upgrade graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// The version (`0.1.0`).
    pub version: String,
    /// The CSV name (`nbv-operator.v0.1.0`).
    pub name: String,
    /// The CSV this one replaces: the previous release.
    pub replaces: Option<String>,
    /// The older releases that may upgrade to this one directly (`>=first <previous`),
    /// set from the third release on: the second has only one predecessor, which
    /// `replaces` covers.
    pub skip_range: Option<String>,
}

/// The releases with their place in the upgrade graph, oldest first: the published
/// ones, then this build's.
///
/// # Examples
///
/// ```
/// let releases = nbv_operator::cli::commands::olm::releases();
/// let current = releases.last().expect("at least this release");
/// assert_eq!(current.version, env!("CARGO_PKG_VERSION"));
/// assert_eq!(releases[0].replaces, None);
/// assert!(releases.len() >= 2, "this release upgrades an older one");
/// ```
pub fn releases() -> Vec<Release> {
    let versions: Vec<&str> = PUBLISHED.iter().map(|(v, _)| *v).chain([VERSION]).collect();
    releases_of(&versions)
}

pub(super) fn releases_of(versions: &[&str]) -> Vec<Release> {
    versions
        .iter()
        .enumerate()
        .map(|(i, version)| Release {
            version: (*version).to_owned(),
            name: csv_name(version),
            replaces: i.checked_sub(1).map(|p| csv_name(versions[p])),
            skip_range: (i >= 2).then(|| format!(">={} <{}", versions[0], versions[i - 1])),
        })
        .collect()
}

/// This build's release, checked to be newer than every published one.
pub(super) fn current() -> Result<Release, OlmError> {
    let this = Version::parse(VERSION);
    if let Some((published, _)) = PUBLISHED
        .iter()
        .find(|(v, _)| this.is_none() || Version::parse(v) >= this)
    {
        return Err(OlmError::Source {
            file: PUBLISHED_DIR,
            what: format!(
                "release {published} is published, and this build's version {VERSION} is \
                 not newer: bump the workspace version"
            ),
        });
    }
    releases().pop().ok_or_else(|| OlmError::Source {
        file: PUBLISHED_DIR,
        what: "no release".to_owned(),
    })
}

/// The name OLM gives a release's CSV.
pub(super) fn csv_name(version: &str) -> String {
    format!("{PACKAGE}.v{version}")
}
