//! Notebook execution in `nbv simulate` (mode `default`): nbv creates the validation
//! Pod of each attempt, the simulated kubelet ends it as the scenario says, and each
//! test checks what the job ends up with: its phase, its `Ready` condition and
//! message (the cells that ran, the failing cell), the Pods of its attempts, its
//! notification Events and whether its on-success trigger fired.
//!
//! The last two tests run every NotebookValidationJob of the upstream samples
//! (`nbv-core/tests/data/upstream/samples/`, found by listing the directory), once
//! with a notebook that succeeds and once with one whose last cell raises.
//!
//! Needs the `simulate` feature (on by default; the image is built without it).
#![cfg(feature = "simulate")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use chrono::{DateTime, TimeDelta, Utc};
use nbv_core::api::{CellStatus, NotebookValidationJobStatus, Phase};
use nbv_core::phase::FailureKind;
use nbv_core::pod::FailureCause;
use nbv_operator::simulate::{Options, Report, Who, run};
use nbv_testkit::scenario::Scenario;
use serde::Deserialize;
use serde_json::{Value, json};

const EPOCH: &str = "2026-03-02T09:00:00Z";
const IMAGE: &str = "quay.io/jupyter/scipy-notebook:2026-01-05";
const TRIGGER: &str = "restart:apps/Deployment:ml/model-server";
/// The error the simulated kubelet's failing notebooks raise in their last cell.
const CELL_ERROR: &str = "KeyError: 'model_path'";

/// A job `ml/<name>` with an on-success rolling restart of `ml/model-server`, and
/// `spec` merged into its spec.
fn job(name: &str, spec: Value) -> Value {
    let mut job = json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "annotations": {
                "mlops.dev/on-success-trigger":
                    "- {apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}\n"
            }
        },
        "spec": {
            "notebook": {"git": {"url": "https://github.com/example/models", "ref": "main"},
                         "path": format!("notebooks/{name}.ipynb")},
            "podConfig": {"containerImage": IMAGE}
        }
    });
    if let (Some(target), Some(extra)) = (job["spec"].as_object_mut(), spec.as_object()) {
        target.extend(extra.clone());
    }
    job
}

/// A scenario in mode `default` with namespace `ml`, the Deployment `ml/model-server`
/// and `jobs`.
fn scenario(name: &str, jobs: Vec<Value>, outcomes: Value, timeline: Value) -> Scenario {
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}),
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "model-server", "namespace": "ml"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "model-server"}},
                "template": {"metadata": {"labels": {"app": "model-server"}},
                             "spec": {"containers": [{"name": "server", "image": "example/model-server:1"}]}}
            }
        }),
    ];
    objects.extend(jobs);
    let scenario = json!({
        "name": name,
        "mode": "default",
        "epoch": EPOCH,
        "settle": "20m",
        "objects": objects,
        "podOutcomes": outcomes,
        "timeline": timeline,
    });
    Scenario::from_yaml(&scenario.to_string())
        .unwrap_or_else(|e| panic!("scenario {name} does not read: {e}"))
}

/// Plays `scenario`; every invariant must hold (among them: exactly one notification
/// Event per terminal transition, none for anything else).
fn play(scenario: &Scenario) -> Report {
    let report = run(scenario, &Options::default())
        .unwrap_or_else(|e| panic!("scenario {} cannot be played: {e}", scenario.name));
    assert!(report.passed(), "{}", report.render());
    report
}

/// The virtual time `m:ss` after the start.
fn at(offset: &str) -> DateTime<Utc> {
    let epoch: DateTime<Utc> = EPOCH.parse().expect("a time");
    let (minutes, seconds) = offset.split_once(':').expect("m:ss");
    epoch
        + TimeDelta::minutes(minutes.parse().expect("minutes"))
        + TimeDelta::seconds(seconds.parse().expect("seconds"))
}

/// A condition of the job as the timeline shows nbv writing it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Condition {
    at: DateTime<Utc>,
    status: String,
    reason: String,
    /// Its message's first line, at most 90 characters (longer ones end in `…`).
    message: String,
}

/// What a simulation shows of one job.
#[derive(Debug)]
struct JobView {
    phase: Option<String>,
    /// The job's final `status`.
    status: NotebookValidationJobStatus,
    /// The phases nbv wrote, in order.
    phases: Vec<String>,
    /// `Ready` as nbv set it, in order.
    ready: Vec<Condition>,
    /// `Retrying` as nbv set it, in order.
    retrying: Vec<Condition>,
    /// The validation Pods nbv created, in order (names).
    pods_created: Vec<String>,
    /// The validation Pods nbv deleted.
    pods_deleted: Vec<String>,
    /// The kubelet's account of the job's Pods.
    kubelet: Vec<(DateTime<Utc>, String)>,
    /// Notification Events (`Validation…`) about the job, by reason, in order.
    notifications: Vec<String>,
    /// Terminal transitions.
    completions: Vec<Phase>,
    /// Triggers carried out.
    triggers: Vec<String>,
}

