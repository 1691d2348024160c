//! The ClusterServiceVersion of the bundle, and the objects of `config/` it holds beside
//! it (the metrics Service, the PodDisruptionBudget and the ClusterRole for metrics
//! scrapers; not the NetworkPolicy, see [`bundle_objects`]).

use serde_json::{Value, json};

use super::package::{
    CHANNEL, MIN_KUBE_VERSION, OlmError, VERSION, icon, parse, parse_all, sources,
};
use super::release::current;

const DEPLOYMENT_FILE: &str = "config/manager/deployment.yaml";
const SERVICE_FILE: &str = "config/manager/service.yaml";
const PDB_FILE: &str = "config/manager/pdb.yaml";
const METRICS_READER_FILE: &str = "config/rbac/metrics_reader_role.yaml";
const CLUSTER_ROLE_FILE: &str = "config/rbac/role.yaml";
const LEADER_ROLE_FILE: &str = "config/rbac/leader_election_role.yaml";
const SERVICE_ACCOUNT_FILE: &str = "config/rbac/service_account.yaml";
const SAMPLES_FILE: &str = "config/samples/training/notebookvalidationjob.yaml";
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

fn missing(file: &'static str, what: impl Into<String>) -> OlmError {
    OlmError::Source {
        file,
        what: what.into(),
    }
}

/// `value.pointer(pointer)`, or an error naming the file and the field.
fn field<'a>(file: &'static str, value: &'a Value, pointer: &str) -> Result<&'a Value, OlmError> {
    value
        .pointer(pointer)
        .ok_or_else(|| missing(file, format!("has no {pointer}")))
}

/// An object of `config/` that the bundle holds as it is, beside the CSV.
#[derive(Debug, Clone)]
pub(super) struct BundleObject {
    /// The file in `config/` it comes from.
    pub file: &'static str,
    /// The object, without its namespace.
    pub object: Value,
}

impl BundleObject {
    /// Its file under `manifests/`, named as operator-sdk names them:
    /// `<name>_<group>_<version>_<kind>.yaml` (no group for the core API).
    pub fn manifest_path(&self) -> String {
        let name = self.object["metadata"]["name"].as_str().unwrap_or_default();
        let api_version = self.object["apiVersion"].as_str().unwrap_or_default();
        let kind = self.object["kind"].as_str().unwrap_or_default();
        format!(
            "manifests/{name}_{}_{}.yaml",
            api_version.replace('/', "_"),
            kind.to_lowercase()
        )
    }
}

/// The objects of `config/` that the bundle holds beside the CSV and the CRD: the
/// metrics Service and the PodDisruptionBudget, each without its namespace, since OLM
/// creates bundle objects in the namespace the operator is installed in; and the
/// ClusterRole `nbv-metrics-reader` that scrapers of the secure `/metrics` are bound
/// to, so that OLM installs it as kustomize and Helm do (OLM v0 and v1 install
/// ClusterRoles from a bundle's manifests: `SUPPORTED_KINDS` of `registry_v1`). (The
/// Deployment is the CSV's install strategy; the Namespace is the OperatorGroup's,
/// made by whoever subscribes.) The NetworkPolicy is left out: OLM v0 installs a
/// bundle's NetworkPolicy only from v0.32 (OpenShift 4.20.0, 4.19.10, 4.18.23) and
/// refuses the whole InstallPlan before, on clusters the bundle says it supports
/// (4.18 to 4.20); OLM users apply `config/manager/networkpolicy.yaml` themselves.
pub(super) fn bundle_objects() -> Result<Vec<BundleObject>, OlmError> {
    [
        (SERVICE_FILE, sources::SERVICE),
        (PDB_FILE, sources::POD_DISRUPTION_BUDGET),
        (METRICS_READER_FILE, sources::METRICS_READER_ROLE),
    ]
    .into_iter()
    .map(|(file, text)| {
        let mut object = parse(file, text)?;
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("namespace");
        }
        if object["metadata"]["name"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            return Err(missing(file, "has no metadata.name"));
        }
        Ok(BundleObject { file, object })
    })
    .collect()
}

/// The sample jobs, as `alm-examples` (a JSON array in a string).
fn alm_examples() -> Result<String, OlmError> {
    let jobs: Vec<Value> = parse_all(SAMPLES_FILE, sources::SAMPLE_JOBS)?
        .into_iter()
        .filter(|d| d["kind"] == "NotebookValidationJob")
        .collect();
    if jobs.is_empty() {
        return Err(missing(
            SAMPLES_FILE,
            "holds no NotebookValidationJob for alm-examples",
        ));
    }
    Ok(serde_json::to_string_pretty(&jobs).unwrap_or_default())
}

/// The operator's image, checked to be this release's.
fn image(deployment: &Value) -> Result<String, OlmError> {
    let image = field(
        DEPLOYMENT_FILE,
        deployment,
        "/spec/template/spec/containers/0/image",
    )?
    .as_str()
    .unwrap_or_default()
    .to_owned();
    if !image.ends_with(&format!(":{VERSION}")) {
        return Err(missing(
            DEPLOYMENT_FILE,
            format!(
                "runs {image:?}, not the image of this release (tag {VERSION}): update the tag"
            ),
        ));
    }
    Ok(image)
}

