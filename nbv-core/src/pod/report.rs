//! The result a validation Pod writes to its termination message, and how nbv reads it.
//!
//! The notebook container ends by writing one compact JSON document to
//! `/dev/termination-log`; the kubelet copies it into the container's status
//! (`state.terminated.message`), where the operator reads it without fetching logs:
//!
//! ```json
//! {"cells":[{"i":0,"s":"ok","t":1.2},{"i":2,"s":"err","t":0.05,"e":"KeyError: 'x'"}],
//!  "error":{"kind":"cell","cell":2,"ename":"KeyError","evalue":"'x'"}}
//! ```
//!
//! `i` is the cell's index in the notebook (markdown cells count, but only code cells
//! are reported), `s` its outcome (`ok`, `err`, `skip`), `t` its duration in seconds and
//! `e` its error. The kubelet keeps at most 4096 bytes, so the writer caps the document:
//! error strings are cut, and when the cells still do not fit, the first cells that fit
//! and the failing cell are kept and `dropped` says how many were left out.
//!
//! The writer is [`RunReport::encode`], which `nbv pod run` calls in the Pod; tests and
//! simulations use it to produce the messages a real Pod would.

use serde::{Deserialize, Serialize};

use crate::api::{CellResult, CellStatus};
use crate::checks::CheckReport;
use crate::compare::ReportedComparison;
use crate::models::{ReportedPrediction, capped_predictions};
use crate::text::clean;

/// The most a kubelet keeps of a termination message, in bytes.
pub const MAX_REPORT_BYTES: usize = 4096;
/// Longest exception name kept, in bytes.
const MAX_ENAME: usize = 128;
/// Longest exception value kept, in bytes.
const MAX_EVALUE: usize = 1024;
/// Longest per-cell error kept, in bytes.
const MAX_CELL_ERROR: usize = 160;
/// Longest text [`RunReport::parse`] reads. A kubelet never stores more than
/// [`MAX_REPORT_BYTES`]; anything much longer did not come from one.
const MAX_PARSED_BYTES: usize = 16 * MAX_REPORT_BYTES;

/// What the notebook container reported: per-cell outcomes and the error that ended
/// the run, if any.
///
/// # Examples
///
/// ```
/// use nbv_core::api::CellStatus;
/// use nbv_core::pod::RunReport;
///
/// let report = RunReport::parse(r#"{"cells":[{"i":1,"s":"ok","t":1.2}]}"#)?;
/// let results = report.cell_results();
/// assert_eq!(results[0].cell_index, 1);
/// assert_eq!(results[0].status, CellStatus::Success);
/// assert_eq!(results[0].execution_time.as_deref(), Some("1.2s"));
/// # Ok::<(), nbv_core::pod::InvalidReport>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The code cells, in notebook order (possibly not all of them: see
    /// [`dropped`](Self::dropped)).
    #[serde(default)]
    pub cells: Vec<ReportedCell>,
    /// Why the run failed; `None` when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// The comparison with the golden notebook, when the job asks for one and the
    /// notebook ran through (at most [`MAX_CMP_BYTES`](crate::compare::MAX_CMP_BYTES)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmp: Option<ReportedComparison>,
    /// What the checks of `spec.validationConfig` found, when the job asks for checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chk: Option<CheckReport>,
    /// What each model answered to the prediction check of `spec.modelValidation`,
    /// when the job asks for one and the notebook passed everything else (at most
    /// [`MAX_MDL_BYTES`](crate::models::MAX_MDL_BYTES), failures first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mdl: Option<Vec<ReportedPrediction>>,
    /// Cells left out to fit the termination message.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

/// The outcome of one code cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportedCell {
    /// Index of the cell in the notebook.
    #[serde(rename = "i")]
    pub index: u64,
    /// Whether it ran, failed or was skipped.
    #[serde(rename = "s")]
    pub outcome: CellOutcome,
    /// How long it ran, in seconds.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    /// `ExceptionName: value` of a failed cell, cut to 160 bytes.
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What happened to a code cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CellOutcome {
    /// It ran without error.
    #[serde(rename = "ok")]
    Succeeded,
    /// It raised.
    #[serde(rename = "err")]
    Failed,
    /// It did not run (an earlier cell failed).
    #[serde(rename = "skip")]
    Skipped,
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    /// Which part failed.
    pub kind: RunErrorKind,
    /// Index of the failing cell, for [`RunErrorKind::Cell`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u64>,
    /// Exception name, e.g. `KeyError`.
    #[serde(default)]
    pub ename: String,
    /// Exception value, e.g. `'x'`.
    #[serde(default)]
    pub evalue: String,
}

