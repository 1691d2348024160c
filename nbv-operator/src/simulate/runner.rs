//! Playing a scenario: the cluster, the operator, the timeline and the stand-ins on one
//! paused, current-thread Tokio runtime.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use nbv_core::triggers::TriggerAccess;
use nbv_core::waves::block_wave;
use nbv_testkit::FakeCluster;
use nbv_testkit::cluster::{Fault, FaultEffect, Times};
use nbv_testkit::invariants::{Observation, Settings, Violation, check_all, terminal_transitions};
use nbv_testkit::scenario::{Action, Scenario, Step, format_duration};
use serde_json::Value;

use super::actions;
use super::operator::{Ended, Operator};
use super::options::Options;
use super::report::{ApiStats, FinalJob, GateOutcome, OperatorStats, Report, triggers_fired};
use super::standins::StandIns;
use super::timeline::{Log, Who};
use super::{expect, panics};
use crate::operator::config::OperatorConfig;
use crate::wait::{WaitArgs, wait};

/// How often the stand-ins look at the cluster (virtual time).
const TICK: Duration = Duration::from_secs(1);

/// How long `nbv wait` may take on the final state before it counts as still waiting.
const GATE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a simulation could not run to its end.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, SimulationError, run};
/// use nbv_testkit::scenario::Scenario;
///
/// let scenario = Scenario::from_yaml("
/// name: missing-job
/// mode: gitops-only
/// timeline:
///   - at: 1m
///     phase: {job: ml/nowhere, phase: Succeeded}
/// ")?;
/// let err = run(&scenario, &Options::default()).unwrap_err();
/// assert!(matches!(err, SimulationError::Step { index: 0, .. }));
/// assert!(err.to_string().contains("there is no notebookvalidationjobs ml/nowhere"));
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Debug, thiserror::Error)]
pub enum SimulationError {
    /// The Tokio runtime could not be built.
    #[error("cannot start the simulation's runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// An initial object cannot be stored (an unregistered kind, no namespace).
    #[error("objects[{index}] ({object}) cannot be created: {problem}")]
    Setup {
        /// Its index in `objects`.
        index: usize,
        /// `Kind namespace/name`.
        object: String,
        /// Why.
        problem: String,
    },
    /// A timeline step cannot be carried out (it names an object that does not exist).
    #[error("timeline[{index}] (at {at}) cannot be carried out: {problem}")]
    Step {
        /// Its index in the timeline, as ordered by time.
        index: usize,
        /// Its time.
        at: String,
        /// Why.
        problem: String,
    },
    /// A stand-in (kubelet, KServe, Argo CD) failed to update the cluster.
    #[error("the simulated {who} failed: {problem}")]
    StandIn {
        /// Which stand-in.
        who: &'static str,
        /// Why.
        problem: String,
    },
}

/// Runs `scenario` to its end and reports what happened.
///
/// Builds its own current-thread Tokio runtime with a paused clock: call it from
/// synchronous code (not from inside another runtime). The same scenario and options
/// give the same report.
///
/// # Errors
///
/// [`SimulationError`] when the scenario cannot be played: an initial object or a step
/// the in-memory cluster refuses. Broken invariants are not errors; they are in the
/// report.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let report = run(&seed_scenario()?, &Options::default())?;
/// assert_eq!(report.gates[0].status, "open");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(scenario: &Scenario, options: &Options) -> Result<Report, SimulationError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .map_err(SimulationError::Runtime)?;
    runtime.block_on(simulate(scenario, options))
}

fn operator_config(scenario: &Scenario) -> OperatorConfig {
    let settings = &scenario.operator;
    OperatorConfig {
        gitops_only: scenario.mode == nbv_testkit::scenario::Mode::GitopsOnly,
        trigger_access: TriggerAccess {
            allowed_namespaces: settings.trigger_namespaces.iter().cloned().collect(),
        },
        application_namespaces: settings.application_namespaces.clone(),
        max_retries: settings.max_retries,
        // Argo CD's default tracking, given by flags: the simulated cluster has no
        // argocd-cm, and the invariants find parents with the same defaults.
        tracking: default_tracking(),
        ..OperatorConfig::default()
    }
}

