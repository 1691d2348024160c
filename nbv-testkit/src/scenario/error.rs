//! Why a scenario file cannot be used.

/// A scenario file that cannot be read, with where and why.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::{Scenario, ScenarioError};
///
/// let err = Scenario::from_yaml("
/// name: broken
/// mode: gitops-only
/// timeline:
///   - at: 1m
/// ").unwrap_err();
/// assert!(matches!(err, ScenarioError::Invalid { .. }));
/// assert!(err.to_string().starts_with("timeline[0] (at 1m): the step does nothing"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The text is not YAML, or not a mapping with the scenario's fields (the message
    /// names the line and column, and the unknown or missing field).
    #[error("the scenario is not in the scenario format: {0}")]
    Syntax(#[from] serde_yaml_ng::Error),
    /// The text exceeds a bound of `nbv_core::yaml` (depth, aliasing).
    #[error("the scenario cannot be read: {0}")]
    Bounds(#[from] nbv_core::yaml::BoundsError),
    /// The file is larger than a scenario may be.
    #[error("the scenario has {size} bytes; at most {max} are read")]
    TooLarge {
        /// Its size.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// A field has a value the simulator cannot use.
    #[error("{field}: {problem}")]
    Invalid {
        /// Where: `timeline[3] (at 2m).fault.code`, `objects[1]`, `settle`, …
        field: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

impl ScenarioError {
    pub(super) fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        ScenarioError::Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }
}
