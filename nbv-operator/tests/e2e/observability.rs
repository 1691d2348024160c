//! Observing nbv the way the field does, on the real API server: Debian's Prometheus
//! scrapes `nbv run` and evaluates nbv's alert rules, a failing job makes its alert
//! fire, every query of the Grafana dashboard returns data, a stopped operator is seen
//! down; and `kubectl wait` waits for a run: `--for=condition=Ready` for success,
//! `Stalled` for failure, `Reconciling=false` for either.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use chrono::Utc;
use serde_json::{Value, json};

use crate::gitops::{application, deployment};
use crate::metrics_access::{bind_metrics_reader, metrics_certificate};
use crate::notebooks::repository;
use crate::support::cluster::token_of;
use crate::support::git::GitServer;
use crate::support::kubelet::Kubelet;
use crate::support::objects::repository as root;
use crate::support::prometheus::Prometheus;
use crate::support::{OperatorOptions, Scenario, ended, eventually, job, rfc3339};

/// Scrapes and rule evaluations run every second; a rate needs two samples.
const OBSERVE: Duration = Duration::from_secs(60);

fn dashboard_queries() -> Vec<(String, String)> {
    let path = root().join("config/monitoring/dashboards/nbv.json");
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("the dashboard")).expect("JSON");
    dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|panel| {
            let title = panel["title"].as_str().unwrap_or_default().to_owned();
            panel["targets"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |t| {
                    (
                        title.clone(),
                        t["expr"].as_str().unwrap_or_default().to_owned(),
                    )
                })
        })
        .collect()
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn prometheus_scrapes_nbv_run_fires_an_alert_and_answers_the_dashboard() {
    let s = Scenario::new("e2e-observe").await;
    let ns = s.namespace.clone();
    s.apply(application(&ns, &ns)).await;
    s.apply(deployment("model-server")).await;
    // With the seed's job_name label on the duration (docs/operations.md, Cardinality),
    // and /metrics as nbv serves it by default: HTTPS, to a token allowed to get it.
    // Prometheus scrapes as the Prometheus Operator does from nbv's ServiceMonitor,
    // with the token of a service account bound to nbv-metrics-reader.
    let certificate = metrics_certificate();
    let mut operator = s.operator(&OperatorOptions {
        secure_metrics: Some(Some(certificate.clone())),
        ..OperatorOptions::gitops_only(&ns).with(&["--metrics-job-name-label"])
    });
    let scraper = s
        .cluster
        .wait_hook_kubeconfig()
        .expect("a scraper's identity");
    bind_metrics_reader(
        &s.client,
        &format!("{ns}-prometheus"),
        "system:serviceaccount:ml:nbv-wait",
    )
    .await;
    let prometheus = Prometheus::start_secure(
        operator.metrics_addr(),
        &token_of(scraper),
        &certificate.join("ca.crt"),
    );
    eventually("Prometheus to scrape nbv", OBSERVE, || async {
        (prometheus.target_health().await == ["up"]).then_some(())
    })
    .await;
    // Nothing has failed yet: once the rules saw the first scrape (NbvOperatorDown
    // fires at an evaluation before it, its `for` being 0 s here), no alert fires.
    eventually("every alert to be quiet", OBSERVE, || async {
        prometheus.firing().await.is_empty().then_some(())
    })
    .await;

    // Two jobs of the Application: one succeeds (and restarts the model server), one
    // fails. Another controller writes their phases (--gitops-only).
    for (name, annotations) in [
        (
            "good",
            json!({"mlops.dev/on-success-trigger":
            "- {apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}\n"}),
        ),
        ("bad", json!({})),
    ] {
        let mut object = job(
            name,
            "https://git.example.com/ml/models.git",
            "main",
            "train.ipynb",
            annotations,
        );
        // Argo CD 3's default tracking: the tracking-id annotation names the Application.
        object["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = json!(format!(
            "{ns}:mlops.mlops.dev/NotebookValidationJob:{ns}/{name}"
        ));
        s.apply(object).await;
        s.set_job_status(
            name,
            json!({"phase": "ValidationRunning", "observedGeneration": 1,
                                      "startTime": rfc3339(Utc::now())}),
        )
        .await;
    }
    // Prometheus sees the counters at zero before the runs end, so increase() sees them
    // move.
    tokio::time::sleep(Duration::from_secs(3)).await;
    s.set_job_status("good", ended("Succeeded", "")).await;
    s.set_job_status("bad", ended("Failed", "cell 2 raised KeyError"))
        .await;
    eventually("nbv to notify the failure", OBSERVE, || async {
        (!s.events("bad", "ValidationFailed").await.is_empty()).then_some(())
    })
    .await;

    // Half the runs failed: more than the 25% of NbvValidationFailureRateHigh.
    eventually("NbvValidationFailureRateHigh to fire", OBSERVE, || async {
        prometheus
            .firing()
            .await
            .contains(&"NbvValidationFailureRateHigh".to_owned())
            .then_some(())
    })
    .await;
    let firing = prometheus.firing().await;
    for quiet in [
        "NbvOperatorDown",
        "NbvNoLeader",
        "NbvTriggersFailing",
        "NbvEffectsAbandoned",
    ] {
        assert!(
            !firing.contains(&quiet.to_owned()),
            "{quiet} fires: {firing:?}"
        );
    }
    // What the alert reads, by upstream's names too.
    let failed = prometheus
        .query(&format!(
            "sum(notebookvalidationjob_validations_total{{namespace=\"{ns}\",status=\"failed\"}})"
        ))
        .await;
    assert_eq!(failed[0]["value"][1], "1", "{failed:?}");

    // Every query of the dashboard returns data.
    for (panel, query) in dashboard_queries() {
        let result = eventually(
            &format!("panel {panel:?} to have data: {query}"),
            OBSERVE,
            || async {
                let result = prometheus.query(&query).await;
                (!result.is_empty()).then_some(result)
            },
        )
        .await;
        eprintln!("panel {panel:?}: {} series", result.len());
    }
    let rate = prometheus
        .query(
            "sum by (application) (nbv_application_jobs{outcome=\"succeeded\"}) / \
             sum by (application) (nbv_application_jobs{outcome=~\"succeeded|failed\"})",
        )
        .await;
    assert_eq!(rate[0]["metric"]["application"], ns.as_str(), "{rate:?}");
    assert_eq!(rate[0]["value"][1], "0.5", "{rate:?}");

    let by_job = prometheus
        .query(&format!(
            "notebook_validation_duration_seconds_count{{namespace=\"{ns}\",job_name=\"good\"}}"
        ))
        .await;
    assert_eq!(by_job.len(), 1, "{by_job:?}");
    assert_eq!(by_job[0]["metric"]["phase"], "Succeeded", "{by_job:?}");

    // What every operator exposes: the real `nbv run` counted its requests (its
    // watches and patches answered 200), and the process's own figures are there.
    for query in [
        "sum(rest_client_requests_total{code=\"200\",method=\"GET\"})",
        "sum(rest_client_requests_total{code=\"200\",method=\"PATCH\"})",
        "process_resident_memory_bytes",
        "process_open_fds",
        "process_cpu_seconds_total",
    ] {
        let result = prometheus.query(query).await;
        let value: f64 = result
            .first()
            .and_then(|r| r["value"][1].as_str()?.parse().ok())
            .unwrap_or_else(|| panic!("{query}: {result:?}"));
        assert!(value > 0.0, "{query} = {value}");
    }
    let build = prometheus.query("nbv_build_info").await;
    assert_eq!(
        build[0]["metric"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{build:?}"
    );

    // The operator stops: Prometheus sees it down, and NbvOperatorDown fires.
    assert_eq!(operator.stop(), Some(0));
    eventually("NbvOperatorDown to fire", OBSERVE, || async {
        prometheus
            .firing()
            .await
            .contains(&"NbvOperatorDown".to_owned())
            .then_some(())
    })
    .await;
    s.clean_up().await;
}

