//! The same scenario on both API servers: `nbv simulate` on the in-memory one, and here
//! on the real one, with the suite's kubelet running a real notebook for each of the
//! scenario's `podOutcomes`. The final objects must agree: the job's annotations and
//! status, its Events, the Application's annotations. Times and durations differ by
//! nature (virtual against real time) and are masked; anything else that differs is a
//! bug in one of the servers.

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::time::Duration;

use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, ListParams};
use nbv_testkit::scenario::{Action, Mode, PodResult, Scenario as ScenarioFile};
use regex_lite::Regex;
use serde_json::{Value, json};

use crate::support::disruption::{Predictor, Replicas};
use crate::support::git::{GitServer, notebook};
use crate::support::kubelet::Kubelet;
use crate::support::objects::{apply, repository};
use crate::support::{OperatorOptions, Scenario, eventually};

/// What is compared, with times and durations masked.
#[derive(Debug, PartialEq)]
struct Outcome {
    jobs: BTreeMap<String, Value>,
    applications: BTreeMap<String, Value>,
    events: BTreeMap<String, u64>,
}

/// An RFC 3339 time.
static TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z").expect("a regex"));
/// A duration as nbv writes one (`12s`, `1.5s`, `9m54s`).
static DURATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b\d+(\.\d+)?(ms|s|m\d+s|m|h)\b").expect("a regex"));
/// How many replaced pods a restart by eviction counted when it looked last: that
/// depends on when it looked, against when the ReplicaSet replaced the last pod.
static REPLACED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\(\d+, all Ready\)").expect("a regex"));
/// Events whose number depends on timing: one per new reason a restart waits for (a
/// pod seen terminating, say, in real time but not in virtual time).
const TIMED_EVENTS: [&str; 1] = ["RestartWaiting"];

