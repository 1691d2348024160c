//! Memory and start time of `nbv run` over many jobs, on the real API server.
//!
//! The jobs are loaded fast by the administrator (concurrent creates, then the status
//! another controller writes: `Succeeded`, nothing owed but the notification), about
//! 3 KiB of JSON each as the API server serves them (kubectl's
//! `last-applied-configuration` and the managed fields included). nbv is started over
//! them in `--gitops-only`, at the first job count:
//!
//! - a **first start** over jobs it has never seen, which writes what it owes;
//! - a **restart** over the same jobs, now converged, which writes nothing;
//! - a first start and a restart in default mode (Pods watched), then unrelated Pods
//!   are created and default mode is restarted once more;
//!
//! and at each further count (the jobs added are new to nbv) a first start and a
//! restart. Memory per job is read from the restarts.
//!
//! Each start is measured from the process's `/proc/<pid>/status`: `VmRSS` once every
//! job is in the watch cache and reconciled and the reconciles have stopped for 3 s
//! ("settled"; read once nbv's periodic heap trim has run since), and `VmHWM`, the peak
//! resident size since the process started. The
//! time to ready runs from the spawn of the process until the watch cache holds every
//! job (the `nbv_jobs` gauge) and every job was reconciled once
//! (`nbv_reconcile_total`).
//!
//! At the first count, after the unrelated Pods, unrelated Argo CD Applications are
//! created (with the resource list and sync result Argo CD keeps) and default mode is
//! restarted once more; they are deleted before the larger counts.
//!
//! `NBV_E2E_MEMORY=full` runs 1,000, 10,000 and 30,000 jobs, 10,000 Pods and 10,000
//! Applications; `NBV_E2E_MEMORY_JOBS=1000,10000`, `NBV_E2E_MEMORY_PODS=10000` and
//! `NBV_E2E_MEMORY_APPS=10000` choose the counts; otherwise a quick mode runs 1,000 jobs,
//! 1,000 Pods and 1,000 Applications, for CI. `NBV_E2E_NBV` runs
//! another build of nbv (an earlier version, for a before-and-after). Figures are
//! printed, never asserted on, except a bound that does not depend on the machine's
//! speed: the resident memory nbv adds per job stays below a generous multiple of the
//! target. That nbv reads only its own Pods is checked in the audit log: every LIST
//! and WATCH of Pods carries its label selector.
//!
//! [`pods`] measures default mode with a validation Pod for every job.

use std::time::{Duration, Instant};

use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use nbv_core::api::NotebookValidationJob;
use serde_json::{Value, json};

use crate::support::operator::http_get;

mod pods;
use crate::support::audit::Audit;
use crate::support::{Cluster, Mark, OperatorOptions, Scenario, ended};

/// Requests the loader keeps in flight.
const LOAD_CONCURRENCY: usize = 48;
/// How long the reconcile count must stay unchanged for a start to count as settled.
const QUIET: Duration = Duration::from_secs(3);
/// The longest a start may take to settle before the scenario gives up (a first start
/// over 9,000 new jobs took longer than 10 minutes on 2 busy cores, at 3 to 4 status
/// writes per job).
const START_TIMEOUT: Duration = Duration::from_secs(1800);
/// The resident memory nbv may add per job in the quick mode's assertion: the target
/// is 2 KiB beyond the cached object (about 4 KiB in all at 2 KiB of JSON); this bound
/// only catches a regression by a large factor (a second copy of every job, a map
/// that keeps every job's full object).
const KIB_PER_JOB_BOUND: f64 = 24.0;

/// The job counts and the unrelated Pods of this run.
struct Plan {
    jobs: Vec<usize>,
    pods: usize,
    applications: usize,
}

