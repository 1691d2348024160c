//! The operator's metrics as Prometheus scrapes them.

use std::collections::BTreeMap;
use std::time::Duration;

use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
use nbv_core::api::Phase;
use nbv_operator::operator::metrics::{Metrics, ReconcileOutcome, TriggerStatus};
use proptest::prelude::*;

/// The value of the sample `series` (name and labels exactly as encoded), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.parse().ok()
    })
}

const FAMILIES: [(&str, &str); 8] = [
    ("notebook_validation_total", "counter"),
    ("notebook_validation_duration_seconds", "histogram"),
    ("argocd_triggers_total", "counter"),
    ("nbv_reconcile_total", "counter"),
    ("nbv_reconcile_duration_seconds", "histogram"),
    ("nbv_reconcile_queue_depth", "gauge"),
    ("nbv_reconcile_errors_total", "counter"),
    ("nbv_application_status_patches_total", "counter"),
];

#[test]
fn every_family_has_help_and_type_once_used() {
    let metrics = Metrics::new();
    metrics.trigger("restart", TriggerStatus::Succeeded);
    metrics.reconcile_error("transient");
    metrics.application_published("patched");
    let text = metrics.encode();
    for (name, kind) in FAMILIES {
        // OpenMetrics names a counter family without its `_total` suffix.
        let family = name.strip_suffix("_total").unwrap_or(name);
        assert!(
            text.contains(&format!("# TYPE {family} {kind}\n")),
            "no TYPE line for {family}:\n{text}"
        );
        let help = format!("# HELP {family} ");
        let help_line = text.lines().find(|line| line.starts_with(&help));
        assert!(
            help_line.is_some_and(|line| line.len() > help.len() + 10),
            "no HELP text for {family}:\n{text}"
        );
    }
    assert!(text.contains("# UNIT notebook_validation_duration_seconds seconds\n"));
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn the_exposition_after_a_fixed_sequence_of_calls() {
    let metrics = Metrics::new();
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(42)));
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(3 * 3600)));
    metrics.validation_finished(Phase::Failed, Some(Duration::from_millis(500)));
    metrics.validation_finished(Phase::Failed, None);
    metrics.trigger("restart", TriggerStatus::Succeeded);
    metrics.trigger("restart", TriggerStatus::Succeeded);
    metrics.trigger("sync", TriggerStatus::Deferred);
    metrics.trigger("refresh", TriggerStatus::Failed);
    metrics.trigger("restart", TriggerStatus::Refused);
    metrics.reconciled(ReconcileOutcome::Ok, Duration::from_millis(12));
    metrics.reconciled(ReconcileOutcome::Error, Duration::from_secs(3));
    metrics.reconcile_error("conflict");
    metrics.application_published("patched");
    metrics.application_published("unchanged");
    // Series order inside a family follows a hash map; sort the samples within each
    // family so that the snapshot is stable.
    insta::assert_snapshot!(sorted_within_families(&metrics.encode()));
}

/// The exposition with the sample lines of each family sorted, comments kept in place,
/// and the values of the process's own figures (`process_*`, measured at the scrape)
/// masked.
fn sorted_within_families(text: &str) -> String {
    let mut out = Vec::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            samples.sort_unstable();
            out.append(&mut samples);
            out.push(line.to_owned());
        } else if line.starts_with("process_") {
            let name = line.split(' ').next().unwrap_or(line);
            samples.push(format!("{name} <measured>"));
        } else {
            samples.push(line.to_owned());
        }
    }
    samples.sort_unstable();
    out.append(&mut samples);
    out.join("\n")
}

/// What every operator exposes, at the first scrape: the process's figures, the
/// build, and the client's requests once one was made.
#[test]
fn the_process_the_build_and_the_clients_requests_are_exposed() {
    let metrics = Metrics::new();
    metrics
        .api_requests()
        .count(&http::Method::GET, "10.0.0.1:6443", Some(200));
    let text = metrics.encode();
    assert_eq!(
        sample(
            &text,
            &format!(
                "nbv_build_info{{version=\"{}\"}}",
                env!("CARGO_PKG_VERSION")
            )
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &text,
            "rest_client_requests_total{code=\"200\",host=\"10.0.0.1:6443\",method=\"GET\"}"
        ),
        Some(1.0)
    );
    for gauge in [
        "process_resident_memory_bytes",
        "process_virtual_memory_bytes",
        "process_open_fds",
        "process_start_time_seconds",
        "process_threads",
    ] {
        assert!(
            sample(&text, gauge).is_some_and(|v| v > 0.0),
            "{gauge} in\n{text}"
        );
    }
    assert!(sample(&text, "process_cpu_seconds_total").is_some_and(|v| v >= 0.0));
    assert!(
        text.contains("# TYPE process_cpu_seconds counter\n"),
        "{text}"
    );
}

