//! The RBAC manifests in `config/rbac/` against what the code really calls.
//!
//! The operator runs (leader election, controller, publisher, every effect) against the
//! in-memory API server of `nbv-testkit`, in a scenario that exercises every feature,
//! and its request log is checked against the rules in both directions:
//!
//! - every request is allowed by a rule (the operator cannot be refused in production
//!   for something the tests did);
//! - every rule is used by some request, or listed in [`UNUSED_ON_PURPOSE`] with the
//!   reason (the role stays minimal: a permission that no code path needs fails here).
//!
//! `nbv wait` is checked the same way against `config/rbac/wait-hook-role.yaml`, with
//! no exception.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use futures::FutureExt;
use futures::future::Shared;
use nbv_operator::commands::wait::{WaitArgs, wait};
use nbv_operator::config::OperatorConfig;
use nbv_operator::controller::{self, Runtime};
use nbv_operator::leader::{LeaderConfig, run_while_leader};
use nbv_operator::metrics::Metrics;
use nbv_testkit::cluster::{ApiResourceSpec, FakeCluster, RequestRecord, Verb};
use serde::Deserialize;
use serde_json::{Value, json};

/// The operator's namespace, where its Lease lives.
const OPERATOR_NAMESPACE: &str = "nbv-system";
/// The namespace of the scenario's jobs.
const ML: &str = "self-healing-platform";

/// Rules that the scenario cannot use, with the reason they are kept anyway:
/// `(file, apiGroup, resource, verb, reason)`. Add an entry only with a reason a reviewer
/// can check, for example a check of a real API server that the in-memory one does not
/// make; the test fails when an entry is used after all (it is then not needed here).
const UNUSED_ON_PURPOSE: &[(&str, &str, &str, &str, &str)] = &[(
    "role.yaml",
    "mlops.mlops.dev",
    "notebookvalidationjobs/finalizers",
    "update",
    "the validation Pod names its job as owner with blockOwnerDeletion: true, which the \
     OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift) allows only \
     to a client that may update the owner's finalizers; the in-memory API server runs no \
     admission plugins, so no request shows it",
)];

// ---------------------------------------------------------------------------------------
// Reading the manifests
// ---------------------------------------------------------------------------------------

fn config_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("config")
        .join(relative)
}

/// One document of a manifest file, as far as RBAC goes.
#[derive(Debug, Deserialize)]
struct Document {
    kind: String,
    metadata: Metadata,
    #[serde(default)]
    rules: Vec<PolicyRule>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    name: String,
    namespace: Option<String>,
}

/// An RBAC rule. Fields nbv's manifests never use (`nonResourceURLs`) are rejected,
/// so that a rule cannot mean more than this test checks.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyRule {
    api_groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    /// When given, the rule allows requests for these objects only (so never a list
    /// or a watch, which name no object).
    #[serde(default)]
    resource_names: Vec<String>,
}

/// Where a rule applies.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    /// A ClusterRole bound with a ClusterRoleBinding: every namespace and cluster-scoped
    /// resources.
    Cluster,
    /// A Role: one namespace.
    Namespace(String),
}

/// One (verb, group, resource) a rule grants, with where it came from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Permission {
    file: &'static str,
    role: String,
    scope: Scope,
    group: String,
    /// `plural` or `plural/subresource`.
    resource: String,
    verb: String,
    /// The objects it is limited to (`resourceNames`); empty: every object.
    names: Vec<String>,
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = match &self.scope {
            Scope::Cluster => "cluster-wide".to_owned(),
            Scope::Namespace(ns) => format!("in namespace {ns}"),
        };
        write!(
            f,
            "{} {} (apiGroup {:?}) {scope}, from {} in config/rbac/{}",
            self.verb, self.resource, self.group, self.role, self.file
        )
    }
}

