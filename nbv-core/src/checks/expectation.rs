//! `expectedOutputs`, parsed and validated: the field path of every mistake.

use serde::{Deserialize, Serialize};

use crate::api::ExpectedOutput;

/// One `expectedOutputs` entry, parsed: what a cell's value must be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Expectation {
    /// Index of the cell in the notebook (markdown cells count).
    pub cell: u64,
    /// The Python type the value must be an instance of, e.g. `pandas.DataFrame`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub output_type: Option<String>,
    /// The shape, one entry per dimension; `-1` means any size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<i64>>,
    /// `minValue`, as written (a decimal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    /// `maxValue`, as written (a decimal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// `notEmpty`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_empty: bool,
}

impl Expectation {
    /// `minValue` as a number.
    pub fn min_value(&self) -> Option<f64> {
        self.min.as_deref().and_then(|m| m.parse().ok())
    }

    /// `maxValue` as a number.
    pub fn max_value(&self) -> Option<f64> {
        self.max.as_deref().and_then(|m| m.parse().ok())
    }
}

/// A `validationConfig` nbv cannot check: the field and what is wrong with it.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{ExpectedOutput, ValidationConfig};
/// use nbv_core::checks::resolve;
///
/// let config = ValidationConfig {
///     expected_outputs: Some(vec![ExpectedOutput { cell: 2, shape: Some("3,x".into()), ..Default::default() }]),
///     ..ValidationConfig::default()
/// };
/// let err = resolve(&config).unwrap_err();
/// assert_eq!(err.field, "spec.validationConfig.expectedOutputs[0].shape");
/// assert!(err.to_string().starts_with("spec.validationConfig.expectedOutputs[0].shape: \"3,x\""));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct InvalidCheckSpec {
    /// Path of the field, e.g. `spec.validationConfig.expectedOutputs[2].shape`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub problem: String,
}

impl InvalidCheckSpec {
    pub(super) fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        InvalidCheckSpec {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

pub(super) fn parse_expectations(
    outputs: &[ExpectedOutput],
) -> Result<Vec<Expectation>, InvalidCheckSpec> {
    outputs
        .iter()
        .enumerate()
        .map(|(index, output)| parse(index, output))
        .collect()
}

fn parse(index: usize, output: &ExpectedOutput) -> Result<Expectation, InvalidCheckSpec> {
    let field = |name: &str| format!("spec.validationConfig.expectedOutputs[{index}].{name}");
    let cell = u64::try_from(output.cell).map_err(|_| {
        InvalidCheckSpec::new(
            field("cell"),
            format!(
                "{} is negative; give the zero-based index of the cell in the notebook",
                output.cell
            ),
        )
    })?;
    if let Some(name) = output.output_type.as_ref().filter(|n| !is_type_name(n)) {
        return Err(InvalidCheckSpec::new(
            field("type"),
            format!(
                "{name:?} is not a Python type name; write a dotted name such as float, \
                 list or pandas.DataFrame"
            ),
        ));
    }
    let shape = output
        .shape
        .as_deref()
        .map(|text| {
            parse_shape(text).ok_or_else(|| {
                InvalidCheckSpec::new(
                    field("shape"),
                    format!(
                        "{text:?} is not a shape; write the sizes of the dimensions separated \
                         by commas, with -1 for any size, e.g. \"-1,10\""
                    ),
                )
            })
        })
        .transpose()?;
    let bound = |name: &str, text: &Option<String>| match text {
        None => Ok(None),
        Some(text) => match parse_decimal(text) {
            Some(value) => Ok(Some(value)),
            None => Err(InvalidCheckSpec::new(
                field(name),
                format!("{text:?} is not a finite decimal number, e.g. 0.5 or -1e3"),
            )),
        },
    };
    let min = bound("minValue", &output.min_value)?;
    let max = bound("maxValue", &output.max_value)?;
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        return Err(InvalidCheckSpec::new(
            field("maxValue"),
            format!(
                "{} is below minValue {}; no value can lie between them",
                output.max_value.as_deref().unwrap_or_default(),
                output.min_value.as_deref().unwrap_or_default()
            ),
        ));
    }
    Ok(Expectation {
        cell,
        output_type: output.output_type.clone(),
        shape,
        min: output.min_value.clone(),
        max: output.max_value.clone(),
        not_empty: output.not_empty == Some(true),
    })
}

/// A dotted Python name: identifiers (ASCII letters, digits, `_`) joined by dots.
fn is_type_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// `"rows,cols"`: one or more sizes, each `-1` (any) or a count.
fn parse_shape(text: &str) -> Option<Vec<i64>> {
    text.split(',')
        .map(|part| {
            let part = part.trim();
            let digits = part.strip_prefix('-').unwrap_or(part);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            part.parse::<i64>().ok().filter(|n| *n >= -1)
        })
        .collect()
}

/// The CRD's decimal pattern (`-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`), finite.
fn parse_decimal(text: &str) -> Option<f64> {
    let body = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !digits(int) || !frac.is_none_or(digits) || !exponent_ok {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_decimals_follow_the_crd() {
        assert_eq!(parse_shape("-1,10"), Some(vec![-1, 10]));
        assert_eq!(parse_shape(" 3 , 2 "), Some(vec![3, 2]));
        assert_eq!(parse_shape("5"), Some(vec![5]));
        for bad in ["", ",", "3,", "-2,1", "a,b", "+3,1", "1.5,2", "--1"] {
            assert_eq!(parse_shape(bad), None, "{bad}");
        }
        assert_eq!(parse_decimal("-1e3"), Some(-1000.0));
        assert_eq!(parse_decimal("0.5"), Some(0.5));
        for bad in ["", ".5", "1.", "1e", "inf", "NaN", "1e999", "0x10", " 1"] {
            assert_eq!(parse_decimal(bad), None, "{bad}");
        }
    }
}