/// Replaces RFC 3339 times and `12s`/`1.5s`/`9m54s` durations, which differ between
/// virtual and real time, and drops what only one side reports.
fn mask(value: &Value) -> Value {
    match value {
        Value::String(s) => {
            let s = TIME.replace_all(s, "<time>");
            let s = REPLACED.replace_all(&s, "(<n>, all Ready)");
            Value::String(DURATION.replace_all(&s, "<duration>").into_owned())
        }
        Value::Array(items) => Value::Array(items.iter().map(mask).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "lastHeartbeatTime")
                .map(|(k, v)| {
                    // JSON kept in an annotation is compared as JSON.
                    let v = match v
                        .as_str()
                        .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    {
                        Some(inner @ Value::Object(_)) => inner,
                        _ => v.clone(),
                    };
                    (k.clone(), mask(&v))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The in-memory side: `nbv simulate FILE --json`.
fn simulated(file: &std::path::Path) -> Outcome {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_nbv"))
        .arg("simulate")
        .arg(file)
        .arg("--json")
        .output()
        .expect("run nbv simulate");
    assert!(
        output.status.success(),
        "nbv simulate failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("the JSON report");
    let jobs = report["final"]["jobs"]
        .as_object()
        .expect("final.jobs")
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                mask(&json!({"annotations": v["annotations"], "status": v["status"]})),
            )
        })
        .collect();
    let applications = report["final"]["applications"]
        .as_object()
        .expect("final.applications")
        .iter()
        .map(|(k, v)| (k.clone(), mask(v)))
        .collect();
    let events = report["effects"]["events_by_reason"]
        .as_object()
        .expect("events_by_reason")
        .iter()
        .filter(|(k, _)| !TIMED_EVENTS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or_default()))
        .collect();
    Outcome {
        jobs,
        applications,
        events,
    }
}

fn namespace_and_name(object: &Value) -> (String, String) {
    let text = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

/// The real side: the scenario's objects applied to the real API server, its notebooks
/// in the suite's Git server, nbv run as a process.
async fn on_the_real_server(s: &Scenario, file: &std::path::Path) -> Outcome {
    let text = std::fs::read_to_string(file).expect("the scenario");
    let scenario = ScenarioFile::from_yaml(&text).expect("a valid scenario");
    assert_eq!(
        scenario.mode,
        Mode::Default,
        "this runner plays the kubelet"
    );
    // Operator restarts are played once the jobs have settled; no other step is.
    let restarts: Vec<_> = scenario
        .timeline
        .iter()
        .map(|step| match &step.action {
            Action::RestartOperator(restart) => *restart,
            other => panic!("this runner plays no {other:?}"),
        })
        .collect();
    let git = GitServer::start();
    let mut kubelets: BTreeMap<String, Kubelet> = BTreeMap::new();
    let mut watched = None;
    let started = chrono::Utc::now() - chrono::Duration::seconds(1);
    for object in &scenario.objects {
        let kind = object["kind"].as_str().unwrap_or_default();
        let (namespace, name) = namespace_and_name(object);
        let mut object = object.clone();
        if kind == "NotebookValidationJob" {
            let outcomes: Vec<_> = scenario
                .pod_outcomes
                .iter()
                .filter(|o| o.job.namespace == namespace && o.job.name == name)
                .collect();
            // The attempt that runs the notebook: as many cells as the scenario's
            // outcome reports, the last raising as the simulated kubelet's does when
            // the outcome is `failed`.
            let run = outcomes
                .iter()
                .rev()
                .find(|o| matches!(o.outcome, PodResult::Succeeded | PodResult::Failed))
                .expect("an outcome that runs the notebook");
            let mut cells: Vec<String> =
                (0..run.cells).map(|i| format!("cell_{i} = {i}")).collect();
            if run.outcome == PodResult::Failed
                && let Some(last) = cells.last_mut()
            {
                *last = "raise KeyError('model_path')".to_owned();
            }
            let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
            let path = object["spec"]["notebook"]["path"]
                .as_str()
                .unwrap_or("n.ipynb")
                .to_owned();
            let url = git.repository(
                &name,
                &[(&path, serde_json::to_string(&notebook(&cells)).unwrap())],
            );
            object["spec"]["notebook"]["git"] = json!({"url": url, "ref": "main"});
            // A clean slate for a second run of the suite on the same cluster.
            let jobs: Api<nbv_core::api::NotebookValidationJob> =
                Api::namespaced(s.client.clone(), &namespace);
            let _ = jobs.delete(&name, &Default::default()).await;
            let kubelet = kubelets
                .entry(namespace.clone())
                .or_insert_with(|| Kubelet::start(s.client.clone(), &namespace));
            for outcome in &outcomes {
                match (outcome.outcome, outcome.attempt) {
                    (PodResult::Evicted, Some(retry)) => {
                        kubelet.evict(&format!("{name}-g1-r{retry}"))
                    }
                    (PodResult::Succeeded | PodResult::Failed, _) => {}
                    (other, attempt) => {
                        panic!("this runner plays no {other:?} outcome (attempt {attempt:?})")
                    }
                }
            }
            watched = Some(namespace.clone());
        }
        if kind == "Pod" {
            object["spec"]["nodeName"] = json!(crate::support::kubelet::NODE);
        }
        apply(&s.client, &object, None).await;
    }
    // KServe's part, as the simulation plays it: each InferenceService's ReplicaSet
    // keeps the pods it has at the start, replacing an evicted one a second later.
    let _predictors: Vec<Replicas> = {
        let mut stand_ins = Vec::new();
        for object in scenario
            .objects
            .iter()
            .filter(|o| o["kind"] == "InferenceService")
        {
            let (namespace, name) = namespace_and_name(object);
            let replicas = scenario
                .objects
                .iter()
                .filter(|o| {
                    o["kind"] == "Pod"
                        && namespace_and_name(o).0 == namespace
                        && o["metadata"]["labels"]["serving.kserve.io/inferenceservice"] == name
                })
                .count();
            let predictor = Predictor {
                isvc: name,
                replicas,
                create_after: Duration::from_secs(1),
                ready_after: Duration::ZERO,
            };
            stand_ins.push(Replicas::start(s.client.clone(), &namespace, predictor).await);
        }
        stand_ins
    };
    let namespace = watched.expect("a job");
    let options = OperatorOptions::default_mode(&namespace);
    let mut operator = Operator::start(&s.cluster, &options);
    let mut jobs = settled_jobs(s, &scenario).await;
    for restart in restarts {
        if restart.graceful {
            operator.stop();
        } else {
            operator.kill();
        }
        tokio::time::sleep(restart.down_for.min(Duration::from_secs(15))).await;
        operator = Operator::start(&s.cluster, &options);
        operator.metrics().await;
        jobs = settled_jobs(s, &scenario).await;
    }
    let mut applications = BTreeMap::new();
    for (key, expected) in &scenario.expect.applications {
        let api = s.applications(&key.namespace);
        let app = eventually(
            &format!("Application {key} to show the result"),
            Duration::from_secs(100),
            || async {
                let app = api.get(&key.name).await.ok()?;
                let annotations = app.metadata.annotations.clone().unwrap_or_default();
                expected
                    .iter()
                    .all(|(k, v)| annotations.get(k) == v.as_ref())
                    .then_some(annotations)
            },
        )
        .await;
        let nbv: serde_json::Map<String, Value> = app
            .into_iter()
            .filter(|(k, _)| k.starts_with("mlops.dev/"))
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        applications.insert(key.to_string(), mask(&Value::Object(nbv)));
    }
    let events: Api<Event> = Api::namespaced(s.client.clone(), &namespace);
    let mut by_reason = BTreeMap::new();
    for event in events
        .list(&ListParams::default())
        .await
        .expect("Events")
        .items
    {
        let value = serde_json::to_value(&event).expect("json");
        let at = ["/eventTime", "/firstTimestamp"].iter().find_map(|p| {
            value
                .pointer(p)?
                .as_str()?
                .parse::<chrono::DateTime<chrono::Utc>>()
                .ok()
        });
        let reason = event.reason.clone().unwrap_or_default();
        if at.is_some_and(|at| at >= started) && !TIMED_EVENTS.contains(&reason.as_str()) {
            *by_reason.entry(reason).or_insert(0) += 1;
        }
    }
    drop(kubelets);
    Outcome {
        jobs,
        applications,
        events: by_reason,
    }
}

use crate::support::Operator;

/// The scenario's jobs once each has ended, recorded its notification and owes no
/// effect, as stored.
async fn settled_jobs(s: &Scenario, scenario: &ScenarioFile) -> BTreeMap<String, Value> {
    let mut jobs = BTreeMap::new();
    for key in scenario.expect.jobs.keys() {
        let api: Api<nbv_core::api::NotebookValidationJob> =
            Api::namespaced(s.client.clone(), &key.namespace);
        let job = eventually(
            &format!("job {key} to settle"),
            Duration::from_secs(150),
            || async {
                let job = api.get(&key.name).await.ok()?;
                let status = job.status.as_ref()?;
                let ended = matches!(
                    status.phase?,
                    nbv_core::api::Phase::Succeeded | nbv_core::api::Phase::Failed
                );
                let recorded = status
                    .effects
                    .as_ref()
                    .is_some_and(|l| l.done.contains("notify"));
                // Every effect carried out or given up (a restart by eviction takes
                // several looks), as the simulation runs until nothing is owed.
                let owed = status
                    .conditions
                    .iter()
                    .flatten()
                    .any(|c| c.type_ == "EffectsApplied" && c.status == "Unknown");
                (ended && recorded && !owed).then_some(job)
            },
        )
        .await;
        // As stored (not through nbv's own types, which would normalize it).
        let raw = crate::support::objects::api_for(
            &s.client,
            "mlops.mlops.dev/v1alpha1",
            "NotebookValidationJob",
            Some(&key.namespace),
        )
        .await
        .get(&key.name)
        .await
        .expect("the job");
        drop(job);
        let value = serde_json::to_value(&raw).expect("json");
        jobs.insert(
            key.to_string(),
            mask(&json!({"annotations": value["metadata"]["annotations"],
                                                   "status": value["status"]})),
        );
    }
    jobs
}

async fn same_on_both_servers(prefix: &str, file: &str) {
    let s = Scenario::new(prefix).await;
    let file = repository().join(file);
    let expected = simulated(&file);
    let actual = on_the_real_server(&s, &file).await;
    assert_eq!(
        actual.jobs, expected.jobs,
        "the jobs differ between the real and the in-memory server"
    );
    assert_eq!(
        actual.applications, expected.applications,
        "the Applications differ"
    );
    assert_eq!(actual.events, expected.events, "the Events differ");
    s.report_requests(&format!("the scenario {}", file.display()));
}

/// The built-in scenario of `nbv simulate`: ADR-049's end-to-end example.
#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn the_built_in_scenario_ends_the_same_on_both_api_servers() {
    same_on_both_servers("e2e-parity", "examples/seed-end-to-end.yaml").await;
}

/// An eviction retried, a failing cell, and an operator restart.
#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn the_default_mode_example_ends_the_same_on_both_api_servers() {
    same_on_both_servers("e2e-parity-default", "examples/default-mode.yaml").await;
}

