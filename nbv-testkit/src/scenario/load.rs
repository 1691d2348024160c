//! Reading a scenario file into the checked model, and writing the model back.

use std::time::Duration;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use http::StatusCode;
use nbv_core::api::Phase;
use nbv_core::yaml::YamlError;
use serde_json::Value;

use super::duration::{MAX_DURATION, format_duration, parse_duration};
use super::error::ScenarioError;
use super::model::{
    Action, Mode, ObjectKey, OperatorRestart, PhaseWrite, PodOutcome, PodResult, Scenario, Step,
};
use super::raw::{
    ACTION_KEYS, Empty, RawFault, RawPatch, RawPhase, RawPodOutcome, RawRestart, RawScenario,
    RawStep, RawTimes,
};
use crate::cluster::{Fault, FaultEffect, FaultMatch, Times, VerbKind};

/// The largest scenario file read, in bytes.
pub const MAX_SCENARIO_BYTES: usize = 4 * 1024 * 1024;
/// The most timeline steps, objects or pod outcomes a scenario may have.
pub const MAX_ENTRIES: usize = 10_000;
/// How large a scenario may be. A file `nbv simulate` reads is held to
/// [`Bounds::FILE`], so that a hostile or mistaken file is refused before it is
/// expanded; a program that builds a larger scenario itself (a benchmark over 10,000
/// jobs) says how large with [`Scenario::from_yaml_within`].
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::{Bounds, MAX_ENTRIES, MAX_SCENARIO_BYTES};
///
/// assert_eq!(Bounds::FILE, Bounds { bytes: MAX_SCENARIO_BYTES, entries: MAX_ENTRIES });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The longest text read, in bytes.
    pub bytes: usize,
    /// The most timeline steps, objects or pod outcomes.
    pub entries: usize,
}

impl Bounds {
    /// The bounds of a scenario file: [`MAX_SCENARIO_BYTES`] and [`MAX_ENTRIES`].
    pub const FILE: Bounds = Bounds {
        bytes: MAX_SCENARIO_BYTES,
        entries: MAX_ENTRIES,
    };
}

/// How long a simulation runs after its last step when the file does not say.
pub const DEFAULT_SETTLE: Duration = Duration::from_secs(6 * 60);

/// Where a simulation starts when the file gives no `epoch`.
fn default_epoch() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
}

impl Scenario {
    /// Reads a scenario from its YAML text and checks it.
    ///
    /// Timeline steps are ordered by time; steps at the same time keep their order in
    /// the file.
    ///
    /// # Errors
    ///
    /// [`ScenarioError::Syntax`] when the text is not YAML of the scenario's shape (an
    /// unknown or missing field, a wrong type); [`ScenarioError::Invalid`] naming the
    /// entry and field otherwise: a duration that cannot be read, a step with no action
    /// or two, a `phase` step in mode `default`, a fault whose effect lacks its code, …;
    /// [`ScenarioError::TooLarge`] above [`MAX_SCENARIO_BYTES`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::{Action, Scenario};
    ///
    /// let scenario = Scenario::from_yaml("
    /// name: faults
    /// mode: gitops-only
    /// timeline:
    ///   - at: 2m
    ///     dropWatches: {}
    ///   - at: 1m
    ///     fault: {verb: patch, resource: deployments, effect: status, code: 503, times: 2}
    /// ")?;
    /// assert!(matches!(scenario.timeline[0].action, Action::Fault(_)));
    /// assert_eq!(scenario.timeline[1].action, Action::DropWatches);
    ///
    /// let err = Scenario::from_yaml("{name: x, mode: gitops-only, settle: 10}").unwrap_err();
    /// assert_eq!(err.to_string(),
    ///     "settle: invalid duration \"10\": a unit was expected at byte 2; write e.g. 90s, 2m, 1h30m or 500ms");
    /// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
    /// ```
    pub fn from_yaml(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::from_yaml_within(text, Bounds::FILE)
    }