impl JobView {
    fn of(report: &Report, key: &str) -> JobView {
        let (namespace, name) = key.split_once('/').expect("namespace/name");
        let job_prefix = format!("job {key}: ");
        let pod_prefix = format!("{namespace}/{name}-g");
        let event_infix = format!(" about job {key}: ");
        let mut view = JobView {
            phase: report.jobs.get(key).and_then(|j| j.phase.clone()),
            status: report
                .jobs
                .get(key)
                .filter(|j| !j.status.is_null())
                .map(|j| serde_json::from_value(j.status.clone()).expect("a job status"))
                .unwrap_or_default(),
            phases: Vec::new(),
            ready: Vec::new(),
            retrying: Vec::new(),
            pods_created: Vec::new(),
            pods_deleted: Vec::new(),
            kubelet: Vec::new(),
            notifications: Vec::new(),
            completions: report
                .completions
                .iter()
                .filter(|c| c.job == key)
                .map(|c| c.phase)
                .collect(),
            triggers: report
                .triggers_fired
                .iter()
                .filter(|t| t.job == key)
                .map(|t| t.trigger.clone())
                .collect(),
        };
        let pod_name = |rest: &str| {
            rest.strip_prefix(&format!("{namespace}/"))
                .map(|p| p.split(' ').next().unwrap_or_default().to_owned())
        };
        for entry in &report.timeline {
            let text = entry.text.as_str();
            match entry.who {
                Who::Nbv => {
                    if let Some(rest) = text.strip_prefix(&job_prefix) {
                        if let Some(phase) = rest.strip_prefix("phase ") {
                            view.phases.push(phase.to_owned());
                        } else if let Some(rest) = rest.strip_prefix("condition Ready=") {
                            view.ready.push(condition(entry.at, rest));
                        } else if let Some(rest) = rest.strip_prefix("condition Retrying=") {
                            view.retrying.push(condition(entry.at, rest));
                        }
                    } else if let Some(rest) = text.strip_prefix("created Pod ")
                        && rest.starts_with(&pod_prefix)
                    {
                        view.pods_created.extend(pod_name(rest));
                    } else if let Some(rest) = text.strip_prefix("deleted Pod ")
                        && rest.starts_with(&pod_prefix)
                    {
                        view.pods_deleted.extend(pod_name(rest));
                    } else if let Some(rest) = text.strip_prefix("Event Validation")
                        && rest.contains(&event_infix)
                    {
                        let reason = rest.split(' ').next().unwrap_or_default();
                        view.notifications.push(format!("Validation{reason}"));
                    }
                }
                Who::Kubelet if text.contains(&pod_prefix) => {
                    view.kubelet.push((entry.at, text.to_owned()));
                }
                _ => {}
            }
        }
        view
    }

    /// The last `Ready` condition.
    fn ready(&self) -> &Condition {
        self.ready.last().expect("nbv set Ready")
    }

    /// `Retrying` as nbv set it: when, its status and reason.
    fn retry_steps(&self) -> Vec<(DateTime<Utc>, &str, &str)> {
        self.retrying
            .iter()
            .map(|c| (c.at, c.status.as_str(), c.reason.as_str()))
            .collect()
    }

    /// `status.retryCount`, which must agree with the Pods created: one per attempt.
    fn retries(&self) -> usize {
        let recorded = usize::try_from(self.status.retry_count.unwrap_or(0)).expect("retries");
        assert_eq!(
            recorded,
            self.pods_created.len().saturating_sub(1),
            "retryCount against the Pods created: {:?}",
            self.pods_created
        );
        recorded
    }

    /// `status.validationPodName`, which must be the Pod the job last reported
    /// validating in (as the `ValidationRunning` message names it).
    fn validation_pod(&self) -> Option<&str> {
        let reported = self
            .ready
            .iter()
            .rev()
            .find_map(|c| c.message.strip_prefix("Validating notebook (pod: "))
            .and_then(|rest| rest.strip_suffix(')'));
        let recorded = self.status.validation_pod_name.as_deref();
        if reported.is_some() {
            assert_eq!(recorded, reported, "validationPodName");
        }
        recorded
    }