/// `kubectl wait --for=condition=CONDITION` on a job, as a process, with the
/// administrator's kubeconfig.
fn kubectl_wait(
    namespace: &str,
    kubeconfig: &Path,
    job: &str,
    condition: &str,
    timeout: &str,
) -> Output {
    std::process::Command::new("kubectl")
        .args([
            "wait",
            "--namespace",
            namespace,
            &format!("notebookvalidationjob/{job}"),
            &format!("--for=condition={condition}"),
            &format!("--timeout={timeout}"),
        ])
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("run kubectl (Debian's kubernetes-client: scripts/monitoring-tools install)")
}

/// Whether `kubectl wait` said the condition was met.
fn met(output: &Output) -> bool {
    output.status.success() && String::from_utf8_lossy(&output.stdout).contains("condition met")
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn kubectl_wait_tells_success_from_failure() {
    let s = Scenario::new("e2e-kubectl-wait").await;
    let git = GitServer::start();
    let url = repository(&git, "models");
    let _kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));
    s.apply(job("passes", &url, "main", "passes.ipynb", json!({})))
        .await;
    s.apply(job("raises", &url, "main", "raises.ipynb", json!({})))
        .await;

    // Started while the run is in progress: returns when Ready turns True.
    let (ns, kubeconfig) = (s.namespace.clone(), s.cluster.admin_kubeconfig().to_owned());
    let waited = tokio::task::spawn_blocking(move || {
        kubectl_wait(&ns, &kubeconfig, "passes", "Ready", "150s")
    })
    .await
    .expect("kubectl wait ran");
    assert!(
        waited.status.success(),
        "kubectl wait failed: {}{}",
        String::from_utf8_lossy(&waited.stdout),
        String::from_utf8_lossy(&waited.stderr)
    );
    assert!(String::from_utf8_lossy(&waited.stdout).contains("condition met"));
    let job = s.job("passes").await;
    let status = job.status.expect("a status");
    assert_eq!(status.phase, Some(nbv_core::api::Phase::Succeeded));
    assert_eq!(
        status.observed_generation, job.metadata.generation,
        "Ready describes this generation"
    );

    // A failed run is never Ready: kubectl wait times out.
    eventually("raises to fail", Duration::from_secs(150), || async {
        let job = s.job("raises").await;
        (job.status.and_then(|s| s.phase) == Some(nbv_core::api::Phase::Failed)).then_some(())
    })
    .await;
    let admin = s.cluster.admin_kubeconfig();
    let wait = |job: &str, condition: &str| kubectl_wait(&s.namespace, admin, job, condition, "5s");
    assert!(
        !met(&wait("raises", "Ready")),
        "kubectl wait for Ready succeeded on a failed run"
    );
    // kstatus's conditions: a failure is Stalled, and neither run is Reconciling any more.
    assert!(met(&wait("raises", "Stalled")), "a failed run is Stalled");
    assert!(
        !met(&wait("passes", "Stalled")),
        "a run that passed is not Stalled"
    );
    for job in ["passes", "raises"] {
        assert!(
            met(&wait(job, "Reconciling=false")),
            "{job} is still Reconciling"
        );
    }
    s.clean_up().await;
}
