//! Faults on the wire between nbv and the API server, with the API server's audit log
//! as the witness: a proxy of the suite's own ([`Proxy`]) resets, stalls, slows and
//! partitions the connections of one `nbv run`, and answers some of its requests
//! itself (429 with `Retry-After`, 500 and 503, a watch's 410 Gone) or holds their
//! answers back past the client's deadline. Every effect still happens exactly once,
//! no job is left without a condition saying why it waits, and a leader cut off from
//! the API server stops acting before another replica takes over. See
//! docs/testing.md#faults-on-the-wire.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use hyper::Method;
use nbv_core::api::NotebookValidationJob;
use serde_json::json;

use crate::gitops::deployment;
use crate::leader::{holder, replica};
use crate::resilience::{deployment_json, generation, settled};
use crate::support::audit::{Request, Requests};
use crate::support::proxy::{Direction, Fault, Proxy, Rule};
use crate::support::{Operator, OperatorOptions, Scenario, condition, ended, eventually, rfc3339};

/// How long the jobs of a scenario may take to settle, faults included (a watch stays
/// silent until nbv gives it up, 65 s; one answer is held back past nbv's 30 s request
/// deadline; a failed effect is retried 10 s later, then 20 s).
const SETTLE: Duration = Duration::from_secs(120);

/// A job `name` that restarts Deployment `target` when it succeeds, running (as
/// another controller would have it: `--gitops-only`).
async fn running_job(s: &Scenario, name: &str, target: &str) {
    s.apply(deployment(target)).await;
    s.apply(crate::support::job(
        name,
        "https://git.example.com/m.git",
        "main",
        "t.ipynb",
        json!({
            "argocd.argoproj.io/sync-wave": "1",
            "mlops.dev/on-success-trigger": format!(
                "- {{apiVersion: apps/v1, kind: Deployment, name: {target}, action: restart}}"
            ),
        }),
    ))
    .await;
    s.set_job_status(
        name,
        json!({"phase": "ValidationRunning", "observedGeneration": 1,
               "startTime": rfc3339(Utc::now() - chrono::Duration::seconds(2))}),
    )
    .await;
}

/// Each job's effects happened exactly once (its Deployment restarted once, one
/// notification, `EffectsApplied` true), checked on the objects and in the audit log:
/// one successful PATCH of each Deployment, and as many successful Event creates as
/// there are Events.
async fn exactly_once(s: &Scenario, jobs: &[(String, String)], requests: &Requests) {
    for (job, target) in jobs {
        let d = deployment_json(s, target).await;
        assert_eq!(generation(&d), 2, "{target} restarted exactly once: {d}");
        let patches = ok(requests)
            .filter(|r| r.verb == "patch" && r.resource() == "deployments" && r.name() == target)
            .count();
        assert_eq!(
            patches, 1,
            "one restart patch of {target} reached the API server"
        );
        assert_eq!(
            s.events(job, "ValidationSucceeded").await.len(),
            1,
            "one notification of {job}"
        );
        let j = s.job(job).await;
        let applied = condition(&j, "EffectsApplied");
        assert_eq!(
            applied.as_ref().map(|(status, _, _)| status.as_str()),
            Some("True"),
            "{job}: {applied:?}"
        );
    }
    let events: kube::Api<k8s_openapi::api::core::v1::Event> =
        kube::Api::namespaced(s.client.clone(), &s.namespace);
    let stored = events
        .list(&Default::default())
        .await
        .expect("list Events")
        .items
        .len();
    let created = ok(requests)
        .filter(|r| r.verb == "create" && r.resource() == "events")
        .count();
    assert_eq!(created, stored, "every Event nbv created once, none twice");
}

/// The requests the API server carried out.
fn ok(requests: &Requests) -> impl Iterator<Item = &Request> {
    requests.0.iter().filter(|r| (200..300).contains(&r.code()))
}

