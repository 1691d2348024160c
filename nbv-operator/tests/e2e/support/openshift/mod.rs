//! The OpenShift profile: what a Pod meets on OpenShift, on the plain API server.
//!
//! - SCC admission of `restricted-v2` ([`scc`]) as a mutating and a validating
//!   admission webhook on Pods, in the namespaces labelled [`PROFILE`] (which carry
//!   OpenShift's `openshift.io/sa.scc.*` annotations, [`namespace`]);
//! - a policy engine's denial ([`policy`], Kyverno's `disallow-latest-tag`) in the
//!   namespaces labelled [`POLICY`];
//! - a service mesh's sidecar injection ([`mesh`], Istio's `istio-init`) in the
//!   namespaces labelled [`mesh::LABEL`]; the mutating webhooks run in the order of
//!   their configurations' names, SCC's first, so SCC's validating webhook sees the
//!   injected container, as OpenShift's SCC admission validates after the webhooks;
//! - the API group `security.openshift.io` (the SecurityContextConstraints CRD), by
//!   which nbv finds that it runs on OpenShift. A scenario adds it when it enters the
//!   profile and removes it when it leaves (drops the [`Profile`]), so that the other
//!   scenarios see a plain cluster.
//!
//! The webhooks serve on loopback for the whole test process ([`server`]); their
//! configurations are written once per process, pointing at it.

pub mod mesh;
pub mod policy;
pub mod review;
pub mod scc;
pub mod server;

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use super::cluster::{Cluster, client_for};
use super::install::established;
use super::objects::apply;
use review::Hook;

/// The label of the namespaces where the SCC webhooks apply.
pub const PROFILE: (&str, &str) = ("e2e.mlops.dev/profile", "openshift");

/// The label of the namespaces where the policy engine's webhook applies.
pub const POLICY: (&str, &str) = ("e2e.mlops.dev/policy", policy::POLICY);

/// The SCC webhooks' name (in the API server's message of a refusal).
pub const SCC_WEBHOOK: &str = "scc.e2e.mlops.dev";

const CRD: &str = "securitycontextconstraints.security.openshift.io";

static WEBHOOKS: OnceCell<()> = OnceCell::const_new();

/// A scenario inside the profile: the webhooks serve, and the SCC API group is served
/// until it is dropped (also when the scenario fails).
pub struct Profile {
    admin: PathBuf,
}

impl Profile {
    /// Starts the webhooks (once per process) and serves `security.openshift.io`.
    pub async fn enter(cluster: &Cluster, client: &kube::Client) -> Profile {
        WEBHOOKS.get_or_init(|| register(cluster, client)).await;
        apply(client, &scc_crd(), None).await;
        let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
        established(&crds, CRD).await;
        Profile {
            admin: cluster.admin_kubeconfig().to_owned(),
        }
    }
}

impl Drop for Profile {
    /// Removes `security.openshift.io` again and waits until it is gone, on a runtime
    /// of its own: the test's may be unwinding.
    fn drop(&mut self) {
        let admin = self.admin.clone();
        let removed = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                let crds: Api<CustomResourceDefinition> = Api::all(client_for(&admin).await);
                let _ = crds.delete(CRD, &DeleteParams::default()).await;
                for _ in 0..120 {
                    if crds.get_opt(CRD).await.ok().flatten().is_none() {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                false
            })
        })
        .join();
        if !matches!(removed, Ok(true)) && !std::thread::panicking() {
            panic!("the CRD {CRD} was not deleted");
        }
    }
}

/// Creates (or updates) namespace `name` as OpenShift's namespace controller leaves
/// it: a UID block of 10,000 from `uid_start`, the same supplemental groups, an MCS
/// level; labelled for the profile and the `policies` given.
pub async fn namespace(
    client: &kube::Client,
    name: &str,
    uid_start: i64,
    policies: &[(&str, &str)],
) {
    let block = format!("{uid_start}/10000");
    let mut labels = serde_json::Map::new();
    for (key, value) in std::iter::once(&PROFILE).chain(policies) {
        labels.insert((*key).to_owned(), Value::from(*value));
    }
    let ns = json!({"apiVersion": "v1", "kind": "Namespace",
    "metadata": {"name": name, "labels": labels, "annotations": {
        scc::UID_RANGE: block,
        scc::SUPPLEMENTAL_GROUPS: block,
        scc::MCS: "s0:c26,c15",
    }}});
    apply(client, &ns, None).await;
}