    /// Checks `status.results`: `cells` cells in order, each succeeded but
    /// `failed_cell`, which failed with the kubelet's error; and that `status.message`
    /// is what `Ready` shows.
    fn assert_results(&self, cells: usize, failed_cell: Option<usize>) {
        let results = self.status.results.as_deref().unwrap_or_default();
        let seen: Vec<(i64, CellStatus)> =
            results.iter().map(|r| (r.cell_index, r.status)).collect();
        let expected: Vec<(i64, CellStatus)> = (0..cells)
            .map(|i| {
                let status = if Some(i) == failed_cell {
                    CellStatus::Failure
                } else {
                    CellStatus::Success
                };
                (i64::try_from(i).expect("index"), status)
            })
            .collect();
        assert_eq!(seen, expected, "status.results");
        for result in results {
            let failed = result.status == CellStatus::Failure;
            assert_eq!(
                result
                    .error_message
                    .as_deref()
                    .is_some_and(|e| e.contains(CELL_ERROR)),
                failed,
                "errorMessage of cell {}: {:?}",
                result.cell_index,
                result.error_message
            );
            assert_eq!(
                result.execution_time.as_deref(),
                Some("1.5s"),
                "executionTime"
            );
        }
        let message = self.status.message.as_deref().unwrap_or_default();
        let shown = self.ready().message.trim_end_matches('…');
        assert!(
            message.starts_with(shown),
            "status.message {message:?} against Ready {shown:?}"
        );
    }
}

/// `<status> (<reason>): <message>`.
fn condition(at: DateTime<Utc>, text: &str) -> Condition {
    let (status, rest) = text.split_once(" (").expect("status (reason)");
    let (reason, message) = rest.split_once("): ").expect("(reason): message");
    Condition {
        at,
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
    }
}

/// The success message for `cells` cells of 1.5 s each (the simulated kubelet's).
fn cells_ran(cells: u32) -> String {
    format!("{cells} code cells ran in {}s", f64::from(cells) * 1.5)
}

/// Checks a run whose first attempt failed for the transient `cause` and whose retry
/// succeeded with `cells` cells: `Retrying` scheduled, started and succeeded at
/// `steps`, the retry scheduled for `retry_at`, the success message, one success Event
/// (a transient failure is not a terminal transition) and one trigger.
fn assert_one_retry_then_success(
    report: &Report,
    view: &JobView,
    steps: [&str; 3],
    retry_at: &str,
    cause: &str,
    cells: u32,
) {
    assert_eq!(
        view.retry_steps(),
        [
            (at(steps[0]), "True", "RetryScheduled"),
            (at(steps[1]), "True", "RetryStarted"),
            (at(steps[2]), "False", "RetrySucceeded"),
        ]
    );
    let scheduled =
        format!("Retry 1/3 scheduled for {retry_at} after a transient failure: {cause}");
    assert!(
        view.retrying[0].message.starts_with(&scheduled),
        "{:?}",
        view.retrying[0]
    );
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "ValidationSucceeded")
    );
    assert_eq!(
        ready.message,
        format!(
            "Notebook validation succeeded after 1 retry: {}",
            cells_ran(cells)
        )
    );
    assert_eq!(view.completions, [Phase::Succeeded]);
    assert_eq!(view.notifications, ["ValidationSucceeded"]);
    assert_eq!(report.events_by_reason.get("ValidationFailed"), None);
    assert_eq!(view.triggers, [TRIGGER]);
}