#[test]
fn the_ratios_alerts_use_exist_before_any_event() {
    let text = Metrics::new().encode();
    for series in [
        "notebook_validation_total{phase=\"Succeeded\"}",
        "notebook_validation_total{phase=\"Failed\"}",
        "notebook_validation_duration_seconds_count{phase=\"Failed\"}",
        "nbv_reconcile_total{outcome=\"ok\"}",
        "nbv_reconcile_total{outcome=\"error\"}",
        "nbv_reconcile_duration_seconds_count",
    ] {
        assert_eq!(sample(&text, series), Some(0.0), "{series} in\n{text}");
    }
    // Families labelled by free-form values appear with their first series.
    for family in ["nbv_reconcile_errors", "nbv_application_status_patches"] {
        assert!(!text.contains(family), "{family} in\n{text}");
    }
}

#[test]
fn validation_durations_fall_in_notebook_sized_buckets() {
    let metrics = Metrics::new();
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(2 * 3600)));
    let text = metrics.encode();
    let bucket = |le: &str| {
        sample(
            &text,
            &format!(
                "notebook_validation_duration_seconds_bucket{{le=\"{le}\",phase=\"Succeeded\"}}"
            ),
        )
    };
    assert_eq!(bucket("5400.0"), Some(0.0));
    assert_eq!(bucket("7200.0"), Some(1.0));
    assert_eq!(bucket("14400.0"), Some(1.0));
    assert_eq!(bucket("+Inf"), Some(1.0));
}

#[test]
fn the_validation_histogram_has_no_job_name_label() {
    let metrics = Metrics::new();
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(1)));
    let text = metrics.encode();
    assert!(!text.contains("job_name"), "{text}");
}

#[test]
fn free_form_labels_are_bounded() {
    let metrics = Metrics::new();
    for i in 0..100 {
        metrics.reconcile_error(&format!("kind-{i:03}"));
    }
    metrics.reconcile_error("");
    metrics.reconcile_error(&"x".repeat(Metrics::MAX_LABEL_LEN + 1));
    metrics.reconcile_error("kind-000");
    let text = metrics.encode();
    let series: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("nbv_reconcile_errors_total{"))
        .collect();
    assert_eq!(series.len(), Metrics::MAX_LABEL_VALUES + 1, "{text}");
    // The first values are kept; everything past the budget, the empty value and the
    // long value went to "other".
    assert_eq!(
        sample(&text, "nbv_reconcile_errors_total{kind=\"kind-000\"}"),
        Some(2.0)
    );
    let overflow = 100 - Metrics::MAX_LABEL_VALUES + 2;
    assert_eq!(
        sample(&text, "nbv_reconcile_errors_total{kind=\"other\"}"),
        Some(overflow as f64)
    );
}

#[test]
fn label_values_are_escaped() {
    let metrics = Metrics::new();
    metrics.application_published("a\"b");
    let text = metrics.encode();
    assert!(
        text.contains("nbv_application_status_patches_total{result=\"a\\\"b\"} 1"),
        "{text}"
    );
}

const ACTIONS: [&str; 3] = ["restart", "sync", "refresh"];
const STATUSES: [TriggerStatus; 4] = TriggerStatus::ALL;

/// An alert on `increase(argocd_triggers_total{status="failure"}[15m])` sees a first
/// failure only if the series existed before it, at zero.
#[test]
fn every_trigger_series_is_exposed_at_zero_before_the_first_trigger() {
    let text = Metrics::new().encode();
    for action in nbv_core::triggers::Action::ALL {
        for status in TriggerStatus::ALL {
            let series = format!(
                "argocd_triggers_total{{action=\"{}\",status=\"{}\"}}",
                action.as_str(),
                status.as_str()
            );
            assert_eq!(sample(&text, &series), Some(0.0), "{series}:\n{text}");
        }
    }
}

