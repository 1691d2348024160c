//! Discovery documents (`/version`, `/api`, `/apis`, `/apis/{group}/{version}`), built
//! from the registered resources, so that `kube::discovery` can map a kind to its plural.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::error::{ApiError, Reason};
use super::resource::ApiResourceSpec;
use super::route::Discovery;

const VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The document for `doc`, or 404 when the group or version serves nothing.
pub(crate) fn document(doc: &Discovery, specs: &[ApiResourceSpec]) -> Result<Value, ApiError> {
    // group -> versions, in registration order.
    let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for spec in specs {
        let versions = groups.entry(spec.group.as_str()).or_default();
        if !versions.contains(&spec.version.as_str()) {
            versions.push(spec.version.as_str());
        }
    }
    let group_doc = |name: &str, versions: &[&str]| {
        let versions: Vec<Value> = versions
            .iter()
            .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
            .collect();
        json!({
            "name": name,
            "versions": versions,
            "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
        })
    };
    let missing = || {
        ApiError::new(
            Reason::NotFound,
            "the server could not find the requested resource",
        )
    };
    match doc {
        Discovery::Version => Ok(json!({
            "major": "1",
            "minor": "34",
            "gitVersion": "v1.34.0+nbv-testkit",
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "go1.24",
            "compiler": "gc",
            "platform": "linux/amd64",
        })),
        Discovery::CoreVersions => Ok(json!({
            "kind": "APIVersions",
            "versions": groups.get("").cloned().unwrap_or_default(),
            "serverAddressByClientCIDRs": [],
        })),
        Discovery::Groups => Ok(json!({
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": groups
                .iter()
                .filter(|(name, _)| !name.is_empty())
                .map(|(name, versions)| group_doc(name, versions))
                .collect::<Vec<_>>(),
        })),
        Discovery::Group(name) => {
            let versions = groups
                .get(name.as_str())
                .filter(|_| !name.is_empty())
                .ok_or_else(missing)?;
            let mut doc = group_doc(name, versions);
            doc["kind"] = json!("APIGroup");
            doc["apiVersion"] = json!("v1");
            Ok(doc)
        }
        Discovery::Resources { group, version } => {
            let served: Vec<&ApiResourceSpec> = specs
                .iter()
                .filter(|s| s.group == *group && s.version == *version)
                .collect();
            if served.is_empty() {
                return Err(missing());
            }
            let mut resources = Vec::new();
            for spec in served {
                resources.push(json!({
                    "name": spec.plural,
                    "singularName": spec.kind.to_lowercase(),
                    "namespaced": spec.namespaced,
                    "kind": spec.kind,
                    "verbs": VERBS,
                }));
                if spec.group.is_empty() && spec.plural == "pods" {
                    // Kubernetes 1.20: `policy/v1beta1` Eviction (`v1` from 1.22).
                    resources.push(json!({
                        "name": "pods/eviction",
                        "singularName": "",
                        "namespaced": true,
                        "group": "policy",
                        "version": "v1beta1",
                        "kind": "Eviction",
                        "verbs": ["create"],
                    }));
                }
                if spec.status_subresource {
                    resources.push(json!({
                        "name": format!("{}/status", spec.plural),
                        "singularName": "",
                        "namespaced": spec.namespaced,
                        "kind": spec.kind,
                        "verbs": ["get", "patch", "update"],
                    }));
                }
            }
            Ok(json!({
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": spec_group_version(group, version),
                "resources": resources,
            }))
        }
    }
}

fn spec_group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}
