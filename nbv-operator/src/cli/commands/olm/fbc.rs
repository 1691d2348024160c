//! The rules `opm validate` applies to a file-based catalog (operator-registry's
//! conversion of `olm.package`, `olm.channel` and `olm.bundle` blobs to its model, and
//! the model's validation), checked on the catalog's documents, so that `nbv olm
//! catalog` never writes a catalog that `opm serve` would refuse.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::metadata::owned_gvks;
use super::semver::{Range, Version};

/// A rule of `opm validate` that a catalog breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FbcError {
    /// A document has no `schema`.
    #[error("document {0} has no schema")]
    NoSchema(usize),
    /// A blob lacks its name.
    #[error("an {schema} of package {package:?} has no name")]
    NoName {
        /// `olm.package`, `olm.channel` or `olm.bundle`.
        schema: &'static str,
        /// Its package.
        package: String,
    },
    /// Two blobs of the same schema have the same name.
    #[error("{schema} {name:?} of package {package:?} is defined twice")]
    Duplicate {
        /// `olm.package`, `olm.channel` or `olm.bundle`.
        schema: &'static str,
        /// Its package.
        package: String,
        /// The repeated name.
        name: String,
    },
    /// A channel or bundle names a package the catalog does not define.
    #[error("{schema} {name:?} belongs to package {package:?}, which has no olm.package")]
    UnknownPackage {
        /// `olm.channel` or `olm.bundle`.
        schema: &'static str,
        /// The blob.
        name: String,
        /// The package it names.
        package: String,
    },
    /// The package's default channel is unset or not one of its channels.
    #[error("package {package:?}: default channel {channel:?} is not one of its channels")]
    DefaultChannel {
        /// The package.
        package: String,
        /// Its `defaultChannel`.
        channel: String,
    },
    /// A channel lists no bundle.
    #[error("package {package:?}, channel {channel:?} has no entries")]
    EmptyChannel {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
    },
    /// A channel lists the same entry twice.
    #[error("package {package:?}, channel {channel:?}: duplicate entry {entry:?}")]
    DuplicateEntry {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The entry.
        entry: String,
    },
    /// A channel entry has no `olm.bundle`.
    #[error("package {package:?}, channel {channel:?}: entry {entry:?} has no olm.bundle")]
    EntryWithoutBundle {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The entry.
        entry: String,
    },
    /// An entry's `skips` holds an empty name or its `skipRange` is not a range.
    #[error("package {package:?}, entry {entry:?}: {what}")]
    BadEdge {
        /// The package.
        package: String,
        /// The entry.
        entry: String,
        /// What is wrong.
        what: String,
    },
    /// A bundle is in no channel.
    #[error("package {package:?}: bundle {bundle:?} is in no channel's entries")]
    BundleInNoChannel {
        /// The package.
        package: String,
        /// The bundle.
        bundle: String,
    },
    /// A bundle's properties are not what OLM needs.
    #[error("bundle {bundle:?}: {what}")]
    Bundle {
        /// The bundle.
        bundle: String,
        /// What is wrong.
        what: String,
    },
    /// A channel has no head, or more than one: entries nothing replaces or skips.
    #[error("package {package:?}, channel {channel:?}: {} channel heads {heads:?}; exactly one is needed", heads.len())]
    Heads {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The entries that nothing replaces or skips.
        heads: Vec<String>,
    },
    /// The replaces chain from the head comes back on itself.
    #[error("package {package:?}, channel {channel:?}: cycle in the replaces chain {chain:?}")]
    Cycle {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The chain from the head to the repeated entry.
        chain: Vec<String>,
    },
    /// Entries neither on the replaces chain from the head nor skipped by another.
    #[error("package {package:?}, channel {channel:?}: stranded bundles {bundles:?}")]
    Stranded {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The stranded entries.
        bundles: Vec<String>,
    },
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// A bundle's properties of one type.
pub(super) fn properties<'a>(bundle: &'a Value, kind: &str) -> Vec<&'a Value> {
    list(&bundle["properties"])
        .iter()
        .filter(|p| p["type"] == kind)
        .map(|p| &p["value"])
        .collect()
}

