//! What the probe in the kernel saw of a cell's value, and how it is held against the
//! cell's expectation. The probe runs in the kernel (the Pod's `runner.py`); what it saw
//! is judged here, by `nbv pod run`.

use serde::{Deserialize, Serialize};

use super::{CheckPolicy, Expectation, Finding, Rule, Severity};

/// A cell's value as the probe saw it, right after the cell ran.
///
/// A cell's value is what IPython shows as `Out[n]`: the value of its last line when
/// that is an expression. A cell without one (or whose value is `None`, which IPython
/// does not keep) has `none` set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The value's class and its bases, as `module.QualName` (`float` for builtins),
    /// most derived first.
    #[serde(default)]
    pub types: Vec<String>,
    /// A short text of the value for messages, e.g. `0.42` or `DataFrame (5, 2)`.
    #[serde(default)]
    pub repr: String,
    /// The cell has no value (or it is `None`).
    #[serde(default)]
    pub none: bool,
    /// The value is NaN, or a numeric array, Series or DataFrame holding NaN.
    #[serde(default)]
    pub nan: bool,
    /// The value is empty: `len() == 0`, or pandas' `.empty`.
    #[serde(default)]
    pub empty: bool,
    /// The value's shape: `.shape` of arrays and frames, `[len]` of other sized values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<u64>>,
    /// The value is a real number (not a bool): int, float, numpy number.
    #[serde(default)]
    pub real: bool,
    /// The number, when `real` and finite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num: Option<f64>,
}

/// Whether a value whose classes are `types` is a `wanted`: one of the classes is
/// named `wanted`, or, for a dotted name, one has the same top-level package and the
/// same class name (`pandas.DataFrame` is `pandas.core.frame.DataFrame`).
///
/// # Examples
///
/// ```
/// use nbv_core::checks::type_matches;
///
/// let frame = ["pandas.core.frame.DataFrame".to_owned(), "object".to_owned()];
/// assert!(type_matches(&frame, "pandas.DataFrame"));
/// assert!(!type_matches(&frame, "pandas.Series"));
/// assert!(type_matches(&["numpy.float64".into(), "float".into()], "float"));
/// ```
pub fn type_matches(types: &[String], wanted: &str) -> bool {
    types.iter().any(|name| {
        name == wanted
            || (wanted.contains('.')
                && name.split('.').next() == wanted.split('.').next()
                && name.rsplit('.').next() == wanted.rsplit('.').next())
    })
}

/// The findings about the value of `cell`, seen as `observation`, against its
/// `expectation` if it has one, under `policy` (checks that are off find nothing):
///
/// - silent failures: a value holding NaN, in any cell; a value that is `None` in a
///   cell with an expectation (only that finding then: the other rules would all fail
///   for the same reason);
/// - `type` (check `types`); `shape`, `minValue`, `maxValue`, `notEmpty` (check
///   `expected`). A bound on a value that is not a real number is broken; NaN breaks
///   every bound.
///
/// # Examples
///
/// ```
/// use nbv_core::api::ValidationConfig;
/// use nbv_core::checks::{evaluate, resolve, Expectation, Observation, Rule};
///
/// let policy = resolve(&ValidationConfig::default())?;
/// let expectation = Expectation { cell: 2, output_type: None, shape: Some(vec![-1, 2]),
///     min: None, max: None, not_empty: true };
/// let seen = Observation { types: vec!["pandas.core.frame.DataFrame".into()],
///     repr: "DataFrame (5, 3)".into(), shape: Some(vec![5, 3]), ..Observation::default() };
/// let findings = evaluate(2, Some(&expectation), &seen, &policy);
/// assert_eq!(findings.len(), 1);
/// assert_eq!(findings[0].rule, Rule::Shape);
/// assert_eq!(findings[0].message, "cell 2: expected shape -1,2, got 5,3");
/// # Ok::<(), nbv_core::checks::InvalidCheckSpec>(())
/// ```
pub fn evaluate(
    cell: u64,
    expectation: Option<&Expectation>,
    observation: &Observation,
    policy: &CheckPolicy,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut find = |rule: Rule, message: String| {
        findings.extend(super::run::finding(policy, Some(cell), rule, message));
    };
    let Some(expectation) = expectation else {
        if observation.nan {
            find(Rule::Nan, nan_message(cell, observation));
        }
        return findings;
    };
    if observation.none && policy.checks.silent != Severity::Off {
        find(
            Rule::None,
            format!("cell {cell} has no value (None) where one is expected"),
        );
        return findings;
    }
    if observation.nan {
        find(Rule::Nan, nan_message(cell, observation));
    }
    let shown = if observation.none {
        "None"
    } else {
        observation.types.first().map_or("value", String::as_str)
    };
    if let Some(wanted) = &expectation.output_type
        && !type_matches(&observation.types, wanted)
    {
        find(
            Rule::Type,
            format!("cell {cell}: expected a {wanted}, got a {shown}"),
        );
    }
    if let Some(shape) = &expectation.shape {
        let wanted = join(shape.iter().map(i64::to_string));
        match &observation.shape {
            Some(seen) if shape_matches(shape, seen) => {}
            Some(seen) => find(
                Rule::Shape,
                format!(
                    "cell {cell}: expected shape {wanted}, got {}",
                    join(seen.iter().map(u64::to_string))
                ),
            ),
            None => find(
                Rule::Shape,
                format!("cell {cell}: expected shape {wanted}, got a {shown} without a shape"),
            ),
        }
    }
    let bounds = [
        (
            Rule::MinValue,
            &expectation.min,
            expectation.min_value(),
            ">=",
        ),
        (
            Rule::MaxValue,
            &expectation.max,
            expectation.max_value(),
            "<=",
        ),
    ];
    for (rule, text, bound, relation) in bounds {
        let (Some(text), Some(bound)) = (text, bound) else {
            continue;
        };
        let name = rule.as_str();
        if !observation.real {
            find(
                rule,
                format!("cell {cell}: {name} {text} needs a number, got a {shown}"),
            );
            continue;
        }
        let within = observation.num.is_some_and(|n| {
            if relation == ">=" {
                n >= bound
            } else {
                n <= bound
            }
        });
        if !within {
            find(
                rule,
                format!(
                    "cell {cell}: {} is not {relation} {name} {text}",
                    observation.repr
                ),
            );
        }
    }
    if expectation.not_empty && observation.empty {
        find(Rule::NotEmpty, format!("cell {cell}: the {shown} is empty"));
    }
    findings
}

/// The message of a NaN finding about `cell`.
pub(super) fn nan_message(cell: u64, observation: &Observation) -> String {
    if observation.real {
        format!("cell {cell}: the value is NaN")
    } else {
        let shown = observation.types.first().map_or("value", String::as_str);
        format!("cell {cell}: the {shown} holds NaN")
    }
}

fn shape_matches(wanted: &[i64], seen: &[u64]) -> bool {
    wanted.len() == seen.len()
        && wanted
            .iter()
            .zip(seen)
            .all(|(w, s)| *w == -1 || u64::try_from(*w).is_ok_and(|w| w == *s))
}

fn join(parts: impl Iterator<Item = String>) -> String {
    parts.collect::<Vec<_>>().join(",")
}