fn default_tracking() -> crate::operator::config::TrackingConfig {
    let defaults = nbv_core::aggregate::TrackingSettings::default();
    crate::operator::config::TrackingConfig {
        method: Some(defaults.method),
        instance_label_key: Some(defaults.instance_label_key),
        installation_id: Some(defaults.installation_id),
        part_of: defaults.part_of,
    }
}

/// Whether anything in the timeline disturbs the operator (for the invariants' slack).
fn disturbs(step: &Step) -> bool {
    matches!(
        step.action,
        Action::Fault(_) | Action::DropWatches | Action::Compact | Action::RestartOperator(_)
    )
}

fn describe_object(object: &Value) -> String {
    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("?");
    match object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
    {
        Some(ns) => format!("{} {ns}/{}", text("/kind"), text("/metadata/name")),
        None => format!("{} {}", text("/kind"), text("/metadata/name")),
    }
}

fn describe_fault(fault: &Fault) -> String {
    let matcher = &fault.matcher;
    let verb = matcher.verb.map_or("any request".to_owned(), |v| {
        format!("{v:?}").to_uppercase()
    });
    let mut target = matcher
        .resource
        .clone()
        .unwrap_or_else(|| "anything".to_owned());
    if let Some(name) = &matcher.name {
        target.push_str(&format!(" named {name}"));
    }
    let effect = match fault.effect {
        FaultEffect::Status(code) => format!("answered {code}"),
        FaultEffect::Timeout(d) => format!("hangs {} then answers 504", format_duration(d)),
        FaultEffect::DropWatch => "a watch ends at once".to_owned(),
        FaultEffect::AfterCommit(code) => {
            format!("carried out, then answered {code} (the response is lost)")
        }
    };
    let times = match fault.times {
        Times::Once => "once".to_owned(),
        Times::N(n) => format!("{n} times"),
        Times::Always => "until cleared".to_owned(),
    };
    format!("fault: {verb} on {target}: {effect}, {times}")
}

/// The mutable state of a running simulation.
struct Play<'a> {
    scenario: &'a Scenario,
    cluster: FakeCluster,
    operator: Operator,
    log: Log,
    stats: OperatorStats,
    /// When a stopped operator comes back (time since the start).
    restart_at: Option<Duration>,
}

impl Play<'_> {
    fn note_end(&mut self, name: &str, ended: Ended) {
        let text = match ended {
            Ended::Returned => {
                self.stats.graceful_stops += 1;
                format!("{name} stopped (SIGTERM)")
            }
            Ended::Crashed => {
                self.stats.crashes += 1;
                format!("{name} crashed")
            }
            Ended::Hung => {
                self.stats.graceful_stops += 1;
                format!("{name} did not stop within a minute of SIGTERM and was killed")
            }
            Ended::Panicked => format!("{name} panicked"),
        };
        self.log.push(&self.cluster, Who::Operator, text);
    }

    fn start_operator(&mut self) {
        let name = self.operator.start();
        self.stats.starts += 1;
        self.log
            .push(&self.cluster, Who::Operator, format!("{name} started"));
    }

    async fn perform(
        &mut self,
        index: usize,
        step: &Step,
        elapsed: Duration,
    ) -> Result<(), SimulationError> {
        let fail = |problem: String| SimulationError::Step {
            index,
            at: format_duration(step.at),
            problem,
        };
        let cluster = self.cluster.clone();
        let (who, text) = match &step.action {
            Action::Phase(write) => (
                Who::Controller,
                actions::write_phase(&cluster, write).map_err(fail)?,
            ),
            Action::Patch { object, patch } => (
                Who::User,
                actions::patch(&cluster, object, patch).map_err(fail)?,
            ),
            Action::Apply(object) => {
                cluster
                    .apply_object(object.clone())
                    .map_err(|e| fail(e.to_string()))?;
                (Who::User, format!("applied {}", describe_object(object)))
            }
            Action::Delete(object) => {
                cluster
                    .delete(&object.kind, object.namespace.as_deref(), &object.name)
                    .map_err(|e| fail(e.to_string()))?;
                (Who::User, format!("deleted {object}"))
            }
            Action::RolloutRestart(object) => (
                Who::User,
                actions::rollout_restart(&cluster, object).map_err(fail)?,
            ),
            Action::ArgoSync(app) => (
                Who::ArgoCd,
                actions::argo_sync(&cluster, app).map_err(fail)?,
            ),
            Action::RestartOperator(restart) => {
                let name = format!("nbv-operator-{}", self.operator.starts());
                if let Some(ended) = self.operator.stop(restart.graceful).await {
                    self.note_end(&name, ended);
                }
                if restart.down_for.is_zero() {
                    self.start_operator();
                    return Ok(());
                }
                self.restart_at = Some(elapsed + restart.down_for);
                (
                    Who::Operator,
                    format!("no operator runs for {}", format_duration(restart.down_for)),
                )
            }
            Action::Fault(fault) => {
                cluster.inject(fault.clone());
                (Who::Network, describe_fault(fault))
            }
            Action::ClearFaults => {
                cluster.clear_faults();
                (Who::Network, "every fault cleared".to_owned())
            }
            Action::DropWatches => {
                let open = cluster.open_watches();
                cluster.drop_watches();
                (Who::Network, format!("{open} open watch stream(s) dropped"))
            }
            Action::Compact => {
                cluster.compact();
                (
                    Who::Network,
                    "API server compacted its change feed (resumed watches get 410 Gone)"
                        .to_owned(),
                )
            }
        };
        self.log.push(&cluster, who, text);
        Ok(())
    }
}