    /// [`Scenario::from_yaml`] within other `bounds` than a file's.
    ///
    /// # Errors
    ///
    /// As [`Scenario::from_yaml`], with [`ScenarioError::TooLarge`] and the entry
    /// counts checked against `bounds`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::{Bounds, Scenario};
    ///
    /// let text = "{name: tiny, mode: gitops-only}";
    /// assert!(Scenario::from_yaml_within(text, Bounds { bytes: 8, entries: 1 }).is_err());
    /// assert!(Scenario::from_yaml_within(text, Bounds { bytes: 64, entries: 1 }).is_ok());
    /// ```
    pub fn from_yaml_within(text: &str, bounds: Bounds) -> Result<Scenario, ScenarioError> {
        if text.len() > bounds.bytes {
            return Err(ScenarioError::TooLarge {
                size: text.len(),
                max: bounds.bytes,
            });
        }
        let raw: RawScenario = nbv_core::yaml::from_str(text).map_err(|e| match e {
            YamlError::Bounds(bounds) => ScenarioError::Bounds(bounds),
            YamlError::Yaml(e) => ScenarioError::Syntax(e),
        })?;
        from_raw(raw, bounds)
    }

    /// The scenario as YAML that [`Scenario::from_yaml`] reads back to an equal scenario.
    ///
    /// # Errors
    ///
    /// A YAML serialization error (not expected for scenarios built by this crate).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::Scenario;
    ///
    /// let scenario = Scenario::from_yaml("
    /// name: round-trip
    /// mode: gitops-only
    /// timeline:
    ///   - at: 90s
    ///     restartOperator: {downFor: 30s, graceful: true}
    /// ")?;
    /// let again = Scenario::from_yaml(&scenario.to_yaml().unwrap())?;
    /// assert_eq!(again, scenario);
    /// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
    /// ```
    pub fn to_yaml(&self) -> Result<String, serde_yaml_ng::Error> {
        serde_yaml_ng::to_string(&to_raw(self))
    }
}

fn duration(field: &str, text: &str) -> Result<Duration, ScenarioError> {
    parse_duration(text).map_err(|e| ScenarioError::invalid(field, e.to_string()))
}

fn bounded<T>(field: &str, items: &[T], bounds: Bounds) -> Result<(), ScenarioError> {
    if items.len() > bounds.entries {
        return Err(ScenarioError::invalid(
            field,
            format!(
                "{} entries; a scenario may have at most {}",
                items.len(),
                bounds.entries
            ),
        ));
    }
    Ok(())
}

fn from_raw(raw: RawScenario, bounds: Bounds) -> Result<Scenario, ScenarioError> {
    if raw.name.trim().is_empty() {
        return Err(ScenarioError::invalid(
            "name",
            "is empty; give the scenario a short name",
        ));
    }
    bounded("objects", &raw.objects, bounds)?;
    bounded("timeline", &raw.timeline, bounds)?;
    bounded("podOutcomes", &raw.pod_outcomes, bounds)?;
    let settle = match &raw.settle {
        Some(text) => duration("settle", text)?,
        None => DEFAULT_SETTLE,
    };
    for (index, object) in raw.objects.iter().enumerate() {
        check_object(&format!("objects[{index}]"), object)?;
    }
    let mut timeline = Vec::with_capacity(raw.timeline.len());
    for (index, step) in raw.timeline.into_iter().enumerate() {
        timeline.push(step_from_raw(index, step, raw.mode)?);
    }
    // A stable sort: steps at the same time keep the order of the file.
    timeline.sort_by_key(|step| step.at);
    let pod_outcomes = raw
        .pod_outcomes
        .into_iter()
        .enumerate()
        .map(|(index, outcome)| pod_outcome_from_raw(index, outcome, raw.mode))
        .collect::<Result<Vec<_>, _>>()?;
    let epoch = raw.epoch.unwrap_or_else(default_epoch);
    // Kubernetes timestamps hold years up to 9999; a simulation adds up to a day.
    if !(1970..=9000).contains(&epoch.year()) {
        return Err(ScenarioError::invalid(
            "epoch",
            format!("{epoch} is not between the years 1970 and 9000"),
        ));
    }
    let scenario = Scenario {
        name: raw.name,
        description: raw.description,
        mode: raw.mode,
        epoch,
        settle,
        operator: raw.operator,
        objects: raw.objects,
        timeline,
        pod_outcomes,
        expect: raw.expect,
    };
    if scenario.duration() > MAX_DURATION {
        return Err(ScenarioError::invalid(
            "settle",
            format!(
                "the scenario would run for {}; the last step plus settle may be at most {}",
                format_duration(scenario.duration()),
                format_duration(MAX_DURATION)
            ),
        ));
    }
    Ok(scenario)
}

