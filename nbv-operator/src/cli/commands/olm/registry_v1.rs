//! The rules OLM v1 (operator-controller's `ClusterExtension`) applies to a
//! `registry+v1` bundle before it renders it into plain manifests: its bundle
//! validators (unique, DNS-1123 Deployment names; unique CRDs, each owned one in the
//! bundle; a package name), the object kinds it can install, and the limits it
//! documents for registry+v1 content: the `AllNamespaces` install mode, no
//! dependencies (`olm.package.required`, `olm.gvk.required`, `olm.constraint`, or
//! CRDs the CSV requires), no APIService, no webhook.

use std::collections::BTreeSet;

use nbv_core::pod::is_dns_subdomain;
use serde_json::Value;

/// The kinds a registry+v1 bundle may hold besides its CSV and CRDs: those OLM
/// installs from a bundle's manifests.
pub const SUPPORTED_KINDS: &[&str] = &[
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsoleQuickStart",
    "ConsoleYAMLSample",
    "NetworkPolicy",
    "PodDisruptionBudget",
    "PriorityClass",
    "PrometheusRule",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServiceMonitor",
    "VerticalPodAutoscaler",
];

/// The property types that declare a dependency, which OLM v1 does not resolve.
const DEPENDENCY_PROPERTIES: &[&str] =
    &["olm.package.required", "olm.gvk.required", "olm.constraint"];

/// A rule of OLM v1 for registry+v1 bundles that a bundle breaks; the message says
/// what OLM v1 would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RegistryV1Error(pub String);