async fn simulate(scenario: &Scenario, options: &Options) -> Result<Report, SimulationError> {
    // kube-runtime's backoff jitter draws from this thread's generator.
    fastrand::seed(options.seed);
    panics::record();
    let cluster = FakeCluster::new(scenario.epoch);
    let start = cluster.now();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for (index, object) in scenario.objects.iter().enumerate() {
        cluster
            .apply_object(object.clone())
            .map_err(|e| SimulationError::Setup {
                index,
                object: describe_object(object),
                problem: e.to_string(),
            })?;
        let kind = object["kind"].as_str().unwrap_or("?").to_owned();
        *kinds.entry(kind).or_default() += 1;
    }
    let mut play = Play {
        scenario,
        cluster: cluster.clone(),
        operator: Operator::new(cluster.clone(), operator_config(scenario), options.mutation),
        log: Log::default(),
        stats: OperatorStats::default(),
        restart_at: None,
    };
    let setup: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    play.log.push(
        &cluster,
        Who::Setup,
        format!("created {}", setup.join(", ")),
    );
    play.start_operator();

    let mut standins = StandIns::new(scenario.mode, scenario.pod_outcomes.clone());
    let origin = tokio::time::Instant::now();
    let total = scenario.duration();
    let mut steps = scenario.timeline.iter().enumerate().peekable();
    loop {
        let elapsed = origin.elapsed();
        while let Some((index, step)) = steps.next_if(|(_, s)| s.at <= elapsed) {
            play.perform(index, step, elapsed).await?;
        }
        if play.restart_at.is_some_and(|at| at <= elapsed) {
            play.restart_at = None;
            if !play.operator.is_running() {
                play.start_operator();
            }
        }
        if let Some(ended) = play.operator.reap().await {
            let name = format!("nbv-operator-{}", play.operator.starts());
            play.note_end(&name, ended);
        }
        standins
            .tick(&cluster, &mut play.log)
            .map_err(|problem| SimulationError::StandIn {
                who: "kubelet, KServe or Argo CD",
                problem,
            })?;
        if elapsed >= total {
            break;
        }
        let mut next = (elapsed + TICK).min(total);
        if let Some((_, step)) = steps.peek() {
            next = next.min(step.at.max(elapsed));
        }
        if let Some(at) = play.restart_at {
            next = next.min(at.max(elapsed));
        }
        if next <= elapsed {
            // A step or restart is due now; the loop takes it without sleeping.
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep_until(origin + next).await;
        }
    }
    let name = format!("nbv-operator-{}", play.operator.starts());
    if let Some(ended) = play.operator.stop(true).await {
        play.note_end(&name, ended);
    }
    finish(play, start).await
}