/// Every permission the Roles and ClusterRoles of `file` grant. Wildcards are refused:
/// a `*` would make this test meaningless.
fn permissions(file: &'static str) -> Vec<Permission> {
    let path = config_path(&format!("rbac/{file}"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let document = Document::deserialize(document)
            .unwrap_or_else(|e| panic!("config/rbac/{file} is not a valid manifest: {e}"));
        let scope = match document.kind.as_str() {
            "ClusterRole" => Scope::Cluster,
            "Role" => Scope::Namespace(document.metadata.namespace.clone().unwrap_or_else(|| {
                panic!(
                    "Role {} in config/rbac/{file} has no namespace",
                    document.metadata.name
                )
            })),
            _ => continue,
        };
        for rule in &document.rules {
            for field in [&rule.api_groups, &rule.resources, &rule.verbs] {
                assert!(
                    !field.iter().any(|v| v.contains('*')),
                    "{} in config/rbac/{file} uses a wildcard; name each group, resource and verb",
                    document.metadata.name
                );
            }
            for group in &rule.api_groups {
                for resource in &rule.resources {
                    for verb in &rule.verbs {
                        out.push(Permission {
                            file,
                            role: document.metadata.name.clone(),
                            scope: scope.clone(),
                            group: group.clone(),
                            resource: resource.clone(),
                            verb: verb.clone(),
                            names: rule.resource_names.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

/// A request as RBAC sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Access {
    verb: &'static str,
    group: String,
    resource: String,
    namespace: Option<String>,
    /// The object the request names, if any.
    name: Option<String>,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} (apiGroup {:?})",
            self.verb, self.resource, self.group
        )?;
        match &self.namespace {
            Some(ns) => write!(f, " in namespace {ns}"),
            None => write!(f, " (all namespaces or cluster-scoped)"),
        }
    }
}

fn rbac_verb(verb: Verb) -> &'static str {
    match verb {
        Verb::Get => "get",
        Verb::List => "list",
        Verb::Watch => "watch",
        Verb::Create => "create",
        Verb::Update => "update",
        Verb::Patch { .. } => "patch",
        Verb::Delete => "delete",
        Verb::DeleteCollection => "deletecollection",
    }
}

/// The resource requests of the log; discovery requests (`/api`, `/apis/...`,
/// `/version`) are left out: every authenticated user may make them (the built-in
/// ClusterRole `system:discovery`).
fn accesses(log: &[RequestRecord]) -> BTreeSet<Access> {
    log.iter()
        .filter(|r| !r.resource.is_empty())
        .map(|r| Access {
            verb: rbac_verb(r.verb),
            group: r.group.clone(),
            resource: match &r.subresource {
                Some(sub) => format!("{}/{sub}", r.resource),
                None => r.resource.clone(),
            },
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        })
        .collect()
}

fn allows(permission: &Permission, access: &Access) -> bool {
    let in_scope = match (&permission.scope, &access.namespace) {
        (Scope::Cluster, _) => true,
        (Scope::Namespace(ns), Some(requested)) => ns == requested,
        (Scope::Namespace(_), None) => false,
    };
    let named = permission.names.is_empty()
        || access
            .name
            .as_ref()
            .is_some_and(|name| permission.names.contains(name));
    in_scope
        && named
        && permission.verb == access.verb
        && permission.group == access.group
        && permission.resource == access.resource
}

/// Checks both directions and returns a readable list of every violation.
fn violations(
    granted: &[Permission],
    requested: &BTreeSet<Access>,
    unused_on_purpose: impl Fn(&Permission) -> bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    for access in requested {
        if !granted.iter().any(|p| allows(p, access)) {
            problems.push(format!(
                "the operator makes the request `{access}`, which no rule allows: add a rule \
                 (and say in docs/rbac.md which code path needs it)"
            ));
        }
    }
    for permission in granted {
        let used = requested.iter().any(|a| allows(permission, a));
        if !used && !unused_on_purpose(permission) {
            problems.push(format!(
                "the rule `{permission}` is used by no request of the scenario: remove it, \
                 or exercise the code path that needs it in this test"
            ));
        }
    }
    problems
}

// ---------------------------------------------------------------------------------------
// The scenario
// ---------------------------------------------------------------------------------------

type Shutdown = Shared<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>;

fn shutdown_pair() -> (tokio::sync::oneshot::Sender<()>, Shutdown) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let fut: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
        let _ = rx.await;
    });
    (tx, fut.shared())
}

fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn apply(cluster: &FakeCluster, object: Value) -> Value {
    cluster
        .apply_object(object)
        .unwrap_or_else(|e| panic!("scenario setup failed: {e}"))
}

fn namespace(cluster: &FakeCluster, name: &str, annotations: Value) {
    apply(
        cluster,
        json!({"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": name, "annotations": annotations}}),
    );
}