/// An object must say what it is, or the cluster cannot store it.
fn check_object(field: &str, object: &Value) -> Result<(), ScenarioError> {
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let missing: Vec<&str> = [
        ("apiVersion", "/apiVersion"),
        ("kind", "/kind"),
        ("metadata.name", "/metadata/name"),
    ]
    .into_iter()
    .filter(|(_, pointer)| text(pointer).is_none_or(str::is_empty))
    .map(|(name, _)| name)
    .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(ScenarioError::invalid(
            field,
            format!(
                "the object needs a string {}; every object is a Kubernetes manifest",
                missing.join(", ")
            ),
        ))
    }
}

fn step_from_raw(index: usize, raw: RawStep, mode: Mode) -> Result<Step, ScenarioError> {
    let at = duration(&format!("timeline[{index}].at"), &raw.at)?;
    let here = format!("timeline[{index}] (at {})", raw.at.trim());
    let actions = raw.actions();
    match actions.len() {
        0 => {
            return Err(ScenarioError::invalid(
                here,
                format!("the step does nothing; give it one of {ACTION_KEYS}"),
            ));
        }
        1 => {}
        _ => {
            return Err(ScenarioError::invalid(
                here,
                format!(
                    "the step has {}; give each step exactly one action",
                    actions.join(" and ")
                ),
            ));
        }
    }
    let action = if let Some(phase) = raw.phase {
        phase_from_raw(&here, phase, mode)?
    } else if let Some(RawPatch { object, patch }) = raw.patch {
        if !patch.is_object() {
            return Err(ScenarioError::invalid(
                format!("{here}.patch.patch"),
                "a JSON merge patch is a mapping, for example {spec: {timeout: 2h}}",
            ));
        }
        Action::Patch { object, patch }
    } else if let Some(object) = raw.apply {
        check_object(&format!("{here}.apply"), &object)?;
        Action::Apply(object)
    } else if let Some(object) = raw.delete {
        Action::Delete(object)
    } else if let Some(object) = raw.rollout_restart {
        Action::RolloutRestart(object)
    } else if let Some(app) = raw.argo_sync {
        let key = app
            .parse::<ObjectKey>()
            .map_err(|e| ScenarioError::invalid(format!("{here}.argoSync"), e))?;
        Action::ArgoSync(key)
    } else if let Some(restart) = raw.restart_operator {
        let down_for = match &restart.down_for {
            Some(text) => duration(&format!("{here}.restartOperator.downFor"), text)?,
            None => Duration::ZERO,
        };
        Action::RestartOperator(OperatorRestart {
            down_for,
            graceful: restart.graceful,
        })
    } else if let Some(fault) = raw.fault {
        Action::Fault(fault_from_raw(&format!("{here}.fault"), fault)?)
    } else if raw.clear_faults.is_some() {
        Action::ClearFaults
    } else if raw.drop_watches.is_some() {
        Action::DropWatches
    } else {
        Action::Compact
    };
    Ok(Step { at, action })
}

fn phase_from_raw(here: &str, raw: RawPhase, mode: Mode) -> Result<Action, ScenarioError> {
    if mode != Mode::GitopsOnly {
        return Err(ScenarioError::invalid(
            here,
            "phase steps stand for another controller writing phases, which needs \
             mode: gitops-only; in mode default nbv runs the phases (use podOutcomes)",
        ));
    }
    let job = raw
        .job
        .parse::<ObjectKey>()
        .map_err(|e| ScenarioError::invalid(format!("{here}.phase.job"), e))?;
    let phase = raw
        .phase
        .parse::<Phase>()
        .map_err(|e| ScenarioError::invalid(format!("{here}.phase.phase"), e.to_string()))?;
    Ok(Action::Phase(PhaseWrite {
        job,
        phase,
        message: raw.message,
        replace_status: raw.replace_status,
    }))
}

/// `get`, `list`, … as in RBAC rules.
const VERBS: [(&str, VerbKind); 8] = [
    ("get", VerbKind::Get),
    ("list", VerbKind::List),
    ("watch", VerbKind::Watch),
    ("create", VerbKind::Create),
    ("update", VerbKind::Update),
    ("patch", VerbKind::Patch),
    ("delete", VerbKind::Delete),
    ("deletecollection", VerbKind::DeleteCollection),
];

