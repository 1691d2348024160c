//! What a comparison found, in full and as the validation Pod reports it (the `cmp`
//! key of its termination message, at most [`MAX_CMP_BYTES`]).

use serde::{Deserialize, Serialize};

use crate::api::{CellDiff, ComparisonResult, ComparisonStrategy};

use super::settings::strategy_name;
use crate::text::clean;

/// The most the `cmp` key of the termination message takes, serialized.
pub const MAX_CMP_BYTES: usize = 1536;
/// Longest expected or actual text kept in a [`Difference`], in bytes.
pub(super) const MAX_SNIPPET: usize = 512;
/// Longest expected or actual text kept in the termination message, in bytes.
const MAX_REPORTED_SNIPPET: usize = 96;
/// Longest description kept in the termination message, in bytes.
const MAX_REPORTED_DETAIL: usize = 160;

/// What a comparison found: one [`Difference`] per cell that does not match.
///
/// `total_cells` counts the aligned positions (the code cells of the longer notebook),
/// so `matched_cells + differences.len() == total_cells`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonReport {
    /// The strategy used.
    pub strategy: ComparisonStrategy,
    /// Code-cell positions compared.
    pub total_cells: u64,
    /// Positions whose cells match.
    pub matched_cells: u64,
    /// The first difference of each cell that does not match, in cell order.
    pub differences: Vec<Difference>,
}

/// The first difference found in a cell.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// Index of the cell: in the executed notebook, or in the golden notebook for a
    /// [`DiffKind::MissingCell`].
    pub cell: u64,
    /// What differs.
    pub kind: DiffKind,
    /// How much it matters (every difference fails the comparison).
    pub severity: Severity,
    /// What the golden notebook has, cut to 512 bytes.
    pub expected: Option<String>,
    /// What the run produced, cut to 512 bytes.
    pub actual: Option<String>,
    /// Where the difference is, e.g. `output 1 (stream:stdout) differs`.
    pub detail: String,
}

/// What differs between a cell and its golden counterpart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    /// The golden notebook has a code cell the run has not.
    MissingCell,
    /// The run has a code cell the golden notebook has not.
    ExtraCell,
    /// The golden cell has an output the run's has not.
    MissingOutput,
    /// The run's cell has an output the golden's has not.
    ExtraOutput,
    /// An output is of another type or MIME type.
    OutputType,
    /// An output's content differs.
    OutputContent,
    /// Only the execution count differs.
    ExecutionCount,
}

/// How much a difference matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Only the execution count differs.
    Minor,
    /// An output differs.
    Major,
    /// A cell is missing or extra, or an error appeared or went away.
    Critical,
}

impl DiffKind {
    /// The name in reports and `status.comparisonResult` (`output_content`).
    pub const fn as_str(self) -> &'static str {
        match self {
            DiffKind::MissingCell => "missing_cell",
            DiffKind::ExtraCell => "extra_cell",
            DiffKind::MissingOutput => "missing_output",
            DiffKind::ExtraOutput => "extra_output",
            DiffKind::OutputType => "output_type",
            DiffKind::OutputContent => "output_content",
            DiffKind::ExecutionCount => "execution_count",
        }
    }
}

impl Severity {
    /// The name in reports and `status.comparisonResult` (`major`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Minor => "minor",
            Severity::Major => "major",
            Severity::Critical => "critical",
        }
    }
}

impl ComparisonReport {
    /// Whether every cell matched.
    pub fn matched(&self) -> bool {
        self.differences.is_empty()
    }

    /// The report as the Pod writes it under `cmp`: at most [`MAX_CMP_BYTES`]
    /// serialized, the first differences that fit (texts cut) and how many more
    /// there are.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::compare::{compare, Settings, MAX_CMP_BYTES};
    /// use serde_json::json;
    ///
    /// let cell = |text: &str| json!({"cell_type": "code", "execution_count": 1, "outputs": [
    ///     {"output_type": "stream", "name": "stdout", "text": text}]});
    /// let golden = json!({"cells": (0..100).map(|i| cell(&format!("step {i}"))).collect::<Vec<_>>()});
    /// let run = json!({"cells": (0..100).map(|i| cell(&format!("step {i}!"))).collect::<Vec<_>>()});
    /// let reported = compare(&run, &golden, &Settings::default()).reported();
    /// assert!(serde_json::to_string(&reported)?.len() <= MAX_CMP_BYTES);
    /// assert_eq!(reported.diffs.len() as u64 + reported.more, 100);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn reported(&self) -> ReportedComparison {
        let diffs: Vec<ReportedDiff> = self.differences.iter().map(ReportedDiff::of).collect();
        let mismatched = self.differences.len() as u64;
        ReportedComparison {
            result: if self.matched() { "matched" } else { "failed" }.to_owned(),
            strategy: strategy_name(self.strategy).to_owned(),
            total: self.total_cells,
            matched: self.matched_cells,
            mismatched,
            diffs,
            more: 0,
        }
        .capped()
    }
}

