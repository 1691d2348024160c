//! The Argo CD health of a job: shipped scripts, the `argocd-cm` patch, the native
//! mapping over the YAML table of `tests/data/health`, properties and snapshots.

mod health_support;

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use health_support::{Outcome, PHASES, cases, data_dir, job_object};
use nbv_core::api::{
    CellResult, CellStatus, NotebookValidationJob, NotebookValidationJobStatus, Phase,
};
use nbv_core::health::{
    ADVANCED_SCRIPT, BASIC_SCRIPT, GENERATION_CHECK, GUIDE_SCRIPT, HEALTH_KEY, HealthStatus,
    HealthStatusCode, NumberFormat, Semantics, Variant, assess, assess_advanced, assess_job,
    assess_with, render_health_configmap,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn native(obj: &Value, variant: Variant, semantics: Semantics) -> Outcome {
    Outcome::of(assess_with(obj, variant, semantics).map_err(|e| e.kind()))
}

// ---------------------------------------------------------------- shipped scripts

/// The guide's Step 1 ConfigMap, verbatim: its literal block is the guide variant.
#[test]
fn guide_script_is_the_guides_byte_for_byte() {
    let guide = std::fs::read_to_string(data_dir().join("guide/argocd-cm.yaml")).unwrap();
    let guide: Value = serde_yaml_ng::from_str(&guide).unwrap();
    assert_eq!(guide["data"][HEALTH_KEY].as_str(), Some(GUIDE_SCRIPT));
}

/// The basic script is the guide's with the generation check after `hs = {}`, and
/// nothing else changed.
#[test]
fn basic_script_is_the_guides_after_the_generation_check() {
    let (head, rest) = BASIC_SCRIPT.split_once(GENERATION_CHECK).unwrap();
    assert_eq!(head, "hs = {}\n\n");
    assert_eq!(format!("{head}{rest}"), GUIDE_SCRIPT);
    assert!(ADVANCED_SCRIPT.contains(&format!("hs = {{}}\n\n{GENERATION_CHECK}")));
}

/// The advanced script is the guide's plus a header comment, with exactly three lines
/// changed, each of which still accepts what the guide's line accepted.
#[test]
fn advanced_script_differs_from_the_guides_only_where_documented() {
    let guide = std::fs::read_to_string(data_dir().join("guide/advanced.yaml")).unwrap();
    let guide: Value = serde_yaml_ng::from_str(&guide).unwrap();
    let guide = guide[HEALTH_KEY].as_str().unwrap();

    let without_check = ADVANCED_SCRIPT.replacen(GENERATION_CHECK, "", 1);
    let ours: Vec<&str> = without_check.lines().collect();
    let header = ours
        .iter()
        .take_while(|line| line.starts_with("--"))
        .count();
    assert_eq!(header, 5, "the header comment explains the change");
    let body = &ours[header..];
    let theirs: Vec<&str> = guide.lines().collect();
    assert_eq!(body.len(), theirs.len());
    let changed: Vec<(&str, &str)> = theirs
        .iter()
        .zip(body)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    let expected = [
        (
            r#"      if result.status == "error" then"#,
            r#"      if result.status == "Failure" or result.status == "error" then"#,
        ),
        (
            r#"        hs.message = "Failed at cell " .. result.cellIndex .. ": " .. (result.errorType or "Error")"#,
            r#"        hs.message = "Failed at cell " .. result.cellIndex .. ": " .. (result.errorMessage or result.errorType or "Error")"#,
        ),
        (
            r#"      if result.status == "success" then"#,
            r#"      if result.status == "Success" or result.status == "success" then"#,
        ),
    ];
    assert_eq!(changed, expected);
}

#[test]
fn health_key_is_built_from_the_crds_group_and_kind() {
    assert_eq!(
        HEALTH_KEY,
        format!(
            "resource.customizations.health.{}_{}",
            nbv_core::api::GROUP,
            nbv_core::api::KIND
        )
    );
}

#[test]
fn rendered_configmaps_parse_back_to_the_scripts_byte_for_byte() {
    for variant in Variant::ALL {
        let yaml = render_health_configmap(variant);
        let parsed: Value = serde_yaml_ng::from_str(&yaml).unwrap();
        assert_eq!(parsed["apiVersion"], "v1");
        assert_eq!(parsed["kind"], "ConfigMap");
        assert_eq!(parsed["metadata"]["name"], "argocd-cm");
        assert_eq!(parsed["metadata"]["namespace"], "argocd");
        assert_eq!(
            parsed["metadata"]["labels"]["app.kubernetes.io/part-of"],
            "argocd"
        );
        let data = parsed["data"].as_object().unwrap();
        assert_eq!(
            data.len(),
            2,
            "the patch touches two keys of argocd-cm: the health check and the actions"
        );
        assert_eq!(data[HEALTH_KEY].as_str(), Some(variant.source()));
        assert_eq!(
            data[nbv_core::health::actions::ACTIONS_KEY].as_str(),
            Some(nbv_core::health::actions::render_actions().as_str())
        );
        assert!(
            !yaml.lines().any(|line| line.ends_with(' ')),
            "no trailing spaces"
        );
    }
}

#[test]
fn rendered_configmap_basic() {
    insta::assert_snapshot!(render_health_configmap(Variant::Basic));
}

#[test]
fn rendered_configmap_advanced() {
    insta::assert_snapshot!(render_health_configmap(Variant::Advanced));
}

// ---------------------------------------------------------------- status codes

#[test]
fn status_codes_round_trip_through_their_argo_cd_spelling() {
    for code in HealthStatusCode::ALL {
        assert_eq!(code.to_string().parse::<HealthStatusCode>(), Ok(code));
        assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
    }
    let error = "healthy".parse::<HealthStatusCode>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown health status \"healthy\"; Argo CD accepts exactly Healthy, Progressing, Degraded, \
         Suspended, Missing or Unknown (case-sensitive)"
    );
}