fn pod(cluster: &FakeCluster, ns: &str, name: &str, labels: Value, owners: Value) {
    apply(
        cluster,
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": ns, "labels": labels,
                            "ownerReferences": owners},
               "spec": {"containers": [{"name": "main", "image": "model-server:1"}]}}),
    );
}

fn workload(cluster: &FakeCluster, kind: &str, ns: &str, name: &str) {
    apply(
        cluster,
        json!({"apiVersion": "apps/v1", "kind": kind,
               "metadata": {"name": name, "namespace": ns},
               "spec": {"selector": {"matchLabels": {"app": name}},
                        "template": {"metadata": {"labels": {"app": name}},
                                     "spec": {"containers": [{"name": "main", "image": "img"}]}}}}),
    );
}

fn application(cluster: &FakeCluster, name: &str, destination: &str) {
    application_in(cluster, "argocd", name, destination);
}

fn application_in(cluster: &FakeCluster, namespace: &str, name: &str, destination: &str) {
    apply(
        cluster,
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"project": "default",
                        "source": {"repoURL": "https://github.com/example/ml-pipeline",
                                   "targetRevision": "main", "path": "manifests"},
                        "destination": {"server": "https://kubernetes.default.svc",
                                        "namespace": destination}},
               "status": {"operationState": {"phase": "Succeeded"}}}),
    );
}

fn inference_service(cluster: &FakeCluster, ns: &str, name: &str) {
    apply(
        cluster,
        json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
               "metadata": {"name": name, "namespace": ns},
               "spec": {"predictor": {"sklearn": {"storageUri": "pvc://models/x"}}}}),
    );
    pod(
        cluster,
        ns,
        &format!("{name}-predictor-0"),
        json!({"serving.kserve.io/inferenceservice": name}),
        json!([]),
    );
}

/// Every kind of target the triggers reach, in the job's namespace and beyond.
fn targets(cluster: &FakeCluster) {
    cluster.register(ApiResourceSpec::namespaced(
        "apps",
        "v1",
        "ReplicaSet",
        "replicasets",
    ));
    cluster.register(ApiResourceSpec::namespaced(
        "argoproj.io",
        "v1alpha1",
        "Rollout",
        "rollouts",
    ));

    namespace(cluster, OPERATOR_NAMESPACE, json!({}));
    namespace(cluster, "argocd", json!({}));
    namespace(cluster, ML, json!({}));
    // A namespace that accepts triggers from the jobs of ML, and one that does not.
    namespace(
        cluster,
        "shared-serving",
        json!({"mlops.dev/accept-triggers-from": ML}),
    );
    namespace(cluster, "locked", json!({}));

    application(cluster, "self-healing-platform", ML);
    application(cluster, "model-serving", ML);
    // An Application outside the watched Application namespaces: read with a GET.
    namespace(cluster, "team-apps", json!({}));
    application_in(cluster, "team-apps", "team-serving", ML);
    // Argo CD's settings and the Applications' project, with a sync window that does
    // not block now.
    apply(
        cluster,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "argocd-cm", "namespace": "argocd"},
               // The jobs below are tracked by label: only argocd-cm says so.
               "data": {"application.resourceTrackingMethod": "label"}}),
    );
    apply(
        cluster,
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
               "metadata": {"name": "default", "namespace": "argocd"},
               "spec": {"syncWindows": [{"kind": "deny", "schedule": "0 0 1 1 *",
                                         "duration": "1m", "applications": ["*"]}]}}),
    );

    inference_service(cluster, ML, "predictive-analytics");
    inference_service(cluster, ML, "anomaly-detector");
    inference_service(cluster, "shared-serving", "shared-model");
    workload(cluster, "Deployment", ML, "model-gateway");
    workload(cluster, "StatefulSet", ML, "feature-store");
    workload(cluster, "DaemonSet", ML, "node-cache");
    workload(cluster, "Deployment", "locked", "web");
    apply(
        cluster,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "model-config", "namespace": ML},
               "data": {"model": "v1"}}),
    );

    // An Argo Rollout owns its pods through a ReplicaSet.
    let rollout = apply(
        cluster,
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
               "metadata": {"name": "canary-model", "namespace": ML},
               "spec": {"selector": {"matchLabels": {"app": "canary-model"}}}}),
    );
    let replica_set = apply(
        cluster,
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": "canary-model-7d9f", "namespace": ML,
                            "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1",
                                                 "kind": "Rollout", "name": "canary-model",
                                                 "uid": rollout["metadata"]["uid"],
                                                 "controller": true}]},
               "spec": {"selector": {"matchLabels": {"app": "canary-model"}}}}),
    );
    pod(
        cluster,
        ML,
        "canary-model-7d9f-x2x4q",
        json!({"app": "canary-model"}),
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "canary-model-7d9f",
                "uid": replica_set["metadata"]["uid"], "controller": true}]),
    );
}

