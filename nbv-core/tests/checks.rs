//! The rule table of `validationConfig` (snapshot and properties), the errors that name
//! the field, what an observation means against an expectation, and the budget of the
//! findings in the termination message.

use nbv_core::api::{ExpectedOutput, ValidationConfig, ValidationLevel};
use nbv_core::checks::{
    Check, CheckReport, Expectation, Finding, MAX_CHECKS_BYTES, Observation, Outcome, Rule,
    Severity, evaluate, level_defaults, resolve,
};
use proptest::prelude::*;

const LEVELS: [ValidationLevel; 4] = [
    ValidationLevel::Learning,
    ValidationLevel::Development,
    ValidationLevel::Staging,
    ValidationLevel::Production,
];

fn name(level: ValidationLevel) -> &'static str {
    match level {
        ValidationLevel::Learning => "learning",
        ValidationLevel::Development => "development",
        ValidationLevel::Staging => "staging",
        ValidationLevel::Production => "production",
    }
}

fn cell(severity: Severity) -> &'static str {
    match severity {
        Severity::Off => "off",
        Severity::Warn => "warn",
        Severity::Fail => "fail",
    }
}

/// One line per level × strictMode × field set away from its default (and one with
/// none): the severity of every check.
#[test]
fn the_rule_table() {
    let mut table = format!(
        "{:<12} {:<6} {:<32} {}\n",
        "level",
        "strict",
        "field",
        Check::ALL.map(Check::as_str).join(" ")
    );
    let fields: Vec<Option<Check>> = std::iter::once(None)
        .chain(
            Check::ALL
                .iter()
                .copied()
                .filter(|c| c.field().is_some())
                .map(Some),
        )
        .collect();
    for level in LEVELS {
        for strict in [false, true] {
            for field in &fields {
                let mut config = ValidationConfig {
                    level: Some(level),
                    strict_mode: Some(strict),
                    ..ValidationConfig::default()
                };
                let label = match field {
                    None => "-".to_owned(),
                    Some(check) => {
                        set_away_from_default(&mut config, *check);
                        let value = if *check == Check::Silent {
                            "false"
                        } else {
                            "true"
                        };
                        format!("{}: {value}", check.field().unwrap_or_default())
                    }
                };
                let policy = resolve(&config).expect("valid");
                let row: Vec<String> = Check::ALL
                    .iter()
                    .map(|c| format!("{:<w$}", cell(policy.checks.of(*c)), w = c.as_str().len()))
                    .collect();
                table.push_str(&format!(
                    "{:<12} {:<6} {:<32} {}\n",
                    name(level),
                    strict,
                    label,
                    row.join(" ").trim_end()
                ));
            }
        }
    }
    insta::assert_snapshot!(table);
}

fn set_away_from_default(config: &mut ValidationConfig, check: Check) {
    match check {
        Check::Stderr => config.fail_on_stderr = Some(true),
        Check::Warnings => config.fail_on_warnings = Some(true),
        Check::Silent => config.detect_silent_failures = Some(false),
        Check::Types => {
            config.check_output_types = Some(true);
            config.expected_outputs = Some(vec![ExpectedOutput {
                cell: 1,
                output_type: Some("float".into()),
                ..ExpectedOutput::default()
            }]);
        }
        Check::Assertions => config.verify_assertions = Some(true),
        Check::ExitCodes => config.require_explicit_exit_codes = Some(true),
        Check::Expected => {}
    }
}

fn arb_level() -> impl Strategy<Value = ValidationLevel> {
    prop::sample::select(LEVELS.to_vec())
}

fn arb_flag() -> impl Strategy<Value = Option<bool>> {
    prop_oneof![Just(None), Just(Some(false)), Just(Some(true))]
}