/// Every OLM v1 rule the bundle breaks: `manifests` are the documents of its
/// `manifests/`, `annotations` the map of `metadata/annotations.yaml`, `properties`
/// those of `metadata/properties.yaml` and `metadata/dependencies.yaml` (empty when it
/// has none).
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::olm::check_registry_v1;
/// use serde_json::json;
/// let csv = json!({"kind": "ClusterServiceVersion", "spec": {
///     "installModes": [{"type": "AllNamespaces", "supported": false}],
///     "install": {"spec": {"deployments": [{"name": "op"}]}}}});
/// let annotations = json!({"operators.operatorframework.io.bundle.package.v1": "op"});
/// let problems = check_registry_v1(&[csv], &annotations, &[]);
/// assert_eq!(problems.len(), 1);
/// assert!(problems[0].0.contains("AllNamespaces"));
/// ```
pub fn check_registry_v1(
    manifests: &[Value],
    annotations: &Value,
    properties: &[Value],
) -> Vec<RegistryV1Error> {
    let mut problems = Vec::new();
    let mut fail = |text: String| problems.push(RegistryV1Error(text));
    let csvs: Vec<&Value> = manifests
        .iter()
        .filter(|m| m["kind"] == "ClusterServiceVersion")
        .collect();
    let [csv] = csvs.as_slice() else {
        fail(format!(
            "the bundle holds {} ClusterServiceVersions; exactly one is needed",
            csvs.len()
        ));
        return problems;
    };
    let spec = &csv["spec"];
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();

    if annotations["operators.operatorframework.io.bundle.package.v1"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        fail("the bundle's annotations name no package".to_owned());
    }
    let all_namespaces = list(&spec["installModes"])
        .iter()
        .any(|m| m["type"] == "AllNamespaces" && m["supported"] == true);
    if !all_namespaces {
        fail("the CSV does not support the AllNamespaces install mode".to_owned());
    }

    let mut deployments = BTreeSet::new();
    for deployment in list(&spec["install"]["spec"]["deployments"]) {
        let name = deployment["name"].as_str().unwrap_or_default().to_owned();
        if !is_dns_subdomain(&name) {
            fail(format!(
                "Deployment name {name:?} is not a DNS-1123 subdomain"
            ));
        }
        if !deployments.insert(name.clone()) {
            fail(format!("the CSV defines Deployment {name:?} twice"));
        }
    }

    let mut crds = BTreeSet::new();
    for crd in manifests
        .iter()
        .filter(|m| m["kind"] == "CustomResourceDefinition")
    {
        let name = crd["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if !crds.insert(name.clone()) {
            fail(format!("the bundle holds CRD {name:?} twice"));
        }
    }
    for owned in list(&spec["customresourcedefinitions"]["owned"]) {
        let name = owned["name"].as_str().unwrap_or_default();
        if !crds.contains(name) {
            fail(format!(
                "the CSV owns CRD {name:?}, which is not in the bundle"
            ));
        }
    }

    for required in list(&spec["customresourcedefinitions"]["required"]) {
        fail(format!(
            "the CSV requires CRD {}: OLM v1 resolves no dependency",
            required["name"]
        ));
    }
    for property in properties {
        let kind = property["type"].as_str().unwrap_or_default();
        if DEPENDENCY_PROPERTIES.contains(&kind) {
            fail(format!(
                "the bundle declares a {kind} dependency: OLM v1 resolves none"
            ));
        }
    }
    if !list(&spec["apiservicedefinitions"]["owned"]).is_empty()
        || !list(&spec["apiservicedefinitions"]["required"]).is_empty()
    {
        fail("the CSV has apiservicedefinitions: OLM v1 installs no APIService".to_owned());
    }
    if !list(&spec["webhookdefinitions"]).is_empty() {
        fail(
            "the CSV has webhookdefinitions: nbv's bundle must install under OLM v1 without them"
                .to_owned(),
        );
    }

    for manifest in manifests {
        let kind = manifest["kind"].as_str().unwrap_or_default();
        let known = ["ClusterServiceVersion", "CustomResourceDefinition"].contains(&kind)
            || SUPPORTED_KINDS.contains(&kind);
        if !known {
            fail(format!(
                "the bundle holds a {kind:?}, a kind OLM does not install from a bundle"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bundle() -> (Vec<Value>, Value) {
        let csv = json!({"kind": "ClusterServiceVersion", "spec": {
            "installModes": [{"type": "OwnNamespace", "supported": false},
                             {"type": "AllNamespaces", "supported": true}],
            "customresourcedefinitions": {"owned": [{"name": "ws.example.com"}]},
            "install": {"spec": {"deployments": [{"name": "op-manager"}]}}}});
        let crd =
            json!({"kind": "CustomResourceDefinition", "metadata": {"name": "ws.example.com"}});
        let service = json!({"kind": "Service", "metadata": {"name": "op-metrics"}});
        (
            vec![csv, crd, service],
            json!({"operators.operatorframework.io.bundle.package.v1": "op"}),
        )
    }

    #[test]
    fn a_bundle_within_the_rules_passes() {
        let (manifests, annotations) = bundle();
        assert_eq!(
            check_registry_v1(&manifests, &annotations, &[json!({"type": "olm.gvk"})]),
            []
        );
    }

    #[test]
    fn each_rule_is_checked() {
        type Change = fn(&mut Vec<Value>, &mut Value, &mut Vec<Value>);
        let cases: [(Change, &str); 11] = [
            (
                |m, _, _| m[0]["spec"]["installModes"][1]["supported"] = json!(false),
                "AllNamespaces",
            ),
            (|_, a, _| *a = json!({}), "no package"),
            (
                |m, _, _| {
                    m[0]["spec"]["install"]["spec"]["deployments"][0]["name"] = json!("Op_Manager")
                },
                "DNS-1123",
            ),
            (
                |m, _, _| {
                    let d = m[0]["spec"]["install"]["spec"]["deployments"][0].clone();
                    m[0]["spec"]["install"]["spec"]["deployments"]
                        .as_array_mut()
                        .unwrap()
                        .push(d);
                },
                "twice",
            ),
            (
                |m, _, _| {
                    let c = m[1].clone();
                    m.push(c);
                },
                "CRD \"ws.example.com\" twice",
            ),
            (
                |m, _, _| {
                    m.remove(1);
                },
                "not in the bundle",
            ),
            (
                |m, _, _| {
                    m[0]["spec"]["customresourcedefinitions"]["required"] =
                        json!([{"name": "x.example.com"}])
                },
                "requires CRD",
            ),
            (
                |_, _, p| p.push(json!({"type": "olm.package.required", "value": {}})),
                "dependency",
            ),
            (
                |m, _, _| {
                    m[0]["spec"]["apiservicedefinitions"] = json!({"owned": [{"name": "v1.x"}]})
                },
                "APIService",
            ),
            (
                |m, _, _| {
                    m[0]["spec"]["webhookdefinitions"] =
                        json!([{"type": "ValidatingAdmissionWebhook"}])
                },
                "webhook",
            ),
            (
                |m, _, _| m.push(json!({"kind": "Deployment"})),
                "\"Deployment\"",
            ),
        ];
        for (change, expected) in cases {
            let (mut manifests, mut annotations) = bundle();
            let mut properties = Vec::new();
            change(&mut manifests, &mut annotations, &mut properties);
            let problems = check_registry_v1(&manifests, &annotations, &properties);
            assert!(
                problems.iter().any(|p| p.0.contains(expected)),
                "{expected}: {problems:?}"
            );
        }
    }

    #[test]
    fn dns1123_subdomains() {
        for good in ["a", "nbv-operator", "a.b-c.d1"] {
            assert!(is_dns_subdomain(good), "{good}");
        }
        for bad in ["", "A", "-a", "a-", "a..b", "a_b", &"a".repeat(254)] {
            assert!(!is_dns_subdomain(bad), "{bad}");
        }
    }
}
