//! The RBAC of the ServiceAccount OLM v1 installs nbv with (`config/olm/v1/rbac.yaml`):
//! operator-controller acts as the ClusterExtension's ServiceAccount, which must be
//! able to manage every object the bundle holds and, since Kubernetes forbids
//! granting a right one does not hold, hold every right the CSV grants the operator.

use serde_json::{Value, json};

use super::csv::{bundle_objects, cluster_service_version};
use super::package::{OlmError, PACKAGE};

/// The ServiceAccount operator-controller installs nbv as.
pub const INSTALLER: &str = "nbv-installer";
/// The namespace OLM v1 installs nbv in (`spec.namespace` of the ClusterExtension).
pub const INSTALL_NAMESPACE: &str = "nbv-system";

fn labels() -> Value {
    json!({
        "app.kubernetes.io/name": "nbv-operator",
        "app.kubernetes.io/component": "installer",
        "app.kubernetes.io/part-of": "nbv",
    })
}

/// The installer's ClusterRole, ClusterRoleBinding, Role and RoleBinding, derived from
/// this release's bundle: the CRD, the ClusterRoles and ClusterRoleBindings OLM v1
/// names itself (which covers the bundle's ClusterRole `nbv-metrics-reader`), the
/// ClusterExtension's finalizers, the rights the CSV and the bundle's ClusterRole
/// grant; in the install namespace the Deployment, ServiceAccount, Role and
/// RoleBinding of the bundle and its other objects (Service, PodDisruptionBudget), by
/// name where Kubernetes allows it.
///
/// # Errors
///
/// [`OlmError`] when the CSV cannot be rendered.
pub fn installer_rbac() -> Result<Vec<Value>, OlmError> {
    let csv = cluster_service_version()?;
    let install = &csv["spec"]["install"]["spec"];
    let crds: Vec<Value> = csv["spec"]["customresourcedefinitions"]["owned"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|crd| crd["name"].clone())
        .collect();
    let deployments: Vec<Value> = install["deployments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["name"].clone())
        .collect();
    let accounts: Vec<Value> = ["clusterPermissions", "permissions"]
        .iter()
        .flat_map(|k| install[*k].as_array().cloned().unwrap_or_default())
        .map(|p| p["serviceAccountName"].clone())
        .fold(Vec::new(), |mut all, a| {
            if !all.contains(&a) {
                all.push(a);
            }
            all
        });
    let manage = json!(["get", "update", "patch", "delete"]);
    let create = json!(["create", "list", "watch"]);
    let mut cluster_rules = vec![
        json!({ "apiGroups": ["olm.operatorframework.io"], "resources": ["clusterextensions/finalizers"],
                "verbs": ["update"], "resourceNames": [PACKAGE] }),
        json!({ "apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": create }),
        json!({ "apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
                "verbs": manage, "resourceNames": crds }),
        // OLM v1 names the ClusterRoles and ClusterRoleBindings it generates from the
        // CSV itself (`<package>.<hash>`): no resourceNames can be known in advance.
        json!({ "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles", "clusterrolebindings"],
                "verbs": ["create", "list", "watch", "get", "update", "patch", "delete"] }),
    ];
    // The rights the CSV grants, cluster-wide and in the install namespace alike.
    for key in ["clusterPermissions", "permissions"] {
        for permission in install[key].as_array().into_iter().flatten() {
            cluster_rules.extend(permission["rules"].as_array().cloned().unwrap_or_default());
        }
    }
    let mut namespace_rules = vec![
        json!({ "apiGroups": ["apps"], "resources": ["deployments"], "verbs": create }),
        json!({ "apiGroups": ["apps"], "resources": ["deployments"], "verbs": manage, "resourceNames": deployments }),
        json!({ "apiGroups": [""], "resources": ["serviceaccounts"], "verbs": create }),
        json!({ "apiGroups": [""], "resources": ["serviceaccounts"], "verbs": manage, "resourceNames": accounts }),
        json!({ "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
                "verbs": ["create", "list", "watch", "get", "update", "patch", "delete"] }),
    ];
    for bundled in bundle_objects()? {
        let kind = bundled.object["kind"].as_str().unwrap_or_default();
        let Some((group, resource, scope)) = resource_of(kind) else {
            return Err(OlmError::Source {
                file: "nbv-operator/src/cli/commands/olm/installer.rs",
                what: format!(
                    "{} holds a {kind:?}, for which the installer's rights are not known: \
                     add its group, resource and scope to resource_of",
                    bundled.file
                ),
            });
        };
        let rules = match scope {
            Scope::Cluster => &mut cluster_rules,
            Scope::Namespace => &mut namespace_rules,
        };
        let name = bundled.object["metadata"]["name"].clone();
        for rule in [
            json!({ "apiGroups": [group], "resources": [resource], "verbs": create }),
            json!({ "apiGroups": [group], "resources": [resource], "verbs": manage, "resourceNames": [name] }),
        ] {
            // ClusterRoles are already granted above for every name.
            if !granted_for_every_name(rules, &rule) {
                rules.push(rule);
            }
        }
        if kind == "ClusterRole" {
            // Kubernetes' escalation check: creating or updating a ClusterRole needs
            // every right it grants, or `escalate` on it. For nbv-metrics-reader that
            // is `get` on the URL /metrics, which lets the installer read metrics
            // (nbv's, the API server's) and nothing else; `escalate`, even limited to
            // this role's name, would let it write any right into the role, which the
            // scrapers bound to it would then hold. So the installer holds the rules.
            cluster_rules.extend(
                bundled.object["rules"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            );
        }
    }
    let subject =
        json!([{ "kind": "ServiceAccount", "name": INSTALLER, "namespace": INSTALL_NAMESPACE }]);
    let binding = |kind: &str, role_kind: &str, namespace: Option<&str>| {
        let mut metadata = json!({ "name": INSTALLER, "labels": labels() });
        if let Some(namespace) = namespace {
            metadata["namespace"] = json!(namespace);
        }
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
            "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": INSTALLER },
            "subjects": subject,
        })
    };
    Ok(vec![
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": { "name": INSTALLER, "labels": labels() }, "rules": cluster_rules }),
        binding("ClusterRoleBinding", "ClusterRole", None),
        json!({ "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": { "name": INSTALLER, "namespace": INSTALL_NAMESPACE, "labels": labels() },
                "rules": namespace_rules }),
        binding("RoleBinding", "Role", Some(INSTALL_NAMESPACE)),
    ])
}