/// Which part of a run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunErrorKind {
    /// A cell raised.
    Cell,
    /// The notebook file does not exist (or its path leaves the repository).
    Missing,
    /// The notebook file is not a valid notebook.
    Invalid,
    /// The kernel died.
    Kernel,
    /// The image lacks papermill or the notebook's kernel.
    Setup,
    /// A check of `spec.validationConfig` failed (the findings are in `chk`).
    Check,
    /// The script that runs the notebook failed.
    Internal,
    /// The executed notebook differs from the golden notebook.
    Comparison,
    /// The golden notebook does not exist or cannot be read.
    Golden,
    /// A model's answer to the prediction check did not match (`ename`
    /// `PredictionMismatch`), or the model did not answer (`PredictionFailed`); the
    /// answers are in `mdl`.
    Model,
    /// A kind this version does not know (written by a newer script).
    #[serde(other)]
    Unknown,
}

/// A termination message that is not a [`RunReport`].
///
/// # Examples
///
/// ```
/// use nbv_core::pod::RunReport;
///
/// let err = RunReport::parse("Traceback (most recent call last): ...").unwrap_err();
/// assert!(err.to_string().starts_with("the result is not nbv's JSON report"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the result is not nbv's JSON report ({problem})")]
pub struct InvalidReport {
    /// What is wrong with it.
    pub problem: String,
}

impl RunReport {
    /// Reads a termination message. Surrounding whitespace is ignored, and so are
    /// fields this version does not know.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::{RunErrorKind, RunReport};
    ///
    /// let report = RunReport::parse(
    ///     r#"{"cells":[],"error":{"kind":"missing","ename":"FileNotFoundError","evalue":"x.ipynb"}}"#,
    /// )?;
    /// assert_eq!(report.error.map(|e| e.kind), Some(RunErrorKind::Missing));
    /// # Ok::<(), nbv_core::pod::InvalidReport>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`InvalidReport`] when `text` is empty, longer than 64 KiB, or not a report.
    pub fn parse(text: &str) -> Result<RunReport, InvalidReport> {
        let text = text.trim();
        let malformed = |problem: String| InvalidReport { problem };
        if text.is_empty() {
            return Err(malformed("it is empty".to_owned()));
        }
        if text.len() > MAX_PARSED_BYTES {
            return Err(malformed(format!("it is {} bytes long", text.len())));
        }
        // Every string the Pod wrote may echo the notebook's environment or a request.
        let mut value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        crate::redact::redact_strings(&mut value);
        serde_json::from_value(value).map_err(|e| malformed(e.to_string()))
    }

    /// The document the Pod writes for this report, at most [`MAX_REPORT_BYTES`] long.
    ///
    /// Control characters other than newline and tab become spaces (so that escaping
    /// at most doubles a string), exception names are cut to 128 bytes, values to 1024
    /// and cell errors to 160 (ending in `...`). When the document is still too long,
    /// it keeps the first cells that fit and the failing cell, and adds the number of
    /// cells left out to [`dropped`](Self::dropped).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::{CellOutcome, ReportedCell, RunReport, MAX_REPORT_BYTES};
    ///
    /// let cell = |i| ReportedCell { index: i, outcome: CellOutcome::Succeeded, seconds: Some(0.5), error: None };
    /// let report = RunReport { cells: (0..1000).map(cell).collect(), ..RunReport::default() };
    /// let encoded = report.encode();
    /// assert!(encoded.len() <= MAX_REPORT_BYTES);
    /// let read = RunReport::parse(&encoded)?;
    /// assert_eq!(read.cells.len() as u64 + read.dropped, 1000);
    /// # Ok::<(), nbv_core::pod::InvalidReport>(())
    /// ```
    pub fn encode(&self) -> String {
        let cells: Vec<ReportedCell> = self.cells.iter().map(ReportedCell::cleaned).collect();
        let error = self.error.as_ref().map(RunError::cleaned);
        let cmp = self.cmp.as_ref().map(ReportedComparison::capped);
        let chk = self.chk.as_ref().map(CheckReport::capped);
        let mdl = self.mdl.as_deref().map(capped_predictions);
        let full = RunReport {
            cells,
            error,
            cmp,
            chk,
            mdl,
            dropped: self.dropped,
        };
        let text = json(&full);
        if text.len() <= MAX_REPORT_BYTES {
            return text;
        }
        let RunReport {
            cells,
            error,
            cmp,
            chk,
            mdl,
            dropped,
        } = full;
        let failing = error
            .as_ref()
            .and_then(|e| e.cell)
            .and_then(|i| cells.iter().position(|c| c.index == i));
        // The count written is at most this one, so its digits fit in what is reserved.
        let base = RunReport {
            cells: Vec::new(),
            error: error.clone(),
            cmp: cmp.clone(),
            chk: chk.clone(),
            mdl: mdl.clone(),
            dropped: dropped.saturating_add(cells.len() as u64),
        };
        let budget = MAX_REPORT_BYTES.saturating_sub(json(&base).len());
        let size = |cell: &ReportedCell| json(cell).len() + 1;
        let mut used = failing.map_or(0, |p| size(&cells[p]));
        let mut fits = true;
        let mut kept = Vec::new();
        for (position, cell) in cells.iter().enumerate() {
            if Some(position) == failing {
                kept.push(cell.clone());
                continue;
            }
            fits = fits && used + size(cell) <= budget;
            if fits {
                used += size(cell);
                kept.push(cell.clone());
            }
        }
        let left_out = (cells.len() - kept.len()) as u64;
        json(&RunReport {
            cells: kept,
            error,
            cmp,
            chk,
            mdl,
            dropped: dropped.saturating_add(left_out),
        })
    }

