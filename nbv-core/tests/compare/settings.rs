//! What `comparisonConfig` resolves to, and what it refuses, naming the field.

use super::*;

fn resolve(config: Value, annotation: Option<&str>) -> Result<Settings, String> {
    let config: ComparisonConfig = serde_json::from_value(config).expect("a comparisonConfig");
    Settings::resolve(Some(&config), annotation).map_err(|e| e.to_string())
}

#[test]
fn defaults_are_upstreams() {
    let settings = Settings::resolve(None, None).expect("defaults");
    assert_eq!(settings, Settings::default());
    insta::assert_snapshot!(settings.to_json(), @r#"{"strategy":"normalized","tolerance":0.0001,"ignoreTimestamps":true,"ignoreExecutionCount":true,"ignoreOutputTypes":[],"timestampPatterns":[]}"#);
}

#[test]
fn the_strategy_annotation_is_honoured_unless_it_contradicts_the_spec() {
    let annotated = resolve(json!({}), Some("exact")).expect("honoured");
    assert_eq!(annotated.strategy, ComparisonStrategy::Exact);
    let agreed = resolve(json!({"strategy": "exact"}), Some("exact")).expect("agreed");
    assert_eq!(agreed.strategy, ComparisonStrategy::Exact);
    let spec_wins_nothing = resolve(json!({"strategy": "normalized"}), None).expect("spec");
    assert_eq!(spec_wins_nothing.strategy, ComparisonStrategy::Normalized);
}

#[test]
fn bad_settings_are_refused_naming_the_field() {
    let cases = [
        (json!({"strategy": "exact"}), Some("normalized")),
        (json!({}), Some("fuzzy")),
        (json!({"floatingPointTolerance": "2"}), None),
        (json!({"floatingPointTolerance": "1e999"}), None),
        (json!({"floatingPointTolerance": "-0.1"}), None),
        (json!({"ignoreOutputTypes": ["image/png", "png"]}), None),
        (
            json!({"customTimestampPatterns": [r"\d+", r"(?<=at )\d+"]}),
            None,
        ),
        (json!({"customTimestampPatterns": [r"(\d+)-\1"]}), None),
        (json!({"customTimestampPatterns": [r"\d+$"]}), None),
        (json!({"customTimestampPatterns": [r"\bT\d+"]}), None),
        (json!({"customTimestampPatterns": [r"[[:digit:]]+"]}), None),
        (json!({"customTimestampPatterns": [r"\d*"]}), None),
        (json!({"customTimestampPatterns": [r"[a-z]+"]}), None),
        (json!({"customTimestampPatterns": [r"(?i)utc"]}), None),
        (json!({"customTimestampPatterns": [r"a{,3}b"]}), None),
        (json!({"customTimestampPatterns": [r"\p{N}+s"]}), None),
    ];
    let mut report = String::new();
    for (config, annotation) in cases {
        let error = resolve(config.clone(), annotation).expect_err("refused");
        report.push_str(&format!("{config} {annotation:?}\n  {error}\n"));
    }
    insta::assert_snapshot!("refused_settings", report);
}