prop_compose! {
    fn arb_config()(
        level in prop::option::of(arb_level()),
        strict in arb_flag(),
        stderr in arb_flag(),
        warnings in arb_flag(),
        silent in arb_flag(),
        types in arb_flag(),
        assertions in arb_flag(),
        exit_codes in arb_flag(),
    ) -> ValidationConfig {
        ValidationConfig {
            level,
            strict_mode: strict,
            fail_on_stderr: stderr,
            fail_on_warnings: warnings,
            detect_silent_failures: silent,
            check_output_types: types,
            verify_assertions: assertions,
            require_explicit_exit_codes: exit_codes,
            // A type to check, so that checkOutputTypes: true is valid.
            expected_outputs: Some(vec![ExpectedOutput { cell: 0, output_type: Some("float".into()), ..Default::default() }]),
        }
    }
}

fn rank(level: ValidationLevel) -> usize {
    LEVELS.iter().position(|l| *l == level).unwrap_or(0)
}

proptest! {
    /// strictMode is never weaker than any level, whatever else is set.
    #[test]
    fn strict_mode_is_never_weaker_than_a_level(config in arb_config(), level in arb_level()) {
        let strict = resolve(&ValidationConfig { strict_mode: Some(true), ..config.clone() }).unwrap();
        let other = resolve(&ValidationConfig { strict_mode: Some(false), level: Some(level), ..config }).unwrap();
        for check in Check::ALL {
            prop_assert!(strict.checks.of(check) >= other.checks.of(check), "{:?}", check);
            prop_assert_eq!(strict.checks.of(check), Severity::Fail);
        }
    }

    /// A higher level is never weaker than a lower one, with the same fields.
    #[test]
    fn levels_only_get_stricter(config in arb_config(), a in arb_level(), b in arb_level()) {
        let (low, high) = if rank(a) <= rank(b) { (a, b) } else { (b, a) };
        let low = resolve(&ValidationConfig { level: Some(low), ..config.clone() }).unwrap();
        let high = resolve(&ValidationConfig { level: Some(high), ..config }).unwrap();
        for check in Check::ALL {
            prop_assert!(high.checks.of(check) >= low.checks.of(check), "{:?}", check);
        }
    }

    /// An explicit `true` fails the job at every level; a field at its default leaves
    /// the check to the level; `detectSilentFailures: false` turns the check off unless
    /// strictMode is on.
    #[test]
    fn explicit_fields_win_over_the_level(config in arb_config()) {
        let policy = resolve(&config).unwrap();
        let strict = config.strict_mode == Some(true);
        let level = level_defaults(config.level.unwrap_or(ValidationLevel::Development));
        let asked = [
            (Check::Stderr, config.fail_on_stderr),
            (Check::Warnings, config.fail_on_warnings),
            (Check::Types, config.check_output_types),
            (Check::Assertions, config.verify_assertions),
            (Check::ExitCodes, config.require_explicit_exit_codes),
        ];
        for (check, value) in asked {
            let expected = if strict || value == Some(true) { Severity::Fail } else { level.of(check) };
            prop_assert_eq!(policy.checks.of(check), expected, "{:?}", check);
        }
        let silent = match (strict, config.detect_silent_failures) {
            (true, _) => Severity::Fail,
            (false, Some(false)) => Severity::Off,
            _ => level.silent,
        };
        prop_assert_eq!(policy.checks.silent, silent);
        prop_assert_eq!(policy.checks.expected, if strict { Severity::Fail } else { level.expected });
    }

    /// Whatever the findings, `chk` fits its budget, loses none uncounted, and keeps
    /// failures before warnings.
    #[test]
    fn the_findings_fit_their_budget(findings in prop::collection::vec(arb_finding(), 0..60), more in 0u64..5) {
        let total = findings.len() as u64 + more;
        let report = CheckReport { findings, more }.capped();
        let text = serde_json::to_string(&report).unwrap();
        prop_assert!(text.len() <= MAX_CHECKS_BYTES, "{}", text.len());
        prop_assert_eq!(report.findings.len() as u64 + report.more, total);
        let first_warning = report.findings.iter().position(|f| f.outcome == Outcome::Warn);
        if let Some(at) = first_warning {
            prop_assert!(report.findings[at..].iter().all(|f| f.outcome == Outcome::Warn));
        }
    }
}

