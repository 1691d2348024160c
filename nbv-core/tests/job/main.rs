//! The job machine driven as a shell drives it, against a cluster in a map: what it
//! asks, in which order, and that every effect happens once whatever the answers.

mod builds;
mod cluster;
mod parents;
mod pods;

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::io::{ApiAnswer, Step};
use nbv_core::job::{Done, Facts, Memory, Reconcile, Settings};
use nbv_core::plan::{ParsedAnnotations, PlanContext};
use nbv_testkit::fixtures::{JobBuilder, deployment};
use proptest::prelude::*;
use serde_json::Value;

use cluster::Cluster;

const RESTART: &str = "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap()
}

pub(crate) fn job_of(cluster: &Cluster) -> NotebookValidationJob {
    let stored = cluster
        .get("NotebookValidationJob", "ml", "train")
        .expect("the job")
        .clone();
    serde_json::from_value(stored).expect("a job")
}

/// One reconcile of the job as `cluster` holds it, driven to its end.
pub(crate) fn reconcile(cluster: &mut Cluster, memory: Memory, now: DateTime<Utc>) -> Done {
    reconcile_view(cluster, &job_of(cluster), memory, now)
}

/// One reconcile of `job` as observed (possibly an older view than the cluster's).
pub(crate) fn reconcile_view(
    cluster: &mut Cluster,
    job: &NotebookValidationJob,
    memory: Memory,
    now: DateTime<Utc>,
) -> Done {
    reconcile_with(cluster, job, memory, now, Settings::default())
}

/// One reconcile of `job` under `settings` (the operator's configuration).
pub(crate) fn reconcile_with(
    cluster: &mut Cluster,
    job: &NotebookValidationJob,
    memory: Memory,
    now: DateTime<Utc>,
    settings: Settings,
) -> Done {
    let parsed = ParsedAnnotations::of(
        job,
        &PlanContext {
            argocd_namespace: settings.argocd_namespace.clone(),
            ..PlanContext::default()
        },
    );
    let facts = Facts {
        parsed: Arc::new(parsed),
        memory,
        ..Facts::default()
    };
    let mut machine = Reconcile::start(job, Arc::new(settings), facts, now);
    for _ in 0..100 {
        match machine.next() {
            Step::Io(request) => {
                let response = cluster.answer(&request);
                machine.answer(response);
            }
            Step::Done(done) => return done,
        }
    }
    panic!("more than 100 requests: {:#?}", cluster.log);
}

/// A cluster with `job` in it (and the Deployment its trigger restarts).
fn cluster_with(job: Value) -> Cluster {
    let mut cluster = Cluster::new();
    cluster.put(job);
    cluster.put(deployment("ml", "web"));
    cluster
}

fn succeeded() -> Value {
    JobBuilder::new("ml", "train")
        .uid("u1")
        .generation(1)
        .sync_wave(3)
        .on_success_trigger(RESTART)
        .phase(Phase::Succeeded)
        .started_at(t0() - chrono::Duration::minutes(1))
        .completed_at(t0())
        .status_field("observedGeneration", 1.into())
        .build()
}

fn events(cluster: &Cluster, reason: &str) -> usize {
    cluster
        .all("Event")
        .into_iter()
        .filter(|e| e["reason"] == reason)
        .count()
}

#[test]
fn a_new_job_creates_its_pod_before_it_writes_the_run() {
    let mut cluster = cluster_with(
        JobBuilder::new("ml", "train")
            .uid("u1")
            .generation(1)
            .build(),
    );
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(
        cluster.log,
        [
            "DELETE Pod in ml with app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt,mlops.dev/attempt!=g1-r0",
            "read Pod ml/train-g1-r0 from the cache",
            "POST Pod ml/train-g1-r0",
            "read Pod ml/train-g1-r0 from the cache",
            "PATCH NotebookValidationJob ml/train status",
        ]
    );
    let pod = cluster.get("Pod", "ml", "train-g1-r0").expect("the Pod");
    assert_eq!(pod["metadata"]["ownerReferences"][0]["uid"], "u1");
    let status = job_of(&cluster).status.expect("a status");
    assert_eq!(status.phase, Some(Phase::Initializing));
}

#[test]
fn a_succeeded_run_restarts_patches_its_wave_and_notifies_once() {
    let mut cluster = cluster_with(succeeded());
    let first = reconcile(&mut cluster, Memory::default(), t0());
    assert!(first.result.is_ok(), "{:?}", first.result);
    let job = job_of(&cluster);
    let annotations = job.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        annotations
            .get("mlops.dev/wave-complete")
            .map(String::as_str),
        Some("3")
    );
    let ledger = job.status.and_then(|s| s.effects).expect("the ledger");
    assert_eq!(ledger.done.len(), 3, "{ledger:?}");
    let restarted = cluster.get("Deployment", "ml", "web").unwrap();
    assert!(
        !restarted["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"].is_null()
    );
    assert_eq!(events(&cluster, "TriggerSucceeded"), 1);
    assert_eq!(events(&cluster, "ValidationSucceeded"), 1);

    // Looked at again: nothing is owed, nothing is written.
    let writes_before = cluster.log.len();
    let again = reconcile(&mut cluster, first.memory, t0());
    assert!(again.result.is_ok());
    let written: Vec<_> = cluster.log[writes_before..]
        .iter()
        .filter(|r| r.starts_with("PATCH") || r.starts_with("POST") || r.starts_with("DELETE"))
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