fn plan() -> Plan {
    let full = std::env::var("NBV_E2E_MEMORY").as_deref() == Ok("full");
    let count = |var: &str| -> Option<Vec<usize>> {
        let value = std::env::var(var).ok()?;
        Some(
            value
                .split(',')
                .map(|n| {
                    n.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("{var}: {value:?}"))
                })
                .collect(),
        )
    };
    let jobs = count("NBV_E2E_MEMORY_JOBS").unwrap_or(if full {
        vec![1_000, 10_000, 30_000]
    } else {
        vec![1_000]
    });
    let pods = count("NBV_E2E_MEMORY_PODS")
        .and_then(|p| p.first().copied())
        .unwrap_or(if full { 10_000 } else { 1_000 });
    let applications = count("NBV_E2E_MEMORY_APPS")
        .and_then(|a| a.first().copied())
        .unwrap_or(if full { 10_000 } else { 1_000 });
    Plan {
        jobs,
        pods,
        applications,
    }
}

/// The configuration a user applied with `kubectl apply`, as kubectl records it.
fn last_applied(name: &str, annotations: &Value, labels: &Value) -> String {
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": name, "annotations": annotations, "labels": labels},
        "spec": spec(name),
    })
    .to_string()
}

fn spec(name: &str) -> Value {
    json!({
        "notebook": {"git": {"url": "https://git.example.com/ml/models.git", "ref": "main"},
                     "path": format!("notebooks/training/{name}.ipynb")},
        "podConfig": {"containerImage": "quay.io/jupyter/minimal-notebook:2026-01-05"},
        "timeout": "30m"
    })
}

/// Job `i` of `namespace`: a tracked job of one of ten Applications, as a GitOps
/// repository declares it.
fn job(i: usize) -> Value {
    let name = format!("notebook-{i:05}");
    let labels = json!({
        "app.kubernetes.io/instance": format!("models-{}", i % 10),
        "app.kubernetes.io/part-of": "ml-platform",
        "team": "fraud-detection",
    });
    let annotations = json!({
        "mlops.dev/description": "Trains the fraud model on the last week of transactions \
            and checks its precision and recall against the thresholds of the release.",
    });
    let mut applied = annotations.clone();
    applied["kubectl.kubernetes.io/last-applied-configuration"] =
        json!(last_applied(&name, &annotations, &labels));
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": name, "labels": labels, "annotations": applied},
        "spec": spec(&name),
    })
}

