//! Scenario files: the shipped examples read, the model round-trips through YAML, and
//! every mistake is reported with where it is and how to fix it.

use std::path::PathBuf;
use std::time::Duration;

use nbv_core::api::Phase;
use nbv_testkit::cluster::{Fault, FaultEffect, FaultMatch, StatusCode, Times, VerbKind};
use nbv_testkit::scenario::{
    Action, Expectations, MAX_DURATION, Mode, ObjectKey, ObjectRef, OperatorRestart,
    OperatorSettings, PhaseWrite, PodOutcome, PodResult, Scenario, ScenarioError, Step,
    format_duration, parse_duration,
};
use proptest::prelude::*;
use serde_json::json;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_reads_and_round_trips() {
    let files = examples();
    assert!(files.len() >= 4, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let scenario =
            Scenario::from_yaml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let again = Scenario::from_yaml(&scenario.to_yaml().expect("serializes"))
            .unwrap_or_else(|e| panic!("{} written back: {e}", path.display()));
        assert_eq!(again, scenario, "{}", path.display());
    }
}

#[test]
fn steps_are_ordered_by_time_and_keep_file_order_at_the_same_time() {
    let scenario = Scenario::from_yaml(
        "
name: order
mode: gitops-only
timeline:
  - {at: 2m, compact: {}}
  - {at: 1m, dropWatches: {}}
  - {at: 1m, clearFaults: {}}
  - {at: 0s, restartOperator: {}}
",
    )
    .expect("valid");
    let actions: Vec<&Action> = scenario.timeline.iter().map(|s| &s.action).collect();
    assert_eq!(
        actions,
        [
            &Action::RestartOperator(OperatorRestart {
                down_for: Duration::ZERO,
                graceful: false
            }),
            &Action::DropWatches,
            &Action::ClearFaults,
            &Action::Compact,
        ]
    );
    assert_eq!(scenario.duration(), Duration::from_secs(2 * 60 + 6 * 60));
}

#[test]
fn mistakes_name_the_entry_and_the_fix() {
    let cases = [
        "name: ''\nmode: gitops-only",
        "name: x\nmode: sometimes",
        "name: x\nmode: gitops-only\nsurprise: 1",
        "name: x\nmode: gitops-only\nsettle: 5 minutes",
        "name: x\nmode: gitops-only\nobjects:\n  - {kind: Pod, metadata: {name: p}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, dropWatches: {}, compact: {}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 90, compact: {}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, phase: {job: train, phase: Succeeded}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, phase: {job: ml/train, phase: Done}}",
        "name: x\nmode: default\ntimeline:\n  - {at: 1m, phase: {job: ml/train, phase: Succeeded}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: status}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: status, code: 1000}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: timeout}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: dropWatch, verb: patch}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: explode}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: status, code: 500, verb: poke}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: status, code: 500, times: 0}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, fault: {effect: status, code: 500, times: often}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, patch: {object: {kind: Pod, name: p}, patch: [1]}}",
        "name: x\nmode: gitops-only\ntimeline:\n  - {at: 1m, argoSync: models}",
        "name: x\nmode: gitops-only\npodOutcomes:\n  - {job: ml/train, outcome: succeeded}",
        "name: x\nmode: default\npodOutcomes:\n  - {job: ml/train, outcome: crashed}",
        "name: x\nmode: gitops-only\nsettle: 20h\ntimeline:\n  - {at: 5h, compact: {}}",
        "name: x\nmode: gitops-only\nepoch: 1969-07-20T20:17:00Z",
    ];
    let report: Vec<String> = cases
        .iter()
        .map(|text| match Scenario::from_yaml(text) {
            Ok(_) => format!("{text:?}\n  => accepted"),
            Err(e) => format!("{text:?}\n  => {e}"),
        })
        .collect();
    insta::assert_snapshot!(report.join("\n\n"));
}

#[test]
fn oversized_files_are_refused_before_parsing() {
    let text = "#".repeat(nbv_testkit::scenario::MAX_SCENARIO_BYTES + 1);
    assert!(matches!(
        Scenario::from_yaml(&text),
        Err(ScenarioError::TooLarge { .. })
    ));
}

#[test]
fn aliases_and_nesting_beyond_the_yaml_bounds_are_refused() {
    use nbv_core::yaml::BoundsError;

    // One 1 MiB description repeated 1,000 times: 1 GiB if it were expanded.
    let repeated = format!(
        "name: big\nmode: gitops-only\ndescription: &big {}\nobjects:\n{}",
        "x".repeat(1 << 20),
        "  - *big\n".repeat(1_000)
    );
    let deep = format!(
        "name: deep\nmode: gitops-only\nobjects: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(matches!(
        Scenario::from_yaml(&repeated),
        Err(ScenarioError::Bounds(
            BoundsError::ExcessiveAliasedText { .. }
        ))
    ));
    let error = Scenario::from_yaml(&deep).unwrap_err();
    assert!(
        matches!(error, ScenarioError::Bounds(BoundsError::TooDeep { .. })),
        "{error}"
    );
    assert!(error.to_string().contains("nested more than 128 levels"));
}

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0u64..86_400).prop_map(Duration::from_secs),
        (1u64..5_000).prop_map(Duration::from_millis),
    ]
}

