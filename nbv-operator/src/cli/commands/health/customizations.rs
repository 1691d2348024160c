//! A tree laid out like Argo CD's `resource_customizations/`, and the script Argo CD
//! would pick in it for an object.
//!
//! Argo CD looks a health check up by the object's group and kind, `group/Kind` (just
//! `Kind` for the core group): first the directory `<group>/<Kind>/` itself, then the
//! wildcard directories, whose names use `_` for `*` (Go's embedded file systems allow
//! no `*` in a name: `_.crossplane.io/_` stands for `*.crossplane.io/*`), matched as
//! Argo CD matches wildcard keys, `*` standing for any run of characters. An exact
//! directory always wins; among wildcard directories that match, the first in path
//! order is taken (Argo CD iterates a map there, so two matching wildcards are
//! ambiguous in Argo CD itself).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::suite::SCRIPT_FILE;

/// The health checks of a tree, by the key of the directory that holds them.
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use nbv_operator::cli::commands::health::customizations::Customizations;
/// use serde_json::json;
///
/// let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/health");
/// let tree = Customizations::scan(&root);
/// let certificate = json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate"});
/// assert_eq!(tree.script_dir(&certificate), Some(root.join("cert-manager.io/Certificate").as_path()));
/// assert_eq!(tree.script_dir(&json!({"apiVersion": "example.com/v1", "kind": "Unknown"})), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Customizations {
    /// `group/Kind` (or `Kind`) of each directory with a `health.lua`, literal names.
    exact: BTreeMap<String, PathBuf>,
    /// The wildcard directories: their key with `*` for `_`, in path order.
    wildcards: Vec<(String, PathBuf)>,
}

impl Customizations {
    /// The checks under `root`: `root/<group>/<Kind>/health.lua` and, for the core
    /// group, `root/<Kind>/health.lua`. Unreadable directories are skipped (the suites
    /// in them are reported by the search for suites).
    pub fn scan(root: &Path) -> Customizations {
        let mut tree = Customizations::default();
        for first in subdirs(root) {
            let Some(first_name) = name(&first) else {
                continue;
            };
            if first.join(SCRIPT_FILE).is_file() {
                tree.add(first_name.clone(), first.clone());
            }
            for second in subdirs(&first) {
                if let Some(second_name) = name(&second)
                    && second.join(SCRIPT_FILE).is_file()
                {
                    tree.add(format!("{first_name}/{second_name}"), second);
                }
            }
        }
        tree
    }

    fn add(&mut self, key: String, dir: PathBuf) {
        if key.contains('_') {
            self.wildcards.push((key.replace('_', "*"), dir));
        } else {
            self.exact.insert(key, dir);
        }
    }

    /// The directory whose `health.lua` Argo CD would run on `object`, or `None` when
    /// the object has no kind or no directory matches it.
    pub fn script_dir(&self, object: &Value) -> Option<&Path> {
        let key = object_key(object)?;
        if let Some(dir) = self.exact.get(&key) {
            return Some(dir);
        }
        self.wildcards
            .iter()
            .find(|(pattern, _)| wildcard_match(pattern, &key))
            .map(|(_, dir)| dir.as_path())
    }
}

/// The health checks of an `argocd-cm` ConfigMap: `resource.customizations.health.<key>`
/// with `resource.customizations.useOpenLibs.<key>`, where `<key>` is `<group>_<Kind>`
/// (or `<Kind>` for the core group) and may hold `*` wildcards, as Argo CD reads them.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::customizations::ArgoCdCm;
/// use serde_json::json;
///
/// let cm = ArgoCdCm::parse(r#"
/// data:
///   resource.customizations.health.example.com_Widget: "return {status = 'Healthy'}"
///   resource.customizations.useOpenLibs.example.com_Widget: "true"
///   resource.customizations.health.*.example.com_*: "return {status = 'Degraded'}"
/// "#)?;
/// let widget = cm.check(&json!({"apiVersion": "example.com/v1", "kind": "Widget"})).unwrap();
/// assert!(widget.open_libs);
/// let other = cm.check(&json!({"apiVersion": "a.example.com/v1", "kind": "Thing"})).unwrap();
/// assert_eq!((other.key.as_str(), other.open_libs), ("*.example.com/*", false));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ArgoCdCm {
    checks: Vec<Customization>,
}

/// One health check of `argocd-cm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customization {
    /// Argo CD's key, `group/Kind` (or `Kind`), possibly with `*`.
    pub key: String,
    /// The Lua source.
    pub script: String,
    /// Whether `resource.customizations.useOpenLibs.<key>` is `"true"`.
    pub open_libs: bool,
}