/// The in-memory server validates no schema; the real one validates every object
/// against its CRD. Every object of every example scenario must be one the real API
/// server accepts (a server-side dry run), or the simulation runs on objects no
/// cluster would hold.
#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn every_example_scenario_holds_objects_the_real_api_server_accepts() {
    let s = Scenario::new("e2e-examples").await;
    let mut checked = 0;
    for entry in std::fs::read_dir(repository().join("examples")).expect("examples/") {
        let path = entry.expect("an entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("the scenario");
        let scenario = ScenarioFile::from_yaml(&text).expect("a valid scenario");
        for object in &scenario.objects {
            let kind = object["kind"].as_str().unwrap_or_default();
            let (namespace, name) = namespace_and_name(object);
            if kind == "Namespace" {
                crate::support::install::ensure_namespace(&s.client, &name, json!({})).await;
                continue;
            }
            let api_version = object["apiVersion"].as_str().unwrap_or_default();
            let ns = (!namespace.is_empty()).then_some(namespace.as_str());
            crate::support::install::ensure_namespace(
                &s.client,
                ns.unwrap_or("default"),
                json!({}),
            )
            .await;
            let api = crate::support::objects::api_for(&s.client, api_version, kind, ns).await;
            // A dry-run create, status included: validated as a new object is, stored
            // nowhere. An object a scenario of this suite created before on this
            // cluster (409) was validated when it was created.
            let mut body = object.clone();
            if let (Some(ns), Some(meta)) = (ns, body["metadata"].as_object_mut()) {
                meta.insert("namespace".into(), json!(ns));
            }
            let object: kube::api::DynamicObject = serde_json::from_value(body).expect("an object");
            let params = kube::api::PostParams {
                dry_run: true,
                field_manager: None,
            };
            match api.create(&params, &object).await {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 409 => {}
                Err(e) => panic!(
                    "{}: {kind} {namespace}/{name} is refused: {e}",
                    path.display()
                ),
            }
            checked += 1;
        }
    }
    assert!(checked > 20, "the examples hold objects: {checked}");
}
