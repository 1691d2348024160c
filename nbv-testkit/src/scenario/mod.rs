//! Scenarios for deterministic simulation (`nbv simulate`): the cluster at the start, a
//! timeline of what happens around the operator, and what must hold at the end.
//!
//! A scenario is data. The simulator (`nbv_operator::simulate`) sets up a
//! [`FakeCluster`](crate::FakeCluster) with [`Scenario::objects`], runs the real operator
//! against it in virtual time, plays the [`Scenario::timeline`] (phases written by
//! another controller, user edits, faults, dropped watches, operator restarts), and
//! checks the [invariants](crate::invariants) and [`Scenario::expect`].
//!
//! Files are YAML; `docs/simulate.md` describes every field. A short one:
//!
//! ```yaml
//! name: train-then-serve
//! mode: gitops-only
//! objects:
//!   - {apiVersion: v1, kind: Namespace, metadata: {name: ml}}
//! timeline:
//!   - at: 1m
//!     phase: {job: ml/train, phase: Initializing}
//!   - at: 9m
//!     phase: {job: ml/train, phase: Succeeded}
//!   - at: 9m
//!     fault: {verb: patch, resource: deployments, effect: status, code: 503, times: 2}
//! ```
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//! use nbv_testkit::scenario::{Action, Scenario};
//!
//! let scenario = Scenario::from_yaml("
//! name: train-then-serve
//! mode: gitops-only
//! timeline:
//!   - at: 9m
//!     phase: {job: ml/train, phase: Succeeded}
//! ")?;
//! let Action::Phase(write) = &scenario.timeline[0].action else { panic!("a phase step") };
//! assert_eq!(write.job.to_string(), "ml/train");
//! assert_eq!(scenario.timeline[0].at, Duration::from_secs(540));
//! # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
//! ```

mod duration;
mod error;
mod load;
mod model;
mod raw;

pub use duration::{InvalidDuration, MAX_DURATION, format_duration, parse_duration};
pub use error::ScenarioError;
pub use load::{Bounds, DEFAULT_SETTLE, MAX_ENTRIES, MAX_SCENARIO_BYTES};
pub use model::{
    Action, Expectations, ExpectedGate, ExpectedJob, GateStatus, Mode, ObjectKey, ObjectRef,
    OperatorRestart, OperatorSettings, PhaseWrite, PodOutcome, PodResult, Scenario, Step,
};