proptest! {
    /// Every call is counted exactly once, under its own labels.
    #[test]
    fn counters_count_each_call_under_its_labels(
        triggers in prop::collection::vec((0..ACTIONS.len(), 0..STATUSES.len()), 0..60),
        runs in prop::collection::vec((any::<bool>(), prop::option::of(0u64..20_000)), 0..60),
    ) {
        let metrics = Metrics::new();
        let mut expected_triggers = BTreeMap::<(usize, usize), u64>::new();
        for &(action, status) in &triggers {
            metrics.trigger(ACTIONS[action], STATUSES[status]);
            *expected_triggers.entry((action, status)).or_default() += 1;
        }
        let mut finished = BTreeMap::<&str, (u64, u64, u64)>::new();
        for &(succeeded, secs) in &runs {
            let phase = if succeeded { Phase::Succeeded } else { Phase::Failed };
            metrics.validation_finished(phase, secs.map(Duration::from_secs));
            let entry = finished.entry(phase.as_str()).or_default();
            entry.0 += 1;
            if let Some(secs) = secs {
                entry.1 += 1;
                entry.2 += secs;
            }
        }
        let text = metrics.encode();
        for (action, name) in ACTIONS.iter().enumerate() {
            for (status, value) in STATUSES.iter().enumerate() {
                let series = format!(
                    "argocd_triggers_total{{action=\"{name}\",status=\"{}\"}}",
                    value.as_str()
                );
                let count = expected_triggers.get(&(action, status)).copied().unwrap_or(0);
                prop_assert_eq!(sample(&text, &series), Some(count as f64), "{}", series);
            }
        }
        for phase in ["Succeeded", "Failed"] {
            let (total, observed, sum) = finished.get(phase).copied().unwrap_or_default();
            let labels = format!("{{phase=\"{phase}\"}}");
            prop_assert_eq!(sample(&text, &format!("notebook_validation_total{labels}")), Some(total as f64));
            prop_assert_eq!(
                sample(&text, &format!("notebook_validation_duration_seconds_count{labels}")),
                Some(observed as f64)
            );
            prop_assert_eq!(
                sample(&text, &format!("notebook_validation_duration_seconds_sum{labels}")),
                Some(sum as f64)
            );
        }
    }
}

mod in_the_controller {
    //! The families labelled by job run through `controller::run` against the in-memory
    //! API server, as `nbv run` runs them: the controller enters each job's scope, and
    //! the gauges read its caches only while it runs.

    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::time::Duration;

    use chrono::{SecondsFormat, TimeDelta};
    use futures::FutureExt;
    use futures::future::BoxFuture;
    use nbv_core::aggregate::JobKey;
    use nbv_core::api::Phase;
    use nbv_core::io::{Request, Response};
    use nbv_core::job::Memory;
    use nbv_operator::operator::config::OperatorConfig;
    use nbv_operator::operator::controller::{self, IoLayer, Runtime};
    use nbv_operator::operator::metrics::{Metrics, MetricsOptions};
    use nbv_operator::operator::reconcile::JobIo;
    use nbv_operator::operator::resync::RECONCILE_CONCURRENCY;
    use nbv_testkit::cluster::FakeCluster;
    use nbv_testkit::fixtures::JobBuilder;
    use serde_json::json;
    use tokio::sync::Semaphore;

    use super::sample;

    type Shutdown = futures::future::Shared<Pin<Box<dyn Future<Output = ()> + Send + Sync>>>;

    fn shutdown_pair() -> (tokio::sync::oneshot::Sender<()>, Shutdown) {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let fut: Pin<Box<dyn Future<Output = ()> + Send + Sync>> = Box::pin(async move {
            let _ = rx.await;
        });
        (tx, fut.shared())
    }

    /// A job of the Application `platform` (Argo CD 3's tracking id).
    fn platform_job(name: &str) -> JobBuilder {
        JobBuilder::new("ml", name)
            .tracking_id("platform")
            .image("quay.io/ml/sklearn-notebook:1")
    }

    fn store(cluster: &FakeCluster, job: JobBuilder) {
        cluster
            .apply_object(job.build())
            .expect("the job is stored");
    }

