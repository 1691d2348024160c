//! The rule table: which checks a `validationConfig` turns on, and whether each fails
//! the job or only warns.

use serde::{Deserialize, Serialize};

use crate::api::{ValidationConfig, ValidationLevel};

use super::expectation::{Expectation, InvalidCheckSpec, parse_expectations};

/// One kind of check nbv carries out on a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Check {
    /// A cell wrote to stderr (`failOnStderr`).
    Stderr,
    /// A cell raised a Python warning that was shown (`failOnWarnings`).
    Warnings,
    /// A cell's value is `None` where an expectation asks for one, or is or holds NaN
    /// (`detectSilentFailures`).
    Silent,
    /// A cell's value is not of the `type` its expectation names (`checkOutputTypes`).
    Types,
    /// No code cell that ran holds an `assert` statement (`verifyAssertions`).
    Assertions,
    /// A shell command of a cell (`!cmd`) exited with a non-zero code, which IPython
    /// otherwise ignores (`requireExplicitExitCodes`).
    ExitCodes,
    /// A cell's value breaks its expectation's `shape`, `minValue`, `maxValue` or
    /// `notEmpty` (`expectedOutputs`).
    Expected,
}

impl Check {
    /// Every check, in the order of the rule table.
    pub const ALL: [Check; 7] = [
        Check::Stderr,
        Check::Warnings,
        Check::Silent,
        Check::Types,
        Check::Assertions,
        Check::ExitCodes,
        Check::Expected,
    ];

    /// The name used in `NBV_CHECKS` and in findings, e.g. `exitCodes`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::checks::Check;
    ///
    /// assert_eq!(Check::ExitCodes.as_str(), "exitCodes");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Check::Stderr => "stderr",
            Check::Warnings => "warnings",
            Check::Silent => "silent",
            Check::Types => "types",
            Check::Assertions => "assertions",
            Check::ExitCodes => "exitCodes",
            Check::Expected => "expected",
        }
    }

    /// The `validationConfig` field that asks for the check, if one does.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::checks::Check;
    ///
    /// assert_eq!(Check::Stderr.field(), Some("failOnStderr"));
    /// assert_eq!(Check::Expected.field(), None);
    /// ```
    pub const fn field(self) -> Option<&'static str> {
        match self {
            Check::Stderr => Some("failOnStderr"),
            Check::Warnings => Some("failOnWarnings"),
            Check::Silent => Some("detectSilentFailures"),
            Check::Types => Some("checkOutputTypes"),
            Check::Assertions => Some("verifyAssertions"),
            Check::ExitCodes => Some("requireExplicitExitCodes"),
            Check::Expected => None,
        }
    }
}

/// What a check's finding does to the job. Ordered: `Off < Warn < Fail`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The check does not run.
    Off,
    /// A finding is reported (status condition `ValidationWarnings`, an Event) and the
    /// job still succeeds.
    Warn,
    /// A finding fails the job, permanently.
    Fail,
}

/// The severity of every check, as a row of the rule table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Severities {
    /// [`Check::Stderr`].
    pub stderr: Severity,
    /// [`Check::Warnings`].
    pub warnings: Severity,
    /// [`Check::Silent`].
    pub silent: Severity,
    /// [`Check::Types`].
    pub types: Severity,
    /// [`Check::Assertions`].
    pub assertions: Severity,
    /// [`Check::ExitCodes`].
    pub exit_codes: Severity,
    /// [`Check::Expected`].
    pub expected: Severity,
}

impl Severities {
    /// Every check at `severity`.
    pub const fn all(severity: Severity) -> Self {
        Severities {
            stderr: severity,
            warnings: severity,
            silent: severity,
            types: severity,
            assertions: severity,
            exit_codes: severity,
            expected: severity,
        }
    }

    /// The severity of `check`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::checks::{Check, Severities, Severity};
    ///
    /// assert_eq!(Severities::all(Severity::Warn).of(Check::Types), Severity::Warn);
    /// ```
    pub const fn of(&self, check: Check) -> Severity {
        match check {
            Check::Stderr => self.stderr,
            Check::Warnings => self.warnings,
            Check::Silent => self.silent,
            Check::Types => self.types,
            Check::Assertions => self.assertions,
            Check::ExitCodes => self.exit_codes,
            Check::Expected => self.expected,
        }
    }

    fn set(&mut self, check: Check, severity: Severity) {
        let slot = match check {
            Check::Stderr => &mut self.stderr,
            Check::Warnings => &mut self.warnings,
            Check::Silent => &mut self.silent,
            Check::Types => &mut self.types,
            Check::Assertions => &mut self.assertions,
            Check::ExitCodes => &mut self.exit_codes,
            Check::Expected => &mut self.expected,
        };
        *slot = severity;
    }
}

