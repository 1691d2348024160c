//! What a simulation found: the timeline, the facts, the final state, the verdict.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use nbv_core::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use nbv_core::api::EffectLedger;
use nbv_core::time::rfc3339;
use nbv_testkit::cluster::{Actor, Change, RequestRecord, VerbKind};
use nbv_testkit::invariants::{TerminalTransition, Violation};
use nbv_testkit::scenario::Mode;
use serde::Serialize;
use serde_json::{Value, json};

use super::timeline::{Entry, clock};

/// A job's run that ended, as committed to the cluster.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let report = run(&seed_scenario()?, &Options::default())?;
/// let completion = &report.completions[0];
/// assert_eq!(completion.phase, nbv_core::api::Phase::Succeeded);
/// assert_eq!(completion.completed_at.to_rfc3339(), "2026-01-24T22:30:00+00:00");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type Completion = TerminalTransition;

/// A trigger nbv recorded as carried out for a run of a job.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let report = run(&seed_scenario()?, &Options::default())?;
/// let fired = &report.triggers_fired[0];
/// assert_eq!(fired.run, "g1@2026-01-24T22:20:00Z");
/// assert!(fired.trigger.starts_with("restart:serving.kserve.io/InferenceService:"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct TriggerFired {
    /// The job, `namespace/name`.
    pub job: String,
    /// The run (`g<generation>@<start>`).
    pub run: String,
    /// The trigger, `action:group/Kind:namespace/name`.
    pub trigger: String,
    /// When nbv recorded it.
    pub at: DateTime<Utc>,
}

/// The API requests nbv made (the stand-ins' actions are not requests).
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let api = run(&seed_scenario()?, &Options::default())?.api;
/// // The InferenceService's two pods are evicted (a create of `pods/eviction`), never
/// // deleted.
/// assert!(!api.requests_by_verb.contains_key("delete"));
/// assert!(api.requests_by_resource["create pods"] >= 2);
/// assert_eq!(api.requests_by_verb.values().sum::<usize>(), api.requests_total);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ApiStats {
    /// All requests.
    pub requests_total: usize,
    /// Requests by verb (`get`, `list`, `watch`, `create`, `patch`, …).
    pub requests_by_verb: BTreeMap<String, usize>,
    /// Requests by verb and resource, as `get pods` or `patch applications` (the
    /// status subresource counts as its resource's); a discovery request by its path,
    /// as `get discovery /api/v1`.
    pub requests_by_resource: BTreeMap<String, usize>,
    /// LIST requests after the first operator's initial sync (its first instant):
    /// relists after watch failures and restarts, and the pod lists of restarts.
    pub list_after_start: usize,
    /// Answers with an error status, by code (injected faults and genuine conflicts).
    pub errors_by_code: BTreeMap<u16, usize>,
}

impl ApiStats {
    /// Counts `requests`; a LIST counts as after the start when it came later than
    /// `start`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::simulate::ApiStats;
    ///
    /// let stats = ApiStats::of(&[], chrono::Utc::now());
    /// assert_eq!(stats.requests_total, 0);
    /// ```
    pub fn of(requests: &[RequestRecord], start: DateTime<Utc>) -> ApiStats {
        let mut stats = ApiStats {
            requests_total: requests.len(),
            ..ApiStats::default()
        };
        for request in requests {
            let verb = verb_name(request.verb.kind());
            *stats.requests_by_verb.entry(verb.to_owned()).or_default() += 1;
            // A discovery request names no resource: its path says what it reads.
            let resource = match request.resource.as_str() {
                "" => format!("discovery {}", request.path),
                resource => resource.to_owned(),
            };
            *stats
                .requests_by_resource
                .entry(format!("{verb} {resource}"))
                .or_default() += 1;
            if request.verb.kind() == VerbKind::List && request.at > start {
                stats.list_after_start += 1;
            }
            if request.status >= 400 {
                *stats.errors_by_code.entry(request.status).or_default() += 1;
            }
        }
        stats
    }
}

fn verb_name(verb: VerbKind) -> &'static str {
    match verb {
        VerbKind::Get => "get",
        VerbKind::List => "list",
        VerbKind::Watch => "watch",
        VerbKind::Create => "create",
        VerbKind::Update => "update",
        VerbKind::Patch => "patch",
        VerbKind::Delete => "delete",
        VerbKind::DeleteCollection => "deletecollection",
    }
}

/// A job at the end.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let report = run(&seed_scenario()?, &Options::default())?;
/// let job = &report.jobs["self-healing-platform/predictive-analytics-kserve-validation"];
/// assert_eq!(job.phase.as_deref(), Some("Succeeded"));
/// assert_eq!(job.annotations["mlops.dev/wave-complete"], "3");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FinalJob {
    /// `status.phase`.
    pub phase: Option<String>,
    /// `metadata.annotations`.
    pub annotations: BTreeMap<String, String>,
    /// `status`, as stored (`null` when the job has none): results, retries, the
    /// validation Pod, conditions and the effect ledger.
    pub status: serde_json::Value,
}