const TRIGGERS: &str = "\
- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: predictive-analytics, action: restart}
- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: anomaly-detector, action: refresh}
- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: shared-model, namespace: shared-serving, action: restart}
- {apiVersion: apps/v1, kind: Deployment, name: model-gateway, action: restart}
- {apiVersion: apps/v1, kind: StatefulSet, name: feature-store, action: restart}
- {apiVersion: apps/v1, kind: DaemonSet, name: node-cache, action: restart}
- {apiVersion: apps/v1, kind: Deployment, name: web, namespace: locked, action: restart}
- {apiVersion: v1, kind: ConfigMap, name: model-config, action: refresh}
- {apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: canary-model, action: restart}
- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: model-serving, namespace: argocd, action: sync}
- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: self-healing-platform, action: refresh}
- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: team-serving, namespace: team-apps, action: refresh}
";

fn job(cluster: &FakeCluster, name: &str, annotations: Value, status: Value) {
    apply(
        cluster,
        json!({"apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
               "metadata": {"name": name, "namespace": ML, "annotations": annotations,
                            "labels": {"app.kubernetes.io/instance": "self-healing-platform"}},
               "spec": {"notebook": {"git": {"url": "https://github.com/example/models",
                                             "ref": "main"},
                                     "path": "notebooks/train.ipynb"},
                        "podConfig": {"containerImage": "quay.io/ml/sklearn-notebook:1"}},
               "status": status}),
    );
}

/// Runs the operator as `nbv run` does (leader election around the controller) until
/// `scenario` returns, and returns the request log.
async fn run_operator<S, F>(
    cluster: &FakeCluster,
    gitops_only: bool,
    scenario: S,
) -> Vec<RequestRecord>
where
    S: FnOnce(FakeCluster) -> F,
    F: Future<Output = ()>,
{
    let (stop, shutdown) = shutdown_pair();
    let client = cluster.client();
    let clock = cluster.clock();
    let config = OperatorConfig {
        gitops_only,
        ..OperatorConfig::default()
    };
    let work = {
        let (client, shutdown) = (client.clone(), shutdown.clone());
        move || {
            let runtime = Runtime {
                config: config.clone(),
                metrics: Arc::new(Metrics::new()),
                clock: Arc::new(move || clock.now()),
                instance: "nbv-operator-0".to_owned(),
                tamper: None,
            };
            controller::run(client.clone(), runtime, shutdown.clone())
        }
    };
    let lease = LeaderConfig::new(OPERATOR_NAMESPACE, "nbv-operator-leader", "nbv-operator-0");
    let operator = tokio::spawn(run_while_leader(client, lease, shutdown, work));
    scenario(cluster.clone()).await;
    let _ = stop.send(());
    let ended = tokio::time::timeout(Duration::from_secs(60), operator).await;
    assert!(
        matches!(ended, Ok(Ok(Ok(())))),
        "the operator did not shut down cleanly: {ended:?}"
    );
    cluster.requests()
}

