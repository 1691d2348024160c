//! The run's verdict: what to do before papermill, what its outcome means, and the
//! models' answers.

use serde_json::Value;

use super::{ModelEndpoint, PredictionRequest, RunSettings, RunnerOutcome, executed_cells};
use crate::checks::{CheckReport, Finding, Outcome, cell_findings, missing_cells};
use crate::compare::compare;
use crate::models::{ReportedPrediction, compare_outputs, expected_outputs, response_outputs};
use crate::pod::{RunError, RunErrorKind, RunReport};
use crate::text::clean;

const MAX_DETAIL: usize = 200;

/// What to do before the notebook runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Start {
    /// Run the notebook; with `probe_cells`, under the checks' probing engine, the
    /// probes observing the value of these cells (and every cell's warnings).
    Execute {
        /// The cells whose value the checks expect; `None` without checks.
        probe_cells: Option<Vec<u64>>,
    },
    /// Nothing runs: report this (an expectation names a cell that is not code).
    Report(Box<RunReport>),
}

/// What to do with the source notebook (`None` when it could not be read as JSON:
/// papermill then says what is wrong with it).
///
/// # Examples
///
/// ```
/// use nbv_core::api::ValidationConfig;
/// use nbv_core::checks::resolve;
/// use nbv_core::pod::{RunSettings, Start, before_run};
/// use serde_json::json;
///
/// let config: ValidationConfig = serde_json::from_value(json!({
///     "expectedOutputs": [{"cell": 5, "type": "int"}]
/// }))?;
/// let policy = serde_json::to_string(&resolve(&config)?)?;
/// let settings = RunSettings::from_env(|name| match name {
///     "NBV_NOTEBOOK" => Some("a.ipynb".to_owned()),
///     "NBV_CHECKS" => Some(policy.clone()),
///     _ => None,
/// })?;
/// let Start::Report(report) = before_run(&settings, Some(&json!({"cells": []}))) else {
///     panic!("cell 5 does not exist");
/// };
/// assert_eq!(report.error.unwrap().ename, "cell");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn before_run(settings: &RunSettings, source: Option<&Value>) -> Start {
    let Some(policy) = &settings.checks else {
        return Start::Execute { probe_cells: None };
    };
    let missing = source.map(|s| missing_cells(s, policy)).unwrap_or_default();
    if missing.is_empty() {
        let mut cells: Vec<u64> = policy.expect.iter().map(|e| e.cell).collect();
        cells.sort_unstable();
        cells.dedup();
        return Start::Execute {
            probe_cells: Some(cells),
        };
    }
    let error = failed_check(&missing);
    Start::Report(Box::new(RunReport {
        error,
        chk: Some(CheckReport {
            findings: missing,
            more: 0,
        }),
        ..RunReport::default()
    }))
}

/// The verdict on a run, before the models are asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// The report so far.
    pub report: RunReport,
    /// Whether the prediction check runs now: the job asks for one and the notebook
    /// passed everything else ([`with_predictions`] completes the report).
    pub ask_models: bool,
}

/// Judges a run: `executed` is the notebook papermill wrote (`None` when it wrote
/// none), `outcome` what the runner reported, `golden` the golden notebook, read
/// before the notebook ran (so that the run cannot change it), or why it could not
/// be read. In this order, the first failure is the run's error:
///
/// 1. papermill's error (a cell raised, the kernel died, ...);
/// 2. the golden comparison, of a notebook that ran through;
/// 3. the first failed check (the findings are reported whatever the order);
/// 4. the prediction check, asked only now ([`Judged::ask_models`]).
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{RunErrorKind, RunSettings, RunnerOutcome, judge};
/// use serde_json::json;
///
/// let settings = RunSettings::from_env(|name| match name {
///     "NBV_NOTEBOOK" => Some("a.ipynb".to_owned()),
///     "NBV_GOLDEN" => Some("/workspace/golden/a.ipynb".to_owned()),
///     _ => None,
/// })?;
/// let cell = |text: &str| json!({"cell_type": "code", "execution_count": 1,
///     "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]});
/// let executed = json!({"cells": [cell("accuracy 0.95\n")]});
/// let golden = json!({"cells": [cell("accuracy 0.93\n")]});
/// let judged = judge(&settings, Some(&executed), RunnerOutcome::default(), Some(Ok(golden)));
/// let error = judged.report.error.unwrap();
/// assert_eq!(error.kind, RunErrorKind::Comparison);
/// assert_eq!(error.ename, "GoldenMismatch");
/// # Ok::<(), nbv_core::pod::InvalidRunSettings>(())
/// ```
pub fn judge(
    settings: &RunSettings,
    executed: Option<&Value>,
    outcome: RunnerOutcome,
    golden: Option<Result<Value, RunError>>,
) -> Judged {
    let mut error = outcome.error;
    let cells = executed.map(executed_cells).unwrap_or_default();
    // Findings before the run end it in `before_run`: a run that got here has none.
    let findings = match (&settings.checks, executed) {
        (Some(policy), Some(executed)) => {
            cell_findings(executed, policy, &outcome.probes, &outcome.asserts)
        }
        _ => Vec::new(),
    };
    let mut cmp = None;
    if let (None, Some(executed), Some(golden)) = (&error, executed, golden) {
        match golden {
            Err(unreadable) => error = Some(unreadable),
            Ok(golden) => {
                let comparison_settings = settings
                    .golden
                    .as_ref()
                    .map(|g| g.settings.clone())
                    .unwrap_or_default();
                let reported = compare(executed, &golden, &comparison_settings).reported();
                if !reported.matched() {
                    error = Some(RunError {
                        kind: RunErrorKind::Comparison,
                        cell: None,
                        ename: "GoldenMismatch".to_owned(),
                        evalue: format!(
                            "{} of {} code cells differ from the golden notebook; {}",
                            reported.mismatched,
                            reported.total,
                            reported.first_difference()
                        ),
                    });
                }
                cmp = Some(reported);
            }
        }
    }
    if error.is_none() {
        error = failed_check(&findings);
    }
    let ask_models = error.is_none() && executed.is_some() && settings.models.is_some();
    Judged {
        report: RunReport {
            cells,
            error,
            cmp,
            chk: settings
                .checks
                .as_ref()
                .map(|_| CheckReport { findings, more: 0 }),
            mdl: None,
            dropped: 0,
        },
        ask_models,
    }
}