    fn at(time: chrono::DateTime<chrono::Utc>) -> String {
        time.to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    /// The job `ml/train`, running since now (as another controller reports it).
    fn running_train(cluster: &FakeCluster) {
        let running = platform_job("train")
            .phase(Phase::ValidationRunning)
            .started_at(cluster.now());
        store(cluster, running);
    }

    /// Half a minute later, another controller ends `ml/train`'s run in `phase`, after
    /// `seconds` (--gitops-only); nbv notifies and counts it within half a minute more.
    async fn end_train(cluster: &FakeCluster, phase: &str, seconds: i64) {
        let started = cluster.now();
        tokio::time::sleep(Duration::from_secs(30)).await;
        cluster
            .set_status(
                "notebookvalidationjobs",
                Some("ml"),
                "train",
                json!({"phase": phase, "startTime": at(started),
                       "completionTime": at(started + TimeDelta::seconds(seconds))}),
            )
            .unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
    }

    /// Runs the controller (`gitops_only` or not) on `cluster` with `options`, lets
    /// `scenario` act, and returns the exposition while it ran and after it stopped.
    async fn observe<F: Future<Output = ()>>(
        cluster: &FakeCluster,
        gitops_only: bool,
        options: MetricsOptions,
        scenario: impl FnOnce(FakeCluster, Arc<Metrics>) -> F,
    ) -> (String, String) {
        observe_through(cluster, gitops_only, options, None, scenario).await
    }

    /// [`observe`], with the reconciles' I/O wrapped by `io_layer`.
    async fn observe_through<F: Future<Output = ()>>(
        cluster: &FakeCluster,
        gitops_only: bool,
        options: MetricsOptions,
        io_layer: Option<IoLayer>,
        scenario: impl FnOnce(FakeCluster, Arc<Metrics>) -> F,
    ) -> (String, String) {
        let metrics = Arc::new(Metrics::with_options(options));
        let (stop, shutdown) = shutdown_pair();
        let clock = cluster.clock();
        let runtime = Runtime {
            config: OperatorConfig {
                gitops_only,
                ..OperatorConfig::default()
            },
            metrics: metrics.clone(),
            clock: Arc::new(move || clock.now()),
            instance: "nbv-operator-0".to_owned(),
            io_layer,
            evictions: None,
        };
        let operator = tokio::spawn(controller::run(cluster.client(), runtime, shutdown));
        scenario(cluster.clone(), metrics.clone()).await;
        let running = metrics.encode();
        let _ = stop.send(());
        tokio::time::timeout(Duration::from_secs(60), operator)
            .await
            .expect("the controller stops")
            .expect("the controller does not panic");
        (running, metrics.encode())
    }

    #[tokio::test(start_paused = true)]
    async fn a_finished_run_is_counted_under_its_namespace_and_with_its_name_if_asked() {
        let cluster = FakeCluster::default();
        running_train(&cluster);
        let options = MetricsOptions {
            job_name_label: true,
        };
        let (running, stopped) = observe(&cluster, true, options, |cluster, _| async move {
            end_train(&cluster, "Succeeded", 42).await;
            store(&cluster, platform_job("other").phase(Phase::Failed));
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        assert_eq!(
            sample(
                &running,
                "notebookvalidationjob_validations_total{namespace=\"ml\",status=\"succeeded\"}"
            ),
            Some(1.0),
            "{running}"
        );
        assert_eq!(
            sample(
                &running,
                "notebook_validation_duration_seconds_count{phase=\"Succeeded\",namespace=\"ml\",job_name=\"train\"}"
            ),
            Some(1.0),
            "{running}"
        );
        assert!(
            sample(&running, "notebookvalidationjob_reconciliation_duration_seconds_count{namespace=\"ml\",result=\"success\"}")
                .is_some_and(|n| n >= 1.0),
            "{running}"
        );
        assert_eq!(sample(&running, "nbv_leader"), Some(1.0));
        assert_eq!(
            sample(&running, "nbv_jobs{namespace=\"ml\",phase=\"Succeeded\"}"),
            Some(1.0),
            "{running}"
        );
        assert_eq!(
            sample(&running, "nbv_jobs{namespace=\"ml\",phase=\"Failed\"}"),
            Some(1.0),
            "{running}"
        );
        assert_eq!(
            sample(
                &running,
                "nbv_application_jobs{application=\"platform\",outcome=\"succeeded\"}"
            ),
            Some(1.0),
            "{running}"
        );
        // Stopped (as when the Lease is lost): no longer leading, and no gauges of a
        // cache nothing updates any more.
        assert_eq!(sample(&stopped, "nbv_leader"), Some(0.0));
        assert!(!stopped.contains("nbv_jobs{"), "{stopped}");
        assert!(!stopped.contains("nbv_application_jobs{"), "{stopped}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_deleted_jobs_duration_series_go_with_it() {
        let cluster = FakeCluster::default();
        running_train(&cluster);
        let options = MetricsOptions {
            job_name_label: true,
        };
        let (running, _) = observe(&cluster, true, options, |cluster, metrics| async move {
            end_train(&cluster, "Failed", 5).await;
            let before = metrics.encode();
            assert!(before.contains("job_name=\"train\""), "{before}");
            cluster
                .delete("notebookvalidationjobs", Some("ml"), "train")
                .unwrap();
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        assert!(!running.contains("job_name=\"train\""), "{running}");
        // The counters without the job's name stay.
        assert_eq!(
            sample(&running, "notebook_validation_total{phase=\"Failed\"}"),
            Some(1.0),
            "{running}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn without_the_flag_the_duration_has_no_job_labels() {
        let cluster = FakeCluster::default();
        running_train(&cluster);
        let (running, _) = observe(
            &cluster,
            true,
            MetricsOptions::default(),
            |cluster, _| async move {
                end_train(&cluster, "Succeeded", 42).await;
            },
        )
        .await;
        assert_eq!(
            sample(
                &running,
                "notebook_validation_duration_seconds_count{phase=\"Succeeded\"}"
            ),
            Some(1.0),
            "{running}"
        );
        assert!(!running.contains("job_name="), "{running}");
    }

    /// The reconciles' I/O, each reconcile held at its end until `gate` has a permit
    /// for it.
    struct Held {
        inner: Arc<dyn JobIo>,
        gate: Arc<Semaphore>,
    }

    impl JobIo for Held {
        fn run<'a>(&'a self, job: &'a JobKey, request: Request) -> BoxFuture<'a, Response> {
            self.inner.run(job, request)
        }

        fn finished<'a>(&'a self, job: &'a JobKey) -> BoxFuture<'a, ()> {
            Box::pin(async move {
                self.gate
                    .acquire()
                    .await
                    .expect("the gate stays open")
                    .forget();
                self.inner.finished(job).await;
            })
        }

        fn recall(&self, uid: &str) -> Memory {
            self.inner.recall(uid)
        }

        fn keep(&self, uid: &str, memory: Memory) {
            self.inner.keep(uid, memory);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_queue_depth_counts_the_jobs_that_wait_for_a_reconcile() {
        let cluster = FakeCluster::default();
        let waiting = 8;
        let jobs = usize::from(RECONCILE_CONCURRENCY) + waiting;
        for n in 0..jobs {
            store(
                &cluster,
                platform_job(&format!("job-{n}")).phase(Phase::Failed),
            );
        }
        let gate = Arc::new(Semaphore::new(0));
        let held = gate.clone();
        let layer: IoLayer = Arc::new(move |inner| {
            Arc::new(Held {
                inner,
                gate: held.clone(),
            })
        });
        let (running, stopped) = observe_through(
            &cluster,
            true,
            MetricsOptions::default(),
            Some(layer),
            |cluster, metrics| async move {
                // The listing's sweep asks for every job; as many as the controller
                // runs at once are held, the others wait in its queue.
                tokio::time::sleep(Duration::from_secs(1)).await;
                let full = metrics.encode();
                assert_eq!(
                    sample(&full, "nbv_reconcile_queue_depth"),
                    Some(waiting as f64),
                    "{full}"
                );
                // A change of every job asks for each again: the held ones are to run
                // once more, and each waiting one still waits once.
                for n in 0..jobs {
                    let touched = platform_job(&format!("job-{n}")).label("touched", "1");
                    store(&cluster, touched.phase(Phase::Failed));
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                let merged = metrics.encode();
                assert_eq!(
                    sample(&merged, "nbv_reconcile_queue_depth"),
                    Some(jobs as f64),
                    "{merged}"
                );
                gate.add_permits(Semaphore::MAX_PERMITS / 2);
                tokio::time::sleep(Duration::from_secs(1)).await;
            },
        )
        .await;
        assert_eq!(
            sample(&running, "nbv_reconcile_queue_depth"),
            Some(0.0),
            "{running}"
        );
        assert_eq!(
            sample(&stopped, "nbv_reconcile_queue_depth"),
            Some(0.0),
            "{stopped}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn running_notebooks_counts_the_pods_nbv_creates() {
        let cluster = FakeCluster::default();
        store(&cluster, platform_job("fresh"));
        let (running, _) = observe(&cluster, false, MetricsOptions::default(), |_, _| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
        })
        .await;
        assert_eq!(
            sample(
                &running,
                "notebookvalidationjob_pod_creations_total{namespace=\"ml\",result=\"success\"}"
            ),
            Some(1.0),
            "{running}"
        );
    }
}

mod census {
    //! The cluster gauges' arithmetic on single jobs.

    use chrono::{DateTime, TimeZone, Utc};
    use nbv_core::api::{NotebookValidationJob, Phase};
    use nbv_operator::operator::metrics::{Census, NO_PHASE};
    use nbv_operator::operator::projection::CachedJob;
    use nbv_testkit::fixtures::JobBuilder;
    use serde_json::json;

    fn at(minutes: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + chrono::Duration::minutes(minutes)
    }

    /// `ml/name`, its run in `phase` since minute 0.
    fn started(name: &str, phase: Phase) -> JobBuilder {
        JobBuilder::new("ml", name).phase(phase).started_at(at(0))
    }

    fn typed(job: JobBuilder) -> NotebookValidationJob {
        job.typed().expect("a valid job")
    }

    fn past(job: &NotebookValidationJob, minutes: i64) -> i64 {
        let cached = CachedJob::pack(job.clone(), &crate::label_tracking());
        Census::of([&cached], at(minutes))
            .past_timeout
            .get("ml")
            .copied()
            .unwrap_or(0)
    }

    #[test]
    fn past_timeout_counts_from_the_current_attempt_and_only_while_in_progress() {
        let ten_minutes = json!("10m");
        let running = typed(
            started("r", Phase::ValidationRunning).spec_field("timeout", ten_minutes.clone()),
        );
        assert_eq!(
            past(&running, 10),
            0,
            "at the timeout exactly it is not past it"
        );
        assert_eq!(past(&running, 11), 1);
        // The default timeout is 30 minutes.
        let default = typed(started("d", Phase::Initializing));
        assert_eq!((past(&default, 30), past(&default, 31)), (0, 1));
        // A retry restarts the clock.
        let retried = typed(
            started("t", Phase::ValidationRunning)
                .spec_field("timeout", ten_minutes)
                .status_field("lastRetryTime", json!("2026-01-01T00:08:00Z")),
        );
        assert_eq!((past(&retried, 17), past(&retried, 19)), (0, 1));
        // Ended, not started, or with a timeout nbv refuses: never past it.
        for ended in [Phase::Succeeded, Phase::Failed] {
            let done = typed(started("e", ended).spec_field("timeout", json!("1m")));
            assert_eq!(past(&done, 60), 0, "{ended:?}");
        }
        let not_started = typed(JobBuilder::new("ml", "n").spec_field("timeout", json!("1m")));
        assert_eq!(past(&not_started, 60), 0);
        let invalid =
            typed(started("i", Phase::ValidationRunning).spec_field("timeout", json!("soon")));
        assert_eq!(past(&invalid, 600), 0);
    }

    #[test]
    fn phases_applications_and_abandoned_effects() {
        let effects_applied = |status: &str, reason: &str, message: &str| {
            json!([{"type": "EffectsApplied", "status": status, "reason": reason,
                    "message": message, "lastTransitionTime": "2026-01-01T00:00:00Z"}])
        };
        let unset = typed(JobBuilder::new("ml", "u"));
        let abandoned = typed(
            JobBuilder::new("ml", "a")
                .instance("platform")
                .phase(Phase::Succeeded)
                .status_field(
                    "conditions",
                    effects_applied("False", "EffectAbandoned", "gave up"),
                ),
        );
        let applied = typed(
            JobBuilder::new("ml", "b")
                .instance("platform")
                .phase(Phase::Failed)
                .status_field(
                    "conditions",
                    effects_applied("True", "EffectsApplied", "ok"),
                ),
        );
        let cached =
            [unset, abandoned, applied].map(|job| CachedJob::pack(job, &crate::label_tracking()));
        let census = Census::of(&cached, at(0));
        assert_eq!(census.jobs[&("ml".to_owned(), NO_PHASE)], 1);
        assert_eq!(census.jobs[&("ml".to_owned(), "Succeeded")], 1);
        assert_eq!(census.effects_abandoned["ml"], 1);
        assert_eq!(
            census.applications[&("platform".to_owned(), "succeeded")],
            1
        );
        assert_eq!(census.applications[&("platform".to_owned(), "failed")], 1);
        // A job without a parent Application is in no Application's count.
        assert_eq!(census.applications.values().sum::<i64>(), 2);
    }
}

/// Argo CD's label tracking, under which the fixtures' `app.kubernetes.io/instance`
/// names their Application.
fn label_tracking() -> TrackingSettings {
    TrackingSettings {
        method: TrackingMethod::Label,
        ..TrackingSettings::default()
    }
}