/// The GitOps features, with phases written by another controller (`--gitops-only`):
/// a succeeded job with every kind of trigger, a failed job, a job with an invalid
/// annotation; wave annotations, Events, the Application status.
async fn gitops_scenario(cluster: FakeCluster) {
    targets(&cluster);
    job(
        &cluster,
        "predictive-analytics-kserve-validation",
        json!({"argocd.argoproj.io/sync-wave": "3", "mlops.dev/block-wave": "4",
               "mlops.dev/on-success-trigger": TRIGGERS}),
        json!({"phase": "ValidationRunning", "startTime": rfc3339(cluster.now())}),
    );
    job(
        &cluster,
        "anomaly-training",
        json!({"argocd.argoproj.io/sync-wave": "3"}),
        json!({"phase": "ValidationRunning", "startTime": rfc3339(cluster.now())}),
    );
    job(
        &cluster,
        "misconfigured",
        json!({"mlops.dev/on-success-trigger": "- {kind: Deployment, action: Restart}"}),
        json!({"phase": "ValidationRunning", "startTime": rfc3339(cluster.now())}),
    );
    tokio::time::sleep(Duration::from_secs(600)).await;

    let start = rfc3339(cluster.now() - chrono::Duration::seconds(600));
    let end = rfc3339(cluster.now());
    for (name, phase) in [
        ("predictive-analytics-kserve-validation", "Succeeded"),
        ("anomaly-training", "Failed"),
        ("misconfigured", "Succeeded"),
    ] {
        cluster
            .set_status(
                "notebookvalidationjobs",
                Some(ML),
                name,
                json!({"phase": phase, "startTime": start, "completionTime": end,
                       "message": if phase == "Failed" { "ModuleNotFoundError: No module named 'kserve_wrapper'" } else { "done" },
                       "retryCount": 3}),
            )
            .unwrap_or_else(|e| panic!("cannot set the status of {name}: {e}"));
    }
    // Long enough for the triggers, a debounced Application status publish and a
    // resync.
    tokio::time::sleep(Duration::from_secs(400)).await;
}

/// The default mode: nbv runs the phase machine of a new job itself.
async fn phase_scenario(cluster: FakeCluster) {
    namespace(&cluster, OPERATOR_NAMESPACE, json!({}));
    namespace(&cluster, ML, json!({}));
    job(
        &cluster,
        "fresh",
        json!({"argocd.argoproj.io/sync-wave": "1"}),
        json!(null),
    );
    tokio::time::sleep(Duration::from_secs(120)).await;
}

/// The scenario really did what it is meant to exercise; otherwise the RBAC check
/// would pass vacuously.
fn assert_scenario_happened(cluster: &FakeCluster) {
    let get = |resource: &str, ns: &str, name: &str| {
        cluster
            .get(resource, Some(ns), name)
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("{resource} {ns}/{name} is missing"))
    };
    let job = get(
        "notebookvalidationjobs",
        ML,
        "predictive-analytics-kserve-validation",
    );
    assert_eq!(
        job["metadata"]["annotations"]["mlops.dev/wave-complete"], "3",
        "{job:#}"
    );
    let failed = get("notebookvalidationjobs", ML, "anomaly-training");
    assert_eq!(
        failed["metadata"]["annotations"]["mlops.dev/wave-failed"],
        "3"
    );

    let done: BTreeSet<&str> = job["status"]["effects"]["done"]
        .as_array()
        .map(|d| d.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for key in [
        "restart:serving.kserve.io/InferenceService:self-healing-platform/predictive-analytics",
        "restart:serving.kserve.io/InferenceService:shared-serving/shared-model",
        "restart:apps/Deployment:self-healing-platform/model-gateway",
        "refresh:/ConfigMap:self-healing-platform/model-config",
        "restart:argoproj.io/Rollout:self-healing-platform/canary-model",
        "sync:argoproj.io/Application:argocd/model-serving",
        "refresh:argoproj.io/Application:argocd/self-healing-platform",
        "refresh:argoproj.io/Application:team-apps/team-serving",
        "notify",
        "wave",
    ] {
        assert!(
            done.iter().any(|d| d.ends_with(key)),
            "effect {key} is not done: {:#}",
            job["status"]["effects"]
        );
    }
    let refused = job["status"]["effects"]["failed"].to_string();
    assert!(
        refused.contains("locked/web"),
        "the trigger into `locked` was not refused: {refused}"
    );

    for pod in [
        "predictive-analytics-predictor-0",
        "canary-model-7d9f-x2x4q",
    ] {
        assert!(
            get_opt(cluster, "pods", ML, pod).is_none(),
            "pod {pod} was not restarted"
        );
    }
    let app = get("applications", "argocd", "self-healing-platform");
    assert!(
        app["metadata"]["annotations"]["mlops.dev/notebook-summary"]
            .as_str()
            .is_some_and(|s| s.contains("succeeded")),
        "the Application status was not published: {:#}",
        app["metadata"]
    );
    assert!(get("applications", "argocd", "model-serving")["operation"].is_object());
    let reasons: BTreeSet<String> = cluster
        .objects_of("Event")
        .iter()
        .filter_map(|e| e["reason"].as_str().map(str::to_owned))
        .collect();
    for reason in [
        "ValidationSucceeded",
        "ValidationFailed",
        "TriggerSucceeded",
        "TriggerFailed",
        "InvalidAnnotation",
    ] {
        assert!(
            reasons.contains(reason),
            "no {reason} Event; Events: {reasons:?}"
        );
    }
}

