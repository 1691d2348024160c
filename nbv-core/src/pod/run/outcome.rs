//! What the runner (`runner.py`) writes when papermill is done.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::checks::Observation;
use crate::pod::RunError;

/// What the runner reports of a run: the error that ended it, what the probes saw per
/// cell, and which code cells hold an assert statement (found by Python's own parser).
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{RunErrorKind, RunnerOutcome};
///
/// let outcome = RunnerOutcome::parse(r#"{"error": {"kind": "cell", "ename": "KeyError",
///     "evalue": "'x'", "cell": 2}, "probes": {"0": {"w": [["UserWarning", "old"]], "x": []}},
///     "asserts": [0]}"#)?;
/// assert_eq!(outcome.error.unwrap().kind, RunErrorKind::Cell);
/// assert_eq!(outcome.probes[&0].warnings[0].0, "UserWarning");
/// assert_eq!(outcome.asserts, vec![0]);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct RunnerOutcome {
    /// Why papermill stopped, classified by the runner; `None` when the notebook ran
    /// through.
    #[serde(default)]
    pub error: Option<RunError>,
    /// What the probes saw after each code cell, by cell index (only with checks).
    #[serde(default)]
    pub probes: BTreeMap<u64, Probe>,
    /// Indexes of the code cells whose code holds an assert statement.
    #[serde(default)]
    pub asserts: Vec<u64>,
}

impl RunnerOutcome {
    /// Reads the runner's document.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::RunnerOutcome;
    ///
    /// assert_eq!(RunnerOutcome::parse("{}")?, RunnerOutcome::default());
    /// assert!(RunnerOutcome::parse("Traceback").is_err());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When `text` is not the runner's JSON document.
    pub fn parse(text: &str) -> Result<RunnerOutcome, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// What the probe saw after one code cell ran.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::Probe;
///
/// let probe: Probe = serde_json::from_str(r#"{"w": [], "x": [["pip install x", 1]],
///     "v": {"types": ["int"], "repr": "3", "real": true, "num": 3.0}}"#)?;
/// assert_eq!(probe.exits[0].1.to_string(), "1");
/// assert_eq!(probe.value.unwrap().num, Some(3.0));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Probe {
    /// The Python warnings the cell showed: category and message.
    #[serde(rename = "w", default)]
    pub warnings: Vec<(String, String)>,
    /// The shell commands (`!cmd`) that failed: command and exit code.
    #[serde(rename = "x", default)]
    pub exits: Vec<(String, Value)>,
    /// The cell's value, when it has one or the checks expect one.
    #[serde(rename = "v", default)]
    pub value: Option<Observation>,
}