#[test]
fn a_notebook_that_runs_through_succeeds_once_and_fires_its_trigger() {
    let report = play(&scenario(
        "success",
        vec![job("train", json!({}))],
        json!([{"job": "ml/train", "outcome": "succeeded", "runFor": "3m", "cells": 7}]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/train");
    view.assert_results(7, None);

    assert_eq!(view.phase.as_deref(), Some("Succeeded"));
    assert_eq!(
        view.phases,
        ["Initializing", "ValidationRunning", "Succeeded"]
    );
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "ValidationSucceeded")
    );
    assert_eq!(
        ready.message,
        format!("Notebook validation succeeded: {}", cells_ran(7))
    );
    assert_eq!(view.pods_created, ["train-g1-r0"]);
    assert_eq!(view.retries(), 0);
    assert!(view.retrying.is_empty(), "{:?}", view.retrying);
    assert_eq!(view.validation_pod(), Some("train-g1-r0"));
    // The Pod starts 5 s after the kubelet sees it and runs its 3 minutes.
    assert_eq!(
        view.kubelet.last().map(|(t, s)| (*t, s.as_str())),
        Some((at("3:06"), "Pod ml/train-g1-r0 ended: Succeeded"))
    );
    assert_eq!(ready.at, at("3:06"));

    assert_eq!(view.completions, [Phase::Succeeded]);
    assert_eq!(view.notifications, ["ValidationSucceeded"]);
    assert_eq!(report.events_by_reason.get("ValidationSucceeded"), Some(&1));
    assert_eq!(view.triggers, [TRIGGER]);
    assert!(
        report.timeline.iter().any(|e| e.who == Who::Nbv
            && e.text
                .starts_with("rolling restart of Deployment ml/model-server")),
        "{}",
        report.render()
    );
}

#[test]
fn a_cell_that_raises_fails_the_run_at_once_without_a_retry() {
    let report = play(&scenario(
        "notebook-error",
        vec![job("evaluate", json!({}))],
        json!([{"job": "ml/evaluate", "outcome": "failed", "runFor": "2m", "cells": 5}]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/evaluate");
    view.assert_results(5, Some(4));

    assert_eq!(
        FailureCause::NotebookCellFailed.kind(),
        FailureKind::Permanent
    );
    assert_eq!(view.phase.as_deref(), Some("Failed"));
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "NotebookCellFailed")
    );
    // Cells 0 to 4 ran; the last one raised.
    assert_eq!(
        ready.message,
        format!("Validation failed: NotebookCellFailed: cell 4: {CELL_ERROR}")
    );
    // Permanent: three retries were allowed, none was made.
    assert_eq!(view.pods_created, ["evaluate-g1-r0"]);
    assert_eq!(view.retries(), 0);
    assert!(view.retrying.is_empty(), "{:?}", view.retrying);
    assert_eq!(view.validation_pod(), Some("evaluate-g1-r0"));

    assert_eq!(view.completions, [Phase::Failed]);
    assert_eq!(view.notifications, ["ValidationFailed"]);
    assert_eq!(report.events_by_reason.get("ValidationFailed"), Some(&1));
    assert!(view.triggers.is_empty(), "{:?}", view.triggers);
}

#[test]
fn an_image_pull_back_off_is_retried_and_the_retry_succeeds() {
    let report = play(&scenario(
        "image-pull-back-off",
        vec![job("train", json!({}))],
        json!([
            {"job": "ml/train", "attempt": 0, "outcome": "imagePullBackOff"},
            {"job": "ml/train", "outcome": "succeeded", "runFor": "2m", "cells": 4}
        ]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/train");
    view.assert_results(4, None);

    assert_eq!(
        FailureCause::ImagePullBackOff.kind(),
        FailureKind::Transient
    );
    assert_eq!(view.phase.as_deref(), Some("Succeeded"));
    assert_eq!(view.pods_created, ["train-g1-r0", "train-g1-r1"]);
    assert_eq!(view.pods_deleted, ["train-g1-r0"]);
    assert_eq!(view.retries(), 1);
    assert_eq!(view.validation_pod(), Some("train-g1-r1"));

    let stuck = view
        .kubelet
        .iter()
        .find(|(_, s)| s.contains("train-g1-r0 cannot pull the image (ImagePullBackOff)"))
        .map(|(t, _)| *t);
    assert_eq!(stuck, Some(at("0:06")));
    // The first Pod waits on its image from 0:06: nbv gives it the 5-minute start
    // grace, then retries after the first backoff (1 minute); the retry's Pod starts
    // at 6:12 and runs 2 minutes.
    assert_one_retry_then_success(
        &report,
        &view,
        ["5:06", "6:06", "8:12"],
        "2026-03-02T09:06:06Z",
        "ImagePullBackOff",
        4,
    );
}

#[test]
fn a_run_longer_than_spec_timeout_is_stopped_at_the_deadline_and_fails_for_good() {
    let report = play(&scenario(
        "timeout",
        vec![
            job("slow", json!({"timeout": "1m"})),
            job("quick", json!({"timeout": "5m"})),
            job("stuck", json!({"timeout": "1m"})),
        ],
        json!([
            {"job": "ml/slow", "outcome": "succeeded", "runFor": "3m", "cells": 6},
            {"job": "ml/quick", "outcome": "succeeded", "runFor": "3m", "cells": 6},
            {"job": "ml/stuck", "outcome": "imagePullBackOff"}
        ]),
        json!([]),
    ));

    // The core decides a timeout is permanent: the same notebook would take as long.
    assert_eq!(FailureCause::Timeout.kind(), FailureKind::Permanent);
    let slow = JobView::of(&report, "ml/slow");
    // Stopped before the notebook reported anything: no cell results.
    slow.assert_results(0, None);
    assert_stopped_at_one_minute(&slow, "slow");
    let ready = slow.ready();
    assert!(
        ready.message.starts_with(
            "Validation failed: Timeout: the notebook did not finish within spec.timeout (1m)"
        ),
        "{ready:?}"
    );
    assert_eq!(ready.at, at("1:06"));

    // The same run within its timeout is not stopped.
    let quick = JobView::of(&report, "ml/quick");
    assert_eq!(quick.phase.as_deref(), Some("Succeeded"));
    assert_eq!(
        quick.kubelet.last().map(|(t, s)| (*t, s.as_str())),
        Some((at("3:06"), "Pod ml/quick-g1-r0 ended: Succeeded"))
    );
    assert_eq!(quick.notifications, ["ValidationSucceeded"]);
    assert_eq!(quick.triggers, [TRIGGER]);

    // A Pod that waits on its image is stopped at its deadline too, before the
    // 5-minute start grace would fail the attempt as a (transient) image pull
    // back-off.
    let stuck = JobView::of(&report, "ml/stuck");
    assert_stopped_at_one_minute(&stuck, "stuck");
    // The notebook never ran: the message says so, and names what the Pod waited on.
    assert_eq!(
        stuck.status.message.as_deref(),
        Some(
            "Validation failed: Timeout: the notebook never started within spec.timeout (1m): \
             its container was still waiting (ImagePullBackOff) when the pod was stopped; fix \
             what keeps the pod from starting (image, volumes, node resources) or raise \
             spec.timeout"
        )
    );
}

/// Checks job `ml/<name>` with `timeout: 1m`: its Pod, started at 0:06, stopped at its
/// deadline, and the job failed for good (`Timeout`, no retry, no trigger).
fn assert_stopped_at_one_minute(view: &JobView, name: &str) {
    assert_eq!(view.phase.as_deref(), Some("Failed"), "{name}");
    assert_eq!(
        view.kubelet.last().map(|(t, s)| (*t, s.clone())),
        Some((
            at("1:06"),
            format!(
                "Pod ml/{name}-g1-r0 ended: DeadlineExceeded (activeDeadlineSeconds 60 passed \
                 since it started)"
            )
        ))
    );
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Timeout"),
        "{name}"
    );
    assert_eq!(view.pods_created, [format!("{name}-g1-r0")]);
    assert_eq!(view.retries(), 0, "{name}");
    assert!(view.retrying.is_empty(), "{name}: {:?}", view.retrying);
    assert_eq!(view.completions, [Phase::Failed], "{name}");
    assert_eq!(view.notifications, ["ValidationFailed"], "{name}");
    assert!(view.triggers.is_empty(), "{name}: {:?}", view.triggers);
}

#[test]
fn an_evicted_pod_is_retried_and_the_retry_succeeds() {
    let report = play(&scenario(
        "eviction",
        vec![job("train", json!({}))],
        json!([
            {"job": "ml/train", "attempt": 0, "outcome": "evicted", "runFor": "3m"},
            {"job": "ml/train", "attempt": 1, "outcome": "succeeded", "runFor": "4m", "cells": 12}
        ]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/train");
    view.assert_results(12, None);

    assert_eq!(FailureCause::Evicted.kind(), FailureKind::Transient);
    assert_eq!(view.phase.as_deref(), Some("Succeeded"));
    assert_eq!(view.pods_created, ["train-g1-r0", "train-g1-r1"]);
    assert_eq!(view.pods_deleted, ["train-g1-r0"]);
    assert_eq!(view.retries(), 1);
    assert_eq!(view.validation_pod(), Some("train-g1-r1"));
    // Evicted at 3:06; retried after the first backoff (1 minute); the retry's Pod
    // starts at 4:12 and runs 4 minutes.
    assert_one_retry_then_success(
        &report,
        &view,
        ["3:06", "4:06", "8:12"],
        "2026-03-02T09:04:06Z",
        "Evicted",
        12,
    );
}

#[test]
fn an_operator_restarted_mid_run_observes_the_same_pod() {
    // A crash while the Pod runs (back 30 s later, the Pod still running), and a crash
    // after which the Pod ends while no operator runs.
    for (name, crash, down_for) in [("running", "2m", "30s"), ("ended", "3m", "2m")] {
        let report = play(&scenario(
            &format!("restart-{name}"),
            vec![job("train", json!({}))],
            json!([{"job": "ml/train", "outcome": "succeeded", "runFor": "4m", "cells": 9}]),
            json!([{"at": crash, "restartOperator": {"downFor": down_for}}]),
        ));
        let view = JobView::of(&report, "ml/train");
        view.assert_results(9, None);
        let render = report.render();

        assert_eq!(
            (report.operator.starts, report.operator.crashes),
            (2, 1),
            "{render}"
        );
        assert_eq!(view.phase.as_deref(), Some("Succeeded"), "{render}");
        // One Pod for the one attempt, never deleted or replaced.
        assert_eq!(view.pods_created, ["train-g1-r0"], "{render}");
        assert!(view.pods_deleted.is_empty(), "{render}");
        assert_eq!(
            view.kubelet
                .iter()
                .filter(|(_, s)| s.starts_with("scheduled Pod"))
                .count(),
            1,
            "{render}"
        );
        let ready = view.ready();
        assert_eq!(
            ready.message,
            format!("Notebook validation succeeded: {}", cells_ran(9)),
            "{render}"
        );
        // The Pod ends at 4:06; the second operator (up at 2:30 or 5:00) records it.
        let restarted = if name == "running" {
            at("4:06")
        } else {
            at("5:00")
        };
        assert_eq!(ready.at, restarted, "{render}");
        assert_eq!(view.completions, [Phase::Succeeded], "{render}");
        assert_eq!(view.notifications, ["ValidationSucceeded"], "{render}");
        assert_eq!(view.triggers, [TRIGGER], "{render}");
    }
}

// ---------------------------------------------------------------------------------
// The upstream samples.

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../nbv-core/tests/data/upstream/samples")
}

/// Every NotebookValidationJob of every sample file, with its file name.
fn sample_jobs() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .expect("the samples directory exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let mut jobs = Vec::new();
    for path in files {
        let file = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 name")
            .to_owned();
        let text = std::fs::read_to_string(&path).expect("readable");
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let value = Value::deserialize(document)
                .unwrap_or_else(|e| panic!("{file}: a document is not YAML: {e}"));
            if value["kind"] == "NotebookValidationJob" {
                jobs.push((file.clone(), value));
            }
        }
    }
    jobs
}

fn build_enabled(job: &Value) -> bool {
    job.pointer("/spec/podConfig/buildConfig/enabled") == Some(&json!(true))
}

/// A scenario with `job` alone in its namespace (its own, or `default`), the
/// namespace, the ServiceAccount and Secrets it names (as the samples' prerequisites
/// create them), and `outcome` for its Pods.
fn sample_scenario(file: &str, job: &Value, outcome: &str) -> (Scenario, String) {
    let mut job = job.clone();
    let namespace = job["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_owned();
    job["metadata"]["namespace"] = json!(namespace);
    let name = job["metadata"]["name"]
        .as_str()
        .expect("a named job")
        .to_owned();
    let key = format!("{namespace}/{name}");

    let mut objects =
        vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})];
    let config = &job["spec"]["podConfig"];
    if let Some(account) = config["serviceAccountName"].as_str() {
        objects.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                            "metadata": {"name": account, "namespace": namespace}}));
    }
    let mut secrets: BTreeSet<&str> = BTreeSet::new();
    secrets.extend(
        job.pointer("/spec/notebook/git/credentialsSecret")
            .and_then(Value::as_str),
    );
    secrets.extend(
        config["credentials"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    secrets.extend(
        config["envFrom"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.pointer("/secretRef/name").and_then(Value::as_str)),
    );
    for secret in secrets {
        objects.push(json!({"apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": secret, "namespace": namespace},
                            "stringData": {"token": "placeholder"}}));
    }
    objects.push(job.clone());
    let scenario = json!({
        "name": format!("sample {file} {key} {outcome}"),
        "mode": "default",
        "epoch": EPOCH,
        "settle": "10m",
        "objects": objects,
        "podOutcomes": [{"job": key, "outcome": outcome, "runFor": "2m", "cells": 6}],
    });
    let scenario = Scenario::from_yaml(&scenario.to_string())
        .unwrap_or_else(|e| panic!("{file} {key}: the scenario does not read: {e}"));
    (scenario, key)
}

/// The field of a sample that asks for a check nbv does not carry out yet, as the
/// samples spell them.
fn unimplemented_field(job: &Value) -> Option<&'static str> {
    let spec = &job["spec"];
    let set = |field: &str| !spec[field].is_null();
    if set("goldenNotebook") {
        Some("spec.goldenNotebook")
    } else if set("validationConfig") {
        Some("spec.validationConfig")
    } else if set("modelValidation") && spec["modelValidation"]["enabled"] != json!(false) {
        Some("spec.modelValidation")
    } else if set("retryPolicy") {
        Some("spec.retryPolicy")
    } else {
        None
    }
}

