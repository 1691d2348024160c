//! What a user installs before nbv runs: nbv's CRD and role (`config/`), Argo CD's CRDs,
//! KServe's InferenceService CRD, the build systems' CRDs (Tekton's and Shipwright's
//! own, so that nbv's build objects pass their schemas; a stand-in of OpenShift's) and
//! the Shipwright build strategies nbv's builds name; installed once per test process.
//!
//! OpenShift serves `build.openshift.io` from its own API server, not as CRDs; the
//! suite installs a stand-in of its BuildConfig and Build as CRDs with the fields nbv
//! writes typed (a field OpenShift does not know is pruned, a required one refused),
//! and without a status subresource, as OpenShift has none. A test that needs a cluster
//! without OpenShift's builds runs nbv behind a proxy that does not serve the group
//! (`support::proxy::Fault::Unserved`).

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use super::objects::{apply, repository, yaml_documents};

/// KServe's InferenceService, as far as nbv needs it: its status is KServe's own.
fn inference_service_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "inferenceservices.serving.kserve.io"},
        "spec": {
            "group": "serving.kserve.io",
            "scope": "Namespaced",
            "names": {"kind": "InferenceService", "plural": "inferenceservices",
                      "singular": "inferenceservice", "listKind": "InferenceServiceList",
                      "shortNames": ["isvc"]},
            "versions": [{
                "name": "v1beta1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object",
                                               "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    })
}

/// Tekton's and Shipwright's published CRDs give `name` fields a default of `""` (from
/// newer Kubernetes types), which kube-apiserver v1.20, the suite's server, refuses
/// ("Invalid value: null: must be of type string"). Removing exactly those empty-string
/// defaults makes them install; nothing else of their schemas changes.
fn without_empty_defaults(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.get("default") == Some(&Value::String(String::new())) {
                    map.remove("default");
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// OpenShift's BuildConfig and Build (`build.openshift.io/v1`), as CRDs: the parts of
/// their spec nbv writes, typed as OpenShift's API types them.
fn openshift_build_crds() -> Vec<Value> {
    let reference = json!({"type": "object", "required": ["name"],
                           "properties": {"kind": {"type": "string"},
                                          "name": {"type": "string"},
                                          "namespace": {"type": "string"}}});
    let secret = json!({"type": "object", "required": ["name"],
                        "properties": {"name": {"type": "string"}}});
    let common = json!({
        "serviceAccount": {"type": "string"},
        "completionDeadlineSeconds": {"type": "integer", "format": "int64"},
        "source": {"type": "object", "properties": {
            "type": {"type": "string", "enum": ["Git", "Dockerfile", "Binary", "Image", "None"]},
            "git": {"type": "object", "required": ["uri"], "properties": {
                "uri": {"type": "string"}, "ref": {"type": "string"}}},
            "contextDir": {"type": "string"},
            "sourceSecret": secret}},
        "strategy": {"type": "object", "required": ["type"], "properties": {
            "type": {"type": "string",
                     "enum": ["Source", "Docker", "Custom", "JenkinsPipeline"]},
            "sourceStrategy": {"type": "object", "required": ["from"], "properties": {
                "from": reference, "pullSecret": secret}},
            "dockerStrategy": {"type": "object", "properties": {
                "dockerfilePath": {"type": "string"}, "from": reference,
                "pullSecret": secret}}}},
        "output": {"type": "object", "properties": {"to": reference, "pushSecret": secret}},
    });
    let mut config = common.clone();
    config["runPolicy"] =
        json!({"type": "string", "enum": ["Serial", "Parallel", "SerialLatestOnly"]});
    config["triggers"] = json!({"type": "array", "items": {"type": "object",
                                 "x-kubernetes-preserve-unknown-fields": true}});
    let mut build = common;
    build["triggeredBy"] = json!({"type": "array", "items": {"type": "object",
                                  "properties": {"message": {"type": "string"}}}});
    let crd = |kind: &str, plural: &str, spec: Value| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.build.openshift.io")},
            "spec": {
                "group": "build.openshift.io",
                "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                          "listKind": format!("{kind}List")},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": spec},
                        "status": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}}
                }]
            }
        })
    };
    vec![
        crd("BuildConfig", "buildconfigs", config),
        crd("Build", "builds", build),
    ]
}