/// Starts the server and writes the webhooks' configurations.
async fn register(cluster: &Cluster, client: &kube::Client) {
    let server = server::start(cluster.admin_kubeconfig());
    let ca = base64::engine::general_purpose::STANDARD.encode(&server.ca);
    let webhook = |name: &str, hook: Hook, (key, value): (&str, &str)| {
        json!({
            "name": name,
            "clientConfig": {"url": format!("{}{}", server.url, hook.path()), "caBundle": ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods"], "scope": "Namespaced"}],
            "namespaceSelector": {"matchLabels": {key: value}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "failurePolicy": "Fail",
            "timeoutSeconds": 10,
        })
    };
    let configurations = [
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "MutatingWebhookConfiguration",
               "metadata": {"name": "nbv-e2e-openshift-scc"},
               "webhooks": [webhook(SCC_WEBHOOK, Hook::SccMutate, PROFILE)]}),
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": "nbv-e2e-openshift-scc"},
               "webhooks": [webhook(SCC_WEBHOOK, Hook::SccValidate, PROFILE)]}),
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "MutatingWebhookConfiguration",
               "metadata": {"name": "nbv-e2e-sidecar-injector"},
               "webhooks": [webhook(mesh::WEBHOOK, Hook::SidecarInjector, mesh::LABEL)]}),
        json!({"apiVersion": "admissionregistration.k8s.io/v1",
               "kind": "ValidatingWebhookConfiguration",
               "metadata": {"name": "nbv-e2e-kyverno"},
               "webhooks": [webhook(policy::WEBHOOK, Hook::DisallowLatestTag, POLICY)]}),
    ];
    for configuration in &configurations {
        apply(client, configuration, None).await;
    }
    // The API server reads webhook configurations from its cache: wait until it calls
    // every hook, so that no scenario's first Pod slips past them.
    let (policed, meshed) = ("e2e-openshift-probe", "e2e-openshift-probe-mesh");
    namespace(client, policed, 1_000_000_000, &[POLICY]).await;
    namespace(client, meshed, 1_000_000_000, &[mesh::LABEL]).await;
    for (ns, image, uid, answer) in [
        (
            policed,
            "registry.k8s.io/pause:3.10",
            json!(0),
            "security context constraint",
        ),
        (
            policed,
            "registry.k8s.io/pause:latest",
            Value::Null,
            policy::WEBHOOK,
        ),
        (
            meshed,
            "registry.k8s.io/pause:3.10",
            Value::Null,
            "NET_ADMIN",
        ),
    ] {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
                         "spec": {"containers": [{"name": "main", "image": image,
                                                  "securityContext": {"runAsUser": uid}}]}});
        refused(client, ns, &pod, answer).await;
    }
}

/// Waits until a dry run of `pod` in `namespace` is refused with `answer`.
async fn refused(client: &kube::Client, namespace: &str, pod: &Value, answer: &str) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod: Pod = serde_json::from_value(pod.clone()).expect("a Pod");
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let mut last = String::new();
    for _ in 0..120 {
        match pods.create(&params, &pod).await {
            Err(kube::Error::Api(e)) if e.message.contains(answer) => return,
            other => last = format!("{other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("the webhooks do not answer ({answer}); last: {last}");
}

/// The SecurityContextConstraints CRD, as far as discovery goes: OpenShift serves the
/// kind from its own API server; here a CRD makes the group appear.
fn scc_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {
            "group": "security.openshift.io",
            "scope": "Cluster",
            "names": {"kind": "SecurityContextConstraints",
                      "plural": "securitycontextconstraints",
                      "singular": "securitycontextconstraints",
                      "listKind": "SecurityContextConstraintsList",
                      "shortNames": ["scc"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                                               "x-kubernetes-preserve-unknown-fields": true}}
            }]
        }
    })
}
