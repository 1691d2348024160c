//! The comparison settings: `spec.comparisonConfig` resolved, checked and defaulted,
//! as the validation Pod receives them (`NBV_COMPARISON`).

use regex_lite::Regex;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::api::{ComparisonConfig, ComparisonStrategy};

use super::markers::MARKER;
use super::pattern;

/// The annotation upstream reads the strategy from, before `comparisonConfig` existed.
pub const STRATEGY_ANNOTATION: &str = "mlops.dev/comparison-strategy";
/// The tolerance when `floatingPointTolerance` is not set.
pub const DEFAULT_TOLERANCE: f64 = 0.0001;
/// Most custom timestamp patterns accepted.
pub const MAX_PATTERNS: usize = 16;

/// How a run's notebook is compared with its golden notebook.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{ComparisonConfig, ComparisonStrategy};
/// use nbv_core::compare::Settings;
///
/// let config = ComparisonConfig {
///     floating_point_tolerance: Some("0.01".into()),
///     custom_timestamp_patterns: Some(vec![r"took \d+ms".into()]),
///     ..ComparisonConfig::default()
/// };
/// let settings = Settings::resolve(Some(&config), None)?;
/// assert_eq!(settings.strategy, ComparisonStrategy::Normalized);
/// assert_eq!(settings.tolerance, 0.01);
/// assert_eq!(settings.timestamp_patterns[0].as_str(), "took [0-9]+ms");
/// # Ok::<(), nbv_core::compare::InvalidComparison>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// `exact` or `normalized`.
    pub strategy: ComparisonStrategy,
    /// Relative tolerance of numbers in text (`normalized` only).
    pub tolerance: f64,
    /// Mask timestamps before comparing (`normalized` only).
    pub ignore_timestamps: bool,
    /// Do not compare `execution_count`.
    pub ignore_execution_count: bool,
    /// Output types (`stream`, `error`, …) and MIME types (`image/png`, `image/*`) left
    /// out of the comparison.
    pub ignore_output_types: Vec<String>,
    /// `customTimestampPatterns`, in the form both engines read alike.
    pub timestamp_patterns: Vec<TimestampPattern>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            strategy: ComparisonStrategy::Normalized,
            tolerance: DEFAULT_TOLERANCE,
            ignore_timestamps: true,
            ignore_execution_count: true,
            ignore_output_types: Vec::new(),
            timestamp_patterns: Vec::new(),
        }
    }
}

/// A `comparisonConfig` (or strategy annotation) nbv cannot carry out as written.
///
/// # Examples
///
/// ```
/// use nbv_core::api::ComparisonConfig;
/// use nbv_core::compare::Settings;
///
/// let config = ComparisonConfig {
///     custom_timestamp_patterns: Some(vec![r"\d+".into(), r"(?<=at )\d+".into()]),
///     ..ComparisonConfig::default()
/// };
/// let err = Settings::resolve(Some(&config), None).unwrap_err();
/// assert_eq!(err.field, "spec.comparisonConfig.customTimestampPatterns[1]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct InvalidComparison {
    /// The field at fault, e.g. `spec.comparisonConfig.customTimestampPatterns[1]`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub problem: String,
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> InvalidComparison {
    InvalidComparison {
        field: field.into(),
        problem: problem.into(),
    }
}