/// A comparison as the validation Pod reports it (the `cmp` key of its termination
/// message).
///
/// # Examples
///
/// ```
/// use nbv_core::compare::ReportedComparison;
///
/// let cmp: ReportedComparison = serde_json::from_str(
///     r#"{"result":"matched","strategy":"exact","total":2,"matched":2,"mismatched":0,"diffs":[]}"#)?;
/// assert!(cmp.matched());
/// assert_eq!(cmp.status().total_cells, 2);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedComparison {
    /// `matched` or `failed`.
    pub result: String,
    /// `exact` or `normalized`.
    pub strategy: String,
    /// Code-cell positions compared.
    pub total: u64,
    /// Positions that matched.
    pub matched: u64,
    /// Positions that did not.
    pub mismatched: u64,
    /// The first differences.
    #[serde(default)]
    pub diffs: Vec<ReportedDiff>,
    /// Differences left out to fit the termination message.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: u64,
}

/// A difference as the validation Pod reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportedDiff {
    /// Index of the cell.
    pub cell: u64,
    /// [`DiffKind::as_str`].
    #[serde(rename = "type")]
    pub kind: String,
    /// [`Severity::as_str`].
    pub severity: String,
    /// What the golden notebook has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What the run produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// Where the difference is.
    pub diff: String,
}

impl ReportedDiff {
    fn of(d: &Difference) -> ReportedDiff {
        ReportedDiff {
            cell: d.cell,
            kind: d.kind.as_str().to_owned(),
            severity: d.severity.as_str().to_owned(),
            expected: d.expected.clone(),
            actual: d.actual.clone(),
            diff: d.detail.clone(),
        }
    }

    fn cut(&self) -> ReportedDiff {
        let snippet = |s: &Option<String>| s.as_deref().map(|s| clean(s, MAX_REPORTED_SNIPPET));
        ReportedDiff {
            cell: self.cell,
            kind: clean(&self.kind, 32),
            severity: clean(&self.severity, 16),
            expected: snippet(&self.expected),
            actual: snippet(&self.actual),
            diff: clean(&self.diff, MAX_REPORTED_DETAIL),
        }
    }
}

impl ReportedComparison {
    /// Whether the comparison matched: `result` says so and no difference is counted
    /// or listed. Anything else is a failure: the core, not the script, has the last
    /// word.
    pub fn matched(&self) -> bool {
        self.result == "matched" && self.mismatched == 0 && self.diffs.is_empty() && self.more == 0
    }

    /// This report within [`MAX_CMP_BYTES`]: texts cut, then the first differences that
    /// fit, with the number left out added to [`more`](Self::more). The Pod's script
    /// does the same, byte for byte.
    pub fn capped(&self) -> ReportedComparison {
        let diffs: Vec<ReportedDiff> = self.diffs.iter().map(ReportedDiff::cut).collect();
        let full = ReportedComparison {
            result: clean(&self.result, 16),
            strategy: clean(&self.strategy, 16),
            diffs,
            ..self.clone()
        };
        if json(&full).len() <= MAX_CMP_BYTES {
            return full;
        }
        // The count written is at most this one, so its digits fit in what is reserved.
        let base = ReportedComparison {
            diffs: Vec::new(),
            more: full.more.saturating_add(full.diffs.len() as u64),
            ..full.clone()
        };
        let budget = MAX_CMP_BYTES.saturating_sub(json(&base).len());
        let mut used = 0;
        let mut kept = Vec::new();
        for diff in &full.diffs {
            let size = json(diff).len() + 1;
            if used + size > budget {
                break;
            }
            used += size;
            kept.push(diff.clone());
        }
        let left_out = (full.diffs.len() - kept.len()) as u64;
        ReportedComparison {
            diffs: kept,
            more: full.more.saturating_add(left_out),
            ..full
        }
    }

    /// The report as `status.comparisonResult`.
    pub fn status(&self) -> ComparisonResult {
        let diffs: Vec<CellDiff> = self
            .diffs
            .iter()
            .map(|d| CellDiff {
                cell_index: i64::try_from(d.cell).unwrap_or(i64::MAX),
                cell_type: "code".to_owned(),
                diff_type: d.kind.clone(),
                severity: d.severity.clone(),
                expected: d.expected.clone(),
                actual: d.actual.clone(),
                diff: Some(d.diff.clone()),
            })
            .collect();
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        ComparisonResult {
            strategy: self.strategy.clone(),
            result: if self.matched() { "matched" } else { "failed" }.to_owned(),
            total_cells: count(self.total),
            matched_cells: count(self.matched),
            mismatched_cells: count(self.mismatched),
            diffs: (!diffs.is_empty()).then_some(diffs),
        }
    }

    /// One line naming the first difference, for the failure message, e.g.
    /// `cell 3: output 0 (stream:stdout) differs: expected "0.93", got "0.95"`.
    pub fn first_difference(&self) -> String {
        let Some(d) = self.diffs.first() else {
            return format!(
                "{} of {} code cells differ (no difference was reported)",
                self.mismatched, self.total
            );
        };
        let mut text = format!("cell {}: {}", d.cell, d.diff);
        match (&d.expected, &d.actual) {
            (Some(e), Some(a)) => text.push_str(&format!(": expected {e:?}, got {a:?}")),
            (Some(e), None) => text.push_str(&format!(": expected {e:?}")),
            (None, Some(a)) => text.push_str(&format!(": got {a:?}")),
            (None, None) => {}
        }
        let others = self.mismatched.saturating_sub(1);
        if others > 0 {
            text.push_str(&if others == 1 {
                " (1 more cell differs)".to_owned()
            } else {
                format!(" ({others} more cells differ)")
            });
        }
        text
    }
}

fn json<T: Serialize>(value: &T) -> String {
    // Strings and numbers: serialization cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