/// Checks a sample that asks for what nbv does not carry out: failed at once with
/// `reason` and a message starting with `message`, with no Pod.
fn assert_refused(report: &Report, key: &str, reason: &str, message: &str, what: &str) {
    let view = JobView::of(report, key);
    let render = report.render();
    assert_eq!(view.phase.as_deref(), Some("Failed"), "{what}\n{render}");
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", reason),
        "{what}"
    );
    let text = view.status.message.as_deref().unwrap_or_default();
    assert!(text.starts_with(message), "{what}: {text}");
    assert_eq!(ready.at, at("0:00"), "{what}");
    assert!(view.pods_created.is_empty(), "{what}\n{render}");
    assert!(view.kubelet.is_empty(), "{what}\n{render}");
    assert_eq!(view.completions, [Phase::Failed], "{what}");
    assert_eq!(view.notifications, ["ValidationFailed"], "{what}");
}

/// Checks a sample whose `podConfig.buildConfig.enabled` is true.
fn assert_build_refused(report: &Report, key: &str, what: &str) {
    let message = "Validation failed: BuildNotSupported: image builds (podConfig.buildConfig) are not \
                   supported yet; remove buildConfig or set enabled: false and use \
                   podConfig.containerImage";
    assert_refused(report, key, "BuildNotSupported", message, what);
    let view = JobView::of(report, key);
    assert_eq!(view.status.message.as_deref(), Some(message), "{what}");
}

