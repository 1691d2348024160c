//! Many jobs completing at once, on a real API server: nbv's requests per completion
//! counted from the audit log, the time until every completion is carried out, and the
//! operator's CPU time per completion (from `/proc/<pid>/stat`).
//!
//! `NBV_E2E_COMPLETIONS` sets how many jobs complete (100 by default, the quick run of
//! CI; 1000 for the figures of docs/performance.md).

use std::time::{Duration, Instant};

use chrono::Utc;
use kube::api::{Patch, PatchParams};
use serde_json::json;
use tokio::task::JoinSet;

use crate::gitops::gitops_job;
use crate::support::{OperatorOptions, Scenario, ended, eventually, rfc3339};

/// Jobs completing at once unless `NBV_E2E_COMPLETIONS` says otherwise.
const QUICK: usize = 100;
/// Requests sent at once while setting the cluster up (the other controller's writes).
const CONCURRENCY: usize = 16;

fn completions() -> usize {
    std::env::var("NBV_E2E_COMPLETIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(QUICK)
}

fn name(i: usize) -> String {
    format!("load-{i:05}")
}

/// Writes `status` to the jobs `0..n`, [`CONCURRENCY`] at a time, as the other
/// controller does.
async fn write_statuses(s: &Scenario, n: usize, status: impl Fn() -> serde_json::Value) {
    let mut tasks = JoinSet::new();
    for i in 0..n {
        if tasks.len() >= CONCURRENCY {
            tasks.join_next().await.expect("a task").expect("the write");
        }
        let jobs = s.jobs();
        let patch = json!({"status": status()});
        tasks.spawn(async move {
            jobs.patch_status(&name(i), &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(drop)
                .expect("write the job's status")
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("the write");
    }
}

/// CPU time (user + system) the process `pid` has used.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/<pid>/stat");
    // The fields after the command name (in parentheses, which may hold spaces):
    // utime and stime are the 12th and 13th of them, in clock ticks.
    let after = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: u64 =
        fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Duration::from_micros(ticks * 1_000_000 / per_second)
}

#[tokio::test]
async fn simultaneous_completions_cost_three_writes_each() {
    let Some(s) = Scenario::new("e2e-load").await else {
        return;
    };
    let n = completions();
    for i in 0..n {
        s.apply(gitops_job(
            &name(i),
            json!({"argocd.argoproj.io/sync-wave": "1"}),
        ))
        .await;
    }
    let started = rfc3339(Utc::now());
    write_statuses(
        &s,
        n,
        || json!({"phase": "ValidationRunning", "observedGeneration": 1, "startTime": started}),
    )
    .await;
    let mut operator = s.operator(&OperatorOptions::gitops_only(&s.namespace));
    // The first start over N running jobs nbv has not seen: nothing to record.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let first_start = s.requests();

    let audit = s.cluster.audit();
    let mark = audit.as_ref().map(|a| a.mark());
    let pid = operator.pid().expect("the operator runs");
    let cpu_before = cpu_time(pid);
    let clock = Instant::now();
    write_statuses(&s, n, || {
        ended("Succeeded", "Validation completed successfully")
    })
    .await;
    let written = clock.elapsed();
    eventually(
        "every completion carried out",
        Duration::from_secs(120),
        || async {
            let jobs = s.jobs().list(&Default::default()).await.expect("list jobs");
            let done = jobs.items.iter().filter(|job| {
                let ledger = job.status.as_ref().and_then(|st| st.effects.as_ref());
                ledger.is_some_and(|l| l.is_done("notify") && l.is_done("wave"))
            });
            (done.count() == n).then_some(())
        },
    )
    .await;
    let carried_out = clock.elapsed();
    let cpu = cpu_time(pid) - cpu_before;
    // The watch events of nbv's own writes still arrive: let their reconciles end.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cpu_settled = cpu_time(pid) - cpu_before;
    operator.stop();

    eprintln!(
        "{n} completions: written in {:.2} s, carried out {:.2} s after the first write; \
         operator CPU {:.1} ms per completion ({:.1} ms with the echoes of its writes)",
        written.as_secs_f64(),
        carried_out.as_secs_f64(),
        cpu.as_secs_f64() * 1000.0 / n as f64,
        cpu_settled.as_secs_f64() * 1000.0 / n as f64,
    );
    let (Some(audit), Some(mark), Some(first_start)) = (audit, mark, first_start) else {
        return;
    };
    let start_status = first_start.count("patch", "notebookvalidationjobs/status");
    eprintln!("first start over {n} running jobs: {start_status} status patches; {first_start}");
    assert_eq!(
        start_status, 0,
        "nothing to record for a running job nbv has not seen"
    );

    let requests = crate::support::Requests(
        audit
            .since(mark)
            .0
            .into_iter()
            .filter(|r| r.namespace() == s.namespace)
            .collect(),
    );
    requests.assert_none_forbidden();
    let status = requests.count("patch", "notebookvalidationjobs/status");
    let wave = requests.count("patch", "notebookvalidationjobs");
    let events = requests.count("create", "events");
    let reads = requests
        .0
        .iter()
        .filter(|r| matches!(r.verb.as_str(), "get" | "list"))
        .count();
    let all = requests.0.iter().filter(|r| r.verb != "watch").count();
    eprintln!(
        "{n} completions: {all} requests, {:.3} per completion: {:.3} status patches, \
         {:.3} wave patches, {:.3} Events, {:.3} reads; {requests}",
        all as f64 / n as f64,
        status as f64 / n as f64,
        wave as f64 / n as f64,
        events as f64 / n as f64,
        reads as f64 / n as f64,
    );
    assert_eq!(
        (status, wave, events),
        (n, n, n),
        "one status patch, one wave patch and one Event per completion"
    );
    assert!(
        all as f64 <= 3.05 * n as f64,
        "{all} requests for {n} completions"
    );
    s.clean_up().await;
}