#[test]
fn is_worse_than_follows_gitops_engines_health_order() {
    use HealthStatusCode::*;
    let order = [Healthy, Suspended, Progressing, Missing, Degraded, Unknown];
    for (i, a) in order.iter().enumerate() {
        for (j, b) in order.iter().enumerate() {
            assert_eq!(a.is_worse_than(*b), i > j, "{a} vs {b}");
        }
    }
}

#[test]
fn health_status_serializes_as_argo_cd_does() {
    let health = HealthStatus::new(HealthStatusCode::Degraded, "boom");
    assert_eq!(
        serde_json::to_value(&health).unwrap(),
        json!({"status": "Degraded", "message": "boom"})
    );
    let read: HealthStatus = serde_json::from_value(json!({"status": "Healthy"})).unwrap();
    assert_eq!(read, HealthStatus::new(HealthStatusCode::Healthy, ""));
}

// ---------------------------------------------------------------- table tests

#[test]
fn testdata_table_native() {
    let cases = cases();
    assert!(
        cases.len() >= 40,
        "the table was found ({} cases)",
        cases.len()
    );
    for (name, case) in &cases {
        for variant in Variant::ALL {
            let actual = native(&case.object, variant, Semantics::ARGO_CD);
            assert_eq!(
                &actual,
                case.expected(variant),
                "{name} ({})",
                variant.name()
            );
        }
    }
}

#[test]
fn testdata_covers_every_phase_and_every_outcome() {
    let cases = cases();
    for phase in PHASES {
        assert!(
            cases
                .iter()
                .any(|(_, case)| case.object["status"]["phase"] == phase),
            "no case for phase {phase}"
        );
    }
    let outcomes: Vec<&Outcome> = cases
        .iter()
        .flat_map(|(_, c)| [&c.basic, &c.advanced])
        .collect();
    assert!(outcomes.iter().any(|o| matches!(o, Outcome::Empty)));
    assert!(outcomes.iter().any(|o| matches!(o, Outcome::Error(_))));
    for code in [
        HealthStatusCode::Healthy,
        HealthStatusCode::Degraded,
        HealthStatusCode::Progressing,
    ] {
        assert!(
            outcomes
                .iter()
                .any(|o| matches!(o, Outcome::Health(h) if h.status == code))
        );
    }
}