/// OpenShift's ImageStream as a CRD stand-in: `image.openshift.io/v1`, whose
/// `status.tags` the internal registry writes on each push (`builds/registry.rs`
/// plays it).
fn image_stream_crd() -> Value {
    let string = json!({"type": "string"});
    let item = json!({"type": "object", "properties": {
        "created": string, "dockerImageReference": string, "image": string,
        "generation": {"type": "integer"}}});
    let tag = json!({"type": "object", "properties": {
        "tag": string, "items": {"type": "array", "items": item}}});
    let status = json!({"type": "object", "properties": {
        "dockerImageRepository": string, "tags": {"type": "array", "items": tag}}});
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": status}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "imagestreams.image.openshift.io"},
        "spec": {
            "group": "image.openshift.io",
            "scope": "Namespaced",
            "names": {"kind": "ImageStream", "plural": "imagestreams",
                      "singular": "imagestream", "listKind": "ImageStreamList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": schema}}]
        }
    })
}

static INSTALLED: OnceCell<()> = OnceCell::const_new();

/// Installs everything once; later calls return at once.
pub async fn install(client: &kube::Client) {
    INSTALLED
        .get_or_init(|| async { install_everything(client).await })
        .await;
}

async fn install_everything(client: &kube::Client) {
    let root = repository();
    let mut crds: Vec<Value> = yaml_documents(&root.join("config/crd/notebookvalidationjobs.yaml"));
    for file in ["application-crd.yaml", "appproject-crd.yaml"] {
        crds.extend(yaml_documents(
            &root.join("../shared/reference/argocd").join(file),
        ));
    }
    crds.push(inference_service_crd());
    crds.extend(openshift_build_crds());
    crds.push(image_stream_crd());
    let reference = root.join("../shared/reference");
    for file in [
        "tekton/300-pipeline.yaml",
        "tekton/300-pipelinerun.yaml",
        "tekton/300-task.yaml",
        "tekton/300-taskrun.yaml",
        "shipwright/shipwright.io_builds.yaml",
        "shipwright/shipwright.io_buildruns.yaml",
        "shipwright/shipwright.io_buildstrategies.yaml",
        "shipwright/shipwright.io_clusterbuildstrategies.yaml",
        // The Prometheus Operator's, which the chart's monitoring objects need.
        "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml",
        "prometheus-operator/monitoring.coreos.com_prometheusrules.yaml",
    ] {
        crds.extend(
            yaml_documents(&reference.join(file))
                .into_iter()
                .map(without_empty_defaults),
        );
    }
    for crd in &crds {
        apply(client, crd, None).await;
    }
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in &crds {
        let name = crd["metadata"]["name"].as_str().expect("a CRD name");
        established(&api, name).await;
    }

    // Shipwright's sample strategy that nbv's s2i builds name where
    // build.openshift.io is not served.
    let s2i = reference.join("shipwright/samples/buildstrategy_source-to-image_cr.yaml");
    for doc in yaml_documents(&s2i) {
        apply(client, &doc, None).await;
    }

    for doc in yaml_documents(&root.join("config/manager/namespace.yaml")) {
        apply(client, &doc, None).await;
    }
    // Argo CD's namespace first: the Role for argocd-cm and AppProjects lives in it.
    for ns in ["argocd", "ml"] {
        ensure_namespace(client, ns, json!({})).await;
    }
    for file in [
        "service_account.yaml",
        "role.yaml",
        "role_binding.yaml",
        "leader_election_role.yaml",
        "leader_election_role_binding.yaml",
        "argocd_role.yaml",
    ] {
        for doc in yaml_documents(&root.join("config/rbac").join(file)) {
            apply(client, &doc, None).await;
        }
    }
}

pub async fn established(api: &Api<CustomResourceDefinition>, name: &str) {
    for _ in 0..120 {
        let crd = api.get(name).await.expect("the CRD just applied");
        let ready = crd
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if ready {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the CRD {name} was not established");
}

/// Creates (or updates) a namespace with `annotations`. Namespaces are never deleted:
/// without a controller-manager they never finish terminating.
pub async fn ensure_namespace(client: &kube::Client, name: &str, annotations: Value) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "annotations": annotations}});
    apply(client, &ns, None).await;
}