fn failed_check(findings: &[Finding]) -> Option<RunError> {
    let failed = findings.iter().find(|f| f.outcome == Outcome::Fail)?;
    Some(RunError {
        kind: RunErrorKind::Check,
        cell: failed.cell,
        ename: failed.rule.as_str().to_owned(),
        evalue: failed.message.clone(),
    })
}

/// One model's entry in the report, from its answer (`Err`: why there is none, e.g.
/// `HTTP 503 from <url>`), and the reason it failed (`PredictionMismatch` or
/// `PredictionFailed`), if it did.
///
/// # Examples
///
/// ```
/// use nbv_core::models::Protocol;
/// use nbv_core::pod::{ModelEndpoint, PredictionRequest, prediction_entry};
/// use serde_json::json;
///
/// let request: PredictionRequest = serde_json::from_value(json!({"tolerance": 0.01,
///     "testData": {"instances": [[1]]}, "expectedOutput": {"predictions": [0.9]}}))?;
/// let model = ModelEndpoint { model: "ml/iris".into(), name: "iris".into(),
///     url: "http://iris".into(), protocol: Protocol::V1 };
/// let (entry, reason) = prediction_entry(&request, &model, Ok(json!({"predictions": [0.905]})));
/// assert!(entry.ok && reason.is_none());
/// let (entry, reason) = prediction_entry(&request, &model, Ok(json!({"predictions": [0.5]})));
/// assert_eq!(reason, Some("PredictionMismatch"));
/// assert_eq!(entry.actual.as_deref(), Some("[0.5]"));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn prediction_entry(
    request: &PredictionRequest,
    model: &ModelEndpoint,
    answer: Result<Value, String>,
) -> (ReportedPrediction, Option<&'static str>) {
    let failed = |detail: String, actual: Option<String>, reason| {
        let entry = ReportedPrediction {
            model: model.model.clone(),
            ok: false,
            detail: Some(detail),
            actual,
        };
        (entry, Some(reason))
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(why) => return failed(why, None, "PredictionFailed"),
    };
    let Some(actual) = response_outputs(model.protocol, &answer) else {
        let (protocol, what) = match model.protocol {
            crate::models::Protocol::V2 => ("V2", r#""outputs" with "data""#),
            crate::models::Protocol::V1 => ("V1", r#""predictions""#),
        };
        let detail = format!(
            "the answer from {} is not a {protocol} response (no {what}): {answer}",
            model.predict_url()
        );
        return failed(detail, None, "PredictionFailed");
    };
    let expected = expected_outputs(model.protocol, &request.expected_output);
    match compare_outputs(&expected, &actual, request.tolerance) {
        Ok(()) => (
            ReportedPrediction {
                model: model.model.clone(),
                ok: true,
                detail: None,
                actual: None,
            },
            None,
        ),
        Err(mismatch) => failed(
            mismatch.to_string(),
            Some(actual.to_string()),
            "PredictionMismatch",
        ),
    }
}

/// `judged` completed with the models' entries ([`prediction_entry`], in the order the
/// models were asked): the first failure is the run's error.
///
/// # Examples
///
/// ```
/// use nbv_core::models::ReportedPrediction;
/// use nbv_core::pod::{Judged, RunErrorKind, RunReport, with_predictions};
///
/// let judged = Judged { report: RunReport::default(), ask_models: true };
/// let entry = ReportedPrediction { model: "ml/iris".into(), ok: false,
///     detail: Some("HTTP 503 from http://iris".into()), actual: None };
/// let report = with_predictions(judged, vec![(entry, Some("PredictionFailed"))]);
/// let error = report.error.unwrap();
/// assert_eq!((error.kind, error.ename.as_str()), (RunErrorKind::Model, "PredictionFailed"));
/// assert_eq!(error.evalue, "model ml/iris: HTTP 503 from http://iris");
/// ```
pub fn with_predictions(
    judged: Judged,
    entries: Vec<(ReportedPrediction, Option<&'static str>)>,
) -> RunReport {
    let mut report = judged.report;
    if report.error.is_none() {
        report.error = entries.iter().find_map(|(entry, reason)| {
            let reason = (*reason)?;
            let detail = clean(entry.detail.as_deref().unwrap_or_default(), MAX_DETAIL);
            Some(RunError {
                kind: RunErrorKind::Model,
                cell: None,
                ename: reason.to_owned(),
                evalue: format!("model {}: {detail}", entry.model),
            })
        });
    }
    report.mdl = Some(entries.into_iter().map(|(entry, _)| entry).collect());
    report
}