/// The severities a level gives the checks that are not asked for explicitly.
///
/// | check        | learning | development | staging | production |
/// |--------------|----------|-------------|---------|------------|
/// | `stderr`     | off      | off         | warn    | fail       |
/// | `warnings`   | warn     | warn        | warn    | fail       |
/// | `silent`     | warn     | fail        | fail    | fail       |
/// | `types`      | warn     | warn        | fail    | fail       |
/// | `assertions` | warn     | warn        | fail    | fail       |
/// | `exitCodes`  | off      | off         | fail    | fail       |
/// | `expected`   | warn     | fail        | fail    | fail       |
///
/// Learning material gets feedback and never fails on the level alone; development
/// fails on the obvious (a None or NaN value, a broken expectation); staging enforces
/// exit codes, types and assertions; production fails on everything.
///
/// # Examples
///
/// ```
/// use nbv_core::api::ValidationLevel;
/// use nbv_core::checks::{level_defaults, Severity};
///
/// assert_eq!(level_defaults(ValidationLevel::Development).silent, Severity::Fail);
/// assert_eq!(level_defaults(ValidationLevel::Learning).stderr, Severity::Off);
/// ```
pub const fn level_defaults(level: ValidationLevel) -> Severities {
    // The table's rows, column by column: stderr, warnings, silent, types, assertions,
    // exitCodes, expected.
    use Severity::{Fail, Off, Warn};
    match level {
        ValidationLevel::Learning => row(Off, Warn, Warn, Warn, Warn, Off, Warn),
        ValidationLevel::Development => row(Off, Warn, Fail, Warn, Warn, Off, Fail),
        ValidationLevel::Staging => row(Warn, Warn, Fail, Fail, Fail, Fail, Fail),
        ValidationLevel::Production => Severities::all(Fail),
    }
}

const fn row(
    stderr: Severity,
    warnings: Severity,
    silent: Severity,
    types: Severity,
    assertions: Severity,
    exit_codes: Severity,
    expected: Severity,
) -> Severities {
    Severities {
        stderr,
        warnings,
        silent,
        types,
        assertions,
        exit_codes,
        expected,
    }
}

/// What a job's `validationConfig` resolves to: the level, the severity of every check,
/// and the parsed expectations. The validation Pod receives it as JSON in `NBV_CHECKS`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckPolicy {
    /// `level` (development when unset).
    pub level: ValidationLevel,
    /// `strictMode`.
    pub strict: bool,
    /// The severity of every check.
    pub checks: Severities,
    /// `expectedOutputs`, parsed.
    pub expect: Vec<Expectation>,
}

/// Resolves a `validationConfig`:
///
/// 1. `level` (development when unset) gives every check its severity
///    ([`level_defaults`]); `strictMode: true` gives every check `fail`, whatever the
///    level and the other fields.
/// 2. A field set away from its default wins over the level: `true` for
///    `failOnStderr`, `failOnWarnings`, `checkOutputTypes`, `verifyAssertions` or
///    `requireExplicitExitCodes` makes its check `fail` at every level;
///    `detectSilentFailures: false` turns the silent-failure check off.
/// 3. A field at its default (`false`, or `true` for `detectSilentFailures`, or unset)
///    leaves the check to the level. The API server writes the defaults into every
///    job, so a default value cannot mean anything else than "not asked for".
///
/// # Examples
///
/// ```
/// use nbv_core::api::{ValidationConfig, ValidationLevel};
/// use nbv_core::checks::{resolve, Severity};
///
/// let config = ValidationConfig {
///     level: Some(ValidationLevel::Learning),
///     fail_on_stderr: Some(true),
///     ..ValidationConfig::default()
/// };
/// let policy = resolve(&config)?;
/// assert_eq!(policy.checks.stderr, Severity::Fail);
/// assert_eq!(policy.checks.silent, Severity::Warn);
/// # Ok::<(), nbv_core::checks::InvalidCheckSpec>(())
/// ```
///
/// # Errors
///
/// [`InvalidCheckSpec`] naming the field, e.g.
/// `spec.validationConfig.expectedOutputs[2].shape`, when an expectation cannot be
/// checked, or when `checkOutputTypes: true` has no expectation with a `type`.
pub fn resolve(config: &ValidationConfig) -> Result<CheckPolicy, InvalidCheckSpec> {
    let level = config.level.unwrap_or(ValidationLevel::Development);
    let strict = config.strict_mode == Some(true);
    let expect = parse_expectations(config.expected_outputs.as_deref().unwrap_or_default())?;
    if config.check_output_types == Some(true) && expect.iter().all(|e| e.output_type.is_none()) {
        return Err(InvalidCheckSpec::new(
            "spec.validationConfig.checkOutputTypes",
            "is true, but no expectedOutputs entry has a type to check; add a type (e.g. \
             type: pandas.DataFrame) to the cells to check, or remove checkOutputTypes",
        ));
    }
    let mut checks = if strict {
        Severities::all(Severity::Fail)
    } else {
        level_defaults(level)
    };
    let asked = [
        (Check::Stderr, config.fail_on_stderr),
        (Check::Warnings, config.fail_on_warnings),
        (Check::Types, config.check_output_types),
        (Check::Assertions, config.verify_assertions),
        (Check::ExitCodes, config.require_explicit_exit_codes),
    ];
    for (check, value) in asked {
        if value == Some(true) {
            checks.set(check, Severity::Fail);
        }
    }
    if config.detect_silent_failures == Some(false) && !strict {
        checks.set(Check::Silent, Severity::Off);
    }
    Ok(CheckPolicy {
        level,
        strict,
        checks,
        expect,
    })
}