/// Samples the jobs: each one that ended more than `grace` ago and whose effects are
/// not all recorded must say why it waits (its `EffectsApplied` condition). Returns
/// the jobs that did not.
async fn unexplained(s: &Scenario, grace: Duration) -> Vec<String> {
    let jobs = s.jobs().list(&Default::default()).await.expect("list jobs");
    let now = Utc::now();
    jobs.items
        .iter()
        .filter(|j| {
            let ended_at: Option<DateTime<Utc>> =
                j.status.as_ref().and_then(|st| st.completion_time);
            let ended_long_ago =
                ended_at.is_some_and(|t| now - t > chrono::Duration::from_std(grace).unwrap());
            ended_long_ago && !settled(j, 1) && condition(j, "EffectsApplied").is_none()
        })
        .map(|j: &NotebookValidationJob| j.metadata.name.clone().unwrap_or_default())
        .collect()
}

/// How long a job may go without a condition saying why it waits after it ended: nbv
/// sees the change at most 65 s late (a silent watch is given up after 60 s and 5 s of
/// grace), and a reconcile writes the job's conditions once its calls are answered,
/// each within nbv's request deadline (30 s).
const EXPLAINED_WITHIN: Duration = Duration::from_secs(75);

/// Waits until every job has settled, sampling [`unexplained`] meanwhile.
async fn settle(s: &Scenario, jobs: &[(String, String)]) {
    let mut silent = Vec::new();
    let deadline = Instant::now() + SETTLE;
    loop {
        silent.extend(unexplained(s, EXPLAINED_WITHIN).await);
        // Settled: the ledger records every effect, and the conditions (written by
        // the reconcile after the one that completes the ledger) say so.
        let mut all = true;
        for (job, _) in jobs {
            let job = s.job(job).await;
            all &= settled(&job, 1)
                && condition(&job, "EffectsApplied").is_some_and(|(status, _, _)| status == "True");
        }
        if all {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {SETTLE:?} waiting for every job's effects to be recorded and \
             reported"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    silent.sort();
    silent.dedup();
    assert!(
        silent.is_empty(),
        "jobs left waiting without a condition saying why: {silent:?}"
    );
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn resets_stalls_and_error_answers_leave_every_effect_once() {
    let s = Scenario::new("e2e-wire").await;
    let audit = s.cluster.required_audit();
    let proxy = Proxy::start(&s.cluster);
    let ns = &s.namespace;
    let jobs: Vec<(String, String)> = ["a", "b", "c", "d"]
        .iter()
        .map(|j| (format!("{j}-train"), format!("{j}-server")))
        .collect();
    for (job, target) in &jobs {
        running_job(&s, job, target).await;
    }
    let mark = audit.mark();
    let operator = s.operator(&OperatorOptions {
        kubeconfig: Some(proxy.kubeconfig().to_owned()),
        ..OperatorOptions::gitops_only(ns)
    });
    eventually(
        "nbv to reconcile through the proxy",
        Duration::from_secs(60),
        || async { (operator.reconciles().await > 0.0).then_some(()) },
    )
    .await;

    // The rules: the first matching one with uses left applies.
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments/");
    // Two 429s in a row for one restart, each asking for 2 s: the client waits them
    // out.
    proxy.inject(
        Rule::on(
            Some(Method::PATCH),
            format!("{deployments}c-server"),
            Fault::Status {
                code: 429,
                retry_after: Some(2),
            },
        )
        .times(2),
    );
    // A restart that takes effect and whose answer is lost with the connection.
    proxy.inject(Rule::on(
        Some(Method::PATCH),
        &deployments,
        Fault::ResetAfterForward,
    ));
    // A restart that takes effect and whose answer comes after nbv's deadline.
    proxy.inject(Rule::on(
        Some(Method::PATCH),
        &deployments,
        Fault::DelayAnswer(Duration::from_secs(35)),
    ));
    // A burst of 500s on the notifications, and of 503s on the jobs' status.
    proxy.inject(
        Rule::on(
            Some(Method::POST),
            format!("/api/v1/namespaces/{ns}/events"),
            Fault::Status {
                code: 500,
                retry_after: None,
            },
        )
        .times(2),
    );
    proxy.inject(
        Rule::on(
            Some(Method::PATCH),
            "/notebookvalidationjobs/",
            Fault::Status {
                code: 503,
                retry_after: Some(1),
            },
        )
        .times(3),
    );
    // The jobs' next watch: its resourceVersion has expired. And the one after it
    // goes silent, its connection stalled: the jobs that end meanwhile are seen only
    // once nbv gives that watch up.
    let jobs_path = "/notebookvalidationjobs";
    proxy.inject(Rule::on(Some(Method::GET), jobs_path, Fault::Gone).watch(true));
    proxy.inject(Rule::on(Some(Method::GET), jobs_path, Fault::Silent).watch(true));

    let started = Instant::now();
    for (job, _) in &jobs[..2] {
        s.set_job_status(job, ended("Succeeded", "ok")).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // In the middle of the watches and of the writes: every connection reset (the
    // jobs' watch comes back to a 410), then the answers stalled, then slowed.
    proxy.reset();
    tokio::time::sleep(Duration::from_secs(2)).await;
    proxy.stall(Direction::Down, true);
    tokio::time::sleep(Duration::from_secs(4)).await;
    proxy.stall(Direction::Down, false);
    proxy.throttle(Some(Duration::from_millis(50)));
    tokio::time::sleep(Duration::from_secs(4)).await;
    proxy.throttle(None);
    proxy.stall(Direction::Both, true);
    tokio::time::sleep(Duration::from_secs(3)).await;
    proxy.stall(Direction::Both, false);
    // Once the jobs' watch has gone silent, the other two jobs end: nbv sees them
    // only when it gives that watch up.
    eventually(
        "the jobs' watch to go silent",
        Duration::from_secs(60),
        || async {
            let applied = proxy.applied();
            applied
                .iter()
                .any(|(_, what)| what.starts_with("Silent for"))
                .then_some(())
        },
    )
    .await;
    for (job, _) in &jobs[2..] {
        s.set_job_status(job, ended("Succeeded", "ok")).await;
    }

    settle(&s, &jobs).await;
    eprintln!(
        "wire faults: every job settled {:.1} s after the first ended",
        started.elapsed().as_secs_f64()
    );
    assert!(
        proxy.unused().is_empty(),
        "faults never applied (the scenario did not test them): {:?}",
        proxy.unused()
    );
    // The client waited out each Retry-After before asking again.
    let throttled: Vec<Duration> = proxy
        .applied()
        .iter()
        .filter(|(_, what)| what.starts_with("Status { code: 429"))
        .map(|(at, _)| *at)
        .collect();
    assert_eq!(throttled.len(), 2, "{:?}", proxy.applied());
    assert!(
        throttled[1] - throttled[0] >= Duration::from_millis(1900),
        "asked again {:?} after a 429 that said Retry-After: 2",
        throttled[1] - throttled[0]
    );
    let requests = audit.since(mark).in_namespace(ns);
    eprintln!("requests of nbv through the faulty wire: {requests}");
    requests.assert_none_forbidden();
    exactly_once(&s, &jobs, &requests).await;
    drop(operator);
    s.clean_up().await;
}

/// The acting writes (everything but the Lease) that reached the API server, by
/// replica, in the order it received them.
fn acting_writes<'a>(requests: &'a Requests, replicas: &[&str]) -> Vec<(&'a Request, usize)> {
    let mut writes: Vec<(&Request, usize)> = ok(requests)
        .filter(|r| r.is_write() && r.resource() != "leases")
        .filter_map(|r| {
            let who = replicas
                .iter()
                .position(|name| r.user_agent.ends_with(&format!("({name})")))?;
            Some((r, who))
        })
        .collect();
    writes.sort_by_key(|(r, _)| r.received());
    writes
}

/// No two replicas act in the same window: grouped into runs by replica in the order
/// the API server received them, every run's last write was answered before the next
/// run's first was received. Returns the runs, as (replica, writes).
fn one_writer_at_a_time(requests: &Requests, replicas: &[&str]) -> Vec<(usize, usize)> {
    let writes = acting_writes(requests, replicas);
    let mut runs: Vec<(usize, Vec<&Request>)> = Vec::new();
    for (r, who) in writes {
        match runs.last_mut() {
            Some((last, run)) if *last == who => run.push(r),
            _ => runs.push((who, vec![r])),
        }
    }
    for pair in runs.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        let last_answered = before
            .1
            .iter()
            .map(|r| r.answered())
            .max()
            .expect("a write");
        let first_received = after.1[0].received();
        assert!(
            last_answered < first_received,
            "{} and {} wrote in the same window: {}'s write {} {} {} was answered at \
             {last_answered}, after {}'s write {} {} {} was received at {first_received}",
            replicas[before.0],
            replicas[after.0],
            replicas[before.0],
            before.1.last().unwrap().verb,
            before.1.last().unwrap().resource(),
            before.1.last().unwrap().name(),
            replicas[after.0],
            after.1[0].verb,
            after.1[0].resource(),
            after.1[0].name(),
        );
    }
    runs.iter().map(|(who, run)| (*who, run.len())).collect()
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn a_leader_cut_off_from_the_api_server_stops_before_another_takes_over() {
    let s = Scenario::new("e2e-partition").await;
    let audit = s.cluster.required_audit();
    let mark = audit.mark();
    let (to_a, to_b) = (Proxy::start(&s.cluster), Proxy::start(&s.cluster));
    let behind = |name: &str, proxy: &Proxy| OperatorOptions {
        kubeconfig: Some(proxy.kubeconfig().to_owned()),
        ..replica(&s, name)
    };
    let a = Operator::start(&s.cluster, &behind("a", &to_a));
    let (a_name, b_name) = (a.identity.clone(), format!("{}-b", s.namespace));
    // A Lease left by an earlier run expires within its duration (15 s).
    eventually("replica a to lead", Duration::from_secs(60), || async {
        (holder(&s).await.as_deref() == Some(a_name.as_str())).then_some(())
    })
    .await;
    let b = Operator::start(&s.cluster, &behind("b", &to_b));
    b.metrics().await;

    let mut jobs = Vec::new();
    // A job ends every 2 s while `for_` lasts, so that a replica that acts shows it.
    let mut next = 0;
    let mut end_jobs_while = async |jobs: &mut Vec<(String, String)>, for_: Duration| {
        let until = Instant::now() + for_;
        while Instant::now() < until {
            let (job, target) = (format!("j{next}"), format!("s{next}"));
            next += 1;
            running_job(&s, &job, &target).await;
            s.set_job_status(&job, ended("Succeeded", "ok")).await;
            jobs.push((job, target));
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    };
    end_jobs_while(&mut jobs, Duration::from_secs(4)).await;

    // 1. Replica a's renewals of the Lease hang (its other requests pass): it must
    // stop acting on its own before the Lease expires and b takes it.
    to_a.inject(
        Rule::on(
            Some(Method::PATCH),
            "/leases/nbv-operator-leader",
            Fault::Hang,
        )
        .times(usize::MAX),
    );
    let cut = Instant::now();
    let mut b_leads = false;
    while !b_leads {
        assert!(
            cut.elapsed() < Duration::from_secs(60),
            "replica b never took over"
        );
        end_jobs_while(&mut jobs, Duration::from_secs(2)).await;
        b_leads = holder(&s).await.as_deref() == Some(b_name.as_str());
    }
    eprintln!(
        "replica b took the Lease {:.1} s after a's renewals began to hang",
        cut.elapsed().as_secs_f64()
    );
    end_jobs_while(&mut jobs, Duration::from_secs(4)).await;
    to_a.clear_rules();

    // 2. Replica b, now leading, is cut off entirely for longer than its Lease: a
    // takes over, and b must have stopped before.
    to_b.partition();
    let cut = Instant::now();
    let mut a_leads = false;
    while !a_leads {
        assert!(
            cut.elapsed() < Duration::from_secs(60),
            "replica a never took over"
        );
        end_jobs_while(&mut jobs, Duration::from_secs(2)).await;
        a_leads = holder(&s).await.as_deref() == Some(a_name.as_str());
    }
    eprintln!(
        "replica a took the Lease {:.1} s after b was cut off",
        cut.elapsed().as_secs_f64()
    );
    end_jobs_while(&mut jobs, Duration::from_secs(4)).await;
    to_b.heal();
    end_jobs_while(&mut jobs, Duration::from_secs(4)).await;

    settle(&s, &jobs).await;
    let requests = audit.since(mark).in_namespace(&s.namespace);
    eprintln!("requests of both replicas: {requests}");
    let runs = one_writer_at_a_time(&requests, &[&a_name, &b_name]);
    eprintln!("acting writes, in runs of one replica (replica, writes): {runs:?}");
    // a acted, then b, then a again: both handovers happened, in order.
    let order: Vec<usize> = runs.iter().map(|(who, _)| *who).collect();
    assert_eq!(order, vec![0, 1, 0], "the runs of writes by replica");
    exactly_once(&s, &jobs, &requests).await;
    drop((a, b));
    s.clean_up().await;
}