// ---------------------------------------------------------------- truthiness traps

#[test]
fn lua_truthiness_traps() {
    let failed = |status: Value| json!({"status": status});
    let message = |obj: &Value| assess(obj).unwrap().unwrap().message;

    // "" is true: kept instead of the default, and still concatenated.
    assert_eq!(
        message(&failed(json!({"phase": "Failed", "message": ""}))),
        ""
    );
    // 0 is true and prints as 0, not 0.0.
    assert_eq!(
        message(&failed(
            json!({"phase": "Failed", "message": "m", "retryCount": 0})
        )),
        "m (retry 0/3)"
    );
    // A present but empty completion time still adds " at ".
    assert_eq!(
        message(&failed(json!({"phase": "Succeeded", "completionTime": ""}))),
        "Notebook validation succeeded at "
    );
    // The one explicit `~= ""` check of the script: an empty pod name is skipped.
    assert_eq!(
        message(&failed(
            json!({"phase": "ValidationRunning", "validationPodName": ""})
        )),
        "Validating notebook"
    );
    // false is falsy: the default message.
    assert_eq!(
        message(&failed(json!({"phase": "Failed", "message": false}))),
        "Notebook validation failed"
    );
    // null is nil: the field is absent.
    assert_eq!(
        message(&failed(
            json!({"phase": "Failed", "message": null, "retryCount": null})
        )),
        "Notebook validation failed"
    );
}

// ---------------------------------------------------------------- snapshots

fn job_status(phase: Phase) -> NotebookValidationJobStatus {
    let at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    let cell = |index, status, error: Option<&str>| CellResult {
        cell_index: index,
        status,
        error_message: error.map(str::to_owned),
        ..Default::default()
    };
    NotebookValidationJobStatus {
        phase: Some(phase),
        message: Some(match phase {
            Phase::Failed => "Cell execution failed: ModuleNotFoundError".to_owned(),
            other => format!("{other} notebook model-training"),
        }),
        retry_count: Some(if phase == Phase::Failed { 3 } else { 0 }),
        completion_time: phase.is_terminal().then_some(at),
        validation_pod_name: Some("model-training-job-validation-abc123".to_owned()),
        results: Some(vec![
            cell(0, CellStatus::Success, None),
            cell(1, CellStatus::Skipped, None),
            if phase == Phase::Failed {
                cell(
                    2,
                    CellStatus::Failure,
                    Some("ModuleNotFoundError: No module named 'sklearn'"),
                )
            } else {
                cell(2, CellStatus::Success, None)
            },
        ]),
        ..Default::default()
    }
}

#[test]
fn messages_for_each_phase() {
    let mut table = BTreeMap::new();
    let mut job = NotebookValidationJob::new("model-training-job", Default::default());
    table.insert(
        "(no status)".to_owned(),
        Variant::ALL
            .map(|variant| assess_job(&job, variant))
            .to_vec(),
    );
    for phase in Phase::ALL {
        job.status = Some(job_status(phase));
        table.insert(
            phase.to_string(),
            Variant::ALL
                .map(|variant| assess_job(&job, variant))
                .to_vec(),
        );
    }
    insta::assert_yaml_snapshot!(table);
}

// ---------------------------------------------------------------- properties