    /// The cells as the job's `status.results`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::CellStatus;
    /// use nbv_core::pod::RunReport;
    ///
    /// let report = RunReport::parse(r#"{"cells":[{"i":4,"s":"err","e":"KeyError: 'x'"},{"i":5,"s":"skip"}]}"#)?;
    /// let results = report.cell_results();
    /// assert_eq!(results[0].status, CellStatus::Failure);
    /// assert_eq!(results[0].error_message.as_deref(), Some("KeyError: 'x'"));
    /// assert_eq!(results[1].status, CellStatus::Skipped);
    /// # Ok::<(), nbv_core::pod::InvalidReport>(())
    /// ```
    pub fn cell_results(&self) -> Vec<CellResult> {
        self.cells.iter().map(ReportedCell::cell_result).collect()
    }

    /// A one-line summary for the success message, e.g. `5 code cells ran in 12.3s`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::RunReport;
    ///
    /// let report = RunReport::parse(r#"{"cells":[{"i":0,"s":"ok","t":1.25},{"i":2,"s":"ok","t":2}]}"#)?;
    /// assert_eq!(report.summary(), "2 code cells ran in 3.25s");
    /// # Ok::<(), nbv_core::pod::InvalidReport>(())
    /// ```
    pub fn summary(&self) -> String {
        let count = |outcome| self.cells.iter().filter(|c| c.outcome == outcome).count();
        let ran = count(CellOutcome::Succeeded) + count(CellOutcome::Failed);
        // `+ 0.0`: the sum of no durations is -0.0, which would print as "-0".
        let seconds: f64 = self
            .cells
            .iter()
            .filter_map(ReportedCell::duration)
            .sum::<f64>()
            + 0.0;
        let mut summary = format!(
            "{ran} code {} ran in {}s",
            if ran == 1 { "cell" } else { "cells" },
            (seconds * 100.0).round() / 100.0
        );
        let skipped = count(CellOutcome::Skipped);
        if skipped > 0 {
            summary.push_str(&format!(", {skipped} skipped"));
        }
        if self.dropped > 0 {
            summary.push_str(&format!(
                " ({} more not reported: the result is limited to {MAX_REPORT_BYTES} bytes)",
                self.dropped
            ));
        }
        summary
    }
}

impl ReportedCell {
    fn cleaned(&self) -> ReportedCell {
        ReportedCell {
            index: self.index,
            outcome: self.outcome,
            seconds: self.duration(),
            error: self.error.as_deref().map(|e| clean(e, MAX_CELL_ERROR)),
        }
    }

    /// The duration when it is a duration (finite and not negative).
    fn duration(&self) -> Option<f64> {
        self.seconds.filter(|s| s.is_finite() && *s >= 0.0)
    }

    fn cell_result(&self) -> CellResult {
        CellResult {
            cell_index: i64::try_from(self.index).unwrap_or(i64::MAX),
            status: match self.outcome {
                CellOutcome::Succeeded => CellStatus::Success,
                CellOutcome::Failed => CellStatus::Failure,
                CellOutcome::Skipped => CellStatus::Skipped,
            },
            execution_time: self.duration().map(|s| format!("{s}s")),
            output: None,
            error_message: self.error.clone(),
        }
    }
}

impl RunError {
    fn cleaned(&self) -> RunError {
        RunError {
            kind: self.kind,
            cell: self.cell,
            ename: clean(&self.ename, MAX_ENAME),
            evalue: clean(&self.evalue, MAX_EVALUE),
        }
    }
}

fn json<T: Serialize>(value: &T) -> String {
    // Plain structs of strings and numbers: serialization cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