/// The head of a channel's entries: the one entry no other replaces or skips.
///
/// # Errors
///
/// The entries nothing replaces or skips, when they are not exactly one.
pub fn channel_head(entries: &Value) -> Result<String, Vec<String>> {
    let mut incoming = BTreeSet::new();
    for entry in list(entries) {
        incoming.insert(text(&entry["replaces"]));
        incoming.extend(list(&entry["skips"]).iter().map(text));
    }
    let heads: Vec<String> = list(entries)
        .iter()
        .map(|e| text(&e["name"]))
        .filter(|name| !incoming.contains(name))
        .collect();
    match heads.as_slice() {
        [head] => Ok(head.clone()),
        _ => Err(heads),
    }
}

/// Every rule of `opm validate` the catalog's documents break; empty when it is
/// valid.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::olm::{FbcError, validate_catalog};
/// use serde_json::json;
/// let catalog = [
///     json!({"schema": "olm.package", "name": "op", "defaultChannel": "stable"}),
///     json!({"schema": "olm.channel", "package": "op", "name": "alpha",
///            "entries": [{"name": "op.v1.0.0"}]}),
///     json!({"schema": "olm.bundle", "package": "op", "name": "op.v1.0.0", "image": "op-bundle:v1.0.0",
///            "properties": [{"type": "olm.package", "value": {"packageName": "op", "version": "1.0.0"}}]}),
/// ];
/// assert_eq!(validate_catalog(&catalog), [FbcError::DefaultChannel {
///     package: "op".into(), channel: "stable".into() }]);
/// ```
pub fn validate(documents: &[Value]) -> Vec<FbcError> {
    let mut errors = Vec::new();
    let mut by_schema: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (i, doc) in documents.iter().enumerate() {
        match doc["schema"].as_str() {
            Some(schema) if !schema.is_empty() => by_schema.entry(schema).or_default().push(doc),
            _ => errors.push(FbcError::NoSchema(i)),
        }
    }
    let take = |schema: &str| by_schema.get(schema).cloned().unwrap_or_default();
    let (packages, channels, bundles) =
        (take("olm.package"), take("olm.channel"), take("olm.bundle"));

    let mut package_names = BTreeSet::new();
    for package in &packages {
        let name = text(&package["name"]);
        if name.is_empty() {
            errors.push(FbcError::NoName {
                schema: "olm.package",
                package: name,
            });
        } else if !package_names.insert(name.clone()) {
            errors.push(FbcError::Duplicate {
                schema: "olm.package",
                package: name.clone(),
                name,
            });
        }
    }
    let known = |schema: &'static str, name: &str, package: &str, errors: &mut Vec<FbcError>| {
        let ok = package_names.contains(package);
        if !ok {
            errors.push(FbcError::UnknownPackage {
                schema,
                name: name.to_owned(),
                package: package.to_owned(),
            });
        }
        ok
    };

    // Bundles by package and name.
    let mut bundle_by_name: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for bundle in &bundles {
        let (package, name) = (text(&bundle["package"]), text(&bundle["name"]));
        if name.is_empty() {
            errors.push(FbcError::NoName {
                schema: "olm.bundle",
                package,
            });
            continue;
        }
        if !known("olm.bundle", &name, &package, &mut errors) {
            continue;
        }
        if bundle_by_name
            .insert((package.clone(), name.clone()), bundle)
            .is_some()
        {
            errors.push(FbcError::Duplicate {
                schema: "olm.bundle",
                package,
                name: name.clone(),
            });
        }
        errors.extend(bundle_errors(bundle, &name));
    }

    let mut channels_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut in_a_channel = BTreeSet::new();
    for channel in &channels {
        let (package, name) = (text(&channel["package"]), text(&channel["name"]));
        if name.is_empty() {
            errors.push(FbcError::NoName {
                schema: "olm.channel",
                package,
            });
            continue;
        }
        if !known("olm.channel", &name, &package, &mut errors) {
            continue;
        }
        if !channels_of
            .entry(package.clone())
            .or_default()
            .insert(name.clone())
        {
            errors.push(FbcError::Duplicate {
                schema: "olm.channel",
                package: package.clone(),
                name: name.clone(),
            });
        }
        let entries = &channel["entries"];
        if list(entries).is_empty() {
            errors.push(FbcError::EmptyChannel {
                package,
                channel: name,
            });
            continue;
        }
        let mut seen = BTreeSet::new();
        for entry in list(entries) {
            let entry_name = text(&entry["name"]);
            let place = |what: String| FbcError::BadEdge {
                package: package.clone(),
                entry: entry_name.clone(),
                what,
            };
            if !seen.insert(entry_name.clone()) {
                errors.push(FbcError::DuplicateEntry {
                    package: package.clone(),
                    channel: name.clone(),
                    entry: entry_name.clone(),
                });
            }
            if bundle_by_name.contains_key(&(package.clone(), entry_name.clone())) {
                in_a_channel.insert((package.clone(), entry_name.clone()));
            } else {
                errors.push(FbcError::EntryWithoutBundle {
                    package: package.clone(),
                    channel: name.clone(),
                    entry: entry_name.clone(),
                });
            }
            if list(&entry["skips"]).iter().any(|s| text(s).is_empty()) {
                errors.push(place("skips holds an empty name".to_owned()));
            }
            if let Some(range) = entry["skipRange"].as_str()
                && Range::parse(range).is_none()
            {
                errors.push(place(format!("skipRange {range:?} is not a version range")));
            }
        }
        errors.extend(graph_errors(&package, &name, entries));
    }

    for package in &packages {
        let name = text(&package["name"]);
        let default = text(&package["defaultChannel"]);
        let channels = channels_of.get(&name);
        if !channels.is_some_and(|c| c.contains(&default)) {
            errors.push(FbcError::DefaultChannel {
                package: name,
                channel: default,
            });
        }
    }
    for (package, bundle) in bundle_by_name.keys() {
        if !in_a_channel.contains(&(package.clone(), bundle.clone())) {
            errors.push(FbcError::BundleInNoChannel {
                package: package.clone(),
                bundle: bundle.clone(),
            });
        }
    }
    errors
}