/// How `nbv wait --namespace <namespace> --wave <wave>` ended on the final state.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let gate = &run(&seed_scenario()?, &Options::default())?.gates[0];
/// assert_eq!((gate.namespace.as_str(), gate.wave, gate.status.as_str()), ("self-healing-platform", 4, "open"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GateOutcome {
    /// Namespace of the jobs.
    pub namespace: String,
    /// The gated wave.
    pub wave: i64,
    /// `open`, `failed`, `waiting` or `unreadable`.
    pub status: String,
    /// What `nbv wait` printed.
    pub message: String,
}

/// The operator's life.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let operator = run(&seed_scenario()?, &Options::default())?.operator;
/// assert_eq!((operator.starts, operator.crashes, operator.graceful_stops), (1, 0, 1));
/// assert!(operator.panics.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct OperatorStats {
    /// Instances started.
    pub starts: u32,
    /// Instances stopped by a crash.
    pub crashes: u32,
    /// Instances stopped as on SIGTERM.
    pub graceful_stops: u32,
    /// Panics, with their messages.
    pub panics: Vec<String>,
}

/// Everything a simulation found.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run, seed_scenario};
///
/// let report = run(&seed_scenario()?, &Options::default())?;
/// assert_eq!(report.scenario, "seed-end-to-end");
/// assert!(report.violations.is_empty() && report.expectation_failures.is_empty());
/// assert_eq!((report.end - report.start).num_minutes(), 12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    /// The scenario's name.
    pub scenario: String,
    /// Its description.
    pub description: String,
    /// Who ran the phases.
    pub mode: Mode,
    /// When the simulation started (virtual time).
    pub start: DateTime<Utc>,
    /// When it ended.
    pub end: DateTime<Utc>,
    /// What happened, in order.
    pub timeline: Vec<Entry>,
    /// Terminal transitions of jobs.
    pub completions: Vec<Completion>,
    /// Triggers recorded as carried out.
    pub triggers_fired: Vec<TriggerFired>,
    /// Events at the end, by reason.
    pub events_by_reason: BTreeMap<String, usize>,
    /// nbv's API requests.
    pub api: ApiStats,
    /// Jobs at the end, by `namespace/name`.
    pub jobs: BTreeMap<String, FinalJob>,
    /// Annotations of Applications at the end, by `namespace/name`.
    pub applications: BTreeMap<String, BTreeMap<String, String>>,
    /// The validation Pods (labelled `app.kubernetes.io/managed-by: nbv`) at the end,
    /// as `namespace/name`, sorted.
    pub validation_pods: Vec<String>,
    /// `nbv wait` on the final state, for every gated wave.
    pub gates: Vec<GateOutcome>,
    /// The operator's life.
    pub operator: OperatorStats,
    /// Broken invariants (empty when all hold).
    pub violations: Vec<Violation>,
    /// Unmet expectations of the scenario.
    pub expectation_failures: Vec<String>,
    /// nbv's API requests, in the order they arrived, for a closer look than
    /// [`Self::api`]'s counts (left out of the JSON report, which summarizes them).
    #[serde(skip)]
    pub requests: Vec<RequestRecord>,
}

/// Triggers in the ledgers nbv wrote: each key the first time it appears as done for a
/// run.
pub(super) fn triggers_fired(history: &[Change]) -> Vec<TriggerFired> {
    let mut seen = BTreeSet::new();
    let mut fired = Vec::new();
    for change in history
        .iter()
        .filter(|c| c.actor == Actor::Client && c.kind == nbv_core::api::KIND)
    {
        let Some(ledger) = change
            .after
            .as_ref()
            .and_then(|a| a.pointer("/status/effects"))
            .and_then(|v| serde_json::from_value::<EffectLedger>(v.clone()).ok())
        else {
            continue;
        };
        let job = format!(
            "{}/{}",
            change.namespace.as_deref().unwrap_or_default(),
            change.name
        );
        for key in &ledger.done {
            let Some(trigger) = key.strip_prefix("trigger/") else {
                continue;
            };
            if seen.insert((job.clone(), ledger.run.clone(), key.clone())) {
                fired.push(TriggerFired {
                    job: job.clone(),
                    run: ledger.run.clone(),
                    trigger: trigger.to_owned(),
                    at: change.at,
                });
            }
        }
    }
    fired
}