impl ArgoCdCm {
    /// Reads an `argocd-cm` ConfigMap (YAML or JSON); the error says what is wrong.
    pub fn parse(text: &str) -> Result<ArgoCdCm, String> {
        let cm: Value = nbv_core::yaml::from_str(text).map_err(|e| format!("not YAML: {e}"))?;
        let Some(data) = cm.get("data").and_then(Value::as_object) else {
            return Err("no `data` mapping: give the argocd-cm ConfigMap".to_owned());
        };
        let mut checks = Vec::new();
        for (name, value) in data {
            let Some(group_kind) = name.strip_prefix("resource.customizations.health.") else {
                continue;
            };
            let script = value
                .as_str()
                .ok_or_else(|| format!("{name} is not a string"))?;
            let open_libs = data
                .get(&format!("resource.customizations.useOpenLibs.{group_kind}"))
                .and_then(Value::as_str)
                == Some("true");
            checks.push(Customization {
                key: override_key(group_kind).ok_or_else(|| {
                    format!("{name}: expected <group>_<Kind> or <Kind> after `health.`")
                })?,
                script: script.to_owned(),
                open_libs,
            });
        }
        Ok(ArgoCdCm { checks })
    }

    /// The check Argo CD runs on `object` from this ConfigMap: the exact key, else the
    /// first wildcard key that matches (in key order; Argo CD iterates a map there).
    pub fn check(&self, object: &Value) -> Option<&Customization> {
        let key = object_key(object)?;
        self.checks.iter().find(|c| c.key == key).or_else(|| {
            let mut wildcards: Vec<&Customization> =
                self.checks.iter().filter(|c| c.key.contains('*')).collect();
            wildcards.sort_by(|a, b| a.key.cmp(&b.key));
            wildcards.into_iter().find(|c| wildcard_match(&c.key, &key))
        })
    }
}

/// `<group>_<Kind>` → `group/Kind`; `<Kind>` stays; anything else is invalid.
fn override_key(group_kind: &str) -> Option<String> {
    match group_kind.split('_').collect::<Vec<_>>().as_slice() {
        [kind] if !kind.is_empty() => Some((*kind).to_owned()),
        [group, kind] if !group.is_empty() && !kind.is_empty() => Some(format!("{group}/{kind}")),
        _ => None,
    }
}

/// Argo CD's key of an object: `group/Kind`, or `Kind` for the core group.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::customizations::object_key;
/// use serde_json::json;
///
/// assert_eq!(object_key(&json!({"apiVersion": "apps/v1", "kind": "Deployment"})).as_deref(), Some("apps/Deployment"));
/// assert_eq!(object_key(&json!({"apiVersion": "v1", "kind": "Pod"})).as_deref(), Some("Pod"));
/// assert_eq!(object_key(&json!({"status": {}})), None);
/// ```
pub fn object_key(object: &Value) -> Option<String> {
    let kind = object.get("kind")?.as_str().filter(|k| !k.is_empty())?;
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    match api_version.rsplit_once('/') {
        Some((group, _version)) if !group.is_empty() => Some(format!("{group}/{kind}")),
        _ => Some(kind.to_owned()),
    }
}

/// `*` matches any run of characters (`/` included, as in Argo CD's glob matching of
/// wildcard keys); every other character matches itself.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*` at all: the whole text must be the pattern.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        // `file_type` does not follow symbolic links, as the search for suites.
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .map(|entry| entry.path())
        .collect();
    dirs.sort();
    dirs
}

fn name(dir: &Path) -> Option<String> {
    dir.file_name().and_then(|n| n.to_str()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_like_argo_cds_keys() {
        assert!(wildcard_match(
            "*.crossplane.io/*",
            "pkg.crossplane.io/Provider"
        ));
        assert!(wildcard_match("*/*", "apps/Deployment"));
        assert!(wildcard_match("*", "anything/at all"));
        assert!(wildcard_match("apps/*", "apps/Deployment"));
        assert!(wildcard_match("*.io/Job", "batch.io/Job"));
        assert!(!wildcard_match(
            "*.crossplane.io/*",
            "crossplane.io/Provider"
        ));
        assert!(!wildcard_match("apps/*", "batch/Job"));
        assert!(!wildcard_match("a*a", "a"));
        assert!(wildcard_match("a*a", "aa"));
        assert!(!wildcard_match("apps/Deployment", "apps/Deployments"));
    }
}
