//! Comparing an executed notebook with its golden notebook.
//!
//! [`compare`] is the one implementation: `executed, golden, settings → report`. The
//! validation Pod runs this comparison through `nbv` and reports the outcome in its
//! termination message ([`ReportedComparison`], key `cmp`); nbv reads it into
//! `status.comparisonResult` and fails the run when a cell differs.
//!
//! What is compared (the rules `docs/notebooks.md` explains with examples):
//!
//! - **cells**: code cells, aligned by position among code cells; markdown and raw
//!   cells are not compared (they hold no output). A position only one notebook has is
//!   a `missing_cell` or an `extra_cell`.
//! - **outputs**: each output becomes items: a `stream` output one item per name
//!   (consecutive outputs of one stream joined, as a kernel may split a print), an
//!   `execute_result` or `display_data` one item per MIME type (in MIME order), an
//!   `error` one item `ename: evalue` (the traceback, full of terminal colours and
//!   paths, is not compared). `ignoreOutputTypes` leaves out output types (`stream`,
//!   `execute_result`, `display_data`, `error`) and MIME types (`image/png`,
//!   `image/*`). Output metadata is not compared.
//! - **`exact`**: items equal byte for byte.
//! - **`normalized`**: texts equal after [`normalize`] (object addresses masked,
//!   timestamps masked when `ignoreTimestamps`, whitespace runs made one space), with
//!   numbers within `floatingPointTolerance` ([`numbers_match`], relative). Binary data
//!   (`image/*` but SVG, `application/pdf`) is compared byte for byte, the whitespace
//!   of its base64 aside: nbv does not decode pixels; leave out plots that are not
//!   reproducible with `ignoreOutputTypes: [image/png]`.
//! - **execution counts** are compared, after the outputs, unless
//!   `ignoreExecutionCount` (the default).
//! - **nbval's markers** ([`CellMarks`], read from the cell in both notebooks: a mark
//!   in either applies) say what a golden cell expects ([`Expectation`]):
//!   `# NBVAL_SKIP` nothing, `# NBVAL_IGNORE_OUTPUT` no outputs compared,
//!   `# NBVAL_RAISES_EXCEPTION` its error output compared like any other (the cell
//!   that does not raise then misses it), `# NBVAL_CHECK_OUTPUT` the default; or the
//!   tags `nbval-skip`, `nbval-ignore-output`, `nbval-raises-exception`,
//!   `raises-exception`, `nbval-check-output`. A golden cell never executed (no
//!   execution count, no outputs) expects nothing, as in nbval. Markers never excuse a
//!   missing or extra cell.
//!
//! Every difference fails the comparison; its severity (`minor` for an execution count,
//! `critical` for a missing or extra cell or an error, `major` otherwise) tells what to
//! look at first.
//!
//! # Examples
//!
//! ```
//! use nbv_core::compare::{compare, Settings, DiffKind};
//! use serde_json::json;
//!
//! let cell = |text: &str| json!({"cell_type": "code", "execution_count": 1,
//!     "outputs": [{"output_type": "stream", "name": "stdout", "text": text}]});
//! let golden = json!({"cells": [cell("accuracy 0.93\n"), cell("done at 2026-01-24 10:00:00\n")]});
//! let run = json!({"cells": [cell("accuracy  0.930004\n"), cell("done at 2026-12-02 04:31:07\n")]});
//! let report = compare(&run, &golden, &Settings::default());
//! assert!(report.matched());
//!
//! let drifted = json!({"cells": [cell("accuracy 0.95\n"), cell("done\n")]});
//! let report = compare(&drifted, &golden, &Settings::default());
//! assert_eq!((report.total_cells, report.matched_cells), (2, 0));
//! assert_eq!(report.differences[0].kind, DiffKind::OutputContent);
//!
//! // The author marked the cell whose output changes every run.
//! let mut marked = drifted.clone();
//! marked["cells"][1]["source"] = json!("# NBVAL_IGNORE_OUTPUT\nprint(finished())");
//! let report = compare(&marked, &golden, &Settings::default());
//! assert_eq!((report.total_cells, report.matched_cells), (2, 1));
//! ```

mod markers;
mod nbval;
mod normalize;
mod outputs;
mod pattern;
mod report;
mod settings;

use serde_json::Value;

use crate::api::ComparisonStrategy;

pub use markers::{ADDRESS_MARKER, MARKER};
pub use nbval::{CellMarks, Expectation};
pub use normalize::{
    ADDRESS, BUILT_IN_TIMESTAMPS, NUMBER, mask_timestamps, normalize, numbers_match,
};
pub use report::{
    ComparisonReport, DiffKind, Difference, MAX_CMP_BYTES, ReportedComparison, ReportedDiff,
    Severity,
};
pub use settings::{
    DEFAULT_TOLERANCE, InvalidComparison, MAX_PATTERNS, STRATEGY_ANNOTATION, Settings,
    TimestampPattern,
};

use crate::text::clean;
use outputs::{CodeCell, Item, code_cells};
use report::MAX_SNIPPET;

