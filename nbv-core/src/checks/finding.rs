//! Findings: what a check found, and how they travel in the termination message.

use serde::{Deserialize, Serialize};

use super::Check;

/// Most bytes the findings take in the termination message (key `chk`).
pub const MAX_CHECKS_BYTES: usize = 1024;
/// Longest finding message kept, in bytes.
const MAX_FINDING_MESSAGE: usize = 200;

/// The rule a finding breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Rule {
    /// The cell wrote to stderr.
    Stderr,
    /// The cell raised a Python warning.
    Warning,
    /// The cell has no value (`None`) where its expectation asks for one.
    None,
    /// The cell's value is NaN or holds NaN.
    Nan,
    /// The value is not of the expected `type`.
    Type,
    /// The value's `shape` differs.
    Shape,
    /// The value is below `minValue` (or is not a number).
    MinValue,
    /// The value is above `maxValue` (or is not a number).
    MaxValue,
    /// The value is empty although `notEmpty` is set.
    NotEmpty,
    /// No code cell that ran holds an `assert` statement.
    Assertions,
    /// A shell command of the cell exited with a non-zero code.
    ExitCode,
    /// An expectation names a cell that is not a code cell of the notebook.
    Cell,
    /// A rule this version does not know (written by a newer script).
    #[serde(other)]
    Unknown,
}

impl Rule {
    /// The check a rule belongs to; `None` for [`Rule::Cell`] (a mistake in the spec,
    /// which always fails) and [`Rule::Unknown`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::checks::{Check, Rule};
    ///
    /// assert_eq!(Rule::Nan.check(), Some(Check::Silent));
    /// ```
    pub const fn check(self) -> Option<Check> {
        match self {
            Rule::Stderr => Some(Check::Stderr),
            Rule::Warning => Some(Check::Warnings),
            Rule::None | Rule::Nan => Some(Check::Silent),
            Rule::Type => Some(Check::Types),
            Rule::Shape | Rule::MinValue | Rule::MaxValue | Rule::NotEmpty => Some(Check::Expected),
            Rule::Assertions => Some(Check::Assertions),
            Rule::ExitCode => Some(Check::ExitCodes),
            Rule::Cell | Rule::Unknown => None,
        }
    }

    /// The name in findings, e.g. `minValue`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Stderr => "stderr",
            Rule::Warning => "warning",
            Rule::None => "none",
            Rule::Nan => "nan",
            Rule::Type => "type",
            Rule::Shape => "shape",
            Rule::MinValue => "minValue",
            Rule::MaxValue => "maxValue",
            Rule::NotEmpty => "notEmpty",
            Rule::Assertions => "assertions",
            Rule::ExitCode => "exitCode",
            Rule::Cell => "cell",
            Rule::Unknown => "unknown",
        }
    }
}

/// Whether a finding fails the job or only warns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Reported; the job still succeeds.
    Warn,
    /// The job fails.
    Fail,
}

/// One thing a check found.
///
/// # Examples
///
/// ```
/// use nbv_core::checks::{Finding, Outcome, Rule};
///
/// let finding: Finding = serde_json::from_str(r#"{"c":3,"r":"shape","s":"fail","m":"cell 3: expected shape 2,2, got 5,2"}"#)?;
/// assert_eq!(finding.rule, Rule::Shape);
/// assert_eq!(finding.outcome, Outcome::Fail);
/// assert_eq!(finding.to_string(), "cell 3: expected shape 2,2, got 5,2 (shape)");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Finding {
    /// Index of the cell, when the finding is about one.
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<u64>,
    /// The rule broken.
    #[serde(rename = "r")]
    pub rule: Rule,
    /// Fail or warn.
    #[serde(rename = "s")]
    pub outcome: Outcome,
    /// What was found, naming the cell.
    #[serde(rename = "m", default)]
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.rule.as_str())
    }
}

/// The findings of a run, as the termination message carries them (key `chk`): the
/// first findings that fit in [`MAX_CHECKS_BYTES`], failures first, and how many more
/// there were.
///
/// # Examples
///
/// ```
/// use nbv_core::checks::{CheckReport, Finding, Outcome, Rule, MAX_CHECKS_BYTES};
///
/// let warn = |c| Finding { cell: Some(c), rule: Rule::Stderr, outcome: Outcome::Warn, message: format!("cell {c} wrote to stderr: {}", "x".repeat(150)) };
/// let report = CheckReport { findings: (0..20).map(warn).collect(), more: 0 }.capped();
/// assert!(serde_json::to_string(&report)?.len() <= MAX_CHECKS_BYTES);
/// assert_eq!(report.findings.len() as u64 + report.more, 20);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckReport {
    /// The findings kept.
    #[serde(rename = "f", default)]
    pub findings: Vec<Finding>,
    /// Findings left out to fit.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: u64,
}

impl CheckReport {
    /// The report as the termination message carries it: messages cleaned of control
    /// characters and cut to 200 bytes, failures before warnings (each in the order
    /// found), then as many as fit in [`MAX_CHECKS_BYTES`], with the rest added to
    /// [`more`](Self::more).
    pub fn capped(&self) -> CheckReport {
        let (fails, warns): (Vec<Finding>, Vec<Finding>) = self
            .findings
            .iter()
            .map(|f| Finding {
                message: crate::text::clean(&f.message, MAX_FINDING_MESSAGE),
                ..f.clone()
            })
            .partition(|f| f.outcome == Outcome::Fail);
        let ordered: Vec<Finding> = fails.into_iter().chain(warns).collect();
        let total = ordered.len();
        let document = |kept: Vec<Finding>| CheckReport {
            more: (total - kept.len()) as u64 + self.more,
            findings: kept,
        };
        let mut kept: Vec<Finding> = Vec::new();
        for finding in ordered {
            let mut next = kept.clone();
            next.push(finding);
            if json_len(&document(next.clone())) > MAX_CHECKS_BYTES {
                break;
            }
            kept = next;
        }
        document(kept)
    }

    /// The first finding that fails the job. Failures come first, so a report with a
    /// failure left out keeps failures.
    pub fn failed(&self) -> Option<&Finding> {
        self.findings.iter().find(|f| f.outcome == Outcome::Fail)
    }

    /// The findings that only warn.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.outcome == Outcome::Warn)
    }
}

/// The one-line account of warning findings, for the status message and the
/// `ValidationWarnings` condition.
///
/// # Examples
///
/// ```
/// use nbv_core::checks::{warnings_message, Finding, Outcome, Rule};
///
/// let warning = Finding { cell: Some(3), rule: Rule::Stderr, outcome: Outcome::Warn,
///     message: "cell 3 wrote to stderr: loading".into() };
/// assert_eq!(warnings_message(&[warning]), "1 check warning: cell 3 wrote to stderr: loading (stderr)");
/// ```
pub fn warnings_message(warnings: &[Finding]) -> String {
    let count = warnings.len();
    let list: Vec<String> = warnings.iter().map(Finding::to_string).collect();
    format!(
        "{count} check {}: {}",
        if count == 1 { "warning" } else { "warnings" },
        list.join("; ")
    )
}

fn json_len<T: Serialize>(value: &T) -> usize {
    // Plain structs of strings and numbers: serialization cannot fail.
    serde_json::to_string(value).map_or(0, |s| s.len())
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
