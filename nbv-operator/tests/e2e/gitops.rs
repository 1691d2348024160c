//! `nbv run --gitops-only` next to another controller that writes the phases: every one
//! of the five features, as a user sees them on a real API server.

use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use nbv_core::health::{HealthStatusCode, assess};
use serde_json::{Value, json};

use crate::support::objects::{resource, yaml_documents};
use crate::support::{
    OperatorOptions, Scenario, annotation, condition, ended, eventually, objects, rfc3339,
};

const WAIT: Duration = Duration::from_secs(60);
/// The Application status is published at most once a minute, then the final state.
const PUBLISH: Duration = Duration::from_secs(100);

/// An Argo CD Application in `argocd` deploying to `namespace`.
pub fn application(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://git.example.com/ml/platform.git", "targetRevision": "main", "path": "manifests"},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace}
        }
    })
}

/// A Deployment nobody runs (there is no controller-manager): its template is what a
/// rolling restart changes.
pub fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "server", "image": "registry.k8s.io/pause:3.10"}]}}}
    })
}

/// An InferenceService and its two predictor Pods (bound to the node, as KServe's
/// would be).
pub async fn inference_service(s: &Scenario, name: &str) {
    s.apply(
        json!({"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                   "metadata": {"name": name},
                   "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}}}}}),
    )
    .await;
    for i in 1..=2 {
        s.apply(json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": format!("{name}-predictor-{i}"),
                                    "labels": {"serving.kserve.io/inferenceservice": name}},
                       "spec": {"nodeName": crate::support::kubelet::NODE,
                                "terminationGracePeriodSeconds": 0,
                                "containers": [{"name": "kserve-container", "image": "kserve/sklearnserver:v0.15.0"}]}}))
            .await;
    }
}

/// A job of the other controller's (no notebook runs here).
pub fn gitops_job(name: &str, annotations: Value) -> Value {
    crate::support::job(
        name,
        "https://git.example.com/ml/models.git",
        "main",
        "train.ipynb",
        annotations,
    )
}

/// The `nbv wait` hook's rights in `namespace`, from the shipped example.
async fn wait_hook_rights(s: &Scenario) {
    let root = objects::repository();
    for mut doc in yaml_documents(&root.join("config/rbac/wait-hook-role.yaml")) {
        doc["metadata"]["namespace"] = json!(s.namespace);
        if let Some(subjects) = doc.get_mut("subjects").and_then(Value::as_array_mut) {
            for subject in subjects {
                subject["namespace"] = json!("ml");
            }
        }
        s.apply(doc).await;
    }
}

