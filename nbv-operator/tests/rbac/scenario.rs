//! The operator and `nbv wait` run against the in-memory API server; every request they
//! make must be allowed by their roles, and nothing more.

use super::*;

// ---------------------------------------------------------------------------------------
// The scenario
// ---------------------------------------------------------------------------------------

type Shutdown = Shared<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>;

pub(super) fn shutdown_pair() -> (tokio::sync::oneshot::Sender<()>, Shutdown) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let fut: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
        let _ = rx.await;
    });
    (tx, fut.shared())
}

pub(super) fn rfc3339(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Secs, true)
}

pub(super) fn apply(cluster: &FakeCluster, object: Value) -> Value {
    cluster
        .apply_object(object)
        .unwrap_or_else(|e| panic!("scenario setup failed: {e}"))
}

pub(super) fn namespace(cluster: &FakeCluster, name: &str, annotations: Value) {
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

pub(super) fn application_in(
    cluster: &FakeCluster,
    namespace: &str,
    name: &str,
    destination: &str,
) {
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

/// A job of the Application `self-healing-platform` (Argo CD's instance label).
fn platform_job(name: &str) -> JobBuilder {
    JobBuilder::new(ML, name)
        .instance("self-healing-platform")
        .image("quay.io/ml/sklearn-notebook:1")
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
    let config = OperatorConfig {
        gitops_only,
        ..OperatorConfig::default()
    };
    run_operator_with(cluster, config, scenario).await
}

/// [`run_operator`] with the configuration `config`.
pub(super) async fn run_operator_with<S, F>(
    cluster: &FakeCluster,
    config: OperatorConfig,
    scenario: S,
) -> Vec<RequestRecord>
where
    S: FnOnce(FakeCluster) -> F,
    F: Future<Output = ()>,
{
    let (stop, shutdown) = shutdown_pair();
    let client = cluster.client();
    let clock = cluster.clock();
    let work = {
        let (client, shutdown) = (client.clone(), shutdown.clone());
        move || {
            let runtime = Runtime {
                config: config.clone(),
                metrics: Arc::new(Metrics::new()),
                clock: Arc::new(move || clock.now()),
                instance: "nbv-operator-0".to_owned(),
                io_layer: None,
                evictions: None,
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
    let running = |job: JobBuilder| {
        job.phase(Phase::ValidationRunning)
            .started_at(cluster.now())
            .build()
    };
    apply(
        &cluster,
        running(
            platform_job("predictive-analytics-kserve-validation")
                .sync_wave(3)
                .block_wave(4)
                .on_success_trigger(TRIGGERS),
        ),
    );
    apply(
        &cluster,
        running(platform_job("anomaly-training").sync_wave(3)),
    );
    apply(
        &cluster,
        running(
            platform_job("misconfigured")
                .on_success_trigger("- {kind: Deployment, action: Restart}"),
        ),
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
    apply(&cluster, platform_job("fresh").sync_wave(1).build());
    // A job that validates a model: nbv watches InferenceServices, and the job waits
    // for this one, which never becomes Ready.
    inference_service(&cluster, ML, "fraud");
    apply(
        &cluster,
        platform_job("checks-its-model")
            .spec_field(
                "modelValidation",
                json!({"platform": "kserve", "phase": "existing", "targetModels": ["fraud"]}),
            )
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(120)).await;
}

/// Image builds of every route: for each of Tekton, Shipwright and OpenShift's S2I,
/// four builds that succeed (one more than the history keeps, so the oldest is
/// deleted) and one that runs past its timeout (cancelled); a kaniko build past its
/// timeout (its Pod deleted). The build systems are played by setting statuses.
async fn build_scenario(cluster: FakeCluster) {
    namespace(&cluster, OPERATOR_NAMESPACE, json!({}));
    namespace(&cluster, ML, json!({}));
    // OpenShift serves its builds from its own API server.
    cluster.register(ApiResourceSpec::namespaced(
        "build.openshift.io",
        "v1",
        "BuildConfig",
        "buildconfigs",
    ));
    cluster.register(
        ApiResourceSpec::namespaced("build.openshift.io", "v1", "Build", "builds")
            .with_status_subresource(),
    );
    let build_job = |name: &str, strategy: &str, timeout: &str| {
        platform_job(name)
            .notebook(
                "https://github.com/example/ml-pipeline.git",
                "main",
                &format!("notebooks/{name}/train.ipynb"),
            )
            .spec_field(
                "podConfig",
                json!({"containerImage": "quay.io/ml/sklearn-notebook:1",
                       "buildConfig": {"enabled": true, "strategy": strategy, "timeout": timeout,
                                       "requirementsFile": format!("notebooks/{name}/requirements.txt")}}),
            )
            .build()
    };
    let strategies = [
        ("tekton", "pipelineruns", "tekton"),
        ("shipwright", "buildruns", "shipwright"),
        ("s2i", "builds.build.openshift.io", "openshift"),
    ];
    for (strategy, _, _) in strategies {
        for i in 0..4 {
            apply(
                &cluster,
                build_job(&format!("{strategy}-{i}"), strategy, "15m"),
            );
        }
        apply(
            &cluster,
            build_job(&format!("{strategy}-slow"), strategy, "1s"),
        );
    }
    apply(&cluster, build_job("kaniko-slow", "kaniko", "1s"));
    tokio::time::sleep(Duration::from_secs(20)).await;
    for (_, resource, route) in strategies {
        let watched = cluster.list(resource, Some(ML)).unwrap_or_default();
        assert_eq!(watched.len(), 5, "{route}: {watched:#?}");
        for object in watched {
            let name = object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let slow = object["metadata"]["labels"]["mlops.dev/job"]
                .as_str()
                .is_some_and(|job| job.ends_with("-slow"));
            let status = match (route, slow) {
                (_, true) if route == "openshift" => json!({"phase": "Running"}),
                (_, true) => {
                    json!({"conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}]})
                }
                ("openshift", false) => {
                    json!({"phase": "Complete", "output": {"to": {"imageDigest":
                    format!("sha256:{}", "a".repeat(64))}}})
                }
                ("tekton", false) => {
                    json!({"conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}],
                    "results": [{"name": "IMAGE_DIGEST", "value": format!("sha256:{}", "a".repeat(64))}]})
                }
                _ => {
                    json!({"conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}],
                    "output": {"digest": format!("sha256:{}", "a".repeat(64))}})
                }
            };
            cluster
                .set_status(resource, Some(ML), &name, status)
                .unwrap_or_else(|e| panic!("cannot set the status of {route} {name}: {e}"));
        }
    }
    // Past the timeouts and their grace, and the 30 s looks at running builds.
    tokio::time::sleep(Duration::from_secs(150)).await;
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

/// The build scenario created, cancelled and cleared builds of every route.
fn assert_builds_happened(cluster: &FakeCluster) {
    for (resource, route) in [
        ("pipelineruns", "tekton"),
        ("buildruns", "shipwright"),
        ("builds.build.openshift.io", "openshift"),
    ] {
        let left = cluster.list(resource, Some(ML)).unwrap_or_default();
        assert_eq!(
            left.len(),
            4,
            "{route}: one finished build beyond the history is deleted"
        );
    }
    for name in [
        "tekton-slow",
        "shipwright-slow",
        "s2i-slow",
        "kaniko-slow",
        "tekton-0",
    ] {
        let job = get_opt(cluster, "notebookvalidationjobs", ML, name).unwrap_or_default();
        let expected = if name.ends_with("-slow") {
            "Failed"
        } else {
            "BuildComplete"
        };
        assert_eq!(
            job["status"]["phase"], expected,
            "{name}: {:#}",
            job["status"]
        );
    }
}

pub(super) fn get_opt(
    cluster: &FakeCluster,
    resource: &str,
    ns: &str,
    name: &str,
) -> Option<Value> {
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

    let builds = FakeCluster::default();
    log.extend(run_operator(&builds, false, build_scenario).await);
    assert_builds_happened(&builds);

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