fn verb_name(verb: VerbKind) -> &'static str {
    VERBS
        .iter()
        .find(|(_, v)| *v == verb)
        .map_or("get", |(name, _)| name)
}

fn fault_from_raw(here: &str, raw: RawFault) -> Result<Fault, ScenarioError> {
    let verb = match &raw.verb {
        None => None,
        Some(text) => {
            let wanted = text.to_ascii_lowercase();
            let verb = VERBS
                .iter()
                .find(|(name, _)| *name == wanted)
                .map(|(_, v)| *v)
                .ok_or_else(|| {
                    ScenarioError::invalid(
                        format!("{here}.verb"),
                        format!(
                            "unknown verb {text:?}; expected one of get, list, watch, create, \
                             update, patch, delete, deletecollection"
                        ),
                    )
                })?;
            Some(verb)
        }
    };
    let code = |effect: &str| -> Result<StatusCode, ScenarioError> {
        let field = format!("{here}.code");
        let code = raw.code.ok_or_else(|| {
            ScenarioError::invalid(
                &field,
                format!("effect {effect} needs the HTTP status to answer, e.g. code: 500"),
            )
        })?;
        StatusCode::from_u16(code)
            .ok()
            .filter(|_| (100..=599).contains(&code))
            .ok_or_else(|| {
                ScenarioError::invalid(field, format!("{code} is not an HTTP status (100-599)"))
            })
    };
    let unused = |field: &str, used: bool, effect: &str| {
        if used {
            Err(ScenarioError::invalid(
                format!("{here}.{field}"),
                format!("effect {effect} takes no {field}"),
            ))
        } else {
            Ok(())
        }
    };
    let effect = match raw.effect.as_str() {
        "status" => {
            unused("after", raw.after.is_some(), "status")?;
            FaultEffect::Status(code("status")?)
        }
        "afterCommit" => {
            unused("after", raw.after.is_some(), "afterCommit")?;
            FaultEffect::AfterCommit(code("afterCommit")?)
        }
        "timeout" => {
            unused("code", raw.code.is_some(), "timeout")?;
            let text = raw.after.as_deref().ok_or_else(|| {
                ScenarioError::invalid(
                    format!("{here}.after"),
                    "effect timeout needs how long the request hangs, e.g. after: 30s",
                )
            })?;
            FaultEffect::Timeout(duration(&format!("{here}.after"), text)?)
        }
        "dropWatch" => {
            unused("code", raw.code.is_some(), "dropWatch")?;
            unused("after", raw.after.is_some(), "dropWatch")?;
            if verb.is_some_and(|v| v != VerbKind::Watch) {
                return Err(ScenarioError::invalid(
                    format!("{here}.verb"),
                    "effect dropWatch only applies to watches; leave verb out or write watch",
                ));
            }
            FaultEffect::DropWatch
        }
        other => {
            return Err(ScenarioError::invalid(
                format!("{here}.effect"),
                format!(
                    "unknown effect {other:?}; expected status, timeout, afterCommit or dropWatch"
                ),
            ));
        }
    };
    let times = match raw.times {
        None | Some(RawTimes::Count(1)) => Times::Once,
        Some(RawTimes::Count(0)) => {
            return Err(ScenarioError::invalid(
                format!("{here}.times"),
                "a fault that fires 0 times does nothing; write a count of 1 or more, or always",
            ));
        }
        Some(RawTimes::Count(n)) => Times::N(n),
        Some(RawTimes::Word(word)) if word == "always" => Times::Always,
        Some(RawTimes::Word(word)) => {
            return Err(ScenarioError::invalid(
                format!("{here}.times"),
                format!("{word:?} is not a count; write a number or always"),
            ));
        }
    };
    let matcher = FaultMatch {
        verb,
        resource: raw.resource,
        name: raw.name,
    };
    Ok(Fault::new(matcher, effect, times))
}