impl Report {
    /// Whether every invariant held and every expectation was met.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::simulate::{Options, run, seed_scenario};
    ///
    /// let report = run(&seed_scenario()?, &Options::default())?;
    /// assert!(report.passed());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn passed(&self) -> bool {
        self.violations.is_empty() && self.expectation_failures.is_empty()
    }

    /// The report as one JSON object: `scenario`, `mode`, `start`, `end`,
    /// `completions`, `effects` (`triggers_fired`, `events_by_reason`), `api`
    /// (`requests_total`, `requests_by_verb`, `requests_by_resource`, `list_after_start`, `errors_by_code`),
    /// `final` (`jobs`, `applications`), `gates`, `operator`, `invariant_violations`,
    /// `expectation_failures`, `passed` and `timeline`. Maps are sorted by key, so the
    /// same simulation always prints the same text.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::simulate::{Options, run, seed_scenario};
    ///
    /// let json = run(&seed_scenario()?, &Options::default())?.to_json();
    /// assert_eq!(json["invariant_violations"], serde_json::json!([]));
    /// assert_eq!(json["final"]["jobs"]["self-healing-platform/predictive-analytics-kserve-validation"]
    ///     ["annotations"]["mlops.dev/wave-complete"], "3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> Value {
        json!({
            "scenario": self.scenario,
            "mode": self.mode,
            "start": rfc3339(self.start),
            "end": rfc3339(self.end),
            "completions": self.completions,
            "effects": {
                "triggers_fired": self.triggers_fired,
                "events_by_reason": self.events_by_reason,
            },
            "api": self.api,
            "final": {"jobs": self.jobs, "applications": self.applications,
                      "validation_pods": self.validation_pods},
            "gates": self.gates,
            "operator": self.operator,
            "invariant_violations": self.violations,
            "expectation_failures": self.expectation_failures,
            "passed": self.passed(),
            "timeline": self.timeline,
        })
    }

    /// The report as text: the timeline, the final state, the verdict.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::simulate::{Options, run, seed_scenario};
    ///
    /// let text = run(&seed_scenario()?, &Options::default())?.render();
    /// assert!(text.contains("Invariants: all 5 hold"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "nbv simulate: {} (mode {}), {} to {}",
            self.scenario,
            self.mode,
            self.start.format("%Y-%m-%d %H:%M:%S UTC"),
            clock(self.end)
        );
        for line in self.description.lines().filter(|l| !l.trim().is_empty()) {
            let _ = writeln!(out, "  {}", line.trim());
        }
        let _ = writeln!(out, "\nTimeline");
        for entry in &self.timeline {
            let _ = writeln!(
                out,
                "  {}  {:<10}  {}",
                clock(entry.at),
                entry.who.as_str(),
                entry.text
            );
        }
        self.render_final(&mut out);
        self.render_verdict(&mut out);
        out
    }

    fn render_final(&self, out: &mut String) {
        let _ = writeln!(out, "\nFinal state");
        for (name, job) in &self.jobs {
            let _ = writeln!(
                out,
                "  job {name}: {}",
                job.phase.as_deref().unwrap_or("no phase")
            );
            for (key, value) in job.annotations.iter().filter(|(k, _)| {
                k.starts_with("mlops.dev/wave-") || k.as_str() == "mlops.dev/completion-time"
            }) {
                let _ = writeln!(out, "      {key}: {value}");
            }
        }
        for (name, annotations) in &self.applications {
            let _ = writeln!(out, "  Application {name}");
            for key in [NOTEBOOK_SUMMARY, NOTEBOOK_STATUS] {
                if let Some(value) = annotations.get(key) {
                    let _ = writeln!(out, "      {key}: {value}");
                }
            }
        }
        for gate in &self.gates {
            let _ = writeln!(
                out,
                "  nbv wait --namespace {} --wave {}: {} ({})",
                gate.namespace,
                gate.wave,
                gate.status,
                gate.message.lines().last().unwrap_or_default()
            );
        }
        let completions: Vec<String> = self
            .completions
            .iter()
            .map(|c| format!("{} {} at {}", c.job, c.phase, clock(c.completed_at)))
            .collect();
        if !completions.is_empty() {
            let _ = writeln!(out, "  runs ended: {}", completions.join("; "));
        }
        let fired: Vec<String> = self
            .triggers_fired
            .iter()
            .map(|t| t.trigger.clone())
            .collect();
        let _ = writeln!(
            out,
            "  triggers carried out: {}",
            if fired.is_empty() {
                "none".to_owned()
            } else {
                fired.join(", ")
            }
        );
        let events: Vec<String> = self
            .events_by_reason
            .iter()
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        let _ = writeln!(
            out,
            "  Events: {}",
            if events.is_empty() {
                "none".to_owned()
            } else {
                events.join(", ")
            }
        );
    }

    fn render_verdict(&self, out: &mut String) {
        let verbs: Vec<String> = self
            .api
            .requests_by_verb
            .iter()
            .map(|(v, n)| format!("{v} {n}"))
            .collect();
        let _ = writeln!(
            out,
            "\nAPI: {} requests ({}); {} LIST after the initial sync",
            self.api.requests_total,
            verbs.join(", "),
            self.api.list_after_start
        );
        let _ = writeln!(
            out,
            "Operator: {} start(s), {} crash(es), {} graceful stop(s)",
            self.operator.starts, self.operator.crashes, self.operator.graceful_stops
        );
        if self.violations.is_empty() {
            let _ = writeln!(out, "Invariants: all 5 hold");
        } else {
            let _ = writeln!(out, "Invariants: {} violation(s)", self.violations.len());
            for violation in &self.violations {
                let _ = writeln!(out, "  - {violation}");
            }
        }
        if self.expectation_failures.is_empty() {
            let _ = writeln!(out, "Expectations: all met");
        } else {
            let _ = writeln!(
                out,
                "Expectations: {} unmet",
                self.expectation_failures.len()
            );
            for failure in &self.expectation_failures {
                let _ = writeln!(out, "  - {failure}");
            }
        }
    }
}
