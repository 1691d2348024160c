//! The upgrades OLM offers in a channel: from an installed release, the entries that
//! replace it, skip it, or whose `skipRange` holds its version are its successors,
//! and OLM takes the newest of them. Following those steps from every release must
//! end at the channel head: no dead end, no cycle.

use std::collections::BTreeMap;

use serde_json::Value;

use super::semver::{Range, Version};

/// Why a release cannot upgrade to the channel head.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpgradeError {
    /// The release is not in the channel.
    #[error("{0} is not in the channel")]
    NotInChannel(String),
    /// The walk stopped at a release that is not the head: nothing upgrades it.
    #[error(
        "the upgrades from {from} stop at {at}, which no entry replaces, skips or covers by its skipRange: a dead end"
    )]
    DeadEnd {
        /// Where the walk started.
        from: String,
        /// Where it stopped.
        at: String,
    },
    /// The walk came back to a release it had passed.
    #[error("the upgrades from {from} go round in a cycle: {path:?}")]
    Cycle {
        /// Where the walk started.
        from: String,
        /// The releases passed, ending with the repeated one.
        path: Vec<String>,
    },
}

/// The releases OLM upgrades `from` through, one step at a time, to the channel head
/// `head`: `[from, ..., head]`. `versions` maps each entry's name to its version.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_operator::cli::commands::olm::upgrade_path;
/// use serde_json::json;
/// let entries = json!([
///     {"name": "op.v1.0.0"},
///     {"name": "op.v1.1.0", "replaces": "op.v1.0.0"},
///     {"name": "op.v1.2.0", "replaces": "op.v1.1.0", "skipRange": ">=1.0.0 <1.1.0"},
/// ]);
/// let versions = BTreeMap::from([
///     ("op.v1.0.0".to_owned(), "1.0.0".to_owned()),
///     ("op.v1.1.0".to_owned(), "1.1.0".to_owned()),
///     ("op.v1.2.0".to_owned(), "1.2.0".to_owned()),
/// ]);
/// // 1.0.0 goes to 1.2.0 directly: its skipRange covers 1.0.0 and it is the newest.
/// assert_eq!(upgrade_path(&entries, &versions, "op.v1.0.0", "op.v1.2.0").unwrap(),
///            ["op.v1.0.0", "op.v1.2.0"]);
/// ```
///
/// # Errors
///
/// [`UpgradeError`] when the walk does not end at `head`.
pub fn upgrade_path(
    entries: &Value,
    versions: &BTreeMap<String, String>,
    from: &str,
    head: &str,
) -> Result<Vec<String>, UpgradeError> {
    let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
    let name = |e: &Value| e["name"].as_str().unwrap_or_default().to_owned();
    if !entries.iter().any(|e| name(e) == from) {
        return Err(UpgradeError::NotInChannel(from.to_owned()));
    }
    let version = |n: &str| versions.get(n).and_then(|v| Version::parse(v));
    let mut path = vec![from.to_owned()];
    let mut at = from.to_owned();
    while at != head {
        let installed = version(&at);
        let successor = entries
            .iter()
            .filter(|e| {
                e["replaces"] == at.as_str()
                    || e["skips"]
                        .as_array()
                        .is_some_and(|s| s.iter().any(|s| s == at.as_str()))
                    || e["skipRange"]
                        .as_str()
                        .and_then(Range::parse)
                        .zip(installed.as_ref())
                        .is_some_and(|(range, v)| range.contains(v))
            })
            .map(name)
            .filter(|n| *n != at)
            .max_by(|a, b| version(a).cmp(&version(b)));
        let Some(next) = successor else {
            return Err(UpgradeError::DeadEnd {
                from: from.to_owned(),
                at,
            });
        };
        let cycle = path.contains(&next);
        path.push(next.clone());
        if cycle {
            return Err(UpgradeError::Cycle {
                from: from.to_owned(),
                path,
            });
        }
        at = next;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn versions(list: &[&str]) -> BTreeMap<String, String> {
        list.iter()
            .map(|v| (format!("op.v{v}"), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_replaces_chain_is_walked_one_release_at_a_time() {
        let entries = json!([
            {"name": "op.v1.0.0"},
            {"name": "op.v1.1.0", "replaces": "op.v1.0.0"},
            {"name": "op.v1.2.0", "replaces": "op.v1.1.0"},
        ]);
        let v = versions(&["1.0.0", "1.1.0", "1.2.0"]);
        assert_eq!(
            upgrade_path(&entries, &v, "op.v1.0.0", "op.v1.2.0").unwrap(),
            ["op.v1.0.0", "op.v1.1.0", "op.v1.2.0"]
        );
        assert_eq!(
            upgrade_path(&entries, &v, "op.v1.2.0", "op.v1.2.0").unwrap(),
            ["op.v1.2.0"]
        );
        assert_eq!(
            upgrade_path(&entries, &v, "op.v0.9.0", "op.v1.2.0"),
            Err(UpgradeError::NotInChannel("op.v0.9.0".into()))
        );
    }

    #[test]
    fn dead_ends_and_cycles_are_named() {
        let v = versions(&["1.0.0", "1.1.0", "1.2.0"]);
        let gap = json!([
            {"name": "op.v1.0.0"},
            {"name": "op.v1.1.0"},
            {"name": "op.v1.2.0", "replaces": "op.v1.1.0"},
        ]);
        assert!(matches!(
            upgrade_path(&gap, &v, "op.v1.0.0", "op.v1.2.0"),
            Err(UpgradeError::DeadEnd { at, .. }) if at == "op.v1.0.0"
        ));
        let cycle = json!([
            {"name": "op.v1.0.0", "replaces": "op.v1.1.0"},
            {"name": "op.v1.1.0", "replaces": "op.v1.0.0"},
            {"name": "op.v1.2.0"},
        ]);
        assert!(matches!(
            upgrade_path(&cycle, &v, "op.v1.0.0", "op.v1.2.0"),
            Err(UpgradeError::Cycle { .. })
        ));
    }
}