pub fn arb_finding() -> impl Strategy<Value = Finding> {
    (
        prop::option::of(0u64..200),
        prop::sample::select(vec![
            Rule::Stderr,
            Rule::Warning,
            Rule::Nan,
            Rule::Shape,
            Rule::Assertions,
            Rule::Cell,
        ]),
        prop_oneof![Just(Outcome::Warn), Just(Outcome::Fail)],
        "(\\PC|[\u{0}-\u{1f}]){0,300}",
    )
        .prop_map(|(cell, rule, outcome, message)| Finding {
            cell,
            rule,
            outcome,
            message,
        })
}

fn expected(index: usize, output: ExpectedOutput) -> String {
    let mut outputs = vec![ExpectedOutput::default(); index];
    outputs.push(output);
    let config = ValidationConfig {
        expected_outputs: Some(outputs),
        ..ValidationConfig::default()
    };
    resolve(&config).expect_err("invalid").to_string()
}

#[test]
fn a_mistake_in_an_expectation_names_the_field() {
    let shape = |s: &str| ExpectedOutput {
        shape: Some(s.into()),
        ..Default::default()
    };
    insta::assert_snapshot!(expected(2, shape("rows,cols")), @r#"spec.validationConfig.expectedOutputs[2].shape: "rows,cols" is not a shape; write the sizes of the dimensions separated by commas, with -1 for any size, e.g. "-1,10""#);
    insta::assert_snapshot!(expected(0, shape("-2,3")), @r#"spec.validationConfig.expectedOutputs[0].shape: "-2,3" is not a shape; write the sizes of the dimensions separated by commas, with -1 for any size, e.g. "-1,10""#);
    insta::assert_snapshot!(expected(1, ExpectedOutput { cell: -1, ..Default::default() }), @"spec.validationConfig.expectedOutputs[1].cell: -1 is negative; give the zero-based index of the cell in the notebook");
    insta::assert_snapshot!(expected(0, ExpectedOutput { output_type: Some("pandas DataFrame".into()), ..Default::default() }), @r#"spec.validationConfig.expectedOutputs[0].type: "pandas DataFrame" is not a Python type name; write a dotted name such as float, list or pandas.DataFrame"#);
    insta::assert_snapshot!(expected(0, ExpectedOutput { min_value: Some("1e999".into()), ..Default::default() }), @r#"spec.validationConfig.expectedOutputs[0].minValue: "1e999" is not a finite decimal number, e.g. 0.5 or -1e3"#);
    insta::assert_snapshot!(expected(3, ExpectedOutput { min_value: Some("2".into()), max_value: Some("1.5".into()), ..Default::default() }), @"spec.validationConfig.expectedOutputs[3].maxValue: 1.5 is below minValue 2; no value can lie between them");
    let config = ValidationConfig {
        check_output_types: Some(true),
        ..ValidationConfig::default()
    };
    insta::assert_snapshot!(resolve(&config).unwrap_err().to_string(), @"spec.validationConfig.checkOutputTypes: is true, but no expectedOutputs entry has a type to check; add a type (e.g. type: pandas.DataFrame) to the cells to check, or remove checkOutputTypes");
}

fn frame(rows: u64, cols: u64) -> Observation {
    Observation {
        types: vec!["pandas.core.frame.DataFrame".into(), "object".into()],
        repr: format!("DataFrame ({rows}, {cols})"),
        empty: rows == 0 || cols == 0,
        shape: Some(vec![rows, cols]),
        ..Observation::default()
    }
}

fn number(value: f64) -> Observation {
    Observation {
        types: vec!["float".into(), "object".into()],
        repr: format!("{value:?}"),
        real: true,
        nan: value.is_nan(),
        num: value.is_finite().then_some(value),
        ..Observation::default()
    }
}

#[test]
fn observations_against_expectations() {
    let policy = resolve(&ValidationConfig {
        level: Some(ValidationLevel::Staging),
        ..ValidationConfig::default()
    })
    .unwrap();
    let expect = |output: ExpectedOutput| Expectation {
        cell: 4,
        output_type: output.output_type,
        shape: output
            .shape
            .map(|s| s.split(',').map(|d| d.parse().unwrap()).collect()),
        min: output.min_value,
        max: output.max_value,
        not_empty: output.not_empty == Some(true),
    };
    let show = |e: &Expectation, o: &Observation| {
        evaluate(4, Some(e), o, &policy)
            .iter()
            .map(|f| format!("{:?} {}", f.outcome, f))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let df = expect(ExpectedOutput {
        output_type: Some("pandas.DataFrame".into()),
        shape: Some("-1,3".into()),
        not_empty: Some(true),
        ..Default::default()
    });
    assert_eq!(show(&df, &frame(10, 3)), "");
    insta::assert_snapshot!(show(&df, &frame(0, 2)), @r"
    Fail cell 4: expected shape -1,3, got 0,2 (shape)
    Fail cell 4: the pandas.core.frame.DataFrame is empty (notEmpty)
    ");
    insta::assert_snapshot!(show(&df, &number(1.0)), @r"
    Fail cell 4: expected a pandas.DataFrame, got a float (type)
    Fail cell 4: expected shape -1,3, got a float without a shape (shape)
    ");
    let none = Observation {
        types: vec!["NoneType".into()],
        repr: "None".into(),
        none: true,
        empty: true,
        ..Observation::default()
    };
    insta::assert_snapshot!(show(&df, &none), @"Fail cell 4 has no value (None) where one is expected (none)");
    let range = expect(ExpectedOutput {
        min_value: Some("0".into()),
        max_value: Some("1".into()),
        ..Default::default()
    });
    assert_eq!(show(&range, &number(0.5)), "");
    assert_eq!(show(&range, &number(1.0)), "");
    insta::assert_snapshot!(show(&range, &number(1.5)), @"Fail cell 4: 1.5 is not <= maxValue 1 (maxValue)");
    insta::assert_snapshot!(show(&range, &number(f64::NAN)), @r"
    Fail cell 4: the value is NaN (nan)
    Fail cell 4: NaN is not >= minValue 0 (minValue)
    Fail cell 4: NaN is not <= maxValue 1 (maxValue)
    ");
    insta::assert_snapshot!(show(&range, &frame(2, 2)), @r"
    Fail cell 4: minValue 0 needs a number, got a pandas.core.frame.DataFrame (minValue)
    Fail cell 4: maxValue 1 needs a number, got a pandas.core.frame.DataFrame (maxValue)
    ");
    // A cell without an expectation: only NaN is a silent failure.
    assert!(evaluate(4, None, &number(2.0), &policy).is_empty());
    assert_eq!(
        evaluate(4, None, &number(f64::NAN), &policy)[0].rule,
        Rule::Nan
    );
}

#[test]
fn a_level_that_warns_marks_the_findings_as_warnings() {
    let policy = resolve(&ValidationConfig {
        level: Some(ValidationLevel::Learning),
        ..ValidationConfig::default()
    })
    .unwrap();
    let expectation = Expectation {
        cell: 1,
        output_type: None,
        shape: Some(vec![2]),
        min: None,
        max: None,
        not_empty: false,
    };
    let findings = evaluate(1, Some(&expectation), &frame(2, 2), &policy);
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].outcome, Outcome::Warn);
    let off = resolve(&ValidationConfig {
        level: Some(ValidationLevel::Learning),
        detect_silent_failures: Some(false),
        ..ValidationConfig::default()
    })
    .unwrap();
    assert!(evaluate(1, None, &number(f64::NAN), &off).is_empty());
}
