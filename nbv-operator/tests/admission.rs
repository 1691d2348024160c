//! The operator against the in-memory API server, whose Pod creates an admission
//! policy refuses: the job shows the refusal at once, fails at once when no retry can
//! help, and otherwise retries until the pod admission timeout. And nbv's own pod
//! policy (`nbv run --allowed-images` and the rest), which refuses a job before any
//! Pod is asked for.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::{FutureExt, StreamExt, future::Shared};
use http::{Method, Request, Response};
use http_body::Frame;
use http_body_util::StreamBody;
use kube::client::Body;
use nbv_operator::operator::config::OperatorConfig;
use nbv_operator::operator::controller::{self, Runtime};
use nbv_operator::operator::metrics::Metrics;
use nbv_testkit::cluster::{FakeCluster, ResponseBody};
use nbv_testkit::fixtures::JobBuilder;
use serde_json::{Value, json};
use tower::ServiceExt;

type Shutdown = Shared<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>;

/// An error answer: HTTP code, reason, message.
type Answer = (u16, &'static str, String);

/// What the admission chain answers to Pod creates, while set.
#[derive(Clone, Default)]
struct Policy(Arc<Mutex<Option<Answer>>>);

impl Policy {
    fn refuse(&self, code: u16, reason: &'static str, message: &str) {
        *self.0.lock().unwrap() = Some((code, reason, message.to_owned()));
    }

    fn admit(&self) {
        *self.0.lock().unwrap() = None;
    }

    fn answer(&self, request: &Request<Body>) -> Option<Response<ResponseBody>> {
        let creates_pod =
            request.method() == Method::POST && request.uri().path().ends_with("/pods");
        let (code, reason, message) = self.0.lock().unwrap().clone().filter(|_| creates_pod)?;
        let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Failure", "message": message, "reason": reason, "code": code});
        let bytes = Bytes::from(serde_json::to_vec(&body).unwrap());
        let stream = futures::stream::once(async move { Ok::<_, Infallible>(Frame::data(bytes)) });
        let mut response = Response::new(StreamBody::new(stream.boxed()));
        *response.status_mut() = http::StatusCode::from_u16(code).unwrap();
        Some(response)
    }
}

/// A client of `cluster` whose Pod creates `policy` answers while it refuses.
fn client(cluster: &FakeCluster, policy: Policy) -> kube::Client {
    let inner = cluster.service();
    let service = tower::service_fn(move |request: Request<Body>| {
        let refused = policy.answer(&request);
        let inner = inner.clone();
        async move {
            match refused {
                Some(response) => Ok::<_, Infallible>(response),
                None => inner.oneshot(request).await,
            }
        }
    });
    kube::Client::new(service, "default")
}

fn shutdown_pair() -> (tokio::sync::oneshot::Sender<()>, Shutdown) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let fut: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
        let _ = rx.await;
    });
    (tx, fut.shared())
}

/// Runs the operator (default mode) on `cluster` with `policy` while `scenario` acts.
async fn operate<F: Future<Output = ()>>(
    cluster: &FakeCluster,
    policy: &Policy,
    scenario: impl FnOnce(FakeCluster) -> F,
) {
    operate_with(cluster, policy, OperatorConfig::default(), scenario).await;
}

/// Runs the operator configured by `config` on `cluster` with `policy` while
/// `scenario` acts.
async fn operate_with<F: Future<Output = ()>>(
    cluster: &FakeCluster,
    policy: &Policy,
    config: OperatorConfig,
    scenario: impl FnOnce(FakeCluster) -> F,
) {
    let (stop, shutdown) = shutdown_pair();
    let clock = cluster.clock();
    let runtime = Runtime {
        config,
        metrics: Arc::new(Metrics::default()),
        clock: Arc::new(move || clock.now()),
        instance: "nbv-operator-0".to_owned(),
        io_layer: None,
        evictions: None,
    };
    let operator = tokio::spawn(controller::run(
        client(cluster, policy.clone()),
        runtime,
        shutdown,
    ));
    scenario(cluster.clone()).await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(60), operator)
        .await
        .expect("the controller stops")
        .expect("the controller does not panic");
}

fn store_train(cluster: &FakeCluster) {
    let job = JobBuilder::new("ml", "train").sync_wave(3).build();
    cluster.apply_object(job).expect("the job is stored");
}

fn train(cluster: &FakeCluster) -> Value {
    cluster
        .get("notebookvalidationjobs", Some("ml"), "train")
        .unwrap()
        .expect("the job")
}

fn condition(job: &Value, type_: &str) -> Option<Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .cloned()
}

