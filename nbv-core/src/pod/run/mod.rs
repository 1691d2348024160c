//! A notebook run inside the validation Pod, as `nbv pod run` carries it out.
//!
//! The notebook container runs nbv itself (copied into the Pod by the `nbv-tools` init
//! container), which runs the notebook with the image's papermill and judges the
//! outcome with the rules of this crate: one implementation of every check.
//!
//! ```text
//! RunSettings::from_env ─► before_run(source) ─► Start::Execute { probe_cells }
//!                               │                      │  python3 runner.py (papermill,
//!                               ▼                      ▼  the checks' probes)
//!                       Start::Report          judge(executed, RunnerOutcome, golden)
//!                                                      │  Judged { ask_models }
//!                                                      ▼
//!                                 with_predictions(answers) ─► RunReport::encode
//! ```
//!
//! Python runs only what must run in Python: papermill, and the probes the checks of
//! `spec.validationConfig` run in the kernel ([`RUNNER`]). Where the notebook is, what
//! papermill's outcome means per cell, the golden comparison
//! ([`compare`](crate::compare::compare)), the checks' findings, the prediction check
//! ([`compare_outputs`](crate::models::compare_outputs)) and the report are decided
//! here; the shell reads files, starts the runner, asks the models and writes the
//! termination message.
//!
//! # Examples
//!
//! ```
//! use nbv_core::pod::{RunSettings, RunnerOutcome, Start, before_run, judge};
//! use serde_json::json;
//!
//! let settings = RunSettings::from_env(|name| match name {
//!     "NBV_NOTEBOOK" => Some("train.ipynb".to_owned()),
//!     _ => None,
//! })?;
//! let source = json!({"cells": [{"cell_type": "code", "source": "x = 1", "outputs": []}]});
//! let Start::Execute { probe_cells, .. } = before_run(&settings, Some(&source)) else {
//!     panic!("the notebook runs");
//! };
//! assert_eq!(probe_cells, None); // no validationConfig: papermill's own engine
//!
//! let executed = json!({"cells": [{"cell_type": "code", "source": "x = 1",
//!     "execution_count": 1, "outputs": [], "metadata": {"papermill": {"duration": 0.5}}}]});
//! let judged = judge(&settings, Some(&executed), RunnerOutcome::default(), None);
//! assert!(judged.report.error.is_none());
//! assert!(!judged.ask_models);
//! # Ok::<(), nbv_core::pod::InvalidRunSettings>(())
//! ```

pub(crate) mod cells;
mod outcome;
mod settings;
mod verdict;

pub use cells::executed_cells;
pub use outcome::{Probe, RunnerOutcome};
pub use settings::{
    GoldenSettings, InvalidRunSettings, ModelEndpoint, PredictionRequest, RunSettings,
};
pub use verdict::{Judged, Start, before_run, judge, prediction_entry, with_predictions};

/// The Python file `nbv pod run` starts with the image's `python3`: it runs the
/// notebook with papermill (with the checks' probing engine when the job asks for
/// checks) and writes a [`RunnerOutcome`]. `nbv pod install` writes it beside the
/// copied binary, as [`RUNNER_FILE`].
///
/// # Examples
///
/// ```
/// assert!(nbv_core::pod::RUNNER.contains("papermill.execute_notebook"));
/// ```
pub const RUNNER: &str = include_str!("runner.py");
/// The file name of [`RUNNER`] beside the binary in the Pod.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::pod::RUNNER_FILE, "runner.py");
/// ```
pub const RUNNER_FILE: &str = "runner.py";
