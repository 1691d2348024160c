//! Per-cell outcomes of an executed notebook, as papermill leaves them.

use chrono::DateTime;
use serde_json::Value;

use crate::pod::{CellOutcome, ReportedCell};

/// papermill marks the cells it inserts into a failed notebook with this tag.
pub(crate) const PAPERMILL_ERROR_TAG: &str = "papermill-error-cell-tag";

/// The code cells of an executed notebook, indexed as in the source notebook (the
/// cells papermill inserts to show an error are not counted).
///
/// A cell failed when it has an error output (a clean `sys.exit()` is not one, as
/// papermill does not count it) or papermill marked it failed; it ran when it has an
/// execution count or papermill saw it start; otherwise it was skipped. papermill marks
/// every cell `completed` when a run stops early, so that mark alone means nothing.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{CellOutcome, executed_cells};
/// use serde_json::json;
///
/// let notebook = json!({"cells": [
///     {"cell_type": "markdown", "source": "# Train"},
///     {"cell_type": "code", "execution_count": 1, "outputs": [],
///      "metadata": {"papermill": {"duration": 1.25}}},
///     {"cell_type": "code", "execution_count": 2, "outputs": [
///         {"output_type": "error", "ename": "KeyError", "evalue": "'x'", "traceback": []}]},
///     {"cell_type": "code", "execution_count": null, "outputs": []},
/// ]});
/// let cells = executed_cells(&notebook);
/// assert_eq!(cells.iter().map(|c| (c.index, c.outcome)).collect::<Vec<_>>(), vec![
///     (1, CellOutcome::Succeeded), (2, CellOutcome::Failed), (3, CellOutcome::Skipped),
/// ]);
/// assert_eq!(cells[0].seconds, Some(1.25));
/// assert_eq!(cells[1].error.as_deref(), Some("KeyError: 'x'"));
/// ```
pub fn executed_cells(notebook: &Value) -> Vec<ReportedCell> {
    counted_cells(notebook)
        .filter(|(_, cell)| is_code(cell))
        .map(|(index, cell)| reported(index, cell))
        .collect()
}

/// The cells of `notebook` with their index in the source notebook.
pub(crate) fn counted_cells(notebook: &Value) -> impl Iterator<Item = (u64, &Value)> {
    notebook
        .get("cells")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|cell| !has_tag(cell, PAPERMILL_ERROR_TAG))
        .enumerate()
        .map(|(index, cell)| (index as u64, cell))
}

pub(crate) fn is_code(cell: &Value) -> bool {
    cell.get("cell_type").and_then(Value::as_str) == Some("code")
}

/// Whether the cell ran: it has an execution count.
pub(crate) fn ran(cell: &Value) -> bool {
    cell.get("execution_count").is_some_and(|c| !c.is_null())
}

fn has_tag(cell: &Value, tag: &str) -> bool {
    cell.pointer("/metadata/tags")
        .and_then(Value::as_array)
        .is_some_and(|tags| tags.iter().any(|t| t.as_str() == Some(tag)))
}

fn reported(index: u64, cell: &Value) -> ReportedCell {
    let papermill = cell.pointer("/metadata/papermill");
    let field = |name: &str| papermill.and_then(|p| p.get(name));
    let first_error = cell
        .get("outputs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|output| is_error(output));
    let outcome =
        if first_error.is_some() || field("status").and_then(Value::as_str) == Some("failed") {
            CellOutcome::Failed
        } else if ran(cell) || field("start_time").is_some_and(|t| !t.is_null() && t != "") {
            CellOutcome::Succeeded
        } else {
            CellOutcome::Skipped
        };
    let text = |output: &Value, key: &str| match output.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    ReportedCell {
        index,
        outcome,
        seconds: (outcome != CellOutcome::Skipped)
            .then(|| duration(cell))
            .flatten(),
        error: first_error.map(|e| format!("{}: {}", text(e, "ename"), text(e, "evalue"))),
    }
}

/// Whether an output is an error; papermill does not count a clean `sys.exit()` as
/// one, and neither does nbv.
fn is_error(output: &Value) -> bool {
    if output.get("output_type").and_then(Value::as_str) != Some("error") {
        return false;
    }
    let clean_exit = output.get("ename").and_then(Value::as_str) == Some("SystemExit")
        && matches!(
            output.get("evalue").and_then(Value::as_str),
            None | Some("") | Some("0")
        );
    !clean_exit
}

/// Seconds a cell ran, from papermill's metadata or else nbclient's, to 0.01 s.
fn duration(cell: &Value) -> Option<f64> {
    let seconds = match cell
        .pointer("/metadata/papermill/duration")
        .and_then(Value::as_f64)
    {
        Some(seconds) => seconds,
        None => {
            let at = |key: &str| {
                let text =
                    cell.pointer(&format!("/metadata/execution/{}", key.replace('/', "~1")))?;
                DateTime::parse_from_rfc3339(text.as_str()?).ok()
            };
            let (start, end) = (at("iopub.execute_input")?, at("shell.execute_reply")?);
            (end - start).num_microseconds()? as f64 / 1e6
        }
    };
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 100.0).round() / 100.0)
}