fn get_opt(cluster: &FakeCluster, resource: &str, ns: &str, name: &str) -> Option<Value> {
    cluster.get(resource, Some(ns), name).ok().flatten()
}

/// The operator's rights: the installed roles plus the example for extra trigger
/// targets (the scenario restarts a Rollout and refreshes a ConfigMap, which need it).
fn operator_permissions() -> Vec<Permission> {
    let mut all = permissions("role.yaml");
    all.extend(permissions("leader_election_role.yaml"));
    all.extend(permissions("argocd_role.yaml"));
    all.extend(permissions("extra-trigger-targets.example.yaml"));
    all
}

#[tokio::test(start_paused = true)]
async fn the_operator_roles_allow_exactly_what_the_operator_calls() {
    let gitops = FakeCluster::default();
    let mut log = run_operator(&gitops, true, gitops_scenario).await;
    assert_scenario_happened(&gitops);

    let phases = FakeCluster::default();
    log.extend(run_operator(&phases, false, phase_scenario).await);
    let fresh = get_opt(&phases, "notebookvalidationjobs", ML, "fresh").unwrap_or_default();
    assert!(
        fresh["status"]["phase"].is_string(),
        "the phase machine wrote no status: {fresh:#}"
    );
    // The reason for the finalizers rule in UNUSED_ON_PURPOSE: the validation Pod blocks
    // its owner's deletion.
    let validation_pods = phases.objects_of("Pod");
    assert!(
        validation_pods.iter().any(|pod| {
            pod["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|owner| {
                    owner["kind"] == "NotebookValidationJob" && owner["blockOwnerDeletion"] == true
                })
        }),
        "no validation Pod blocks its job's deletion; remove the finalizers rule: {validation_pods:#?}"
    );

    let requested = accesses(&log);
    for (file, group, resource, verb, _) in UNUSED_ON_PURPOSE {
        let used = requested
            .iter()
            .any(|a| a.verb == *verb && a.group == *group && a.resource == *resource);
        assert!(
            !used,
            "{verb} {resource} in {file} is used after all: remove it from UNUSED_ON_PURPOSE"
        );
    }
    let problems = violations(&operator_permissions(), &requested, |p| {
        UNUSED_ON_PURPOSE
            .iter()
            .any(|(file, group, resource, verb, _reason)| {
                p.file == *file && p.group == *group && p.resource == *resource && p.verb == *verb
            })
    });
    assert!(
        problems.is_empty(),
        "config/rbac does not match what the operator calls:\n- {}\n\nrequests made:\n{}",
        problems.join("\n- "),
        requested
            .iter()
            .map(|a| format!("  {a}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[tokio::test(start_paused = true)]
async fn the_lease_is_only_touched_in_the_operators_namespace() {
    let cluster = FakeCluster::default();
    let log = run_operator(&cluster, true, |cluster| async move {
        namespace(&cluster, OPERATOR_NAMESPACE, json!({}));
        tokio::time::sleep(Duration::from_secs(60)).await;
    })
    .await;
    let leases: Vec<&RequestRecord> = log.iter().filter(|r| r.resource == "leases").collect();
    assert!(!leases.is_empty(), "leader election made no request");
    for request in leases {
        assert_eq!(
            request.namespace.as_deref(),
            Some(OPERATOR_NAMESPACE),
            "{request:?}"
        );
    }
    // And the only rules for Leases are in the namespaced Role.
    assert!(
        permissions("role.yaml")
            .iter()
            .all(|p| p.group != "coordination.k8s.io"),
        "the ClusterRole must not grant Leases: leader election needs them in nbv-system only"
    );
}

#[tokio::test(start_paused = true)]
async fn the_wait_hook_role_allows_exactly_what_nbv_wait_calls() {
    let cluster = FakeCluster::default();
    // As in config/rbac/wait-hook-role.yaml: the jobs (and the Role) in ml-training.
    let ns = "ml-training";
    apply(
        &cluster,
        json!({"apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
               "metadata": {"name": "model-training", "namespace": ns,
                            "annotations": {"argocd.argoproj.io/sync-wave": "3",
                                            "mlops.dev/block-wave": "4"}},
               "spec": {"notebook": {"git": {"url": "https://github.com/example/models", "ref": "main"},
                                     "path": "train.ipynb"},
                        "podConfig": {"containerImage": "img"}},
               "status": {"phase": "ValidationRunning"}}),
    );
    let waiter = {
        let client = cluster.client();
        tokio::spawn(async move {
            let args = WaitArgs {
                namespace: ns.to_owned(),
                wave: 4,
                timeout: Some(Duration::from_secs(3600)),
            };
            let (mut out, mut err) = (Vec::new(), Vec::new());
            wait(client, &args, &mut out, &mut err).await
        })
    };
    tokio::time::sleep(Duration::from_secs(30)).await;
    let mut job =
        get_opt(&cluster, "notebookvalidationjobs", ns, "model-training").unwrap_or_default();
    job["metadata"]["annotations"]["mlops.dev/wave-complete"] = json!("3");
    job["status"] = json!({"phase": "Succeeded"});
    apply(&cluster, job);
    let code = tokio::time::timeout(Duration::from_secs(60), waiter).await;
    assert!(
        matches!(code, Ok(Ok(0))),
        "nbv wait did not open the wave: {code:?}"
    );

    let granted = permissions("wait-hook-role.yaml");
    for p in &granted {
        assert_eq!(p.scope, Scope::Namespace(ns.to_owned()), "{p}");
    }
    let problems = violations(&granted, &accesses(&cluster.requests()), |_| false);
    assert!(
        problems.is_empty(),
        "config/rbac/wait-hook-role.yaml:\n- {}",
        problems.join("\n- ")
    );
}

#[test]
fn every_rule_names_existing_verbs() {
    const VERBS: [&str; 8] = [
        "get",
        "list",
        "watch",
        "create",
        "update",
        "patch",
        "delete",
        "deletecollection",
    ];
    for file in [
        "role.yaml",
        "leader_election_role.yaml",
        "extra-trigger-targets.example.yaml",
        "wait-hook-role.yaml",
    ] {
        let all = permissions(file);
        assert!(!all.is_empty(), "config/rbac/{file} grants nothing");
        for p in all {
            assert!(VERBS.contains(&p.verb.as_str()), "unknown verb in {p}");
        }
    }
}

#[test]
fn the_role_is_bound_to_the_operators_service_account() {
    let mut subjects: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for file in ["role_binding.yaml", "leader_election_role_binding.yaml"] {
        let text =
            std::fs::read_to_string(config_path(&format!("rbac/{file}"))).unwrap_or_default();
        let binding: Value = serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|e| panic!("config/rbac/{file} does not parse: {e}"));
        let role = binding["roleRef"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for subject in binding["subjects"].as_array().into_iter().flatten() {
            subjects.entry(role.clone()).or_default().push((
                subject["name"].as_str().unwrap_or_default().to_owned(),
                subject["namespace"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    let operator = vec![("nbv-operator".to_owned(), OPERATOR_NAMESPACE.to_owned())];
    assert_eq!(subjects.get("nbv-operator"), Some(&operator));
    assert_eq!(
        subjects.get("nbv-operator-leader-election"),
        Some(&operator)
    );
}