fn pod_outcome_from_raw(
    index: usize,
    raw: RawPodOutcome,
    mode: Mode,
) -> Result<PodOutcome, ScenarioError> {
    let here = format!("podOutcomes[{index}]");
    if mode != Mode::Default {
        return Err(ScenarioError::invalid(
            here,
            "pod outcomes need mode: default; in mode gitops-only another controller runs \
             the notebooks (write its phases with phase steps)",
        ));
    }
    let job = raw
        .job
        .parse::<ObjectKey>()
        .map_err(|e| ScenarioError::invalid(format!("{here}.job"), e))?;
    let outcome = raw
        .outcome
        .parse::<PodResult>()
        .map_err(|e| ScenarioError::invalid(format!("{here}.outcome"), e))?;
    let start_after = match &raw.start_after {
        Some(text) => duration(&format!("{here}.startAfter"), text)?,
        None => Duration::from_secs(5),
    };
    let run_for = match &raw.run_for {
        Some(text) => duration(&format!("{here}.runFor"), text)?,
        None => Duration::from_secs(120),
    };
    Ok(PodOutcome {
        job,
        attempt: raw.attempt,
        outcome,
        start_after,
        run_for,
        cells: raw.cells.unwrap_or(3),
    })
}

fn to_raw(scenario: &Scenario) -> RawScenario {
    RawScenario {
        name: scenario.name.clone(),
        description: scenario.description.clone(),
        mode: scenario.mode,
        epoch: Some(scenario.epoch),
        settle: Some(format_duration(scenario.settle)),
        operator: scenario.operator.clone(),
        objects: scenario.objects.clone(),
        timeline: scenario.timeline.iter().map(step_to_raw).collect(),
        pod_outcomes: scenario
            .pod_outcomes
            .iter()
            .map(|o| RawPodOutcome {
                job: o.job.to_string(),
                attempt: o.attempt,
                outcome: match o.outcome {
                    PodResult::Succeeded => "succeeded",
                    PodResult::Failed => "failed",
                    PodResult::Evicted => "evicted",
                    PodResult::ImagePullBackOff => "imagePullBackOff",
                }
                .to_owned(),
                start_after: Some(format_duration(o.start_after)),
                run_for: Some(format_duration(o.run_for)),
                cells: Some(o.cells),
            })
            .collect(),
        expect: scenario.expect.clone(),
    }
}

fn step_to_raw(step: &Step) -> RawStep {
    let mut raw = RawStep {
        at: format_duration(step.at),
        ..RawStep::default()
    };
    match &step.action {
        Action::Phase(write) => {
            raw.phase = Some(RawPhase {
                job: write.job.to_string(),
                phase: write.phase.as_str().to_owned(),
                message: write.message.clone(),
                replace_status: write.replace_status,
            });
        }
        Action::Patch { object, patch } => {
            raw.patch = Some(RawPatch {
                object: object.clone(),
                patch: patch.clone(),
            });
        }
        Action::Apply(object) => raw.apply = Some(object.clone()),
        Action::Delete(object) => raw.delete = Some(object.clone()),
        Action::RolloutRestart(object) => raw.rollout_restart = Some(object.clone()),
        Action::ArgoSync(app) => raw.argo_sync = Some(app.to_string()),
        Action::RestartOperator(restart) => {
            raw.restart_operator = Some(RawRestart {
                down_for: Some(format_duration(restart.down_for)),
                graceful: restart.graceful,
            });
        }
        Action::Fault(fault) => raw.fault = Some(fault_to_raw(fault)),
        Action::ClearFaults => raw.clear_faults = Some(Empty {}),
        Action::DropWatches => raw.drop_watches = Some(Empty {}),
        Action::Compact => raw.compact = Some(Empty {}),
    }
    raw
}

fn fault_to_raw(fault: &Fault) -> RawFault {
    let (effect, code, after) = match fault.effect {
        FaultEffect::Status(code) => ("status", Some(code.as_u16()), None),
        FaultEffect::AfterCommit(code) => ("afterCommit", Some(code.as_u16()), None),
        FaultEffect::Timeout(d) => ("timeout", None, Some(format_duration(d))),
        FaultEffect::DropWatch => ("dropWatch", None, None),
    };
    RawFault {
        verb: fault.matcher.verb.map(|v| verb_name(v).to_owned()),
        resource: fault.matcher.resource.clone(),
        name: fault.matcher.name.clone(),
        effect: effect.to_owned(),
        code,
        after,
        times: match fault.times {
            Times::Once => None,
            Times::N(n) => Some(RawTimes::Count(n)),
            Times::Always => Some(RawTimes::Word("always".to_owned())),
        },
    }
}
