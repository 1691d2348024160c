//! Generated and parsed files: the CRD and health checks equal what the code renders, every
//! manifest has only fields of its API.

use super::*;

#[test]
fn the_crd_is_the_output_of_nbv_crd() {
    repository::assert_generated(
        "config/crd/notebookvalidationjobs.yaml",
        &nbv_operator::cli::commands::crd::render(),
        "cargo run -q -p nbv-operator -- crd > config/crd/notebookvalidationjobs.yaml",
        "config",
    );
}

/// kube-apiserver refuses a CRD whose schema has `default: ''` (1.20 reads the empty
/// string as a null, which a string field must not default to): the whole CRD, and so
/// every job, would fail to install. Fields that default to empty are left without a
/// default instead (serde's `skip_serializing_if` keeps schemars from writing one).
#[test]
fn no_schema_default_is_an_empty_string() {
    fn visit(value: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                if map.get("default") == Some(&Value::String(String::new())) {
                    found.push(path.to_owned());
                }
                for (key, child) in map {
                    visit(child, &format!("{path}.{key}"), found);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    visit(child, &format!("{path}[{i}]"), found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for crd in documents("config/crd/notebookvalidationjobs.yaml") {
        visit(&crd, "", &mut found);
    }
    assert_eq!(
        found,
        Vec::<String>::new(),
        "empty-string defaults in the CRD"
    );
}

#[test]
fn the_health_checks_are_rendered_from_the_core() {
    for (variant, file) in [
        (Variant::Basic, "config/argocd/health-check-configmap.yaml"),
        (
            Variant::Advanced,
            "config/argocd/health-check-configmap-advanced.yaml",
        ),
        (
            Variant::Guide,
            "config/argocd/health-check-configmap-guide.yaml",
        ),
    ] {
        repository::assert_generated(
            file,
            &render_health_configmap(variant),
            &format!("the test (nbv_core::health::render_health_configmap(Variant::{variant:?}))"),
            "config",
        );
        let cm = &documents(file)[0];
        assert_eq!(cm["metadata"]["name"], "argocd-cm", "{file}");
        assert_eq!(
            cm["data"][ACTIONS_KEY].as_str(),
            Some(render_actions().as_str()),
            "{file}: the actions must survive YAML"
        );
        let actions: Value =
            serde_yaml_ng::from_str(&render_actions()).expect("the actions value is YAML");
        assert_eq!(actions["discovery.lua"], DISCOVERY_SCRIPT, "{file}");
        assert_eq!(
            actions["definitions"][0]["action.lua"], RERUN_SCRIPT,
            "{file}"
        );
        assert_eq!(
            cm["data"][HEALTH_KEY],
            variant.source(),
            "{file}: the script must survive YAML"
        );
    }
}

/// The OpenShift GitOps health check: the same Lua as `config/argocd`'s, in the shape of
/// the Argo CD operator's `ArgoCD` type. Its fields are those of argoproj-labs/argocd-operator
/// `api/v1beta1/argocd_types.go`: `ArgoCDSpec.ResourceHealthChecks`
/// (`json:"resourceHealthChecks"`), a list of `ResourceHealthCheck` with `group`, `kind`
/// and `check` (strings), which the operator writes into argocd-cm as
/// `resource.customizations.health.<group>_<kind>`.
#[test]
fn the_openshift_gitops_health_check_is_config_argocds_lua() {
    const FILE: &str = "config/openshift-gitops/argocd-health-check.yaml";
    repository::assert_generated(
        FILE,
        &render_argocd_health_check(Variant::Basic),
        "the test (nbv_core::health::render_argocd_health_check(Variant::Basic))",
        "config",
    );
    let patch = &documents(FILE)[0];
    let configmap = &documents("config/argocd/health-check-configmap.yaml")[0];
    let check = &patch["spec"]["resourceHealthChecks"][0];
    assert_eq!(
        check["check"], configmap["data"][HEALTH_KEY],
        "{FILE} and config/argocd/health-check-configmap.yaml hold different Lua"
    );
    assert_eq!(check["check"], Variant::Basic.source());
    // The operator's key: group, "_", kind.
    assert_eq!(
        format!(
            "resource.customizations.health.{}_{}",
            check["group"].as_str().unwrap_or_default(),
            check["kind"].as_str().unwrap_or_default()
        ),
        HEALTH_KEY
    );
    let keys = |v: &Value| -> Vec<String> {
        let mut keys: Vec<String> = v
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    };
    assert_eq!(keys(patch), ["apiVersion", "kind", "metadata", "spec"]);
    assert_eq!(patch["apiVersion"], "argoproj.io/v1beta1");
    assert_eq!(patch["kind"], "ArgoCD");
    assert_eq!(keys(&patch["metadata"]), ["name", "namespace"]);
    assert_eq!(patch["metadata"]["name"], "openshift-gitops");
    assert_eq!(patch["metadata"]["namespace"], "openshift-gitops");
    assert_eq!(
        keys(&patch["spec"]),
        ["resourceActions", "resourceHealthChecks"]
    );
    // argocd-operator's `ResourceAction`: `group`, `kind` and `action` (the argocd-cm
    // value of resource.customizations.actions.<group>_<kind>).
    let actions = &patch["spec"]["resourceActions"][0];
    assert_eq!(keys(actions), ["action", "group", "kind"]);
    assert_eq!(actions["action"], configmap["data"][ACTIONS_KEY]);
    assert_eq!(actions["action"].as_str(), Some(render_actions().as_str()));
    assert_eq!(
        format!(
            "resource.customizations.actions.{}_{}",
            actions["group"].as_str().unwrap_or_default(),
            actions["kind"].as_str().unwrap_or_default()
        ),
        ACTIONS_KEY
    );
    let entries = patch["spec"]["resourceHealthChecks"]
        .as_array()
        .unwrap_or_else(|| panic!("{FILE}: spec.resourceHealthChecks is not a list"));
    assert_eq!(entries.len(), 1);
    assert_eq!(keys(check), ["check", "group", "kind"]);
    assert!(
        ["check", "group", "kind"]
            .iter()
            .all(|k| check[k].is_string())
    );
}

#[test]
fn every_yaml_file_parses_and_every_manifest_names_its_object() {
    for file in config_files().into_iter().filter(|f| {
        (f.starts_with(HEALTH_TESTS) || f.starts_with(PROMTOOL_FILES)) && f.ends_with(".yaml")
    }) {
        // Health test and promtool inputs only have to be YAML.
        documents(&file);
    }
    let files = yaml_files();
    assert!(
        files.len() > 20,
        "suspiciously few files under config/: {files:?}"
    );
    for file in files {
        for (i, doc) in documents(&file).iter().enumerate() {
            let at = format!("{file} (document {i})");
            assert!(doc["apiVersion"].is_string(), "{at}: no apiVersion");
            assert!(doc["kind"].is_string(), "{at}: no kind");
            if doc["kind"] != "Kustomization" {
                assert!(
                    doc["metadata"]["name"].is_string(),
                    "{at}: no metadata.name"
                );
            }
        }
    }
}

/// Where `actual` first differs from `expected`, as a JSON path, or `None`.
fn first_difference(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(a), Value::Object(b)) => {
            // Each key once: visiting shared keys from both sides would double the work
            // at every level of nesting.
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                first_difference(x, y, &format!("{path}.{k}"))
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]"))),
        (a, b) if a == b => None,
        (a, b) => Some(format!("{path}: the file has {a}, the API type keeps {b}")),
    }
}

/// Deserializes `doc` as `K` and serializes it back: a field the API does not have
/// (a typo, a wrong nesting) is dropped by the typed model, and so shows as a
/// difference.
fn round_trip<K: serde::Serialize + serde::de::DeserializeOwned>(doc: &Value) -> Option<String> {
    match serde_json::from_value::<K>(doc.clone()) {
        Err(e) => Some(format!("not a valid object: {e}")),
        Ok(typed) => first_difference(doc, &serde_json::to_value(&typed).unwrap_or_default(), ""),
    }
}

#[test]
fn every_kubernetes_object_has_only_fields_of_its_api() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::batch::v1::Job;
    use k8s_openapi::api::core::v1::{
        ConfigMap, Namespace, PersistentVolumeClaim, Service, ServiceAccount,
    };
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

    let mut checked = 0;
    for (file, doc) in manifests() {
        let problem = match doc["kind"].as_str().unwrap_or_default() {
            "Deployment" => round_trip::<Deployment>(&doc),
            "Job" => round_trip::<Job>(&doc),
            "ConfigMap" => round_trip::<ConfigMap>(&doc),
            "Namespace" => round_trip::<Namespace>(&doc),
            "PersistentVolumeClaim" => round_trip::<PersistentVolumeClaim>(&doc),
            "Service" => round_trip::<Service>(&doc),
            "PodDisruptionBudget" => round_trip::<PodDisruptionBudget>(&doc),
            "NetworkPolicy" => round_trip::<NetworkPolicy>(&doc),
            "ServiceAccount" => round_trip::<ServiceAccount>(&doc),
            "ClusterRole" => round_trip::<ClusterRole>(&doc),
            "ClusterRoleBinding" => round_trip::<ClusterRoleBinding>(&doc),
            "Role" => round_trip::<Role>(&doc),
            "RoleBinding" => round_trip::<RoleBinding>(&doc),
            "CustomResourceDefinition" => round_trip::<CustomResourceDefinition>(&doc),
            "NotebookValidationJob" => round_trip::<NotebookValidationJob>(&doc),
            // Argo CD Applications and KServe InferenceServices have no Rust types here.
            _ => continue,
        };
        checked += 1;
        if let Some(problem) = problem {
            panic!(
                "{file}: {} {}: {problem}",
                doc["kind"], doc["metadata"]["name"]
            );
        }
    }
    assert!(checked > 20, "only {checked} objects checked");
}

/// The actions in Argo CD's `resource_customizations` layout, which `nbv action test`
/// and Argo CD's own test run, are the scripts nbv ships.
#[test]
fn the_argocd_layout_holds_the_shipped_action_scripts() {
    let dir = format!("{HEALTH_TESTS}mlops.mlops.dev/NotebookValidationJob/actions");
    for (file, script) in [
        (format!("{dir}/discovery.lua"), DISCOVERY_SCRIPT),
        (format!("{dir}/rerun/action.lua"), RERUN_SCRIPT),
    ] {
        let path = root().join(&file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            text, script,
            "{file} differs from what nbv ships; copy it from nbv-core/src/health/actions"
        );
    }
}