/// Creates jobs `from..to` and ends each with `Succeeded`, as another controller would.
async fn load_jobs(s: &Scenario, from: usize, to: usize) {
    let api = s.jobs();
    let started = Instant::now();
    stream::iter(from..to)
        .for_each_concurrent(LOAD_CONCURRENCY, |i| {
            let api = api.clone();
            async move {
                let object: NotebookValidationJob = serde_json::from_value(job(i)).expect("a job");
                let name = object.metadata.name.clone().expect("a name");
                api.create(&PostParams::default(), &object)
                    .await
                    .unwrap_or_else(|e| panic!("create {name}: {e}"));
                let status = ended("Succeeded", "Validation completed successfully");
                api.patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({ "status": status })),
                )
                .await
                .unwrap_or_else(|e| panic!("write the status of {name}: {e}"));
            }
        })
        .await;
    eprintln!(
        "memory: loaded jobs {from}..{to} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Creates `count` Pods nbv has nothing to do with (no scheduler binds them; they stay
/// Pending).
async fn load_pods(s: &Scenario, count: usize) {
    let api: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    stream::iter(0..count)
        .for_each_concurrent(LOAD_CONCURRENCY, |i| {
            let api = api.clone();
            async move {
                let pod: Pod = serde_json::from_value(json!({
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("worker-{i:05}"),
                                 "labels": {"app": "feature-store", "shard": format!("{}", i % 16)}},
                    "spec": {"containers": [{"name": "worker", "image": "registry.k8s.io/pause:3.10",
                                             "args": ["--shard", format!("{}", i % 16)],
                                             "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}
                }))
                .expect("a Pod");
                api.create(&PostParams::default(), &pod)
                    .await
                    .unwrap_or_else(|e| panic!("create Pod worker-{i:05}: {e}"));
            }
        })
        .await;
}

/// The name of unrelated Application `i` of the scenario.
fn unrelated_application(s: &Scenario, i: usize) -> String {
    format!("{}-unrelated-{i:05}", s.namespace)
}

/// Creates `count` Argo CD Applications nbv has nothing to do with (no job names them
/// or deploys with them), each with the status Argo CD keeps: the resources it
/// deploys and a sync result.
async fn load_applications(s: &Scenario, count: usize) {
    each_application(s, count, |api, name, i| async move {
        let resources: Vec<Value> = (0..8)
            .map(|r| json!({"group": "apps", "version": "v1", "kind": "Deployment",
                            "namespace": "shop", "name": format!("service-{r}"),
                            "status": "Synced", "health": {"status": "Healthy"}}))
            .collect();
        // Argo CD's Application has no status subresource: its status
        // is written with the object, as Argo CD's controller does.
        let app: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": "argocd", "labels": {"team": s.namespace}},
            "spec": {"project": "default",
                     "source": {"repoURL": "https://git.example.com/shop/platform.git",
                                "targetRevision": "main", "path": format!("services/{i}")},
                     "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"}},
            "status": {
                "sync": {"status": "Synced", "revision": "0123456789abcdef0123456789abcdef01234567"},
                "health": {"status": "Healthy"},
                "resources": resources.clone(),
                "operationState": {"phase": "Succeeded", "startedAt": "2026-12-01T10:00:00Z",
                    "finishedAt": "2026-12-01T10:00:30Z",
                    "operation": {"sync": {"revision": "0123456789abcdef0123456789abcdef01234567"}},
                    "syncResult": {"revision": "0123456789abcdef0123456789abcdef01234567",
                                   "resources": resources}}}
        }))
        .expect("an Application");
        api.create(&PostParams::default(), &app)
            .await
            .unwrap_or_else(|e| panic!("create Application {name}: {e}"));
    })
    .await;
}

/// Deletes the `count` unrelated Applications, as many at once as they were created
/// (one collection delete of 10,000 outlasts the API server's request timeout).
async fn delete_applications(s: &Scenario, count: usize) {
    each_application(s, count, |api, name, _| async move {
        api.delete(&name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("delete Application {name}: {e}"));
    })
    .await;
}

/// Runs `f` on each of the `count` unrelated Applications (the API, its name, its
/// index), [`LOAD_CONCURRENCY`] at a time.
async fn each_application<F, Fut>(s: &Scenario, count: usize, f: F)
where
    F: Fn(Api<DynamicObject>, String, usize) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let api = applications_api(s);
    stream::iter(0..count)
        .for_each_concurrent(LOAD_CONCURRENCY, |i| {
            f(api.clone(), unrelated_application(s, i), i)
        })
        .await;
}

fn applications_api(s: &Scenario) -> Api<DynamicObject> {
    Api::namespaced_with(
        s.client.clone(),
        "argocd",
        &crate::support::objects::resource(
            "argoproj.io",
            "v1alpha1",
            "Application",
            "applications",
        ),
    )
}

/// `VmRSS` and `VmHWM` of process `pid`, in KiB.
fn resident(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The sum of the samples of `family` in an exposition whose labels contain `filter`.
fn sum(metrics: &str, family: &str, filter: &str) -> u64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(family) && l[family.len()..].starts_with('{'))
        .filter(|l| l.contains(filter))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// One start of nbv, measured.
struct Start {
    what: String,
    jobs: usize,
    pods: usize,
    ready: Duration,
    settled: Duration,
    rss_kib: u64,
    hwm_kib: u64,
}