fn nbv_wait(s: &Scenario, wave: i64) -> std::process::Output {
    let kubeconfig = s
        .cluster
        .wait_hook_kubeconfig()
        .unwrap_or(s.cluster.operator_kubeconfig());
    std::process::Command::new(env!("CARGO_BIN_EXE_nbv"))
        .args([
            "wait",
            "--namespace",
            &s.namespace,
            "--wave",
            &wave.to_string(),
            "--timeout",
            "20s",
        ])
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("run nbv wait")
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn every_feature_in_gitops_only_mode() {
    let s = Scenario::new("e2e-gitops").await;
    let ns = s.namespace.clone();
    s.apply(application(&ns, &ns)).await;
    s.apply(application(&format!("{ns}-serving"), &ns)).await;
    s.apply(deployment("model-server")).await;
    inference_service(&s, "model").await;
    wait_hook_rights(&s).await;
    let tracking = |job: &str| format!("{ns}:mlops.mlops.dev/NotebookValidationJob:{ns}/{job}");
    let triggers = format!(
        "- {{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: model, action: restart}}\n\
         - {{apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}}\n\
         - {{apiVersion: argoproj.io/v1alpha1, kind: Application, name: {ns}-serving, namespace: argocd, action: sync}}\n"
    );
    s.apply(gitops_job(
        "train",
        json!({
            "argocd.argoproj.io/sync-wave": "3",
            "argocd.argoproj.io/tracking-id": tracking("train"),
            "mlops.dev/block-wave": "4",
            "mlops.dev/on-success-trigger": triggers,
        }),
    ))
    .await;
    // The other controller runs the notebook; the predictor pods predate the run's end.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    s.set_job_status(
        "train",
        json!({"phase": "ValidationRunning", "observedGeneration": 1,
                                     "startTime": rfc3339(Utc::now())}),
    )
    .await;

    let mut operator = s
        .operator(&OperatorOptions::gitops_only(&ns).with(&["--application-namespaces", "argocd"]));
    // Health while running: Progressing, on the object the API server stores.
    let stored = serde_json::to_value(s.job("train").await).expect("json");
    assert_eq!(
        assess(&stored).unwrap().unwrap().status,
        HealthStatusCode::Progressing
    );
    // The gate of wave 4 is closed while the job runs.
    assert!(
        !nbv_wait(&s, 4).status.success(),
        "wave 4 must wait for the training job"
    );

    let status = ended("Succeeded", "Validation completed successfully");
    let completion = status["completionTime"].as_str().unwrap().to_owned();
    s.set_job_status("train", status).await;

    // 3. Sync-wave coordination.
    eventually("the wave annotations", WAIT, || async {
        let job = s.job("train").await;
        (annotation(&job.metadata, "mlops.dev/wave-complete") == Some("3")).then_some(job)
    })
    .await;
    let job = s.job("train").await;
    assert_eq!(
        annotation(&job.metadata, "mlops.dev/completion-time"),
        Some(completion.as_str())
    );
    assert_eq!(annotation(&job.metadata, "mlops.dev/wave-failed"), None);
    let gate = nbv_wait(&s, 4);
    assert!(
        gate.status.success(),
        "wave 4 opens: {}",
        String::from_utf8_lossy(&gate.stderr)
    );

    // 2. Post-success triggers, each once.
    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &ns);
    eventually("the predictor pods deleted", WAIT, || async {
        let list = pods
            .list(&ListParams::default().labels("serving.kserve.io/inferenceservice=model"))
            .await
            .ok()?;
        list.items.is_empty().then_some(())
    })
    .await;
    let deployments: Api<Deployment> = Api::namespaced(s.client.clone(), &ns);
    let restarted = eventually("the rolling restart", WAIT, || async {
        let d = serde_json::to_value(deployments.get("model-server").await.ok()?).ok()?;
        let at =
            d.pointer("/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt")?;
        at.as_str().map(str::to_owned)
    })
    .await;
    assert_eq!(
        restarted, completion,
        "restartedAt is the run's completion time"
    );
    let serving = s.applications("argocd");
    eventually("the sync operation", WAIT, || async {
        let app = serving.get(&format!("{ns}-serving")).await.ok()?;
        app.data.pointer("/operation/sync").cloned()
    })
    .await;
    for reason in ["TriggerSucceeded"] {
        let events = eventually("three TriggerSucceeded Events", WAIT, || async {
            let e = s.events("train", reason).await;
            (e.len() >= 3).then_some(e)
        })
        .await;
        assert_eq!(events.len(), 3, "one Event per trigger: {events:#?}");
    }

    // 5. Notifications: one Event, labelled for Argo CD notifications.
    let notified = eventually("the ValidationSucceeded Event", WAIT, || async {
        let e = s.events("train", "ValidationSucceeded").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    assert_eq!(notified.len(), 1);
    let labels = notified[0].metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels
            .get("mlops.dev/notification-type")
            .map(String::as_str),
        Some("validation-success")
    );
    assert_eq!(notified[0].type_.as_deref(), Some("Normal"));

    // The ledger and the conditions.
    let job = eventually("every effect recorded", WAIT, || async {
        let job = s.job("train").await;
        let done = job.status.as_ref()?.effects.as_ref()?.done.len();
        (done == 5).then_some(job)
    })
    .await;
    let conditions = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let effects = conditions
        .iter()
        .find(|c| c.type_ == "EffectsApplied")
        .expect("EffectsApplied");
    assert_eq!(effects.status, "True", "{effects:?}");

    // Play Argo CD: run the sync nbv requested, then end it well. A sync that
    // succeeds is Argo CD's record: nbv writes nothing more to the job (no
    // `ApplicationSynced` condition, no `SyncSucceeded` Event), while it follows the
    // sync in its watch cache.
    let app_name = format!("{ns}-serving");
    let requested = serving.get(&app_name).await.expect("the Application");
    let marker = requested.data["operation"]["info"].clone();
    let followed = operator.reconciles().await;
    for (phase, operation) in [
        ("Running", requested.data["operation"].clone()),
        ("Succeeded", Value::Null),
    ] {
        serving
            .patch(
                &app_name,
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"operation": operation, "status": {"operationState": {
                    "phase": phase, "startedAt": rfc3339(Utc::now()),
                    "operation": {"sync": {}, "info": marker,
                                  "initiatedBy": {"username": "nbv-operator"}}}}}),
                ),
            )
            .await
            .expect("the sync's progress");
    }
    // Followed at least once since: the job is looked at again while its sync runs.
    eventually("a reconcile after the sync ended", WAIT, || async {
        (operator.reconciles().await > followed).then_some(())
    })
    .await;
    let after = s.job("train").await;
    assert_eq!(
        after.metadata.resource_version, job.metadata.resource_version,
        "nothing written after the completion"
    );
    assert!(condition(&after, "ApplicationSynced").is_none());
    assert!(s.events("train", "SyncSucceeded").await.is_empty());

    // 1. Health: Healthy once Succeeded.
    let stored = serde_json::to_value(&job).expect("json");
    assert_eq!(
        assess(&stored).unwrap().unwrap().status,
        HealthStatusCode::Healthy
    );

    // 4. The parent Application's status.
    let parent = s.applications("argocd");
    eventually("the Application's notebook summary", PUBLISH, || async {
        let app = parent.get(&ns).await.ok()?;
        (annotation(&app.metadata, "mlops.dev/notebook-summary")
            == Some("1/1 succeeded (100% success rate)"))
        .then_some(())
    })
    .await;

    // A failing run: the reverse annotations, a Warning, and the Application counts it.
    s.apply(gitops_job(
        "evaluate",
        json!({
            "argocd.argoproj.io/sync-wave": "5",
            "argocd.argoproj.io/tracking-id": tracking("evaluate"),
        }),
    ))
    .await;
    s.set_job_status(
        "evaluate",
        json!({"phase": "ValidationRunning", "observedGeneration": 1,
                                        "startTime": rfc3339(Utc::now())}),
    )
    .await;
    s.set_job_status(
        "evaluate",
        ended("Failed", "cell 3 raised KeyError: 'accuracy'"),
    )
    .await;
    eventually("wave-failed", WAIT, || async {
        let job = s.job("evaluate").await;
        (annotation(&job.metadata, "mlops.dev/wave-failed") == Some("5")).then_some(())
    })
    .await;
    let failed = eventually("the ValidationFailed Event", WAIT, || async {
        let e = s.events("evaluate", "ValidationFailed").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    assert_eq!(failed[0].type_.as_deref(), Some("Warning"));
    assert!(
        failed[0]
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("KeyError")
    );
    eventually("the summary counting the failure", PUBLISH, || async {
        let app = parent.get(&ns).await.ok()?;
        let status: Value =
            serde_json::from_str(annotation(&app.metadata, "mlops.dev/notebook-status")?).ok()?;
        (annotation(&app.metadata, "mlops.dev/notebook-summary")
            == Some("1/2 succeeded (50% success rate)")
            && status["failedJobs"].to_string().contains("evaluate"))
        .then_some(())
    })
    .await;

    // Metrics on /metrics.
    let metrics = operator.metrics().await;
    for line in [
        "notebook_validation_total{phase=\"Succeeded\"} 1",
        "notebook_validation_total{phase=\"Failed\"} 1",
        "argocd_triggers_total{action=\"restart\",status=\"success\"} 2",
        "argocd_triggers_total{action=\"sync\",status=\"success\"} 1",
    ] {
        assert!(metrics.contains(line), "/metrics lacks {line}:\n{metrics}");
    }
    assert!(metrics.contains("notebook_validation_duration_seconds_count"));

    let requests = s.report_requests("every feature, gitops-only");
    if let Some(requests) = requests {
        // Each predictor pod evicted once (never deleted), the Deployment restarted once.
        assert_eq!(requests.count("create", "pods/eviction"), 2, "{requests}");
        assert_eq!(requests.count("delete", "pods"), 0, "{requests}");
        assert_eq!(requests.count("patch", "deployments"), 1, "{requests}");
    }
    assert_eq!(operator.stop(), Some(0), "a graceful stop exits 0");
    let _ = resource; // the helper is shared with other scenarios
    s.clean_up().await;
}
