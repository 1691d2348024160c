//! `nbv simulate`: the built-in ADR-049 scenario, the example scenarios, random
//! scenarios under faults and restarts, determinism, and a deliberate bug that the
//! invariants must catch.
//!
//! Needs the `simulate` feature (`--features simulate` or `--all-features`).
#![cfg(feature = "simulate")]

use std::collections::BTreeSet;
use std::path::PathBuf;

use nbv_operator::cli::commands::simulate::{SimulateArgs, run as simulate_command};
use nbv_operator::simulate::Mutation;
use nbv_operator::simulate::{
    Options, Report, Who, case_seed, random_scenario, run, run_one_case, run_random, seed_scenario,
};
use nbv_testkit::scenario::Scenario;
use serde_json::{Value, json};

const JOB: &str = "self-healing-platform/predictive-analytics-kserve-validation";
const TRIGGER: &str =
    "restart:serving.kserve.io/InferenceService:self-healing-platform/predictive-analytics";

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn seed_report() -> Report {
    let scenario = seed_scenario().expect("the built-in scenario reads");
    run(&scenario, &Options::default()).expect("the built-in scenario plays")
}

fn lines_by(report: &Report, who: Who, containing: &str) -> Vec<String> {
    report
        .timeline
        .iter()
        .filter(|e| e.who == who && e.text.contains(containing))
        .map(|e| e.text.clone())
        .collect()
}

