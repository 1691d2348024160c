//! The file-based catalog (`catalog/nbv-operator/catalog.yaml`): the package, its
//! channel, and one `olm.bundle` per release, each release replacing the one before
//! it, so that OLM can upgrade from any release to the next without a gap.
//!
//! Every bundle entry carries what the packageserver lists it by (`olm.csv.metadata`)
//! and the APIs it provides (`olm.gvk`), read from the release's ClusterServiceVersion:
//! this build's is rendered from `config/`; those of the releases before it are kept,
//! as their bundles published them, in `releases/`, and never rendered again.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::csv::{cluster_service_version, csv_name};
use super::metadata::bundle_entry;
use super::semver::Version;
use super::{CHANNEL, File, OlmError, PACKAGE, VERSION, fbc, icon, parse, sources, yaml};

/// The releases published before this build's, oldest first, each with the
/// ClusterServiceVersion of its bundle. When a release ships, its CSV
/// (`bundle/manifests/nbv-operator.clusterserviceversion.yaml`) is added here before
/// the workspace version is bumped.
const PUBLISHED: &[(&str, &str)] = &[(
    "0.1.0",
    include_str!("releases/nbv-operator.v0.1.0.clusterserviceversion.yaml"),
)];
const PUBLISHED_DIR: &str = "nbv-operator/src/commands/olm/releases/";

/// Where release bundles are published: `<BUNDLE_REPOSITORY>:v<version>`.
const BUNDLE_REPOSITORY: &str = "ghcr.io/nbv-dev/nbv-operator-bundle";

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
/// let releases = nbv_operator::commands::olm::releases();
/// let current = releases.last().expect("at least this release");
/// assert_eq!(current.version, env!("CARGO_PKG_VERSION"));
/// assert_eq!(releases[0].replaces, None);
/// assert!(releases.len() >= 2, "this release upgrades an older one");
/// ```
pub fn releases() -> Vec<Release> {
    let versions: Vec<&str> = PUBLISHED.iter().map(|(v, _)| *v).chain([VERSION]).collect();
    releases_of(&versions)
}

fn releases_of(versions: &[&str]) -> Vec<Release> {
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

/// The ClusterServiceVersion of every release, oldest first: the published ones as
/// kept in `releases/` (checked to be the release they are listed as), this build's
/// rendered from `config/`.
fn release_csvs() -> Result<Vec<Value>, OlmError> {
    let releases = releases();
    let mut csvs = Vec::with_capacity(releases.len());
    for ((version, text), release) in PUBLISHED.iter().zip(&releases) {
        let csv = parse(PUBLISHED_DIR, text)?;
        let wrong = |what: String| OlmError::Source {
            file: PUBLISHED_DIR,
            what: format!("the CSV listed as release {version}: {what}"),
        };
        if csv["metadata"]["name"] != release.name.as_str() || csv["spec"]["version"] != *version {
            return Err(wrong(format!(
                "is {} version {}",
                csv["metadata"]["name"], csv["spec"]["version"]
            )));
        }
        let edges = |field: &str| csv["spec"][field].as_str().map(str::to_owned);
        if edges("replaces") != release.replaces || edges("skipRange") != release.skip_range {
            return Err(wrong(format!(
                "replaces {:?} and skips {:?}, but its place in the releases is after {:?}",
                edges("replaces"),
                edges("skipRange"),
                release.replaces
            )));
        }
        csvs.push(csv);
    }
    csvs.push(cluster_service_version()?);
    Ok(csvs)
}

/// The catalog's documents: the package, its channel, one bundle per release.
///
/// # Errors
///
/// [`OlmError`] when this build's CSV cannot be rendered, a published CSV is not the
/// release it is listed as, or the catalog breaks a rule of `opm validate`.
pub fn catalog_documents() -> Result<Vec<Value>, OlmError> {
    current()?;
    let releases = releases();
    let entries: Vec<Value> = releases.iter().map(channel_entry).collect();
    let mut documents = vec![
        json!({
            "schema": "olm.package",
            "name": PACKAGE,
            "defaultChannel": CHANNEL,
            "description": sources::DESCRIPTION,
            "icon": icon()[0],
        }),
        json!({
            "schema": "olm.channel",
            "package": PACKAGE,
            "name": CHANNEL,
            "entries": entries,
        }),
    ];
    for (release, csv) in releases.iter().zip(release_csvs()?) {
        let image = format!("{BUNDLE_REPOSITORY}:v{}", release.version);
        documents.push(bundle_entry(PACKAGE, &csv, &image));
    }
    let problems = fbc::validate(&documents);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(OlmError::Source {
            file: "nbv-operator/src/commands/olm/catalog.rs",
            what: format!("the catalog is not valid: {}", list.join("; ")),
        });
    }
    Ok(documents)
}