/// Compares `executed` (the notebook as the run left it) with `golden`, both nbformat 4
/// JSON, under `settings`. Pure and total: a notebook without cells has none to
/// compare, an output without the fields nbformat requires compares as empty.
///
/// See the [module documentation](self) for what is compared.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::{compare, Settings};
/// use serde_json::json;
///
/// let notebook = json!({"cells": [{"cell_type": "code", "execution_count": 3, "outputs": []}]});
/// let report = compare(&notebook, &notebook, &Settings::default());
/// assert!(report.matched());
/// assert_eq!(report.total_cells, 1);
/// ```
pub fn compare(executed: &Value, golden: &Value, settings: &Settings) -> ComparisonReport {
    let run = code_cells(executed, settings);
    let expected = code_cells(golden, settings);
    let total = run.len().max(expected.len());
    let mut differences = Vec::new();
    for position in 0..total {
        let difference = match (run.get(position), expected.get(position)) {
            (Some(actual), Some(golden)) => {
                match Expectation::of(actual.marks.or(golden.marks), golden.executed) {
                    Expectation::Anything => None,
                    Expectation::Ran => count_difference(actual, golden, settings),
                    Expectation::Outputs { raises_exception } => {
                        output_difference(actual, golden, settings, raises_exception)
                            .or_else(|| count_difference(actual, golden, settings))
                    }
                }
            }
            (None, Some(golden)) => Some(Difference {
                cell: golden.index,
                kind: DiffKind::MissingCell,
                severity: Severity::Critical,
                expected: golden.items.first().map(snippet),
                actual: None,
                detail: format!("the run has no code cell {position} (counting code cells from 0)"),
            }),
            (Some(actual), None) => Some(Difference {
                cell: actual.index,
                kind: DiffKind::ExtraCell,
                severity: Severity::Critical,
                expected: None,
                actual: actual.items.first().map(snippet),
                detail: format!(
                    "the golden notebook has no code cell {position} (counting code cells from 0)"
                ),
            }),
            (None, None) => None,
        };
        differences.extend(difference);
    }
    ComparisonReport {
        strategy: settings.strategy,
        total_cells: total as u64,
        matched_cells: (total - differences.len()) as u64,
        differences,
    }
}

fn snippet(item: &Item) -> String {
    clean(&item.text, MAX_SNIPPET)
}

/// The first difference between the outputs of a cell of the run and its golden
/// counterpart's.
fn output_difference(
    actual: &CodeCell,
    golden: &CodeCell,
    settings: &Settings,
    raises_exception: bool,
) -> Option<Difference> {
    let outputs = actual.items.len().max(golden.items.len());
    for k in 0..outputs {
        let (a, e) = (actual.items.get(k), golden.items.get(k));
        let (kind, detail) = match (a, e) {
            (Some(a), Some(e)) if a.label != e.label => (
                DiffKind::OutputType,
                format!("output {k} is {}, expected {}", a.label, e.label),
            ),
            (Some(a), Some(e)) if !items_match(a, e, settings) => (
                DiffKind::OutputContent,
                format!("output {k} ({}) differs", e.label),
            ),
            (Some(_), Some(_)) => continue,
            (None, Some(e)) if raises_exception && e.label == "error" => (
                DiffKind::MissingOutput,
                format!(
                    "output {k} (error) is missing: the cell is marked to raise an exception \
                     and did not"
                ),
            ),
            (None, Some(e)) => (
                DiffKind::MissingOutput,
                format!("output {k} ({}) is missing", e.label),
            ),
            (Some(a), None) => (
                DiffKind::ExtraOutput,
                format!("output {k} ({}) is not in the golden notebook", a.label),
            ),
            (None, None) => continue,
        };
        let error = a.is_some_and(|i| i.label == "error") || e.is_some_and(|i| i.label == "error");
        return Some(Difference {
            cell: actual.index,
            kind,
            severity: if error {
                Severity::Critical
            } else {
                Severity::Major
            },
            expected: e.map(snippet),
            actual: a.map(snippet),
            detail,
        });
    }
    None
}

/// The execution counts' difference, unless `ignoreExecutionCount`.
fn count_difference(
    actual: &CodeCell,
    golden: &CodeCell,
    settings: &Settings,
) -> Option<Difference> {
    if !settings.ignore_execution_count && actual.execution_count != golden.execution_count {
        return Some(Difference {
            cell: actual.index,
            kind: DiffKind::ExecutionCount,
            severity: Severity::Minor,
            expected: Some(golden.execution_count.to_string()),
            actual: Some(actual.execution_count.to_string()),
            detail: "the execution count differs".to_owned(),
        });
    }
    None
}

fn items_match(actual: &Item, golden: &Item, settings: &Settings) -> bool {
    match settings.strategy {
        ComparisonStrategy::Exact => actual.text == golden.text,
        ComparisonStrategy::Normalized if actual.binary => {
            let data = |t: &str| {
                t.chars()
                    .filter(|c| !c.is_ascii_whitespace())
                    .collect::<String>()
            };
            data(&actual.text) == data(&golden.text)
        }
        ComparisonStrategy::Normalized => numbers_match(
            &normalize(&actual.text, settings),
            &normalize(&golden.text, settings),
            settings.tolerance,
        ),
    }
}