/// Checks a sample that asks for a check nbv does not carry out, naming `field`.
fn assert_field_refused(report: &Report, key: &str, field: &str, what: &str) {
    let message = format!("Validation failed: FieldNotSupported: {field}: ");
    assert_refused(report, key, "FieldNotSupported", &message, what);
}

#[test]
fn every_sample_job_succeeds_with_a_notebook_that_runs_through() {
    let jobs = sample_jobs();
    let mut by_file: BTreeMap<&str, usize> = BTreeMap::new();
    let mut refused = BTreeSet::new();
    for (file, job) in &jobs {
        *by_file.entry(file.as_str()).or_default() += 1;
        let (scenario, key) = sample_scenario(file, job, "succeeded");
        let what = format!("{file}: {key}");
        let report = play(&scenario);
        if build_enabled(job) {
            assert_build_refused(&report, &key, &what);
            refused.insert(key);
            continue;
        }
        if let Some(field) = unimplemented_field(job) {
            assert_field_refused(&report, &key, field, &what);
            refused.insert(key);
            continue;
        }
        let view = JobView::of(&report, &key);
        view.assert_results(6, None);
        let render = report.render();
        let name = key.split_once('/').map_or("", |(_, n)| n);
        let pod = format!("{name}-g1-r0");
        assert_eq!(view.phase.as_deref(), Some("Succeeded"), "{what}\n{render}");
        let ready = view.ready();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("True", "ValidationSucceeded"),
            "{what}"
        );
        assert_eq!(
            ready.message,
            format!("Notebook validation succeeded: {}", cells_ran(6)),
            "{what}"
        );
        assert_eq!(view.pods_created, [pod.as_str()], "{what}\n{render}");
        assert_eq!(view.validation_pod(), Some(pod.as_str()), "{what}");
        assert_eq!(view.completions, [Phase::Succeeded], "{what}");
        assert_eq!(view.notifications, ["ValidationSucceeded"], "{what}");
    }
    // Every file with a job was read, every job of a multi-document file too.
    assert!(jobs.len() >= 14, "{by_file:#?}");
    assert_eq!(
        by_file.get("mlops_v1alpha1_notebookvalidationjob_gpu_scheduling.yaml"),
        Some(&4)
    );
    assert_eq!(
        by_file.get("mlops_v1alpha1_notebookvalidationjob_private.yaml"),
        Some(&2)
    );
    for sample in [
        "default/notebookvalidationjob-tekton-sample",
        "default/notebookvalidationjob-golden-sample",
        "mlops/model-validation-kserve-example",
    ] {
        assert!(refused.contains(sample), "{sample}: {refused:?}");
    }
}