/// The catalog's files: `nbv-operator/catalog.yaml` and the Dockerfile of the catalog
/// image.
///
/// # Errors
///
/// As [`catalog_documents`].
pub fn catalog_files() -> Result<Vec<File>, OlmError> {
    let text = yaml(
        &catalog_documents()?,
        "the releases in nbv-operator/src/commands/olm/catalog.rs and releases/",
    );
    Ok(vec![
        File {
            path: format!("{PACKAGE}/catalog.yaml"),
            text,
        },
        File {
            path: "catalog.Dockerfile".to_owned(),
            text: "# Generated by `nbv olm catalog`; do not edit. Builds the catalog image:\n\
                   #   docker build -f catalog/catalog.Dockerfile -t <registry>/nbv-operator-catalog:latest catalog\n\
                   FROM quay.io/operator-framework/opm:latest\n\
                   ENTRYPOINT [\"/bin/opm\"]\n\
                   CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n\
                   ADD nbv-operator /configs/nbv-operator\n\
                   LABEL operators.operatorframework.io.index.configs.v1=/configs\n"
                .to_owned(),
        },
    ])
}

/// The `olm.channel` entry of `release`: its name, what it replaces, its skipRange.
fn channel_entry(release: &Release) -> Value {
    let mut entry = json!({ "name": release.name });
    if let Some(previous) = &release.replaces {
        entry["replaces"] = json!(previous);
    }
    if let Some(range) = &release.skip_range {
        entry["skipRange"] = json!(range);
    }
    entry
}

/// What is wrong with a channel's upgrade graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// The channel has no entries.
    #[error("the channel has no entries")]
    Empty,
    /// An entry appears twice.
    #[error("{0} is listed twice")]
    Duplicate(String),
    /// An entry replaces a CSV the channel does not have.
    #[error("{entry} replaces {missing}, which the channel does not list (a gap)")]
    Gap {
        /// The entry.
        entry: String,
        /// The CSV it names.
        missing: String,
    },
    /// Two entries replace the same CSV: the graph forks.
    #[error("{0} and {1} both replace {2}")]
    Fork(String, String, String),
    /// More than one entry replaces nothing, or none does: not one chain.
    #[error("{0} entries replace nothing; a chain has exactly one first release")]
    Roots(usize),
    /// The chain does not reach every entry (a cycle, or a second chain).
    #[error("the chain from the newest release does not reach {0}")]
    Unreached(String),
    /// The order of the chain is not the order of the versions.
    #[error("{newer} replaces {older}, but {newer_version} is not newer than {older_version}")]
    Order {
        /// The replacing entry.
        newer: String,
        /// The replaced entry.
        older: String,
        /// Their versions.
        newer_version: String,
        /// Their versions.
        older_version: String,
    },
    /// A skipRange does not cover the releases it should.
    #[error("{entry}: skipRange {found:?}, expected {expected:?}")]
    SkipRange {
        /// The entry.
        entry: String,
        /// Its skipRange.
        found: Option<String>,
        /// What it should be.
        expected: Option<String>,
    },
}

