//! `nbv simulate`: the real operator, against an in-memory cluster, in virtual time.
//!
//! A simulation sets up a [`FakeCluster`](nbv_testkit::FakeCluster) with a
//! [`Scenario`]'s objects, starts [`controller::run`](crate::operator::controller::run) (the same
//! function `nbv run` runs) and plays the scenario's timeline around it: phases written
//! by another controller, user edits, API faults, dropped watches, operator crashes and
//! restarts. Stand-ins play the rest of the cluster: a kubelet that runs validation
//! Pods as the scenario says, KServe recreating the pods of an InferenceService, Argo CD
//! carrying out the sync operations it is asked for. Everything runs on one
//! current-thread Tokio runtime whose clock is paused, so virtual minutes pass in
//! milliseconds and the same scenario always plays out the same way.
//!
//! At the end the five invariants of [`nbv_testkit::invariants`] are checked over the
//! cluster's change history and request log, the scenario's expectations are checked,
//! and `nbv wait` is run for every gated wave. [`Report`] holds all of it, as text
//! ([`Report::render`]) or JSON ([`Report::to_json`]).
//!
//! [`run_random`] generates scenarios from a seed (random jobs, outcomes, triggers,
//! faults, crashes) and checks the invariants after each.
//!
//! # Examples
//!
//! ```
//! use nbv_operator::simulate::{Options, run, seed_scenario};
//!
//! let report = run(&seed_scenario()?, &Options::default())?;
//! assert!(report.passed(), "{}", report.render());
//! assert_eq!(report.triggers_fired.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod actions;
mod builds;
mod expect;
mod mutation;
mod operator;
mod options;
mod panics;
mod random;
mod report;
mod runner;
mod standins;
mod timeline;

use nbv_testkit::scenario::{Scenario, ScenarioError};

pub use mutation::Mutation;
pub use options::Options;
pub use random::{
    Coverage, FailedCase, FirstViolation, PROGRESS_EVERY, Progress, RandomSummary, case_seed,
    random_scenario, run_one_case, run_random, run_random_reporting,
};
pub use report::{
    ApiStats, Completion, FinalJob, GateOutcome, OperatorStats, Report, TriggerFired,
};
pub use runner::{SimulationError, run};
pub use timeline::{Entry, Who};

/// The built-in scenario: ADR-049's "After" example, end to end.
///
/// The training job of wave 3 (`block-wave: 4`, an on-success restart of the
/// InferenceService `predictive-analytics` and its two predictor pods) runs its
/// notebook in the validation Pod nbv creates (mode `default`) and succeeds; the InferenceService's pods are deleted once and replaced; the wave
/// annotations appear; `nbv wait --wave 4` opens; the Argo CD Application shows the
/// notebook status.
pub const SEED_SCENARIO: &str = include_str!("../../../examples/seed-end-to-end.yaml");

/// [`SEED_SCENARIO`], read.
///
/// # Errors
///
/// Only if the file built into the binary were not a valid scenario (the tests read
/// it).
///
/// # Examples
///
/// ```
/// let scenario = nbv_operator::simulate::seed_scenario()?;
/// assert_eq!(scenario.name, "seed-end-to-end");
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
pub fn seed_scenario() -> Result<Scenario, ScenarioError> {
    Scenario::from_yaml(SEED_SCENARIO)
}