/// Starts nbv with `options` over the `jobs` jobs of the namespace and measures it
/// until it has settled; then stops it.
async fn measure(
    s: &Scenario,
    options: &OperatorOptions,
    what: &str,
    jobs: usize,
    pods: usize,
) -> Start {
    let spawned = Instant::now();
    let mut operator = s.operator(options);
    let pid = operator.pid().expect("a running operator");
    let namespace = format!("namespace=\"{}\"", s.namespace);
    let mut ready = None;
    let mut last = (0, Instant::now());
    loop {
        assert!(
            operator.is_running(),
            "nbv exited:\n{}",
            operator.log_tail()
        );
        assert!(
            spawned.elapsed() < START_TIMEOUT,
            "{what}: nbv did not settle in {START_TIMEOUT:?}"
        );
        if let Some(metrics) = http_get(operator.metrics_addr(), "/metrics") {
            let cached = sum(&metrics, "nbv_jobs", &namespace) as usize;
            let reconciled = sum(&metrics, "nbv_reconcile_total", "outcome=");
            if ready.is_none() && cached == jobs && reconciled as usize >= jobs {
                ready = Some(spawned.elapsed());
            }
            if reconciled != last.0 {
                last = (reconciled, Instant::now());
            } else if ready.is_some() && last.1.elapsed() >= QUIET {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let settled = last.1 - spawned;
    // nbv gives the memory its start freed back to the system every
    // `heap::TRIM_PERIOD`: read the resident size once one has passed since.
    tokio::time::sleep(nbv_operator::runtime::heap::TRIM_PERIOD).await;
    let (rss_kib, hwm_kib) = resident(pid);
    operator.stop();
    let start = Start {
        what: what.to_owned(),
        jobs,
        pods,
        ready: ready.expect("ready"),
        settled,
        rss_kib,
        hwm_kib,
    };
    eprintln!("memory: {}", row(&start, None));
    start
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// A row of the table; per job beyond `idle` (nbv over no jobs) when given.
fn row(start: &Start, idle: Option<&Start>) -> String {
    let per_job = match idle {
        Some(idle) if start.jobs > 0 => format!(
            "{:.2} KiB",
            (start.rss_kib as f64 - idle.rss_kib as f64) / start.jobs as f64
        ),
        _ => "–".to_owned(),
    };
    format!(
        "| {} | {} | {} | {:.1} MiB | {} | {:.1} MiB | {:.1} s | {:.1} s |",
        start.what,
        start.jobs,
        start.pods,
        mib(start.rss_kib),
        per_job,
        mib(start.hwm_kib),
        start.ready.as_secs_f64(),
        start.settled.as_secs_f64(),
    )
}

/// The size of one job as the API server serves it (JSON, managed fields included).
async fn served_size(s: &Scenario) -> usize {
    let list = s
        .jobs()
        .list(&ListParams::default().limit(1))
        .await
        .expect("list jobs");
    let job = list.items.first().expect("a job");
    serde_json::to_vec(job).expect("JSON").len()
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn memory_and_start_time() {
    // Which Pods nbv reads is one of its two checks: without the audit log it fails at
    // once.
    let audit = Cluster::from_env().required_audit();
    let s = Scenario::new("e2e-memory").await;
    let plan = plan();
    let gitops = OperatorOptions::gitops_only(&s.namespace);
    let idle = measure(&s, &gitops, "no jobs", 0, 0).await;
    let mut starts = Vec::new();
    let mut loaded = 0;
    let default_mode = OperatorOptions::default_mode(&s.namespace);
    let mut pods = Vec::new();
    let mut applications = None;
    for (step, &jobs) in plan.jobs.iter().enumerate() {
        load_jobs(&s, loaded, jobs).await;
        loaded = jobs;
        // The jobs added since the last count are new to nbv: a first start writes
        // what it owes them (the peak), the restart after it is converged (memory per
        // job is read from restarts).
        let pods_present = if step > 0 { plan.pods } else { 0 };
        starts.push(measure(&s, &gitops, "first start", jobs, pods_present).await);
        starts.push(measure(&s, &gitops, "restart", jobs, pods_present).await);
        if step > 0 {
            continue;
        }
        // At the first count, the Pods' part.
        // The first start in default mode writes what the phase machine adds to the
        // other controller's statuses; the restarts after it are converged.
        pods.push(measure(&s, &default_mode, "first start, default mode", jobs, 0).await);
        pods.push(measure(&s, &default_mode, "restart, default mode", jobs, 0).await);
        load_pods(&s, plan.pods).await;
        let mark = audit.mark();
        pods.push(measure(&s, &default_mode, "restart, default mode", jobs, plan.pods).await);
        pod_reads_are_selected(&audit, mark);
        load_applications(&s, plan.applications).await;
        let with_apps = measure(&s, &default_mode, "restart, default mode", jobs, plan.pods).await;
        eprintln!(
            "memory: {:.3} KiB of RSS per unrelated Application ({} Applications)",
            (with_apps.rss_kib as f64 - pods[2].rss_kib as f64) / plan.applications.max(1) as f64,
            plan.applications
        );
        applications = Some(with_apps);
        // Gone again before the larger counts, so that what a job costs is read
        // between starts that differ only in jobs.
        delete_applications(&s, plan.applications).await;
    }
    let size = served_size(&s).await;

    eprintln!("\nmemory: one job is {size} bytes of JSON as served");
    eprintln!(
        "| start | jobs | unrelated Pods | RSS settled | RSS per job | peak (VmHWM) | ready | settled |"
    );
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|");
    eprintln!("{}", row(&idle, None));
    for start in pods.iter().chain(&starts) {
        eprintln!("{}", row(start, Some(&idle)));
    }
    if let Some(with_apps) = &applications {
        eprintln!(
            "{} (with {} unrelated Applications)",
            row(with_apps, Some(&idle)),
            plan.applications
        );
    }
    let restarts: Vec<&Start> = starts.iter().filter(|s| s.what == "restart").collect();
    if let [first, .., last] = restarts.as_slice() {
        let slope = (last.rss_kib as f64 - first.rss_kib as f64) / (last.jobs - first.jobs) as f64;
        eprintln!(
            "memory: {slope:.2} KiB of RSS per job from {} to {} jobs",
            first.jobs, last.jobs
        );
    }
    let unrelated = (pods[2].rss_kib as f64 - pods[1].rss_kib as f64) / plan.pods as f64;
    eprintln!(
        "memory: {unrelated:.3} KiB of RSS per unrelated Pod ({} Pods)",
        plan.pods
    );

    let restart = restarts.last().expect("a restart");
    let per_job = (restart.rss_kib as f64 - idle.rss_kib as f64) / restart.jobs as f64;
    assert!(
        per_job < KIB_PER_JOB_BOUND,
        "nbv keeps {per_job:.1} KiB per job of {size} bytes (bound {KIB_PER_JOB_BOUND} KiB)"
    );

    let pods: Api<Pod> = Api::namespaced(s.client.clone(), &s.namespace);
    let _ = pods
        .delete_collection(&Default::default(), &ListParams::default())
        .await;
    s.clean_up().await;
}

/// Memory independent of the Pods: nbv lists and watches only the Pods it labelled
/// (read from the audit log since `mark`).
fn pod_reads_are_selected(audit: &Audit, mark: Mark) {
    let crate::support::Requests(requests) = audit.since(mark);
    let pod_reads: Vec<_> = requests
        .iter()
        .filter(|r| r.resource() == "pods" && matches!(r.verb.as_str(), "list" | "watch"))
        .collect();
    assert!(!pod_reads.is_empty(), "nbv watches its validation Pods");
    for read in pod_reads {
        assert!(
            read.request_u_r_i.contains("labelSelector="),
            "a Pod {} without a label selector: {}",
            read.verb,
            read.request_u_r_i
        );
    }
}
