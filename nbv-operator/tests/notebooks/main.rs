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
//! Needs the `simulate` feature (`--features simulate` or `--all-features`).
#![cfg(feature = "simulate")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use chrono::{DateTime, TimeDelta, Utc};
use nbv_core::api::{BuildPhase, CellStatus, NotebookValidationJobStatus, Phase};
use nbv_core::phase::FailureKind;
use nbv_core::pod::FailureCause;
use nbv_operator::simulate::{Options, Report, Who, run};
use nbv_testkit::fixtures::JobBuilder;
use nbv_testkit::scenario::Scenario;
use serde::Deserialize;
use serde_json::{Value, json};

const EPOCH: &str = "2026-03-02T09:00:00Z";
const IMAGE: &str = "quay.io/jupyter/scipy-notebook:2026-01-05";
const TRIGGER: &str = "restart:apps/Deployment:ml/model-server";
/// The error the simulated kubelet's failing notebooks raise in their last cell.
const CELL_ERROR: &str = "KeyError: 'model_path'";

/// A job `ml/<name>` running `notebooks/<name>.ipynb`, with an on-success rolling
/// restart of `ml/model-server`.
fn restarting(name: &str) -> JobBuilder {
    JobBuilder::new("ml", name)
        .on_success_trigger(
            "- {apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}\n",
        )
        .notebook(
            "https://github.com/example/models",
            "main",
            &format!("notebooks/{name}.ipynb"),
        )
        .image(IMAGE)
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

mod lifecycle;
mod outcomes;
mod samples;