fn events(cluster: &FakeCluster, reason: &str) -> Vec<Value> {
    cluster
        .list("events", Some("ml"))
        .unwrap()
        .into_iter()
        .filter(|e| e["reason"] == reason)
        .collect()
}

fn pods(cluster: &FakeCluster) -> usize {
    cluster.list("pods", Some("ml")).unwrap().len()
}

const SCC_REFUSAL: &str = "pods \"train-g1-r0\" is forbidden: unable to validate against any \
    security context constraint: [provider \"anyuid\": Forbidden: not usable by user or \
    serviceaccount, provider restricted-v2: .containers[0].runAsUser: Invalid value: 65534: \
    must be in the ranges: [1000680000, 1000689999]]";

const QUOTA_REFUSAL: &str = "pods \"train-g1-r0\" is forbidden: exceeded quota: compute, \
    requested: limits.cpu=2, used: limits.cpu=7, limited: limits.cpu=8";

#[tokio::test(start_paused = true)]
async fn an_scc_refusal_fails_the_job_and_its_wave_at_once() {
    let cluster = FakeCluster::default();
    store_train(&cluster);
    let policy = Policy::default();
    policy.refuse(403, "Forbidden", SCC_REFUSAL);
    operate(&cluster, &policy, |cluster| async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        let job = train(&cluster);
        assert_eq!(job["status"]["phase"], "Failed", "{job:#}");
        let ready = condition(&job, "Ready").expect("Ready");
        assert_eq!(ready["reason"], "SecurityContextConstraints");
        assert!(
            ready["message"].as_str().unwrap().contains("restricted-v2"),
            "{ready}"
        );
        let admitted = condition(&job, "PodAdmitted").expect("PodAdmitted");
        assert_eq!(admitted["status"], "False");
        assert_eq!(admitted["reason"], "SecurityContextConstraints");
        assert_eq!(
            job["metadata"]["annotations"]["mlops.dev/wave-failed"], "3",
            "{job:#}"
        );
        let refused = events(&cluster, "PodRefused");
        assert_eq!(refused.len(), 1, "{refused:#?}");
        assert_eq!(refused[0]["type"], "Warning");
        assert!(
            refused[0]["message"]
                .as_str()
                .unwrap()
                .contains("restricted-v2")
        );
        assert_eq!(events(&cluster, "ValidationFailed").len(), 1);
        assert_eq!(pods(&cluster), 0);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_used_up_quota_shows_at_once_and_fails_the_job_after_the_timeout() {
    let cluster = FakeCluster::default();
    store_train(&cluster);
    let policy = Policy::default();
    policy.refuse(403, "Forbidden", QUOTA_REFUSAL);
    operate(&cluster, &policy, |cluster| async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        let job = train(&cluster);
        assert_ne!(job["status"]["phase"], "Failed", "{job:#}");
        let admitted = condition(&job, "PodAdmitted").expect("the condition at once");
        assert_eq!(admitted["status"], "False");
        assert_eq!(admitted["reason"], "QuotaExceeded");
        assert!(
            admitted["message"]
                .as_str()
                .unwrap()
                .contains("\"compute\"")
        );
        let message = job["status"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Waiting for the validation pod to be admitted: QuotaExceeded"),
            "{message}"
        );
        let first = admitted["lastTransitionTime"].clone();
        assert_eq!(events(&cluster, "PodRefused").len(), 1);

        // Nine minutes on: still retried, the first refusal's time kept.
        tokio::time::sleep(Duration::from_secs(9 * 60)).await;
        let job = train(&cluster);
        assert_ne!(job["status"]["phase"], "Failed", "{job:#}");
        assert_eq!(
            condition(&job, "PodAdmitted").unwrap()["lastTransitionTime"],
            first
        );
        assert_eq!(events(&cluster, "PodRefused").len(), 1, "announced once");

        // Past ten minutes: the run fails, naming the quota, and its wave fails.
        tokio::time::sleep(Duration::from_secs(90)).await;
        let job = train(&cluster);
        assert_eq!(job["status"]["phase"], "Failed", "{job:#}");
        let ready = condition(&job, "Ready").unwrap();
        assert_eq!(ready["reason"], "QuotaExceeded");
        assert!(
            ready["message"].as_str().unwrap().contains("10m0s"),
            "{ready}"
        );
        assert_eq!(job["metadata"]["annotations"]["mlops.dev/wave-failed"], "3");
        assert_eq!(pods(&cluster), 0);
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_quota_that_frees_before_the_timeout_lets_the_run_go_on() {
    let cluster = FakeCluster::default();
    store_train(&cluster);
    let policy = Policy::default();
    policy.refuse(403, "Forbidden", QUOTA_REFUSAL);
    let admitting = policy.clone();
    operate(&cluster, &policy, |cluster| async move {
        tokio::time::sleep(Duration::from_secs(3 * 60)).await;
        assert_eq!(
            condition(&train(&cluster), "PodAdmitted").unwrap()["status"],
            "False"
        );
        admitting.admit();
        tokio::time::sleep(Duration::from_secs(90)).await;
        assert_eq!(pods(&cluster), 1, "the pod is created once the quota frees");
        let job = train(&cluster);
        let admitted = condition(&job, "PodAdmitted").unwrap();
        assert_eq!(admitted["status"], "True", "{job:#}");
        assert_eq!(admitted["reason"], "PodCreated");
        let message = job["status"]["message"].as_str().unwrap();
        assert!(!message.contains("to be admitted"), "{message}");

        // The notebook succeeds: so does the run.
        let report = r#"{"cells":[{"i":0,"s":"ok","t":1.5}]}"#;
        cluster
            .set_status(
                "pods",
                Some("ml"),
                "train-g1-r0",
                json!({"phase": "Succeeded",
                       "containerStatuses": [{"name": "notebook", "image": "i", "imageID": "",
                           "ready": false, "restartCount": 0,
                           "state": {"terminated": {"exitCode": 0, "message": report}}}]}),
            )
            .unwrap();
        tokio::time::sleep(Duration::from_secs(60)).await;
        let job = train(&cluster);
        assert_eq!(job["status"]["phase"], "Succeeded", "{job:#}");
        assert_eq!(
            job["metadata"]["annotations"]["mlops.dev/wave-complete"],
            "3"
        );
    })
    .await;
}

/// The configuration `nbv run` builds from `flags`, as `nbv run` does.
fn configured(flags: &[&str]) -> OperatorConfig {
    use clap::Parser;
    use nbv_operator::cli::{Cli, Command};

    let cli = Cli::try_parse_from(["nbv", "run"].iter().chain(flags)).expect("flags parse");
    let Command::Run(run) = cli.command else {
        panic!("nbv run");
    };
    OperatorConfig {
        pod_defaults: nbv_core::pod::PodDefaults {
            policy: run.pod_policy().expect("a policy"),
            ..nbv_core::pod::PodDefaults::default()
        },
        ..run.operator_config()
    }
}

#[tokio::test(start_paused = true)]
async fn a_job_the_pod_policy_refuses_fails_at_once_naming_the_field_and_the_flag() {
    let cluster = FakeCluster::default();
    let refused = JobBuilder::new("ml", "train")
        .sync_wave(3)
        .image("docker.io/someone/papermill:1")
        .build();
    cluster.apply_object(refused).expect("the job is stored");
    // The builder's image, quay.io/jupyter/scipy-notebook: the policy allows it.
    let allowed = JobBuilder::new("ml", "allowed").build();
    cluster.apply_object(allowed).expect("the job is stored");
    let config = configured(&[
        "--argocd-namespace",
        "argocd",
        "--allowed-images",
        "quay.io/jupyter, registry.example.com",
        "--deny-job-placement",
        "tolerations",
    ]);
    operate_with(&cluster, &Policy::default(), config, |cluster| async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        let job = train(&cluster);
        assert_eq!(job["status"]["phase"], "Failed", "{job:#}");
        let ready = condition(&job, "Ready").expect("Ready");
        assert_eq!(ready["reason"], "PodPolicyDenied", "{ready}");
        let message = ready["message"].as_str().unwrap();
        for part in [
            "spec.podConfig.containerImage",
            "docker.io/someone/papermill:1",
            "--allowed-images: quay.io/jupyter/, registry.example.com/",
        ] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert_eq!(
            job["metadata"]["annotations"]["mlops.dev/wave-failed"], "3",
            "its wave fails"
        );
        let failed = events(&cluster, "ValidationFailed");
        assert_eq!(failed.len(), 1, "{failed:#?}");
        assert!(
            failed[0]["message"]
                .as_str()
                .unwrap()
                .contains("spec.podConfig.containerImage"),
            "{:#}",
            failed[0]
        );
        let pods = cluster.list("pods", Some("ml")).unwrap();
        let names: Vec<&str> = pods
            .iter()
            .filter_map(|p| p["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["allowed-g1-r0"], "only the allowed job has a Pod");
        assert_eq!(
            pods[0]["spec"]["automountServiceAccountToken"], false,
            "and no API token"
        );
    })
    .await;
}
