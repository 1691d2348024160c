//! Argo CD's rules as nbv meets them on a real API server, with Argo CD's own CRDs
//! validating what nbv writes: sync windows of the AppProject, a stuck operation
//! state, an Application named without a namespace, and Argo CD's tracking settings
//! read from `argocd-cm`.
//!
//! No Argo CD controller runs: the tests play it where a scenario needs it (they
//! finish the operation nbv requested).

use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

use crate::gitops::{application, gitops_job};
use crate::support::ended;
use crate::support::{OperatorOptions, Scenario, annotation, condition, eventually, rfc3339};

const WAIT: Duration = Duration::from_secs(60);
/// The Application status is published at most once a minute, then the final state.
const PUBLISH: Duration = Duration::from_secs(100);

/// Ends the job `name`'s run with success, as the other controller would.
async fn run_succeeds(s: &Scenario, name: &str) {
    s.set_job_status(
        name,
        json!({"phase": "ValidationRunning", "observedGeneration": 1,
               "startTime": rfc3339(Utc::now())}),
    )
    .await;
    s.set_job_status(
        name,
        ended("Succeeded", "Validation completed successfully"),
    )
    .await;
}

/// The AppProject `name` in `argocd`, with these sync windows (Argo CD's schema checks
/// them).
fn project(name: &str, windows: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"sourceRepos": ["*"],
                 "destinations": [{"server": "*", "namespace": "*"}],
                 "syncWindows": windows}
    })
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_closed_sync_window_defers_the_sync_until_it_opens() {
    let s = Scenario::new("e2e-windows").await;
    let ns = s.namespace.clone();
    // A window that is always active: deny every minute for an hour.
    let project_name = format!("{ns}-frozen");
    s.apply(project(
        &project_name,
        json!([{"kind": "deny", "schedule": "* * * * *", "duration": "1h",
                "namespaces": [ns.clone()], "description": "change freeze"}]),
    ))
    .await;
    let mut app = application(&format!("{ns}-serving"), &ns);
    app["spec"]["project"] = json!(project_name);
    s.apply(app).await;
    let trigger = format!(
        "- {{apiVersion: argoproj.io/v1alpha1, kind: Application, name: {ns}-serving, action: sync}}\n"
    );
    s.apply(gitops_job(
        "train",
        json!({"mlops.dev/on-success-trigger": trigger}),
    ))
    .await;
    let operator = s.operator(&OperatorOptions::gitops_only(&ns));
    run_succeeds(&s, "train").await;

    // Deferred: the condition and one Event say why; no operation is written.
    let (status, reason, message) = eventually("the SyncDeferred condition", WAIT, || async {
        let job = s.job("train").await;
        condition(&job, "ApplicationSynced").filter(|(_, r, _)| r == "SyncDeferred")
    })
    .await;
    assert_eq!(status, "Unknown");
    assert!(message.contains("change freeze"), "{reason}: {message}");
    let events = eventually("the SyncDeferred Event", WAIT, || async {
        let e = s.events("train", "SyncDeferred").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let apps = s.applications("argocd");
    let stored = apps
        .get(&format!("{ns}-serving"))
        .await
        .expect("the Application");
    assert!(
        stored.data["operation"].is_null(),
        "no operation while the window is closed"
    );

    // The window is lifted: the sync starts (nbv looks again within 15 s… at most at
    // its next resync; the AppProject cache sees the change at once).
    s.apply(project(&project_name, json!([]))).await;
    eventually("the sync operation", Duration::from_secs(330), || async {
        let app = apps.get(&format!("{ns}-serving")).await.ok()?;
        app.data.pointer("/operation/sync").cloned()
    })
    .await;
    if let Some(requests) = s.report_requests("a sync window") {
        // The AppProject and the Application come from watch caches: never a GET.
        assert_eq!(requests.count("get", "appprojects"), 0, "{requests}");
        assert_eq!(requests.count("get", "applications"), 0, "{requests}");
    }
    drop(operator);
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_stuck_operation_is_cleared_and_the_sync_reported() {
    let s = Scenario::new("e2e-stuck").await;
    let ns = s.namespace.clone();
    let name = format!("{ns}-serving");
    s.apply(application(&name, &ns)).await;
    // What a controller killed mid-sync leaves: a Running operation state, no operation.
    let apps = s.applications("argocd");
    apps.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"operationState": {
            "phase": "Running", "startedAt": rfc3339(Utc::now()),
            "operation": {"sync": {"revision": "abc"}}}}})),
    )
    .await
    .expect("the stuck state");
    let trigger = format!(
        "- {{apiVersion: argoproj.io/v1alpha1, kind: Application, name: {name}, namespace: argocd, action: sync}}\n"
    );
    s.apply(gitops_job(
        "train",
        json!({"mlops.dev/on-success-trigger": trigger}),
    ))
    .await;
    let operator = s.operator(&OperatorOptions::gitops_only(&ns));
    run_succeeds(&s, "train").await;

    let started = tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(app) = apps.get(&name).await
                && app.data.pointer("/operation/sync").is_some()
            {
                return app;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    })
    .await;
    let Ok(app) = started else {
        let failed = s.events("train", "TriggerFailed").await;
        panic!(
            "no sync operation; TriggerFailed: {:#?}",
            failed.iter().map(|e| e.message.clone()).collect::<Vec<_>>()
        );
    };
    assert!(
        app.data.pointer("/status/operationState").is_none(),
        "the leftover operation state is cleared, as argocd app sync does: {:#}",
        app.data["status"]
    );
    let info = app.data["operation"]["info"][0]["value"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    // Play Argo CD: run the operation, fail it.
    apps.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"operation": null, "status": {"operationState": {
            "phase": "Failed", "message": "one or more objects failed to apply",
            "startedAt": rfc3339(Utc::now()), "finishedAt": rfc3339(Utc::now()),
            "operation": {"sync": {}, "info": [{"name": "nbv-run", "value": info}],
                          "initiatedBy": {"username": "nbv-operator"}}}}})),
    )
    .await
    .expect("the result");
    let (status, _, message) = eventually("the SyncFailed condition", WAIT, || async {
        let job = s.job("train").await;
        condition(&job, "ApplicationSynced").filter(|(_, r, _)| r == "SyncFailed")
    })
    .await;
    assert_eq!(status, "False");
    assert!(message.contains("failed to apply"), "{message}");
    let events = eventually("the SyncFailed Event", WAIT, || async {
        let e = s.events("train", "SyncFailed").await;
        (!e.is_empty()).then_some(e)
    })
    .await;
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    s.report_requests("a stuck operation");
    drop(operator);
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn an_application_without_a_namespace_is_in_argo_cds() {
    let s = Scenario::new("e2e-appns").await;
    let ns = s.namespace.clone();
    let name = format!("{ns}-serving");
    // The Application is in argocd; one of the same name in the job's namespace would
    // be the wrong target.
    s.apply(application(&name, &ns)).await;
    let trigger = format!(
        "- {{apiVersion: argoproj.io/v1alpha1, kind: Application, name: {name}, action: refresh}}\n"
    );
    s.apply(gitops_job(
        "train",
        json!({"mlops.dev/on-success-trigger": trigger}),
    ))
    .await;
    let operator = s.operator(&OperatorOptions::gitops_only(&ns));
    run_succeeds(&s, "train").await;
    let apps = s.applications("argocd");
    let app = eventually("the refresh of argocd's Application", WAIT, || async {
        let app = apps.get(&name).await.ok()?;
        annotation(&app.metadata, "argocd.argoproj.io/refresh")
            .is_some()
            .then_some(app)
    })
    .await;
    assert!(annotation(&app.metadata, "argocd.argoproj.io/refresh-timestamp").is_some());
    let done = s
        .job("train")
        .await
        .status
        .and_then(|s| s.effects)
        .map(|e| e.done)
        .unwrap_or_default();
    assert!(
        done.iter()
            .any(|k| k.ends_with(&format!("refresh:argoproj.io/Application:argocd/{name}"))),
        "{done:?}"
    );
    s.report_requests("an Application without a namespace");
    drop(operator);
    s.clean_up().await;
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn tracking_follows_argocd_cm() {
    let s = Scenario::new("e2e-tracking").await;
    let ns = s.namespace.clone();
    // Argo CD with label tracking under a custom key and an installation id. The
    // ConfigMap is Argo CD's own, shared by the suite: it is removed at the end.
    let label_key = "e2e.nbv.dev/instance";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "argocd-cm", "namespace": "argocd"},
                    "data": {"application.resourceTrackingMethod": "label",
                             "application.instanceLabelKey": label_key}});
    crate::support::objects::apply(&s.client, &cm, None).await;
    s.apply(application(&ns, &ns)).await;
    let mut labelled = gitops_job("by-label", json!({}));
    labelled["metadata"]["labels"] = json!({label_key: ns.clone()});
    s.apply(labelled).await;
    // Under label tracking the annotation does not count.
    let tracking = format!("{ns}:mlops.mlops.dev/NotebookValidationJob:{ns}/by-annotation");
    s.apply(gitops_job(
        "by-annotation",
        json!({"argocd.argoproj.io/tracking-id": tracking}),
    ))
    .await;
    let operator = s.operator(&OperatorOptions::gitops_only(&ns).with(&["--no-part-of"]));
    run_succeeds(&s, "by-label").await;
    run_succeeds(&s, "by-annotation").await;
    let apps = s.applications("argocd");
    eventually(
        "the summary of the label-tracked job only",
        PUBLISH,
        || async {
            let app = apps.get(&ns).await.ok()?;
            (annotation(&app.metadata, "mlops.dev/notebook-summary")
                == Some("1/1 succeeded (100% success rate)"))
            .then_some(())
        },
    )
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(s.client.clone(), "argocd");
    let _ = cms.delete("argocd-cm", &DeleteParams::default()).await;
    if let Some(requests) = s.report_requests("tracking from argocd-cm") {
        assert_eq!(requests.count("get", "configmaps"), 1, "{requests}");
    }
    drop(operator);
    s.clean_up().await;
}