/// A bundle's own rules: an image, exactly one `olm.package` naming its package with
/// a semver version, at most one `olm.csv.metadata`, properties with a type and a
/// value, and an `olm.gvk` for every CRD its CSV metadata says it owns.
fn bundle_errors(bundle: &Value, name: &str) -> Vec<FbcError> {
    let mut errors = Vec::new();
    let mut wrong = |what: String| {
        errors.push(FbcError::Bundle {
            bundle: name.to_owned(),
            what,
        })
    };
    if text(&bundle["image"]).is_empty() && list(&bundle["objects"]).is_empty() {
        wrong("no image".to_owned());
    }
    for (i, property) in list(&bundle["properties"]).iter().enumerate() {
        if text(&property["type"]).is_empty() || property["value"].is_null() {
            wrong(format!("property {i} lacks its type or value"));
        }
    }
    match properties(bundle, "olm.package").as_slice() {
        [package] => {
            if package["packageName"] != bundle["package"] {
                wrong(format!(
                    "its olm.package names package {}, but the bundle is in {}",
                    package["packageName"], bundle["package"]
                ));
            }
            if Version::parse(package["version"].as_str().unwrap_or_default()).is_none() {
                wrong(format!("version {} is not semver", package["version"]));
            }
        }
        found => wrong(format!(
            "{} olm.package properties; exactly one is needed",
            found.len()
        )),
    }
    let metadata = properties(bundle, "olm.csv.metadata");
    if metadata.len() > 1 {
        wrong(format!(
            "{} olm.csv.metadata properties; at most one is allowed",
            metadata.len()
        ));
    }
    let gvks = properties(bundle, "olm.gvk");
    for owned in metadata
        .iter()
        .flat_map(|m| owned_gvks(&m["crdDescriptions"]))
    {
        if !gvks.contains(&&owned) {
            wrong(format!("owns {owned} but has no olm.gvk property for it"));
        }
    }
    errors
}