/// Checks that a channel's `entries` (`name`, `replaces`, `skipRange`) form one chain
/// without a gap: every release but the first replaces the one released before it,
/// in version order, and from the third release on `skipRange` lets every older
/// release upgrade directly. `versions` maps each entry's name to its version.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_operator::commands::olm::{check_chain, ChainError};
/// use serde_json::json;
///
/// let versions = BTreeMap::from([
///     ("op.v1.0.7".to_owned(), "1.0.7".to_owned()),
///     ("op.v1.0.9".to_owned(), "1.0.9".to_owned()),
/// ]);
/// // 1.0.9 replacing a 1.0.8 that was never published: upstream's gap.
/// let entries = json!([{"name": "op.v1.0.7"}, {"name": "op.v1.0.9", "replaces": "op.v1.0.8"}]);
/// assert!(matches!(check_chain(&entries, &versions), Err(ChainError::Gap { .. })));
/// ```
///
/// # Errors
///
/// The first [`ChainError`] found.
pub fn check_chain(entries: &Value, versions: &BTreeMap<String, String>) -> Result<(), ChainError> {
    let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
    if entries.is_empty() {
        return Err(ChainError::Empty);
    }
    let name = |e: &Value| e["name"].as_str().unwrap_or_default().to_owned();
    let mut names = BTreeSet::new();
    for entry in entries {
        if !names.insert(name(entry)) {
            return Err(ChainError::Duplicate(name(entry)));
        }
    }
    let mut replaced_by: BTreeMap<String, String> = BTreeMap::new();
    let mut roots = 0;
    for entry in entries {
        match entry["replaces"].as_str() {
            None => roots += 1,
            Some(previous) if !names.contains(previous) => {
                return Err(ChainError::Gap {
                    entry: name(entry),
                    missing: previous.to_owned(),
                });
            }
            Some(previous) => {
                if let Some(other) = replaced_by.insert(previous.to_owned(), name(entry)) {
                    return Err(ChainError::Fork(other, name(entry), previous.to_owned()));
                }
            }
        }
    }
    if roots != 1 {
        return Err(ChainError::Roots(roots));
    }
    // Walk from the first release forwards: each step must be to a newer version.
    let by_name: BTreeMap<String, &Value> = entries.iter().map(|e| (name(e), e)).collect();
    let first = entries
        .iter()
        .find(|e| e["replaces"].is_null())
        .map(name)
        .unwrap_or_default();
    let mut order = vec![first.clone()];
    let mut at = first;
    while let Some(next) = replaced_by.get(&at) {
        let (older_version, newer_version) =
            (version_of(versions, &at), version_of(versions, next));
        if compare_versions(&newer_version, &older_version) != std::cmp::Ordering::Greater {
            return Err(ChainError::Order {
                newer: next.clone(),
                older: at,
                newer_version,
                older_version,
            });
        }
        order.push(next.clone());
        at = next.clone();
    }
    if let Some(unreached) = names.iter().find(|n| !order.contains(n)) {
        return Err(ChainError::Unreached(unreached.clone()));
    }
    for (i, entry_name) in order.iter().enumerate() {
        let found = by_name[entry_name]["skipRange"].as_str().map(str::to_owned);
        let expected = (i >= 2).then(|| {
            format!(
                ">={} <{}",
                version_of(versions, &order[0]),
                version_of(versions, &order[i - 1])
            )
        });
        if found != expected {
            return Err(ChainError::SkipRange {
                entry: entry_name.clone(),
                found,
                expected,
            });
        }
    }
    Ok(())
}

fn version_of(versions: &BTreeMap<String, String>, name: &str) -> String {
    versions.get(name).cloned().unwrap_or_default()
}

/// Orders versions by semver precedence; one that is not semver sorts first.
fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    Version::parse(a).cmp(&Version::parse(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(list: &[&str]) -> BTreeMap<String, String> {
        list.iter()
            .map(|v| (csv_name(v), (*v).to_owned()))
            .collect()
    }

    fn entries(releases: &[Release]) -> Value {
        releases.iter().map(channel_entry).collect()
    }

    #[test]
    fn generated_chains_of_any_length_pass() {
        let all = ["0.1.0", "0.1.1", "0.2.0", "0.10.0", "1.0.0"];
        for n in 1..=all.len() {
            let list = &all[..n];
            assert_eq!(
                check_chain(&entries(&releases_of(list)), &versions(list)),
                Ok(()),
                "{list:?}"
            );
        }
    }

    #[test]
    fn broken_chains_are_named() {
        let list = ["1.0.7", "1.0.8", "1.0.9"];
        let good = entries(&releases_of(&list));
        let v = versions(&list);
        let mut gap = good.clone();
        gap.as_array_mut().unwrap().remove(1);
        assert!(matches!(check_chain(&gap, &v), Err(ChainError::Gap { .. })));
        let mut two_roots = good.clone();
        two_roots[1].as_object_mut().unwrap().remove("replaces");
        assert!(matches!(
            check_chain(&two_roots, &v),
            Err(ChainError::Fork(..) | ChainError::Roots(2))
        ));
        let mut fork = good.clone();
        fork[2]["replaces"] = json!(csv_name("1.0.7"));
        assert!(matches!(check_chain(&fork, &v), Err(ChainError::Fork(..))));
        // 1.0.9 replacing an entry whose version is 1.0.10: the chain goes backwards.
        let mut backwards = v.clone();
        backwards.insert(csv_name("1.0.8"), "1.0.10".to_owned());
        assert!(matches!(
            check_chain(&good, &backwards),
            Err(ChainError::Order { .. })
        ));
        let mut no_skip = good.clone();
        no_skip[2].as_object_mut().unwrap().remove("skipRange");
        assert!(matches!(
            check_chain(&no_skip, &v),
            Err(ChainError::SkipRange { .. })
        ));
        let mut twice = good.clone();
        twice.as_array_mut().unwrap().push(good[0].clone());
        assert_eq!(
            check_chain(&twice, &v),
            Err(ChainError::Duplicate(csv_name("1.0.7")))
        );
        assert_eq!(check_chain(&json!([]), &v), Err(ChainError::Empty));
    }

    #[test]
    fn versions_compare_numerically() {
        assert_eq!(
            compare_versions("0.10.0", "0.9.0"),
            std::cmp::Ordering::Greater
        );
        assert_eq!(
            compare_versions("1.0.0", "1.0.0"),
            std::cmp::Ordering::Equal
        );
    }
}
