//! The embedding example (`examples/embed.rs`), run against the in-memory API server:
//! it watches the jobs, carries out what nbv-core plans and records it, exactly once.

// The example's `main` runs it against a real cluster; here its operator runs alone.
#[allow(dead_code)]
#[path = "../examples/embed.rs"]
mod embed;

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use embed::{COMPONENT, Context, run};
use nbv_core::api::Phase;
use nbv_testkit::FakeCluster;
use nbv_testkit::fixtures::{JobBuilder, deployment, namespace};
use serde_json::Value;

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, minute, 0).unwrap()
}

fn job(cluster: &FakeCluster, name: &str) -> Value {
    cluster
        .get("notebookvalidationjobs", Some("ml"), name)
        .expect("the cluster answers")
        .expect("the job exists")
}

fn done(job: &Value) -> Vec<&str> {
    job["status"]["effects"]["done"]
        .as_array()
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Starts the operator and waits (in virtual time) until `until` holds.
async fn operate(cluster: &FakeCluster, until: impl Fn(&FakeCluster) -> bool) {
    let clock = cluster.clone();
    let ctx = Context::new(cluster.client()).with_clock(move || clock.now());
    let operator = tokio::spawn(run(ctx));
    for _ in 0..600 {
        if until(cluster) {
            // Let the reconciles that the operator's own writes caused run too.
            tokio::time::sleep(Duration::from_secs(30)).await;
            operator.abort();
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the operator did not converge: {:#?}",
        cluster.objects_of("NotebookValidationJob")
    );
}

/// A cluster at 22:31 holding the namespace `ml` and `jobs`.
fn cluster_with(jobs: impl IntoIterator<Item = JobBuilder>) -> FakeCluster {
    let cluster = FakeCluster::new(at(31));
    cluster.apply_object(namespace("ml")).unwrap();
    for job in jobs {
        cluster.apply_object(job.build()).unwrap();
    }
    cluster
}

/// `ml/name`, whose run ran from 22:29 to 22:30 and ended in `phase`.
fn ended(name: &str, phase: Phase) -> JobBuilder {
    JobBuilder::new("ml", name)
        .phase(phase)
        .started_at(at(29))
        .completed_at(at(30))
}

#[tokio::test(start_paused = true)]
async fn a_succeeded_job_gets_its_waves_and_one_notification() {
    let running = JobBuilder::new("ml", "eval")
        .sync_wave(4)
        .phase(Phase::ValidationRunning)
        .started_at(at(29));
    let cluster = cluster_with([ended("train", Phase::Succeeded).sync_wave(3), running]);

    operate(&cluster, |c| done(&job(c, "train")).len() == 2).await;

    let train = job(&cluster, "train");
    assert_eq!(done(&train), ["notify", "wave"]);
    assert_eq!(
        train["metadata"]["annotations"]["mlops.dev/wave-complete"],
        "3"
    );
    let events = cluster.objects_of("Event");
    assert_eq!(events.len(), 1, "one notification: {events:#?}");
    let event = &events[0];
    assert_eq!(event["reason"], "ValidationSucceeded");
    assert_eq!(event["type"], "Normal");
    assert_eq!(event["involvedObject"]["name"], "train");
    assert_eq!(event["source"]["component"], COMPONENT);

    // A running job owes nothing: no annotation, no ledger.
    let eval = job(&cluster, "eval");
    assert!(eval["status"].get("effects").is_none(), "{eval:#}");
    assert!(
        eval["metadata"]["annotations"]
            .get("mlops.dev/wave-complete")
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn a_restart_of_the_operator_repeats_nothing() {
    let cluster = cluster_with([ended("train", Phase::Failed).sync_wave(3)]);
    operate(&cluster, |c| done(&job(c, "train")).len() == 2).await;
    assert_eq!(
        job(&cluster, "train")["metadata"]["annotations"]["mlops.dev/wave-failed"],
        "3"
    );

    cluster.clear_requests();
    operate(&cluster, |_| true).await;
    let writes: usize = cluster
        .request_counts()
        .iter()
        .filter(|(verb, _)| verb.is_write())
        .map(|(_, count)| count)
        .sum();
    assert_eq!(writes, 0, "{:#?}", cluster.requests());
    let events = cluster.objects_of("Event");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "Warning");
}

#[tokio::test(start_paused = true)]
async fn a_trigger_restarts_its_deployment_once() {
    let restart = "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}";
    let cluster = cluster_with([ended("train", Phase::Succeeded).on_success_trigger(restart)]);
    cluster.apply_object(deployment("ml", "web")).unwrap();

    let fired = |c: &FakeCluster| {
        done(&job(c, "train")).contains(&"trigger/restart:apps/Deployment:ml/web")
    };
    operate(&cluster, fired).await;

    let train = job(&cluster, "train");
    assert!(done(&train).contains(&"notify"), "{train:#}");
    let web = cluster
        .get("deployments", Some("ml"), "web")
        .expect("the cluster answers")
        .expect("the Deployment exists");
    let restarted =
        &web["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"];
    assert_eq!(
        restarted, "2026-01-24T22:30:00Z",
        "the run's completion time"
    );
    let reports: Vec<_> = cluster
        .objects_of("Event")
        .into_iter()
        .filter(|e| e["reason"] == "TriggerSucceeded")
        .collect();
    assert_eq!(reports.len(), 1, "{reports:#?}");
}