async fn finish(
    play: Play<'_>,
    start: chrono::DateTime<chrono::Utc>,
) -> Result<Report, SimulationError> {
    let Play {
        scenario,
        cluster,
        operator,
        log,
        mut stats,
        ..
    } = play;
    let end = cluster.now();
    let history = cluster.history();
    let requests = cluster.requests();
    let observation = Observation {
        history: &history,
        requests: &requests,
        end,
        mode: scenario.mode,
        uptimes: operator.uptimes(),
        disturbed: scenario.timeline.iter().any(disturbs),
        settings: Settings {
            application_namespaces: scenario.operator.application_namespaces.clone(),
            ..Settings::default()
        },
    };
    let mut violations = check_all(&observation);
    stats.panics = panics::take();
    for panic in &stats.panics {
        violations.push(Violation {
            invariant: 5,
            at: None,
            message: format!("the operator panicked: {panic}"),
        });
    }

    let jobs: BTreeMap<String, FinalJob> = cluster
        .list("notebookvalidationjobs", None)
        .unwrap_or_default()
        .iter()
        .map(|job| {
            let key = path_of(job);
            let annotations = string_map(&job["metadata"]["annotations"]);
            let phase = job["status"]["phase"].as_str().map(str::to_owned);
            let status = job["status"].clone();
            (
                key,
                FinalJob {
                    phase,
                    annotations,
                    status,
                },
            )
        })
        .collect();
    let applications: BTreeMap<String, BTreeMap<String, String>> = cluster
        .list("applications", None)
        .unwrap_or_default()
        .iter()
        .map(|app| (path_of(app), string_map(&app["metadata"]["annotations"])))
        .collect();
    let mut validation_pods: Vec<String> = cluster
        .list("pods", None)
        .unwrap_or_default()
        .iter()
        .filter(|pod| {
            pod["metadata"]["labels"][nbv_core::pod::MANAGED_BY_LABEL] == nbv_core::pod::MANAGED_BY
        })
        .map(path_of)
        .collect();
    validation_pods.sort();
    let mut events_by_reason: BTreeMap<String, usize> = BTreeMap::new();
    for event in cluster.objects_of("Event") {
        if let Some(reason) = event["reason"].as_str() {
            *events_by_reason.entry(reason.to_owned()).or_default() += 1;
        }
    }
    let triggers_fired = triggers_fired(&history);
    let gates = gates(&cluster, scenario, &jobs).await;
    let expectation_failures = expect::unmet(
        &scenario.expect,
        &jobs,
        &applications,
        &gates,
        triggers_fired.len(),
    );
    Ok(Report {
        scenario: scenario.name.clone(),
        description: scenario.description.clone(),
        mode: scenario.mode,
        start,
        end,
        timeline: log.into_timeline(&history),
        completions: terminal_transitions(&history),
        triggers_fired,
        events_by_reason,
        api: ApiStats::of(&requests, start),
        jobs,
        applications,
        validation_pods,
        gates,
        operator: stats,
        violations,
        expectation_failures,
        requests,
    })
}

/// `namespace/name` of an object.
fn path_of(object: &Value) -> String {
    format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

fn string_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `nbv wait` for every wave a job blocks, and every gate the scenario expects,
/// on the final state (faults cleared: the question is what the state says).
async fn gates(
    cluster: &FakeCluster,
    scenario: &Scenario,
    jobs: &BTreeMap<String, FinalJob>,
) -> Vec<GateOutcome> {
    cluster.clear_faults();
    let mut wanted: BTreeSet<(String, i64)> = scenario
        .expect
        .gates
        .iter()
        .map(|g| (g.namespace.clone(), g.wave))
        .collect();
    for (key, job) in jobs {
        let namespace = key.split_once('/').map_or("", |(ns, _)| ns);
        if let Ok(Some(wave)) = block_wave(&job.annotations) {
            wanted.insert((namespace.to_owned(), wave.get()));
        }
    }
    let mut outcomes = Vec::new();
    for (namespace, wave) in wanted {
        let args = WaitArgs {
            namespace: namespace.clone(),
            wave,
            timeout: Some(GATE_TIMEOUT),
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = wait(cluster.client(), &args, &mut out, &mut err).await;
        let status = match code {
            0 => "open",
            1 => "failed",
            2 => "waiting",
            _ => "unreadable",
        };
        let mut message = String::from_utf8_lossy(&out).trim().to_owned();
        let err = String::from_utf8_lossy(&err);
        if !err.trim().is_empty() {
            if !message.is_empty() {
                message.push('\n');
            }
            message.push_str(err.trim());
        }
        outcomes.push(GateOutcome {
            namespace,
            wave,
            status: status.to_owned(),
            message,
        });
    }
    outcomes
}