#[test]
fn every_sample_job_fails_with_a_notebook_whose_cell_raises() {
    let jobs = sample_jobs();
    assert!(!jobs.is_empty());
    for (file, job) in &jobs {
        let (scenario, key) = sample_scenario(file, job, "failed");
        let what = format!("{file}: {key}");
        let report = play(&scenario);
        if build_enabled(job) {
            assert_build_refused(&report, &key, &what);
            continue;
        }
        if let Some(field) = unimplemented_field(job) {
            assert_field_refused(&report, &key, field, &what);
            continue;
        }
        let view = JobView::of(&report, &key);
        view.assert_results(6, Some(5));
        let render = report.render();
        assert_eq!(view.phase.as_deref(), Some("Failed"), "{what}\n{render}");
        let ready = view.ready();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "NotebookCellFailed"),
            "{what}"
        );
        assert_eq!(
            ready.message,
            format!("Validation failed: NotebookCellFailed: cell 5: {CELL_ERROR}"),
            "{what}"
        );
        assert_eq!(view.pods_created.len(), 1, "{what}\n{render}");
        assert_eq!(view.completions, [Phase::Failed], "{what}");
        assert_eq!(view.notifications, ["ValidationFailed"], "{what}");
    }
}

#[test]
fn a_spec_edit_starts_a_new_run_with_its_own_pods_retries_and_records() {
    let mut train = job("train", json!({}));
    train["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = json!("1");
    // Each run: the first attempt is evicted, the retry succeeds.
    let report = play(&scenario(
        "spec-edit",
        vec![train],
        json!([
            {"job": "ml/train", "attempt": 0, "outcome": "evicted", "runFor": "1m"},
            {"job": "ml/train", "attempt": 1, "outcome": "succeeded", "runFor": "2m", "cells": 5}
        ]),
        json!([{"at": "6m", "patch": {
            "object": {"kind": "NotebookValidationJob", "namespace": "ml", "name": "train"},
            "patch": {"spec": {"timeout": "45m"}}}}]),
    ));
    let view = JobView::of(&report, "ml/train");

    // Two runs, each with its own Pods; only the current run's last Pod is left.
    assert_eq!(
        view.pods_created,
        ["train-g1-r0", "train-g1-r1", "train-g2-r0", "train-g2-r1"]
    );
    assert_eq!(
        view.pods_deleted,
        ["train-g1-r0", "train-g1-r1", "train-g2-r0"]
    );
    assert_eq!(report.validation_pods, ["ml/train-g2-r1"]);
    // The retry count starts again: one retry in the second run, not three in all.
    assert_eq!(view.status.retry_count, Some(1));
    assert_eq!(view.validation_pod(), Some("train-g2-r1"));
    view.assert_results(5, None);
    // The new run cleared the first run's wave annotations and records, then wrote its
    // own.
    assert!(
        report.timeline.iter().any(|e| e.at == at("6:00")
            && e.text
                .contains("job ml/train: wave annotations mlops.dev/wave-complete removed")),
        "{}",
        report.render()
    );
    let effects = view.status.effects.as_ref().expect("a ledger");
    assert!(effects.run.starts_with("g2@"), "{effects:?}");
    assert!(
        effects
            .done
            .contains("trigger/restart:apps/Deployment:ml/model-server"),
        "{effects:?}"
    );
    assert_eq!(
        report.jobs["ml/train"]
            .annotations
            .get("mlops.dev/wave-complete")
            .map(String::as_str),
        Some("1")
    );
    // One success, one notification and one restart per run.
    assert_eq!(view.completions, [Phase::Succeeded, Phase::Succeeded]);
    assert_eq!(
        view.notifications,
        ["ValidationSucceeded", "ValidationSucceeded"]
    );
    assert_eq!(view.triggers, [TRIGGER, TRIGGER]);
}

#[test]
fn deleting_a_job_removes_its_pod_and_ends_its_run_without_a_notification() {
    let report = play(&scenario(
        "job-deleted",
        vec![job("keep", json!({})), job("gone", json!({}))],
        json!([{"outcome": "succeeded", "runFor": "10m", "cells": 4, "job": "ml/keep"},
               {"outcome": "succeeded", "runFor": "10m", "cells": 4, "job": "ml/gone"}]),
        json!([{"at": "2m", "delete":
            {"kind": "NotebookValidationJob", "namespace": "ml", "name": "gone"}}]),
    ));
    // The job's Pod went with it (owner reference): it never ran to its end.
    assert_eq!(report.validation_pods, ["ml/keep-g1-r0"]);
    let gone = JobView::of(&report, "ml/gone");
    assert_eq!(gone.pods_created, ["gone-g1-r0"]);
    assert!(
        gone.kubelet.iter().all(|(_, line)| !line.contains("ended")),
        "{:?}",
        gone.kubelet
    );
    assert!(!report.jobs.contains_key("ml/gone"));
    assert!(gone.completions.is_empty(), "{:?}", gone.completions);
    assert!(gone.notifications.is_empty(), "{:?}", gone.notifications);
    assert!(gone.triggers.is_empty(), "{:?}", gone.triggers);

    let keep = JobView::of(&report, "ml/keep");
    assert_eq!(keep.phase.as_deref(), Some("Succeeded"));
    assert_eq!(keep.triggers, [TRIGGER]);
}