fn typed_status() -> impl Strategy<Value = Option<NotebookValidationJobStatus>> {
    let cell = (
        0_i64..100,
        prop::sample::select(vec![
            CellStatus::Success,
            CellStatus::Failure,
            CellStatus::Skipped,
        ]),
        prop::option::of("\\PC{0,12}"),
    )
        .prop_map(|(cell_index, status, error_message)| CellResult {
            cell_index,
            status,
            error_message,
            ..Default::default()
        });
    let status = (
        prop::option::of(prop::sample::select(Phase::ALL.to_vec())),
        prop::option::of("\\PC{0,16}"),
        prop::option::of(any::<i32>()),
        prop::option::of(0_i64..4_000_000_000),
        prop::option::of("[a-z0-9-]{0,20}"),
        prop::option::of(prop::collection::vec(cell, 0..5)),
    )
        .prop_map(
            |(phase, message, retry_count, completion, validation_pod_name, results)| {
                NotebookValidationJobStatus {
                    phase,
                    message,
                    retry_count,
                    completion_time: completion
                        .and_then(|secs| Utc.timestamp_opt(secs, 0).single()),
                    validation_pod_name,
                    results,
                    ..Default::default()
                }
            },
        );
    prop::option::weighted(0.9, status)
}

/// Whether the generation check applies: both generations are numbers and the status
/// is of the older one.
fn stale(obj: &Value) -> bool {
    match (
        obj["metadata"]["generation"].as_f64(),
        obj["status"]["observedGeneration"].as_f64(),
    ) {
        (Some(generation), Some(observed)) => {
            obj["metadata"].is_object() && obj["status"].is_object() && observed < generation
        }
        _ => false,
    }
}