/// The number of the request that writes the ledger, in a reconcile of a succeeded
/// run without faults.
fn ledger_write() -> usize {
    let mut cluster = cluster_with(succeeded());
    reconcile(&mut cluster, Memory::default(), t0());
    let last = cluster
        .log
        .iter()
        .rposition(|r| r.ends_with("status"))
        .expect("a status write");
    assert!(
        cluster.log[..last]
            .iter()
            .any(|r| r.starts_with("POST Event")),
        "{:#?}",
        cluster.log
    );
    last
}

#[test]
fn a_conflict_on_the_status_write_still_records_the_ledger() {
    let write = ledger_write();
    let mut cluster = cluster_with(succeeded());
    cluster
        .faults
        .insert(write, ApiAnswer::status(409, "Conflict", "modified"));
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.result.is_ok(), "{:?}\n{:#?}", done.result, cluster.log);
    assert_eq!(
        cluster.log[write + 1],
        "PATCH NotebookValidationJob ml/train status",
        "the ledger alone"
    );
    let ledger = job_of(&cluster)
        .status
        .and_then(|s| s.effects)
        .expect("the ledger");
    assert_eq!(ledger.done.len(), 3);
    assert!(
        done.memory.ledger.is_some(),
        "remembered until the job shows it"
    );
    assert!(
        done.requeue.is_some(),
        "the conditions wait for the next reconcile"
    );
}

#[test]
fn a_failed_status_write_is_retried_without_repeating_the_effects() {
    let write = ledger_write();
    let mut cluster = cluster_with(succeeded());
    cluster.faults.insert(
        write,
        ApiAnswer::status(500, "InternalError", "etcd timeout"),
    );
    let failed = reconcile(&mut cluster, Memory::default(), t0());
    let error = failed.result.as_ref().expect_err("the write failed");
    assert_eq!(error.kind(), "status");
    assert!(failed.requeue.is_some());
    // The retry remembers what was carried out: no second restart, no second report.
    let retried = reconcile(&mut cluster, failed.memory, t0());
    assert!(retried.result.is_ok(), "{:?}", retried.result);
    assert_eq!(events(&cluster, "TriggerSucceeded"), 1);
    let ledger = job_of(&cluster)
        .status
        .and_then(|s| s.effects)
        .expect("the ledger");
    assert_eq!(ledger.done.len(), 3);
}

/// A succeeded job whose trigger annotation is malformed.
fn with_a_malformed_trigger() -> Cluster {
    let mut job = succeeded();
    job["metadata"]["annotations"]["mlops.dev/on-success-trigger"] =
        "- {kind: Deployment, action: restart}".into();
    cluster_with(job)
}

#[test]
fn an_annotation_problem_is_announced_once_when_the_status_write_answer_is_lost() {
    // Where the conditions are written, without faults.
    let mut clean = with_a_malformed_trigger();
    reconcile(&mut clean, Memory::default(), t0());
    assert_eq!(events(&clean, "InvalidAnnotation"), 1);
    let write = clean
        .log
        .iter()
        .rposition(|r| r.ends_with("status"))
        .expect("a status write");
    for lost in [true, false] {
        let mut cluster = with_a_malformed_trigger();
        if lost {
            // Carried out, its answer lost: the next reconcile finds the condition
            // written, with no change left to announce.
            cluster.lost.insert(write);
        } else {
            // Not carried out: the next reconcile announces again, and finds the
            // Event there.
            cluster
                .faults
                .insert(write, ApiAnswer::status(500, "InternalError", "etcd"));
        }
        let failed = reconcile(&mut cluster, Memory::default(), t0());
        assert!(failed.result.is_err(), "{:#?}", cluster.log);
        let retried = reconcile(
            &mut cluster,
            failed.memory,
            t0() + chrono::Duration::seconds(10),
        );
        assert!(retried.result.is_ok(), "{:?}", retried.result);
        assert_eq!(
            events(&cluster, "InvalidAnnotation"),
            1,
            "lost: {lost}\n{:#?}",
            cluster.log
        );
        let condition = job_of(&cluster)
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .find(|c| c.type_ == "AnnotationsValid")
            .expect("the condition");
        assert_eq!(condition.status, "False");
    }
}