/// Where an object of the bundle lives, and so which of the installer's roles grants it.
#[derive(Debug, Clone, Copy)]
enum Scope {
    /// Cluster-scoped: the installer's ClusterRole.
    Cluster,
    /// In the install namespace: the installer's Role.
    Namespace,
}

/// The API group, resource and scope of a kind the bundle holds beside the CSV.
fn resource_of(kind: &str) -> Option<(&'static str, &'static str, Scope)> {
    match kind {
        "Service" => Some(("", "services", Scope::Namespace)),
        "PodDisruptionBudget" => Some(("policy", "poddisruptionbudgets", Scope::Namespace)),
        "ClusterRole" => Some(("rbac.authorization.k8s.io", "clusterroles", Scope::Cluster)),
        _ => None,
    }
}

/// Whether a rule of `rules` without `resourceNames` already grants every verb of
/// `rule` on its group and resource.
fn granted_for_every_name(rules: &[Value], rule: &Value) -> bool {
    let holds = |list: &Value, item: &Value| list.as_array().is_some_and(|l| l.contains(item));
    let (group, resource) = (&rule["apiGroups"][0], &rule["resources"][0]);
    rule["verbs"].as_array().into_iter().flatten().all(|verb| {
        rules.iter().any(|r| {
            r.get("resourceNames").is_none()
                && holds(&r["apiGroups"], group)
                && holds(&r["resources"], resource)
                && holds(&r["verbs"], verb)
        })
    })
}