fn fault() -> impl Strategy<Value = Fault> {
    let verb = proptest::option::of(proptest::sample::select(vec![
        VerbKind::Get,
        VerbKind::List,
        VerbKind::Create,
        VerbKind::Update,
        VerbKind::Patch,
        VerbKind::Delete,
        VerbKind::DeleteCollection,
    ]));
    let effect = prop_oneof![
        (400u16..600).prop_map(|c| FaultEffect::Status(
            StatusCode::from_u16(c).unwrap_or(StatusCode::IM_A_TEAPOT)
        )),
        (400u16..600).prop_map(|c| FaultEffect::AfterCommit(
            StatusCode::from_u16(c).unwrap_or(StatusCode::IM_A_TEAPOT)
        )),
        duration().prop_map(FaultEffect::Timeout),
    ];
    // `times: 1` reads as Times::Once, so N(1) is never generated.
    let times = prop_oneof![
        Just(Times::Once),
        (2u32..9).prop_map(Times::N),
        Just(Times::Always)
    ];
    (
        verb,
        proptest::option::of("[a-z]{1,12}(/status)?"),
        proptest::option::of("[a-z]{1,12}"),
        effect,
        times,
    )
        .prop_map(|(verb, resource, name, effect, times)| {
            Fault::new(
                FaultMatch {
                    verb,
                    resource,
                    name,
                },
                effect,
                times,
            )
        })
}

fn action() -> impl Strategy<Value = Action> {
    let key = ("[a-z]{1,8}", "[a-z]{1,8}").prop_map(|(ns, n)| ObjectKey::new(ns, n));
    let object = ("[A-Z][a-z]{1,8}", "[a-z]{1,8}", "[a-z]{1,8}")
        .prop_map(|(k, ns, n)| ObjectRef::namespaced(k, ns, n));
    prop_oneof![
        (
            key.clone(),
            proptest::sample::select(Phase::ALL.to_vec()),
            proptest::option::of("[ -~]{0,20}"),
            any::<bool>()
        )
            .prop_map(
                |(job, phase, message, replace_status)| Action::Phase(PhaseWrite {
                    job,
                    phase,
                    message,
                    replace_status
                })
            ),
        (object.clone(), "[a-z]{1,8}").prop_map(|(object, v)| Action::Patch {
            object,
            patch: json!({"spec": {"x": v}})
        }),
        object.clone().prop_map(Action::Delete),
        object.prop_map(Action::RolloutRestart),
        key.prop_map(Action::ArgoSync),
        (duration(), any::<bool>()).prop_map(|(down_for, graceful)| Action::RestartOperator(
            OperatorRestart { down_for, graceful }
        )),
        fault().prop_map(Action::Fault),
        Just(Action::ClearFaults),
        Just(Action::DropWatches),
        Just(Action::Compact),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        "[a-z][a-z-]{0,15}",
        (0i64..2_000_000_000)
            .prop_map(|s| chrono::DateTime::from_timestamp(s, 0).unwrap_or_default()),
        (0u64..3600).prop_map(Duration::from_secs),
        proptest::collection::vec((0u64..7200, action()), 0..12),
    )
        .prop_map(|(name, epoch, settle, steps)| {
            let mut timeline: Vec<Step> = steps
                .into_iter()
                .map(|(at, action)| Step {
                    at: Duration::from_secs(at),
                    action,
                })
                .collect();
            timeline.sort_by_key(|s| s.at);
            Scenario {
                name,
                description: String::new(),
                mode: Mode::GitopsOnly,
                epoch,
                settle,
                operator: OperatorSettings::default(),
                objects: vec![
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}),
                ],
                timeline,
                pod_outcomes: Vec::new(),
                expect: Expectations::default(),
            }
        })
}

proptest! {
    /// Writing a scenario and reading it back gives the same scenario: generated
    /// scenarios can be saved and replayed with `nbv simulate <file>`.
    #[test]
    fn scenarios_round_trip_through_yaml(scenario in scenario()) {
        let text = scenario.to_yaml().expect("serializes");
        let read = Scenario::from_yaml(&text);
        prop_assert!(read.is_ok(), "{text}\n{:?}", read.err());
        prop_assert_eq!(read.ok(), Some(scenario));
    }

    /// Any text is either a scenario or an error that says where: reading never
    /// panics, whatever the file holds.
    #[test]
    fn any_text_reads_or_is_refused(
        text in prop_oneof![
            "\\PC{0,200}",
            scenario().prop_map(|s| s.to_yaml().unwrap_or_default()).prop_flat_map(|yaml| {
                let len = yaml.len();
                (Just(yaml), 0..=len, "\\PC{0,8}")
            }).prop_map(|(yaml, at, junk)| {
                let at = (0..=at).rev().find(|i| yaml.is_char_boundary(*i)).unwrap_or(0);
                format!("{}{junk}{}", &yaml[..at], &yaml[at..])
            }),
        ]
    ) {
        match Scenario::from_yaml(&text) {
            Ok(scenario) => prop_assert!(scenario.duration() <= MAX_DURATION),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    /// Durations are read back as written, and never beyond the bound.
    #[test]
    fn durations_round_trip(d in duration()) {
        prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        prop_assert!(d <= MAX_DURATION);
    }
}

#[test]
fn pod_outcomes_belong_to_the_default_mode() {
    let scenario = Scenario::from_yaml(
        "
name: pods
mode: default
podOutcomes:
  - {job: ml/train, attempt: 0, outcome: evicted, runFor: 3m}
  - {job: ml/train, outcome: succeeded}
",
    )
    .expect("valid");
    assert_eq!(
        scenario.pod_outcomes[0],
        PodOutcome {
            job: ObjectKey::new("ml", "train"),
            attempt: Some(0),
            outcome: PodResult::Evicted,
            start_after: Duration::from_secs(5),
            run_for: Duration::from_secs(180),
            cells: 3,
        }
    );
    assert_eq!(scenario.pod_outcomes[1].attempt, None);
}