#[test]
fn a_view_older_than_the_last_write_writes_nothing() {
    let mut cluster = cluster_with(succeeded());
    let first = reconcile(&mut cluster, Memory::default(), t0());
    // The watch delivers the version the wave patch made, which the ledger's write
    // replaced: on it, the effects look owed.
    let stale = cluster
        .history
        .iter()
        .rev()
        .find(|v| {
            first
                .memory
                .superseded
                .iter()
                .any(|s| v["metadata"]["resourceVersion"] == *s)
        })
        .cloned()
        .expect("a version the write replaced");
    let stale: NotebookValidationJob = serde_json::from_value(stale).unwrap();
    let before = cluster.log.len();
    let done = reconcile_view(&mut cluster, &stale, first.memory, t0());
    assert!(done.result.is_ok());
    assert!(
        cluster.log[before..]
            .iter()
            .all(|r| !r.starts_with("PATCH") && !r.starts_with("POST")),
        "{:#?}",
        &cluster.log[before..]
    );
}

#[test]
fn a_refused_pod_is_announced_and_tried_again() {
    let mut cluster = cluster_with(
        JobBuilder::new("ml", "train")
            .uid("u1")
            .generation(1)
            .build(),
    );
    cluster.faults.insert(
        2,
        ApiAnswer::status(
            403,
            "Forbidden",
            "pods \"train-g1-r0\" is forbidden: exceeded quota: compute",
        ),
    );
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(cluster.log[2], "POST Pod ml/train-g1-r0");
    assert_eq!(
        cluster.log[3],
        "PATCH NotebookValidationJob ml/train status"
    );
    assert!(
        cluster.log[4].starts_with("POST Event ml/"),
        "{:#?}",
        cluster.log
    );
    assert_eq!(events(&cluster, "PodRefused"), 1);
    assert!(done.requeue.is_some_and(|r| r.as_secs() <= 600));
    let status = job_of(&cluster).status.unwrap();
    let admitted = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "PodAdmitted")
        .expect("the PodAdmitted condition");
    assert_eq!(admitted.status, "False");
}

#[test]
fn a_job_being_deleted_asks_for_nothing() {
    let mut job = succeeded();
    job["metadata"]["deletionTimestamp"] = "2026-01-24T22:31:00Z".into();
    let mut cluster = cluster_with(job);
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.deleted);
    assert!(cluster.log.is_empty());
}

fn fault() -> impl Strategy<Value = ApiAnswer> {
    prop_oneof![
        Just(ApiAnswer::status(409, "Conflict", "modified")),
        Just(ApiAnswer::status(500, "InternalError", "etcd")),
        Just(ApiAnswer::status(503, "ServiceUnavailable", "busy")),
        Just(ApiAnswer::no_answer("connection reset")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever requests fail, and however often the job is reconciled again (with
    /// what the process remembers, or after a restart that forgot it), the Deployment
    /// restarts once, the notification exists once, and every effect ends recorded.
    /// Only a restart between carrying a trigger out and recording it may report the
    /// trigger twice (the second finds the restart done). Fewer faults than the
    /// attempts an effect gets (5): five in a row on one effect make it give up, as
    /// designed (the retry policy of `nbv_core::plan`).
    #[test]
    fn whatever_fails_every_effect_happens_once(
        faults in proptest::collection::btree_map(0usize..40, fault(), 0..5),
        restarts in proptest::collection::vec(any::<bool>(), 12),
    ) {
        let mut cluster = cluster_with(succeeded());
        cluster.faults = faults;
        let forgets = restarts.contains(&true);
        let mut memory = Memory::default();
        let mut now = t0();
        for restart in restarts {
            if restart {
                memory = Memory::default();
            }
            let done = reconcile(&mut cluster, memory, now);
            memory = done.memory;
            now += chrono::Duration::minutes(10);
        }
        cluster.faults.clear();
        let done = reconcile(&mut cluster, memory, now + chrono::Duration::days(1));
        prop_assert!(done.result.is_ok(), "{:?}", done.result);
        let job = job_of(&cluster);
        let wave = job.metadata.annotations.unwrap_or_default().get("mlops.dev/wave-complete").cloned();
        prop_assert_eq!(wave.as_deref(), Some("3"));
        // (A wave annotation found in place is not planned again, so not recorded.)
        let ledger = job.status.and_then(|s| s.effects).expect("the ledger");
        prop_assert!(ledger.done.contains("notify"), "{:?}", ledger);
        prop_assert!(ledger.done.contains("trigger/restart:apps/Deployment:ml/web"), "{:?}", ledger);
        prop_assert!(ledger.failed.is_empty(), "{:?}", ledger);
        let web = ("Deployment".to_owned(), "ml".to_owned(), "web".to_owned());
        prop_assert_eq!(cluster.writes.get(&web), Some(&2), "created, then restarted once");
        prop_assert!(forgets || events(&cluster, "TriggerSucceeded") <= 1);
        prop_assert_eq!(events(&cluster, "ValidationSucceeded"), 1);
    }
}