/// The channel graph's rules: exactly one head; from it, the replaces chain has no
/// cycle and reaches every entry that no other entry skips.
fn graph_errors(package: &str, channel: &str, entries: &Value) -> Vec<FbcError> {
    let (package, channel) = (package.to_owned(), channel.to_owned());
    let head = match channel_head(entries) {
        Ok(head) => head,
        Err(heads) => {
            return vec![FbcError::Heads {
                package,
                channel,
                heads,
            }];
        }
    };
    let by_name: BTreeMap<String, &Value> = list(entries)
        .iter()
        .map(|e| (text(&e["name"]), e))
        .collect();
    let skipped: BTreeSet<String> = list(entries)
        .iter()
        .flat_map(|e| list(&e["skips"]).iter().map(text))
        .collect();
    let mut chain = vec![head.clone()];
    let mut at = by_name.get(&head).copied();
    while let Some(entry) = at {
        let Some(previous) = entry["replaces"].as_str() else {
            break;
        };
        if chain.iter().any(|c| c == previous) {
            chain.push(previous.to_owned());
            return vec![FbcError::Cycle {
                package,
                channel,
                chain,
            }];
        }
        chain.push(previous.to_owned());
        // The tail may replace a bundle the channel does not hold.
        at = by_name.get(previous).copied();
    }
    let stranded: Vec<String> = by_name
        .keys()
        .filter(|name| !chain.contains(name) && !skipped.contains(*name))
        .cloned()
        .collect();
    if stranded.is_empty() {
        Vec::new()
    } else {
        vec![FbcError::Stranded {
            package,
            channel,
            bundles: stranded,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bundle(version: &str) -> Value {
        json!({
            "schema": "olm.bundle", "package": "op", "name": format!("op.v{version}"),
            "image": format!("op-bundle:v{version}"),
            "properties": [
                {"type": "olm.package", "value": {"packageName": "op", "version": version}},
                {"type": "olm.gvk", "value": {"group": "example.com", "kind": "Widget", "version": "v1"}},
                {"type": "olm.csv.metadata", "value": {"crdDescriptions": {"owned": [
                    {"name": "widgets.example.com", "kind": "Widget", "version": "v1"}]}}},
            ],
        })
    }

    fn catalog() -> Vec<Value> {
        vec![
            json!({"schema": "olm.package", "name": "op", "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": "op", "name": "stable", "entries": [
                {"name": "op.v1.0.0"},
                {"name": "op.v1.1.0", "replaces": "op.v1.0.0"},
                {"name": "op.v1.2.0", "replaces": "op.v1.1.0", "skipRange": ">=1.0.0 <1.1.0"},
            ]}),
            bundle("1.0.0"),
            bundle("1.1.0"),
            bundle("1.2.0"),
        ]
    }

    fn broken(change: impl FnOnce(&mut Vec<Value>)) -> Vec<FbcError> {
        let mut docs = catalog();
        change(&mut docs);
        validate(&docs)
    }

    #[test]
    fn a_valid_catalog_passes() {
        assert_eq!(validate(&catalog()), []);
        // The tail may replace a bundle the catalog no longer holds.
        assert_eq!(
            broken(|d| d[1]["entries"][0]["replaces"] = json!("op.v0.9.0")),
            []
        );
    }

    #[test]
    fn each_broken_rule_is_named() {
        type Change = Box<dyn FnOnce(&mut Vec<Value>)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|d| d[0]["defaultChannel"] = json!("fast")),
                "default channel",
            ),
            (
                Box::new(|d| {
                    d.remove(2);
                }),
                "has no olm.bundle",
            ),
            (
                Box::new(|d| d[1]["entries"].as_array_mut().unwrap().truncate(2)),
                "is in no channel",
            ),
            (Box::new(|d| d.push(d[2].clone())), "defined twice"),
            (Box::new(|d| d.push(d[1].clone())), "defined twice"),
            (Box::new(|d| d.push(d[0].clone())), "defined twice"),
            (
                Box::new(|d| d[1]["entries"][2]["replaces"] = json!("op.v1.0.0")),
                "channel heads",
            ),
            (
                Box::new(|d| d[1]["entries"][0]["replaces"] = json!("op.v1.2.0")),
                "channel heads",
            ),
            // 1.2.0 -> 1.1.0 -> 1.0.0 -> 1.1.0.
            (
                Box::new(|d| d[1]["entries"][0]["replaces"] = json!("op.v1.1.0")),
                "cycle",
            ),
            (
                Box::new(|d| {
                    d[1]["entries"][1]["replaces"] = json!("op.v0.9.0");
                    d[1]["entries"][0]["skips"] = json!(["op.v1.2.0"]);
                }),
                "stranded bundles [\"op.v1.1.0\"]",
            ),
            (
                Box::new(|d| d[1]["entries"][2]["skipRange"] = json!(">=1.0 <1.1")),
                "not a version range",
            ),
            (
                Box::new(|d| d[1]["entries"][2]["skips"] = json!([""])),
                "empty name",
            ),
            (Box::new(|d| d[1]["entries"] = json!([])), "no entries"),
            (
                Box::new(|d| d[1]["package"] = json!("other")),
                "has no olm.package",
            ),
            (
                Box::new(|d| d[2]["properties"][0]["value"]["packageName"] = json!("other")),
                "names package",
            ),
            (
                Box::new(|d| d[2]["properties"][0]["value"]["version"] = json!("1.0")),
                "not semver",
            ),
            (
                Box::new(|d| {
                    d[2]["properties"].as_array_mut().unwrap().remove(0);
                }),
                "olm.package properties",
            ),
            (
                Box::new(|d| {
                    d[2]["properties"].as_array_mut().unwrap().remove(1);
                }),
                "no olm.gvk property",
            ),
            (
                Box::new(|d| {
                    let m = d[2]["properties"][2].clone();
                    d[2]["properties"].as_array_mut().unwrap().push(m);
                }),
                "at most one",
            ),
            (Box::new(|d| d[2]["image"] = json!("")), "no image"),
            (
                Box::new(|d| {
                    d[0].as_object_mut().unwrap().remove("schema");
                }),
                "no schema",
            ),
        ];
        for (i, (change, expected)) in cases.into_iter().enumerate() {
            let errors: Vec<String> = broken(change).iter().map(ToString::to_string).collect();
            assert!(
                errors.iter().any(|e| e.contains(expected)),
                "case {i}: expected {expected:?} in {errors:?}"
            );
        }
    }

    #[test]
    fn entries_off_the_chain_and_not_skipped_are_stranded() {
        // A skipped entry need not be on the replaces chain.
        let errors = broken(|d| {
            d[1]["entries"] = json!([
                {"name": "op.v1.0.0"},
                {"name": "op.v1.1.0", "replaces": "op.v1.0.0"},
                {"name": "op.v1.2.0", "replaces": "op.v1.0.0", "skips": ["op.v1.1.0"]},
            ]);
        });
        assert_eq!(errors, []);
        // Two entries replacing each other beside the chain: each has an incoming
        // edge, so neither is a head, and the head's chain reaches neither.
        let errors = broken(|d| {
            d[1]["entries"] = json!([
                {"name": "op.v1.0.0", "replaces": "op.v1.1.0"},
                {"name": "op.v1.1.0", "replaces": "op.v1.0.0"},
                {"name": "op.v1.2.0"},
            ]);
        });
        assert_eq!(
            errors,
            [FbcError::Stranded {
                package: "op".into(),
                channel: "stable".into(),
                bundles: vec!["op.v1.0.0".into(), "op.v1.1.0".into()],
            }]
        );
    }
}