/// Every integer of JSON below 10^14 in magnitude, and no negative zero.
fn small_integers_only(value: &Value) -> bool {
    match value {
        Value::Number(n) => n
            .as_i64()
            .is_some_and(|i| i.unsigned_abs() < 100_000_000_000_000),
        Value::Array(items) => items.iter().all(small_integers_only),
        Value::Object(fields) => fields.values().all(small_integers_only),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A typed job always gets the script's own health, and its status code is the
    /// guide's mapping of its phase.
    #[test]
    fn typed_jobs_get_the_status_of_their_phase(status in typed_status()) {
        let mut job = NotebookValidationJob::new("train", Default::default());
        job.status = status.clone();
        let phase = status.as_ref().and_then(|s| s.phase);
        let expected = match phase {
            Some(Phase::Succeeded) => HealthStatusCode::Healthy,
            Some(Phase::Failed) => HealthStatusCode::Degraded,
            _ => HealthStatusCode::Progressing,
        };
        for variant in Variant::ALL {
            let obj = json!({"status": serde_json::to_value(&job.status).unwrap()});
            let health = assess_with(&obj, variant, Semantics::ARGO_CD);
            prop_assert!(matches!(health, Ok(Some(_))), "{health:?}");
            let health = assess_job(&job, variant);
            prop_assert_eq!(health.status, expected);
        }
    }

    /// The guide's failure format: the job's message (or the default when absent) and
    /// the retry count as an integer.
    #[test]
    fn failed_message_carries_the_retry_count(message in prop::option::of("\\PC{0,20}"), retries in prop::option::of(0_i64..1_000_000)) {
        let obj = json!({"status": {"phase": "Failed", "message": message, "retryCount": retries}});
        let health = assess(&obj).unwrap().unwrap();
        let base = message.unwrap_or_else(|| "Notebook validation failed".to_owned());
        let expected = match retries {
            Some(n) => format!("{base} (retry {n}/3)"),
            None => base,
        };
        prop_assert_eq!(health.message, expected);
    }

    /// The assessments are total: any job object, of any shape, gets an outcome.
    #[test]
    fn assessment_is_total(obj in job_object()) {
        for variant in Variant::ALL {
            for open_libs in [false, true] {
                let semantics = Semantics { open_libs, ..Semantics::ARGO_CD };
                let _ = native(&obj, variant, semantics);
            }
        }
    }


    /// Opening the standard libraries only changes what indexing a string does: a
    /// script that succeeds without them gives the same result with them.
    #[test]
    fn open_libraries_only_rescue_string_indexing(obj in job_object()) {
        for variant in Variant::ALL {
            let closed = native(&obj, variant, Semantics::ARGO_CD);
            let open = native(&obj, variant, Semantics { open_libs: true, ..Semantics::ARGO_CD });
            if !matches!(closed, Outcome::Error(nbv_core::health::RuntimeErrorKind::Index)) {
                prop_assert_eq!(closed, open);
            }
        }
    }

    /// The generation check: while the status is of an older generation the basic and
    /// advanced checks say so, whatever the phase; otherwise the basic check is the
    /// guide's script exactly.
    #[test]
    fn a_status_of_an_older_generation_is_progressing(obj in job_object()) {
        let guide = native(&obj, Variant::Guide, Semantics::ARGO_CD);
        for variant in [Variant::Basic, Variant::Advanced] {
            let outcome = native(&obj, variant, Semantics::ARGO_CD);
            if stale(&obj) {
                let expected = format!(
                    "Waiting for the new spec to run (generation {}, status of generation {})",
                    NumberFormat::GopherLua.format(obj["metadata"]["generation"].as_f64().unwrap()),
                    NumberFormat::GopherLua.format(obj["status"]["observedGeneration"].as_f64().unwrap()),
                );
                prop_assert_eq!(outcome, Outcome::Health(HealthStatus::new(HealthStatusCode::Progressing, expected)));
            } else if variant == Variant::Basic {
                prop_assert_eq!(outcome, guide.clone());
            }
        }
    }

    /// The advanced check names the first failed cell of the CRD's results.
    #[test]
    fn advanced_names_the_first_failed_cell(statuses in prop::collection::vec(prop::sample::select(vec!["Success", "Failure", "Skipped"]), 1..8)) {
        let results: Vec<Value> = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| json!({"cellIndex": i, "status": s, "errorMessage": format!("error in {i}")}))
            .collect();
        let obj = json!({"status": {"phase": "Failed", "message": "failed", "results": results}});
        let message = assess_advanced(&obj).unwrap().unwrap().message;
        let expected = match statuses.iter().position(|s| *s == "Failure") {
            Some(i) => format!("Failed at cell {i}: error in {i}"),
            None => "failed".to_owned(),
        };
        prop_assert_eq!(message, expected);
    }

    /// gopher-lua prints a float64 that survives the trip through int64 as that
    /// integer, and any other finite number with digits that read back exactly.
    #[test]
    fn gopher_lua_numbers_read_back(n in any::<f64>().prop_filter("finite", |n| n.is_finite())) {
        let text = NumberFormat::GopherLua.format(n);
        if n.fract() == 0.0 && n.abs() < 9.2e18 {
            prop_assert_eq!(text, format!("{}", n as i64));
        } else {
            prop_assert_eq!(text.parse::<f64>().ok(), Some(n));
        }
    }

    /// Lua 5.1 prints at most 14 significant digits, close enough to read back within
    /// the rounding of the 14th.
    #[test]
    fn lua51_numbers_have_fourteen_digits(n in any::<f64>().prop_filter("finite and normal", |n| n.is_normal())) {
        let text = NumberFormat::Lua51.format(n);
        let mantissa = text.split('e').next().unwrap();
        let digits = mantissa.trim_start_matches('-').replace('.', "");
        prop_assert!(digits.trim_start_matches('0').len() <= 14, "{}", text);
        let back: f64 = text.parse().unwrap();
        prop_assert!(((back - n) / n).abs() <= 5e-14, "{} -> {}", n, text);
    }
}

proptest! {
    // About a third of the generated objects hold a number that is no small integer
    // (generations of every type among them) and are passed over.
    #![proptest_config(ProptestConfig { cases: 2000, max_global_rejects: 20_000, ..ProptestConfig::default() })]

    /// Gopher-lua and Lua 5.1 only differ in how they print numbers: on objects whose
    /// numbers are small integers, both give the same outcome.
    #[test]
    fn number_formats_agree_on_small_integers(obj in job_object()) {
        prop_assume!(small_integers_only(&obj));
        for variant in Variant::ALL {
            let lua51 = Semantics { numbers: NumberFormat::Lua51, ..Semantics::ARGO_CD };
            prop_assert_eq!(native(&obj, variant, Semantics::ARGO_CD), native(&obj, variant, lua51));
        }
    }
}