/// The ClusterServiceVersion of this release.
pub(super) fn cluster_service_version() -> Result<Value, OlmError> {
    let deployment = parse(DEPLOYMENT_FILE, sources::DEPLOYMENT)?;
    let cluster_role = parse(CLUSTER_ROLE_FILE, sources::CLUSTER_ROLE)?;
    let leader_role = parse(LEADER_ROLE_FILE, sources::LEADER_ELECTION_ROLE)?;
    let service_account = parse(SERVICE_ACCOUNT_FILE, sources::SERVICE_ACCOUNT)?;
    let account = field(SERVICE_ACCOUNT_FILE, &service_account, "/metadata/name")?.clone();
    let runs_as = field(
        DEPLOYMENT_FILE,
        &deployment,
        "/spec/template/spec/serviceAccountName",
    )?;
    if *runs_as != account {
        return Err(missing(
            DEPLOYMENT_FILE,
            format!("runs as {runs_as}, but the ServiceAccount is {account}"),
        ));
    }
    let image = image(&deployment)?;
    let release = current()?;
    let crd = nbv_core::api::crd();
    let crd_name = crd.metadata.name.clone().unwrap_or_default();

    let mut spec = json!({
        "displayName": "nbv: notebook validation for GitOps",
        "description": sources::DESCRIPTION,
        "version": VERSION,
        "minKubeVersion": MIN_KUBE_VERSION,
        "maturity": CHANNEL,
        "provider": { "name": env!("CARGO_PKG_AUTHORS"), "url": REPOSITORY },
        "links": [
            { "name": "Source", "url": REPOSITORY },
            { "name": "Documentation", "url": format!("{REPOSITORY}/tree/main/docs") },
            { "name": "Installation", "url": format!("{REPOSITORY}/blob/main/docs/install.md") },
        ],
        "keywords": ["jupyter", "notebook", "mlops", "argo cd", "gitops", "validation"],
        "icon": icon(),
        "installModes": [
            { "type": "OwnNamespace", "supported": false },
            { "type": "SingleNamespace", "supported": false },
            { "type": "MultiNamespace", "supported": false },
            { "type": "AllNamespaces", "supported": true },
        ],
        "customresourcedefinitions": {
            "owned": [{
                "name": crd_name,
                "version": "v1alpha1",
                "kind": "NotebookValidationJob",
                "displayName": "Notebook Validation Job",
                "description": "Runs a Jupyter notebook from Git and validates its outcome; \
                    nbv turns the outcome into Argo CD health, sync-wave gates, \
                    post-success triggers, Application status and notifications.",
                "specDescriptors": [
                    { "path": "notebook.path", "displayName": "Notebook",
                      "description": "Path of the notebook in its Git repository." },
                    { "path": "timeout", "displayName": "Timeout",
                      "description": "Maximum duration of a run, e.g. 30m." },
                ],
                "statusDescriptors": [
                    { "path": "phase", "displayName": "Phase",
                      "description": "Initializing, Building, BuildComplete, ValidationRunning, Succeeded or Failed.",
                      "x-descriptors": ["urn:alm:descriptor:io.kubernetes.phase"] },
                    { "path": "conditions", "displayName": "Conditions",
                      "description": "Ready, AnnotationsValid, EffectsApplied and Retrying.",
                      "x-descriptors": ["urn:alm:descriptor:io.kubernetes.conditions"] },
                ],
            }],
        },
        "install": {
            "strategy": "deployment",
            "spec": {
                "deployments": [{
                    "name": field(DEPLOYMENT_FILE, &deployment, "/metadata/name")?,
                    "label": field(DEPLOYMENT_FILE, &deployment, "/metadata/labels")?,
                    "spec": field(DEPLOYMENT_FILE, &deployment, "/spec")?,
                }],
                "clusterPermissions": [{
                    "serviceAccountName": account,
                    "rules": field(CLUSTER_ROLE_FILE, &cluster_role, "/rules")?,
                }],
                "permissions": [{
                    "serviceAccountName": account,
                    "rules": field(LEADER_ROLE_FILE, &leader_role, "/rules")?,
                }],
            },
        },
    });
    if let Some(previous) = &release.replaces {
        spec["replaces"] = json!(previous);
    }
    if let Some(range) = &release.skip_range {
        spec["skipRange"] = json!(range);
    }
    Ok(json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": release.name,
            "annotations": {
                "alm-examples": alm_examples()?,
                "capabilities": "Basic Install",
                "categories": "AI/Machine Learning, Developer Tools",
                "containerImage": image,
                "description": "GitOps coordination for NotebookValidationJobs with Argo CD.",
                "repository": REPOSITORY,
                "support": env!("CARGO_PKG_AUTHORS"),
                "operatorframework.io/suggested-namespace": "nbv-system",
            },
            "labels": {
                format!("operatorframework.io/arch.amd64"): "supported",
                format!("operatorframework.io/os.linux"): "supported",
            },
        },
        "spec": spec,
    }))
}
