//! The findings of one run, from the notebook, the executed notebook and what the
//! probes saw: the half of the checks that reads the run, after [`evaluate`] (the
//! half that holds one value against one expectation).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{CheckPolicy, Expectation, Finding, Outcome, Rule, Severity, evaluate};
use crate::pod::Probe;
use crate::pod::run_cells::{counted_cells, is_code, ran};
use crate::text::clean;

/// Findings for the expectations of `policy` that name no code cell of `notebook`
/// (the source notebook, before it runs): a job that expects a value of a cell that
/// is not code fails before anything runs.
///
/// # Examples
///
/// ```
/// use nbv_core::api::ValidationConfig;
/// use nbv_core::checks::{missing_cells, resolve};
/// use serde_json::json;
///
/// let config: ValidationConfig = serde_json::from_value(json!({
///     "expectedOutputs": [{"cell": 0, "type": "int"}, {"cell": 1, "type": "int"}]
/// }))?;
/// let policy = resolve(&config)?;
/// let notebook = json!({"cells": [{"cell_type": "markdown"}, {"cell_type": "code"}]});
/// let found = missing_cells(&notebook, &policy);
/// assert_eq!(found.len(), 1);
/// assert_eq!(found[0].cell, Some(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn missing_cells(notebook: &Value, policy: &CheckPolicy) -> Vec<Finding> {
    let code: BTreeSet<u64> = counted_cells(notebook)
        .filter(|(_, cell)| is_code(cell))
        .map(|(index, _)| index)
        .collect();
    policy
        .expect
        .iter()
        .enumerate()
        .filter(|(_, e)| !code.contains(&e.cell))
        .filter_map(|(position, e)| {
            let message = format!(
                "spec.validationConfig.expectedOutputs[{position}].cell: cell {} is not a code \
                 cell of the notebook (cells count from 0, markdown cells included)",
                e.cell
            );
            finding(policy, Some(e.cell), Rule::Cell, message)
        })
        .collect()
}

/// The findings of a run, cell by cell: what a cell wrote to stderr (read from the
/// executed notebook), the warnings it showed and the shell commands that failed (from
/// its [`Probe`]), its value against its expectations ([`evaluate`]); then whether any
/// cell that ran asserts anything (`asserts`: the code cells holding an assert
/// statement). A check set to `off` finds nothing.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::api::ValidationConfig;
/// use nbv_core::checks::{Outcome, Rule, cell_findings, resolve};
/// use nbv_core::pod::Probe;
/// use serde_json::json;
///
/// let config: ValidationConfig = serde_json::from_value(json!({"level": "production"}))?;
/// let policy = resolve(&config)?;
/// let executed = json!({"cells": [{"cell_type": "code", "execution_count": 1, "outputs": [
///     {"output_type": "stream", "name": "stderr", "text": "disk almost full\n"}]}]});
/// let found = cell_findings(&executed, &policy, &BTreeMap::new(), &[0]);
/// assert_eq!(found[0].rule, Rule::Stderr);
/// assert_eq!(found[0].message, "cell 0 wrote to stderr: disk almost full");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cell_findings(
    executed: &Value,
    policy: &CheckPolicy,
    probes: &BTreeMap<u64, Probe>,
    asserts: &[u64],
) -> Vec<Finding> {
    let mut expectations: BTreeMap<u64, Vec<&Expectation>> = BTreeMap::new();
    for expectation in &policy.expect {
        expectations
            .entry(expectation.cell)
            .or_default()
            .push(expectation);
    }
    let mut found = Vec::new();
    let mut asserted = false;
    for (index, cell) in counted_cells(executed).filter(|(_, cell)| is_code(cell)) {
        if !ran(cell) {
            continue;
        }
        asserted = asserted || asserts.contains(&index);
        if let Some(line) = stderr_line(cell) {
            let message = format!("cell {index} wrote to stderr: {}", clean(&line, 120));
            found.extend(finding(policy, Some(index), Rule::Stderr, message));
        }
        let probe = probes.get(&index);
        for (category, message) in probe.iter().flat_map(|p| &p.warnings) {
            let message = format!("cell {index} raised {category}: {}", clean(message, 120));
            found.extend(finding(policy, Some(index), Rule::Warning, message));
        }
        for (command, code) in probe.iter().flat_map(|p| &p.exits) {
            let code = match code {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let message = format!(
                "cell {index}: shell command {} exited with code {code}",
                clean(command, 80)
            );
            found.extend(finding(policy, Some(index), Rule::ExitCode, message));
        }
        let Some(observation) = probe.and_then(|p| p.value.as_ref()) else {
            continue;
        };
        let cell_expectations = expectations.get(&index);
        let each: Vec<Option<&Expectation>> = match cell_expectations {
            Some(list) => list.iter().map(|e| Some(*e)).collect(),
            None => vec![None],
        };
        for (position, expectation) in each.into_iter().enumerate() {
            // A NaN is one finding per cell, however many expectations it has.
            found.extend(
                evaluate(index, expectation, observation, policy)
                    .into_iter()
                    .filter(|f| !(f.rule == Rule::Nan && position > 0)),
            );
        }
    }
    if !asserted {
        let message = "no code cell that ran holds an assert statement; assert what the \
                       notebook must produce";
        found.extend(finding(policy, None, Rule::Assertions, message.to_owned()));
    }
    found
}

/// The finding of `rule` about `cell` under `policy`, or `None` when its check is off;
/// a rule of no check (`cell`: a mistake in the spec) always fails.
pub(super) fn finding(
    policy: &CheckPolicy,
    cell: Option<u64>,
    rule: Rule,
    message: String,
) -> Option<Finding> {
    let severity = rule.check().map_or(Severity::Fail, |c| policy.checks.of(c));
    let outcome = match severity {
        Severity::Off => return None,
        Severity::Warn => Outcome::Warn,
        Severity::Fail => Outcome::Fail,
    };
    Some(Finding {
        cell,
        rule,
        outcome,
        message,
    })
}

/// The first line a cell wrote to stderr (the whole text when it is blank lines).
fn stderr_line(cell: &Value) -> Option<String> {
    let outputs = cell.get("outputs").and_then(Value::as_array)?;
    let stream = outputs.iter().find(|o| {
        o.get("output_type").and_then(Value::as_str) == Some("stream")
            && o.get("name").and_then(Value::as_str) == Some("stderr")
    })?;
    let text = match stream.get("text") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    };
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    Some(first.map_or_else(|| text.trim().to_owned(), str::to_owned))
}