impl Settings {
    /// The settings `config` asks for, defaults filled in; `annotation` is the value of
    /// [`STRATEGY_ANNOTATION`], honoured when `config` sets no strategy.
    ///
    /// # Errors
    ///
    /// [`InvalidComparison`] naming the field: a tolerance that is not a number in
    /// `[0, 1]`, an unknown output or MIME type, a custom pattern outside the accepted
    /// subset (see `docs/notebooks.md`), an annotation that is no strategy or that
    /// contradicts `comparisonConfig.strategy`.
    pub fn resolve(
        config: Option<&ComparisonConfig>,
        annotation: Option<&str>,
    ) -> Result<Settings, InvalidComparison> {
        let config = config.cloned().unwrap_or_default();
        let annotated = annotation
            .map(|value| match value.trim() {
                "exact" => Ok(ComparisonStrategy::Exact),
                "normalized" => Ok(ComparisonStrategy::Normalized),
                other => Err(invalid(
                    format!("metadata.annotations[{STRATEGY_ANNOTATION}]"),
                    format!("{other:?} is not a strategy; use exact or normalized"),
                )),
            })
            .transpose()?;
        let strategy = match (config.strategy, annotated) {
            (Some(set), Some(annotated)) if set != annotated => {
                return Err(invalid(
                    "spec.comparisonConfig.strategy",
                    format!(
                        "{} contradicts the annotation {STRATEGY_ANNOTATION}: {}; remove the \
                         annotation or make both the same",
                        strategy_name(set),
                        strategy_name(annotated)
                    ),
                ));
            }
            (set, annotated) => set.or(annotated).unwrap_or(ComparisonStrategy::Normalized),
        };
        let tolerance = match config.floating_point_tolerance.as_deref() {
            None => DEFAULT_TOLERANCE,
            Some(text) => tolerance(text)?,
        };
        let ignore_output_types = config.ignore_output_types.unwrap_or_default();
        for (index, kind) in ignore_output_types.iter().enumerate() {
            if !is_output_kind(kind) {
                return Err(invalid(
                    format!("spec.comparisonConfig.ignoreOutputTypes[{index}]"),
                    format!(
                        "{kind:?} is neither an output type (stream, execute_result, \
                         display_data, error) nor a MIME type (image/png, image/*)"
                    ),
                ));
            }
        }
        let patterns = config.custom_timestamp_patterns.unwrap_or_default();
        if patterns.len() > MAX_PATTERNS {
            return Err(invalid(
                "spec.comparisonConfig.customTimestampPatterns",
                format!(
                    "{} patterns; at most {MAX_PATTERNS} are accepted",
                    patterns.len()
                ),
            ));
        }
        let timestamp_patterns = patterns
            .iter()
            .enumerate()
            .map(|(index, text)| {
                TimestampPattern::new(text).map_err(|problem| {
                    invalid(
                        format!("spec.comparisonConfig.customTimestampPatterns[{index}]"),
                        format!("{text:?}: {problem}; see \"Custom timestamp patterns\" in docs/notebooks.md"),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Settings {
            strategy,
            tolerance,
            ignore_timestamps: config.ignore_timestamps.unwrap_or(true),
            ignore_execution_count: config.ignore_execution_count.unwrap_or(true),
            ignore_output_types,
            timestamp_patterns,
        })
    }

    /// The JSON the validation Pod reads from `NBV_COMPARISON`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::compare::Settings;
    ///
    /// assert!(Settings::default().to_json().starts_with(r#"{"strategy":"normalized","tolerance":0.0001"#));
    /// ```
    pub fn to_json(&self) -> String {
        // Strings, numbers and booleans: serialization cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// The name of a strategy, as the CRD spells it.
pub(super) fn strategy_name(strategy: ComparisonStrategy) -> &'static str {
    match strategy {
        ComparisonStrategy::Exact => "exact",
        ComparisonStrategy::Normalized => "normalized",
    }
}

fn tolerance(text: &str) -> Result<f64, InvalidComparison> {
    let field = "spec.comparisonConfig.floatingPointTolerance";
    let shape = Regex::new(r"^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$").ok();
    let value = text
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && shape.as_ref().is_some_and(|re| re.is_match(text.trim())));
    match value {
        Some(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Some(_) => Err(invalid(
            field,
            format!("{text:?} is above 1; the tolerance is relative (0.01 accepts 1% difference)"),
        )),
        None => Err(invalid(
            field,
            format!("{text:?} is not a decimal number such as 0.0001 or 1e-6"),
        )),
    }
}

/// Whether `kind` names an output type or a MIME type (`type/subtype`, `type/*`).
fn is_output_kind(kind: &str) -> bool {
    if ["stream", "execute_result", "display_data", "error"].contains(&kind) {
        return true;
    }
    let token = |t: &str| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&^_.+-".contains(c))
    };
    match kind.split_once('/') {
        Some((top, "*")) => token(top),
        Some((top, sub)) => token(top) && token(sub),
        None => false,
    }
}

/// A custom timestamp pattern in the form both engines read alike, compiled.
///
/// # Examples
///
/// ```
/// use nbv_core::compare::TimestampPattern;
///
/// let pattern = TimestampPattern::new(r"run \d+")?;
/// assert_eq!(pattern.as_str(), "run [0-9]+");
/// assert!(TimestampPattern::new(r"(?<=run )\d+").is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug)]
pub struct TimestampPattern {
    rewritten: String,
    regex: Regex,
}

impl TimestampPattern {
    /// `pattern` checked, rewritten and compiled.
    ///
    /// # Errors
    ///
    /// What puts `pattern` outside the accepted subset.
    pub fn new(pattern: &str) -> Result<TimestampPattern, String> {
        let rewritten = pattern::rewrite(pattern)?;
        let regex = pattern::compile(&rewritten, MARKER)?;
        Ok(TimestampPattern { rewritten, regex })
    }

    /// The rewritten pattern, as both engines compile it.
    pub fn as_str(&self) -> &str {
        &self.rewritten
    }

    pub(super) fn regex(&self) -> &Regex {
        &self.regex
    }
}

impl PartialEq for TimestampPattern {
    fn eq(&self, other: &Self) -> bool {
        self.rewritten == other.rewritten
    }
}

impl Serialize for TimestampPattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.rewritten)
    }
}

/// Reads the rewritten form, as the operator writes it in `NBV_COMPARISON`: it may be
/// longer than the pattern the job wrote, up to six times its length limit.
impl<'de> Deserialize<'de> for TimestampPattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        let rewritten = pattern::rewrite_within(&text, pattern::MAX_REWRITTEN_CHARS)
            .map_err(serde::de::Error::custom)?;
        let regex = pattern::compile(&rewritten, MARKER).map_err(serde::de::Error::custom)?;
        Ok(TimestampPattern { rewritten, regex })
    }
}