#[test]
fn the_built_in_scenario_plays_adr_049_end_to_end() {
    let report = seed_report();
    assert!(report.passed(), "{}", report.render());
    let json = report.to_json();

    // One trigger, fired once, for the one run.
    let fired = json["effects"]["triggers_fired"]
        .as_array()
        .expect("a list");
    assert_eq!(fired.len(), 1, "{fired:#?}");
    assert_eq!(fired[0]["trigger"], TRIGGER);
    assert_eq!(fired[0]["job"], JOB);

    // nbv ran the notebook itself: one validation Pod, which the kubelet ran to the
    // end, and its 14 cells in the job's status.
    let created = lines_by(&report, Who::Nbv, "created Pod");
    assert_eq!(
        created,
        [format!("created Pod {JOB}-g1-r0")],
        "{}",
        report.render()
    );
    let ended = lines_by(&report, Who::Kubelet, "ended: Succeeded");
    assert_eq!(ended.len(), 1, "{ended:#?}");
    let status = &json["final"]["jobs"][JOB]["status"];
    assert_eq!(
        status["validationPodName"],
        "predictive-analytics-kserve-validation-g1-r0"
    );
    assert_eq!(status["results"].as_array().map(Vec::len), Some(14));
    assert_eq!(status["retryCount"].as_i64().unwrap_or(0), 0);
    // The Pod is read from the watch cache: one GET, right after it was created
    // (before the watch delivered it), not one per event of its ten-minute run.
    assert_eq!(json["api"]["requests_by_resource"]["get pods"], 1);
    // Nothing nbv writes conflicts with itself: the conditions are written against
    // the version its ledger write left.
    assert_eq!(json["api"]["errors_by_code"], json!({}));

    // The InferenceService's two pods, deleted once, replaced by KServe.
    let deleted = lines_by(&report, Who::Nbv, "deleted Pod");
    assert_eq!(deleted.len(), 2, "{deleted:#?}");
    assert!(
        deleted
            .iter()
            .all(|l| l.contains("of InferenceService predictive-analytics"))
    );
    assert_eq!(lines_by(&report, Who::Kserve, "started Pod").len(), 2);

    // Wave annotations, the gate of wave 4, the Application, one notification.
    let job = &json["final"]["jobs"][JOB];
    assert_eq!(job["phase"], "Succeeded");
    assert_eq!(job["annotations"]["mlops.dev/wave-complete"], "3");
    assert_eq!(
        job["annotations"]["mlops.dev/completion-time"],
        "2026-01-24T22:30:00Z"
    );
    assert!(job["annotations"].get("mlops.dev/wave-failed").is_none());
    assert_eq!(
        json["gates"],
        json!([{"namespace": "self-healing-platform", "wave": 4, "status": "open",
                "message": "wave 4 is open: 1 blocking job has completed its wave: predictive-analytics-kserve-validation"}])
    );
    let app = &json["final"]["applications"]["argocd/self-healing-platform"];
    assert_eq!(
        app["mlops.dev/notebook-summary"],
        "1/1 succeeded (100% success rate)"
    );
    let status: Value =
        serde_json::from_str(app["mlops.dev/notebook-status"].as_str().unwrap_or("null"))
            .expect("the status annotation is JSON");
    assert_eq!(
        (status["total"].as_u64(), status["succeeded"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        json["effects"]["events_by_reason"]["ValidationSucceeded"],
        1
    );
    assert_eq!(json["completions"].as_array().map(Vec::len), Some(1));
    assert_eq!(json["invariant_violations"], json!([]));

    // The Application shows the result within a minute of the run's end.
    let published = report
        .timeline
        .iter()
        .find(|e| e.text.contains("1/1 succeeded"))
        .expect("the status was published");
    assert!((published.at - report.completions[0].completed_at).num_seconds() <= 60);

    // nbv polls nothing: after the initial sync the only LISTs are of the pods of the
    // InferenceService it restarts, one per look of the restart by eviction (each of
    // its two pods evicted, the looks while the ReplicaSet has not replaced the first,
    // then none left from before the run). Each new wait is announced once: evicted,
    // the ReplicaSet short of a pod, evicted.
    assert_eq!(json["api"]["list_after_start"], 5);
    assert_eq!(json["effects"]["events_by_reason"]["RestartWaiting"], 3);
    // The second pod was evicted only once the first one's replacement existed.
    let evictions: Vec<_> = report
        .timeline
        .iter()
        .filter(|e| {
            e.text
                .starts_with("deleted Pod self-healing-platform/predictive-analytics-predictor")
        })
        .map(|e| e.at)
        .collect();
    let replaced = report
        .timeline
        .iter()
        .find(|e| {
            e.text
                .starts_with("started Pod self-healing-platform/predictive-analytics-predictor")
        })
        .map(|e| e.at)
        .expect("a replacement");
    assert_eq!(evictions.len(), 2);
    assert!(
        evictions[0] <= replaced && replaced <= evictions[1],
        "{evictions:?}, {replaced}"
    );
}

#[test]
fn the_built_in_scenario_reads_as_a_timeline() {
    insta::assert_snapshot!(seed_report().render());
}

#[test]
fn every_example_scenario_passes() {
    let mut names = BTreeSet::new();
    let entries = std::fs::read_dir(examples_dir()).expect("examples/ exists");
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let scenario = Scenario::from_yaml(&text)
            .unwrap_or_else(|e| panic!("{} is not a valid scenario: {e}", path.display()));
        let report = run(&scenario, &Options::default())
            .unwrap_or_else(|e| panic!("{} cannot be played: {e}", path.display()));
        assert!(report.passed(), "{}:\n{}", path.display(), report.render());
        names.insert(scenario.name);
    }
    for expected in [
        "seed-end-to-end",
        "faults-and-restarts",
        "waves-and-failures",
        "default-mode",
    ] {
        assert!(
            names.contains(expected),
            "examples/ lacks {expected}: {names:?}"
        );
    }
}

#[test]
fn random_scenarios_keep_every_invariant() {
    let summary = run_random(16, 1, &Options::default());
    assert_eq!(summary.violations, 0, "{:#?}", summary.first_violation);
    // The generator exercised what the invariants are about.
    let coverage = &summary.coverage;
    assert!(coverage.completions >= 16, "{coverage:?}");
    assert!(coverage.triggers_fired > 0, "{coverage:?}");
    assert!(
        coverage.faults > 0 && coverage.error_answers > 0,
        "{coverage:?}"
    );
    assert!(coverage.operator_stops > 16, "{coverage:?}");
}

#[test]
fn the_same_seed_gives_the_same_output() {
    let options = Options::default();
    let first = run_random(4, 9, &options).to_json();
    assert_eq!(first, run_random(4, 9, &options).to_json());
    assert_ne!(
        random_scenario(case_seed(9, 0)),
        random_scenario(case_seed(9, 1))
    );

    // Whole reports too, timeline included, for a scenario with several jobs, faults
    // and restarts, whose reconciles run concurrently.
    let scenario = random_scenario(case_seed(9, 2));
    let report =
        |seed| run(&scenario, &Options { seed, ..options }).map(|r| r.to_json().to_string());
    let once = report(5).expect("plays");
    assert_eq!(once, report(5).expect("plays"));
    assert_eq!(seed_report().to_json(), seed_report().to_json());
}

#[test]
fn separate_processes_print_the_same_output() {
    // Each process seeds its hash maps differently, so concurrent reconciles may
    // interleave differently: the output must not show it.
    let nbv = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_nbv"))
            .args(args)
            .output()
            .expect("nbv runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let example = examples_dir().join("waves-and-failures.yaml");
    let example = example.to_str().expect("a UTF-8 path");
    for args in [
        &["simulate", "--random", "6", "--seed", "11"][..],
        &["simulate", "--json", example],
    ] {
        let first = nbv(args);
        assert!(first.starts_with('{'), "{args:?}: {first}");
        assert_eq!(first, nbv(args), "{args:?}");
    }
}

/// Runs the cases of `seed` one by one and returns their violation messages.
fn violations(cases: u32, seed: u64, mutation: Option<Mutation>) -> Vec<String> {
    (0..cases)
        .flat_map(|case| {
            let seed = case_seed(seed, case);
            let report = run(&random_scenario(seed), &Options { seed, mutation })
                .expect("random scenarios play");
            report.violations.into_iter().map(|v| v.to_string())
        })
        .collect()
}

#[test]
fn a_shell_that_forgets_its_ledger_is_caught() {
    // Without the effect ledger only the effects' own idempotency prevents repeats
    // (times never moved back, markers, later syncs), so what gives the shell away is
    // its record: triggers carried out but recorded nowhere, which after a restart
    // nobody could tell from triggers never carried out.
    let caught = violations(24, 1, Some(Mutation::ForgetLedger));
    assert!(
        !caught.is_empty(),
        "the invariants did not notice the forgotten ledger"
    );
    assert!(
        caught.iter().any(|v| v.starts_with("invariant 1")
            && v.contains("is recorded neither as done nor as failed in status.effects")),
        "no unrecorded trigger among the violations: {caught:#?}"
    );
    assert_eq!(violations(24, 1, None), Vec::<String>::new());
    assert_eq!(run_random(24, 1, &Options::default()).violations, 0);
    let mutated = run_random(
        24,
        1,
        &Options {
            mutation: Some(Mutation::ForgetLedger),
            ..Options::default()
        },
    );
    assert!(mutated.violations > 0 && mutated.first_violation.is_some());
    // Every failed case is listed, in order, and replays alone with what it broke.
    let first = mutated.first_violation.as_ref().expect("a first violation");
    assert_eq!(mutated.failed.len(), mutated.failed_cases as usize);
    assert_eq!(mutated.failed[0].case, first.case);
    assert!(mutated.failed.windows(2).all(|w| w[0].case < w[1].case));
    let mutation = Options {
        mutation: Some(Mutation::ForgetLedger),
        ..Options::default()
    };
    for failed in &mutated.failed {
        let alone = run_one_case(1, failed.case, &mutation);
        assert_eq!(
            alone.failed,
            std::slice::from_ref(failed),
            "case {}",
            failed.case
        );
    }
    let alone = run_one_case(1, first.case, &mutation);
    let replayed = alone.first_violation.expect("the case fails alone");
    assert_eq!(replayed.scenario_yaml, first.scenario_yaml);
    assert_eq!(replayed.violation, first.violation);
}

#[test]
fn a_shell_that_fires_triggers_before_writing_the_status_is_caught() {
    // The upstream operator's order: triggers fire, then the terminal status is
    // written. When that write fails, the next reconcile ends the run again, at
    // another time, and fires again: a restart, refresh or sync for a run end that
    // was never persisted. (When the retry comes at the same virtual instant the
    // effects' idempotency hides it, so this takes more cases than the ledger test.)
    let caught = violations(120, 1, Some(Mutation::UpstreamOrder));
    let repeated: Vec<&String> = caught
        .iter()
        .filter(|v| {
            v.starts_with("invariant 1")
                && (v.contains("which is the trigger of no successful run")
                    || v.contains("was written"))
        })
        .collect();
    assert!(
        !repeated.is_empty(),
        "no repeated trigger among the violations: {caught:#?}"
    );
}

#[test]
fn the_command_prints_json_and_exits_by_the_verdict() {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = simulate_command(
        &SimulateArgs {
            json: true,
            ..SimulateArgs::default()
        },
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let json: Value = serde_json::from_slice(&out).expect("one JSON object");
    assert_eq!(json["passed"], true);

    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = simulate_command(
        &SimulateArgs {
            random: Some(2),
            seed: 3,
            ..SimulateArgs::default()
        },
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0);
    let json: Value = serde_json::from_slice(&out).expect("one JSON object");
    assert_eq!(
        (json["cases"].as_u64(), json["violations"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(json["first_violation"], Value::Null);
    assert_eq!(json["failed"], serde_json::json!([]));

    // `--case K` names one of the N cases.
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let args = SimulateArgs {
        random: Some(2),
        seed: 3,
        case: Some(2),
        ..SimulateArgs::default()
    };
    assert_eq!(simulate_command(&args, &mut out, &mut err), 2);
    let err = String::from_utf8_lossy(&err);
    assert!(err.contains("--case 2 is not one of the 2 cases"), "{err}");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let args = SimulateArgs {
        case: Some(1),
        ..args
    };
    assert_eq!(simulate_command(&args, &mut out, &mut err), 0);
    let json: Value = serde_json::from_slice(&out).expect("one JSON object");
    assert_eq!(json["cases"], 1);
}

#[test]
fn unreadable_and_unplayable_scenarios_exit_2_and_unmet_expectations_exit_1() {
    let dir = std::env::temp_dir().join(format!("nbv-simulate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("writable");
        path
    };
    let play = |path: PathBuf| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = simulate_command(
            &SimulateArgs {
                scenario: Some(path),
                ..SimulateArgs::default()
            },
            &mut out,
            &mut err,
        );
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    };

    let (code, _, err) = play(dir.join("missing.yaml"));
    assert_eq!(code, 2);
    assert!(err.contains("cannot read"), "{err}");

    let (code, _, err) = play(write("bad.yaml", "name: x\nmode: sometimes\n"));
    assert_eq!(code, 2);
    assert!(
        err.contains("is not a valid scenario") && err.contains("mode"),
        "{err}"
    );

    let (code, _, err) = play(write(
        "unplayable.yaml",
        "name: x\nmode: gitops-only\ntimeline:\n  - at: 1m\n    phase: {job: ml/none, phase: Succeeded}\n",
    ));
    assert_eq!(code, 2);
    assert!(
        err.contains("timeline[0] (at 1m)") && err.contains("ml/none"),
        "{err}"
    );

    let (code, out, _) = play(write(
        "unmet.yaml",
        "name: x\nmode: gitops-only\nsettle: 1m\nexpect:\n  triggersFired: 2\n  jobs:\n    ml/none: {phase: Succeeded}\n",
    ));
    assert_eq!(code, 1);
    assert!(out.contains("Expectations: 2 unmet"), "{out}");
    assert!(
        out.contains("expected 2 trigger(s) carried out, found 0"),
        "{out}"
    );
    assert!(
        out.contains("job ml/none: expected it to exist at the end"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
