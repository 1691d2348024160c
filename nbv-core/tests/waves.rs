//! Sync-wave parsing, wave annotation patches and the block-wave gate.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::annotations::{
    ARGOCD_SYNC_WAVE, BLOCK_WAVE, COMPLETION_TIME, WAVE_COMPLETE, WAVE_FAILED,
};
use nbv_core::api::JobPhase;
use nbv_core::time::rfc3339;
use nbv_core::waves::{
    FailureReason, GateDecision, GateJob, InvalidWaveKind, Wave, WaveOutcome, block_wave,
    effective_wave, gate, sync_wave, wave_patch,
};
use proptest::prelude::*;
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn annotations(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Applies a JSON merge patch (RFC 7386) of `metadata.annotations` to an annotation map,
/// failing the test on any other shape.
fn apply(annotations: &mut BTreeMap<String, String>, patch: &Value) {
    let root = patch.as_object().expect("patch is an object");
    assert_eq!(root.len(), 1, "patch touches only metadata: {patch}");
    let metadata = root["metadata"].as_object().expect("metadata is an object");
    assert_eq!(metadata.len(), 1, "patch touches only annotations: {patch}");
    let changes = metadata["annotations"]
        .as_object()
        .expect("annotations object");
    assert!(!changes.is_empty(), "a patch is never empty");
    for (key, value) in changes {
        match value {
            Value::Null => {
                annotations.remove(key);
            }
            Value::String(s) => {
                annotations.insert(key.clone(), s.clone());
            }
            other => panic!("annotation {key} patched with a non-string {other}"),
        }
    }
}

/// Go's `strconv.Atoi` on a 64-bit platform, written from its specification: an
/// optional sign, then one or more ASCII digits, and the value must fit in an int64.
fn go_atoi(s: &str) -> Option<i64> {
    let bytes = s.as_bytes();
    let (negative, digits) = match bytes.first() {
        Some(b'+') => (false, &bytes[1..]),
        Some(b'-') => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let limit: u128 = 1 << 63; // |i64::MIN|
    let mut magnitude: u128 = 0;
    for d in digits {
        magnitude = magnitude * 10 + u128::from(d - b'0');
        if magnitude > limit {
            return None;
        }
    }
    let signed = if negative {
        -(magnitude as i128)
    } else {
        magnitude as i128
    };
    i64::try_from(signed).ok()
}

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, h, m, s).unwrap()
}

// ---------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------

/// Strings near the grammar: signs, digits, spaces, separators, letters, non-ASCII digits.
fn wave_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[-+]?[0-9]{0,25}",
        "[-+ 0-9_.xe\t٣９]{0,24}",
        any::<String>(),
        any::<i64>().prop_map(|n| n.to_string()),
        (any::<i64>(), "[+]?", "0{0,30}").prop_map(|(n, plus, zeros)| {
            let sign = if n < 0 { "-" } else { plus.as_str() };
            format!("{sign}{zeros}{}", n.unsigned_abs())
        }),
    ]
}

proptest! {
    #[test]
    fn sync_wave_parser_agrees_with_go_atoi(text in wave_like()) {
        let parsed = text.parse::<Wave>();
        prop_assert_eq!(parsed.as_ref().ok().map(|w| w.get()), go_atoi(&text), "{:?}", text);
    }

    #[test]
    fn display_is_canonical_and_round_trips(n in any::<i64>()) {
        let wave = Wave::new(n);
        prop_assert_eq!(wave.to_string(), n.to_string());
        prop_assert_eq!(wave.to_string().parse::<Wave>(), Ok(wave));
    }

    #[test]
    fn both_annotations_use_the_same_parser(text in wave_like()) {
        let expected = go_atoi(&text).map(Wave::new);
        let sync = sync_wave(&annotations(&[(ARGOCD_SYNC_WAVE, &text)]));
        let block = block_wave(&annotations(&[(BLOCK_WAVE, &text)]));
        prop_assert_eq!(sync.as_ref().ok().copied().flatten(), expected);
        prop_assert_eq!(block.as_ref().ok().copied().flatten(), expected);
        if let Err(e) = sync {
            prop_assert_eq!(e.annotation(), ARGOCD_SYNC_WAVE);
        }
        if let Err(e) = block {
            prop_assert_eq!(e.annotation(), BLOCK_WAVE);
        }
    }

    #[test]
    fn error_messages_stay_short(text in ".{0,2000}") {
        if let Err(e) = text.parse::<Wave>() {
            prop_assert!(e.to_string().len() < 600, "{}", e);
        }
    }
}

#[test]
fn parser_edge_cases() {
    let cases: &[(&str, Option<i64>)] = &[
        ("0", Some(0)),
        ("-0", Some(0)),
        ("+0", Some(0)),
        ("007", Some(7)),
        ("+3", Some(3)),
        ("-1", Some(-1)),
        ("9223372036854775807", Some(i64::MAX)),
        ("-9223372036854775808", Some(i64::MIN)),
        ("00000000000000000000000000042", Some(42)),
        ("9223372036854775808", None),
        ("-9223372036854775809", None),
        ("", None),
        ("+", None),
        ("-", None),
        ("+-3", None),
        ("--3", None),
        (" 3", None),
        ("3 ", None),
        ("3\n", None),
        ("1_000", None),
        ("0x10", None),
        ("1e3", None),
        ("3.0", None),
        ("٣", None),
        ("３", None),
    ];
    for (text, expected) in cases {
        assert_eq!(
            text.parse::<Wave>().ok().map(Wave::get),
            *expected,
            "{text:?}"
        );
        assert_eq!(go_atoi(text), *expected, "model disagrees on {text:?}");
    }
}

#[test]
fn absent_annotation_is_not_wave_zero() {
    assert_eq!(sync_wave(&BTreeMap::new()), Ok(None));
    assert_eq!(block_wave(&BTreeMap::new()), Ok(None));
    assert_eq!(
        sync_wave(&annotations(&[(ARGOCD_SYNC_WAVE, "0")])),
        Ok(Some(Wave::DEFAULT))
    );
}

#[test]
fn error_kinds() {
    assert_eq!(
        "abc".parse::<Wave>().unwrap_err().kind(),
        InvalidWaveKind::NotAnInteger
    );
    assert_eq!(
        "-99999999999999999999".parse::<Wave>().unwrap_err().kind(),
        InvalidWaveKind::OutOfRange
    );
}

#[test]
fn error_messages() {
    let long = "7".repeat(300);
    let messages: Vec<String> = [
        sync_wave(&annotations(&[(ARGOCD_SYNC_WAVE, " 3")])),
        sync_wave(&annotations(&[(ARGOCD_SYNC_WAVE, "99999999999999999999")])),
        block_wave(&annotations(&[(BLOCK_WAVE, "four")])),
        block_wave(&annotations(&[(BLOCK_WAVE, &long)])),
    ]
    .into_iter()
    .map(|r| r.unwrap_err().to_string())
    .collect();
    insta::assert_snapshot!(messages.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Wave annotation patches
// ---------------------------------------------------------------------------------------

fn outcome() -> impl Strategy<Value = WaveOutcome> {
    let time = (0i64..4_000_000_000, 0u32..1_000_000_000)
        .prop_map(|(s, ns)| Utc.timestamp_opt(s, ns).single().unwrap());
    prop_oneof![
        time.clone()
            .prop_map(|completed_at| WaveOutcome::Succeeded { completed_at }),
        time.prop_map(|completed_at| WaveOutcome::Failed { completed_at }),
        Just(WaveOutcome::NewRun),
    ]
}

/// Annotations a job may carry: any mix of the wave keys with arbitrary values, plus
/// an unrelated one that patches must leave alone.
fn job_annotations(
    sync: BoxedStrategy<Option<String>>,
) -> impl Strategy<Value = BTreeMap<String, String>> {
    let value = || proptest::option::of(prop_oneof!["[0-9]{1,2}", ".{0,8}"]);
    (sync, value(), value(), value()).prop_map(|(sync, complete, failed, time)| {
        let mut map = annotations(&[("team", "ml")]);
        for (key, value) in [
            (ARGOCD_SYNC_WAVE, sync),
            (WAVE_COMPLETE, complete),
            (WAVE_FAILED, failed),
            (COMPLETION_TIME, time),
        ] {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        }
        map
    })
}

fn valid_sync_wave() -> BoxedStrategy<Option<String>> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        "[+-]?0{0,3}[0-9]{1,3}",
    ]
    .prop_map(Some)
    .boxed()
}

fn any_sync_wave() -> BoxedStrategy<Option<String>> {
    proptest::option::of(prop_oneof!["[+-]?[0-9]{1,3}", "[ +0-9a-z]{0,4}"]).boxed()
}

proptest! {
    #[test]
    fn patch_is_idempotent(mut current in job_annotations(any_sync_wave()), outcome in outcome()) {
        if let Ok(Some(patch)) = wave_patch(&current, &outcome) {
            apply(&mut current, &patch);
            prop_assert_eq!(wave_patch(&current, &outcome), Ok(None));
        }
    }

    #[test]
    fn patch_leaves_other_annotations_alone(mut current in job_annotations(any_sync_wave()), outcome in outcome()) {
        let before = current.clone();
        if let Ok(Some(patch)) = wave_patch(&current, &outcome) {
            apply(&mut current, &patch);
        }
        for key in [ARGOCD_SYNC_WAVE, "team"] {
            prop_assert_eq!(before.get(key), current.get(key));
        }
    }

    #[test]
    fn patched_annotations_reflect_the_last_outcome(
        mut current in job_annotations(valid_sync_wave()),
        outcomes in proptest::collection::vec(outcome(), 1..8),
    ) {
        let wave: Wave = current[ARGOCD_SYNC_WAVE].parse().unwrap();
        for outcome in &outcomes {
            if let Some(patch) = wave_patch(&current, outcome).unwrap() {
                apply(&mut current, &patch);
            }
            // Success and failure records are mutually exclusive after every step.
            prop_assert!(!(current.contains_key(WAVE_COMPLETE) && current.contains_key(WAVE_FAILED)));
        }
        let canonical = wave.to_string();
        let (complete, failed, time) = match outcomes.last().unwrap() {
            WaveOutcome::Succeeded { completed_at } => (Some(canonical), None, Some(rfc3339(*completed_at))),
            WaveOutcome::Failed { completed_at } => (None, Some(canonical), Some(rfc3339(*completed_at))),
            WaveOutcome::NewRun => (None, None, None),
        };
        prop_assert_eq!(current.get(WAVE_COMPLETE), complete.as_ref());
        prop_assert_eq!(current.get(WAVE_FAILED), failed.as_ref());
        prop_assert_eq!(current.get(COMPLETION_TIME), time.as_ref());
    }

    #[test]
    fn new_run_clears_all_three_whatever_the_sync_wave(mut current in job_annotations(any_sync_wave())) {
        if let Some(patch) = wave_patch(&current, &WaveOutcome::NewRun).unwrap() {
            apply(&mut current, &patch);
        }
        for key in [WAVE_COMPLETE, WAVE_FAILED, COMPLETION_TIME] {
            prop_assert!(!current.contains_key(key));
        }
    }

    #[test]
    fn jobs_without_sync_wave_get_no_terminal_patch(
        current in job_annotations(Just(None).boxed()),
        outcome in outcome(),
    ) {
        if outcome != WaveOutcome::NewRun {
            prop_assert_eq!(wave_patch(&current, &outcome), Ok(None));
        }
    }

    /// As in Argo CD, an invalid sync-wave falls back to the Helm hook weight, then 0;
    /// the plan reports the value (see the plan's tests).
    #[test]
    fn malformed_sync_wave_falls_back_as_argo_cd_does(
        current in job_annotations(Just(Some("3 ".to_owned())).boxed()),
        weight in proptest::option::of(-5i64..5),
        outcome in outcome(),
    ) {
        let mut current = current;
        if let Some(weight) = weight {
            current.insert("helm.sh/hook-weight".to_owned(), weight.to_string());
        }
        let expected = weight.unwrap_or(0).to_string();
        let result = wave_patch(&current, &outcome).expect("no error");
        let set = match outcome {
            WaveOutcome::NewRun => None,
            WaveOutcome::Succeeded { .. } => Some(WAVE_COMPLETE),
            WaveOutcome::Failed { .. } => Some(WAVE_FAILED),
        };
        if let (Some(key), Some(patch)) = (set, &result) {
            let written = &patch["metadata"]["annotations"][key];
            prop_assert!(written.is_null() || written == &Value::String(expected), "{}", patch);
        }
    }

    #[test]
    fn the_wave_is_argo_cds(
        sync_wave in proptest::option::of(prop_oneof!["-?[0-9]{1,3}", "[a-z ]{0,3}"]),
        weight in proptest::option::of(prop_oneof!["-?[0-9]{1,3}", "[a-z ]{0,3}"]),
        argo_hook in any::<bool>(),
    ) {
        let mut annotations = BTreeMap::new();
        if let Some(w) = &sync_wave { annotations.insert(ARGOCD_SYNC_WAVE.to_owned(), w.clone()); }
        if let Some(w) = &weight { annotations.insert("helm.sh/hook-weight".to_owned(), w.clone()); }
        if argo_hook { annotations.insert("argocd.argoproj.io/hook".to_owned(), "PreSync".to_owned()); }
        // gitops-engine's syncwaves.Wave, written out.
        let atoi = |s: &Option<String>| s.as_ref().and_then(|s| s.parse::<i64>().ok());
        let argo = atoi(&sync_wave).unwrap_or_else(|| if argo_hook { 0 } else { atoi(&weight).unwrap_or(0) });
        let read = effective_wave(&annotations);
        let declared = sync_wave.is_some() || (weight.is_some() && !argo_hook);
        prop_assert_eq!(read.wave.map(|w| w.get()), declared.then_some(argo));
        let invalid = usize::from(sync_wave.is_some() && atoi(&sync_wave).is_none())
            + usize::from(!argo_hook && atoi(&sync_wave).is_none() && weight.is_some() && atoi(&weight).is_none());
        prop_assert_eq!(read.problems.len(), invalid);
    }

    #[test]
    fn completion_time_is_rfc3339_seconds_utc(outcome in outcome()) {
        if let WaveOutcome::Succeeded { completed_at } | WaveOutcome::Failed { completed_at } = outcome {
            let text = rfc3339(completed_at);
            prop_assert!(text.ends_with('Z') && !text.contains('.'), "{}", text);
            let back = DateTime::parse_from_rfc3339(&text).unwrap();
            prop_assert_eq!(back.timestamp(), completed_at.timestamp());
        }
    }
}

#[test]
fn patch_snapshots() {
    let finished = at(22, 30, 0);
    // A job that failed its previous run and declares its wave as "+03".
    let failed_before = annotations(&[
        (ARGOCD_SYNC_WAVE, "+03"),
        (BLOCK_WAVE, "4"),
        (WAVE_FAILED, "3"),
        (COMPLETION_TIME, "2026-01-24T21:00:00Z"),
    ]);
    let succeeded_before = annotations(&[
        (ARGOCD_SYNC_WAVE, "3"),
        (WAVE_COMPLETE, "3"),
        (COMPLETION_TIME, "2026-01-24T21:00:00Z"),
    ]);
    insta::assert_json_snapshot!(
        "success_patch",
        wave_patch(
            &failed_before,
            &WaveOutcome::Succeeded {
                completed_at: finished
            }
        )
        .unwrap()
    );
    insta::assert_json_snapshot!(
        "failure_patch",
        wave_patch(
            &succeeded_before,
            &WaveOutcome::Failed {
                completed_at: finished
            }
        )
        .unwrap()
    );
    insta::assert_json_snapshot!(
        "new_run_patch",
        wave_patch(&succeeded_before, &WaveOutcome::NewRun).unwrap()
    );
}

#[test]
fn completion_time_drops_sub_seconds() {
    let t = Utc.timestamp_opt(1_769_293_800, 999_999_999).unwrap();
    assert_eq!(rfc3339(t), "2026-01-24T22:30:00Z");
}

#[test]
fn nothing_to_clear_means_no_patch() {
    let current = annotations(&[(ARGOCD_SYNC_WAVE, "3")]);
    assert_eq!(wave_patch(&current, &WaveOutcome::NewRun), Ok(None));
}

// ---------------------------------------------------------------------------------------
// The gate
// ---------------------------------------------------------------------------------------

/// A job in a gate scenario, owning its annotations.
#[derive(Debug, Clone)]
struct Job {
    name: String,
    annotations: BTreeMap<String, String>,
    phase: JobPhase,
}

impl Job {
    fn view(&self) -> GateJob<'_> {
        GateJob {
            name: &self.name,
            annotations: &self.annotations,
            phase: self.phase,
        }
    }
}

fn decide(wave: i64, jobs: &[Job]) -> GateDecision {
    gate(Wave::new(wave), jobs.iter().map(Job::view))
}

/// A job that blocks `wave` and has completed its own wave 3.
fn completed_blocker(name: &str, wave: i64) -> Job {
    Job {
        name: name.to_owned(),
        annotations: annotations(&[
            (ARGOCD_SYNC_WAVE, "3"),
            (BLOCK_WAVE, &wave.to_string()),
            (WAVE_COMPLETE, "3"),
            (COMPLETION_TIME, "2026-01-24T22:30:00Z"),
        ]),
        phase: JobPhase::Succeeded,
    }
}

fn running_blocker(name: &str, wave: i64) -> Job {
    Job {
        name: name.to_owned(),
        annotations: annotations(&[(ARGOCD_SYNC_WAVE, "3"), (BLOCK_WAVE, &wave.to_string())]),
        phase: JobPhase::Running,
    }
}

fn phase() -> impl Strategy<Value = JobPhase> {
    prop_oneof![
        Just(JobPhase::Running),
        Just(JobPhase::Succeeded),
        Just(JobPhase::Failed),
    ]
}

/// Jobs around gate 4: blocking 4 or another wave or nothing, valid or broken waves,
/// any record of completion.
fn job() -> impl Strategy<Value = Job> {
    let block = proptest::option::of(prop_oneof![
        4 => Just("4".to_owned()),
        1 => Just("+04".to_owned()),
        2 => Just("5".to_owned()),
        1 => Just("four".to_owned()),
    ]);
    let sync = proptest::option::of(prop_oneof![
        4 => Just("3".to_owned()),
        1 => Just("2".to_owned()),
        1 => Just("3x".to_owned()),
    ]);
    let complete = proptest::option::of(prop_oneof![
        Just("3".to_owned()),
        Just("2".to_owned()),
        Just("03".to_owned()),
        Just("?".to_owned()),
    ]);
    let failed = proptest::option::of(Just("3".to_owned()));
    ("[a-f]{1,2}", block, sync, complete, failed, phase()).prop_map(
        |(name, block, sync, complete, failed, phase)| {
            let mut map = BTreeMap::new();
            for (key, value) in [
                (BLOCK_WAVE, block),
                (ARGOCD_SYNC_WAVE, sync),
                (WAVE_COMPLETE, complete),
                (WAVE_FAILED, failed),
            ] {
                if let Some(value) = value {
                    map.insert(key.to_owned(), value);
                }
            }
            Job {
                name,
                annotations: map,
                phase,
            }
        },
    )
}

fn jobs() -> impl Strategy<Value = Vec<Job>> {
    proptest::collection::vec(job(), 0..12)
}

fn blocks_four(job: &Job) -> bool {
    matches!(block_wave(&job.annotations), Ok(Some(w)) if w == Wave::new(4))
}

fn is_sorted<T: Ord>(items: &[T]) -> bool {
    items.windows(2).all(|w| w[0] <= w[1])
}

proptest! {
    #[test]
    fn gate_is_independent_of_order(
        (jobs, shuffled) in jobs().prop_flat_map(|jobs| (Just(jobs.clone()), Just(jobs).prop_shuffle()))
    ) {
        prop_assert_eq!(decide(4, &jobs), decide(4, &shuffled));
    }

    #[test]
    fn adding_a_completed_blocker_keeps_an_open_gate_open(mut jobs in jobs(), name in "[a-z]{1,3}") {
        if decide(4, &jobs).is_open() {
            jobs.push(completed_blocker(&name, 4));
            let after = decide(4, &jobs);
            let GateDecision::Open { satisfied, .. } = after else {
                return Err(TestCaseError::fail(format!("gate closed: {after}")));
            };
            prop_assert!(satisfied.contains(&name));
        }
    }

    #[test]
    fn adding_a_succeeded_blocker_never_fails_an_unfailed_gate(mut jobs in jobs(), name in "[a-z]{1,3}") {
        let before = decide(4, &jobs);
        jobs.push(completed_blocker(&name, 4));
        if !matches!(before, GateDecision::Failed { .. }) {
            let after = decide(4, &jobs);
            let failed = matches!(after, GateDecision::Failed { .. });
            prop_assert!(!failed, "{}", after);
        }
    }

    #[test]
    fn adding_a_failed_blocker_always_fails_the_gate(
        mut jobs in jobs(),
        name in "[a-z]{1,3}",
        by_phase in any::<bool>(),
    ) {
        let mut failed = running_blocker(&name, 4);
        if by_phase {
            failed.phase = JobPhase::Failed;
        } else {
            failed.annotations.insert(WAVE_FAILED.to_owned(), "3".to_owned());
        }
        jobs.push(failed);
        let decision = decide(4, &jobs);
        let GateDecision::Failed { failed, .. } = decision else {
            return Err(TestCaseError::fail(format!("not failed: {decision}")));
        };
        prop_assert!(failed.iter().any(|f| f.job == name && f.reason == FailureReason::RunFailed));
    }

    #[test]
    fn jobs_blocking_other_waves_do_not_matter(jobs in jobs(), other in jobs()) {
        let others: Vec<Job> = other
            .into_iter()
            .filter(|j| matches!(block_wave(&j.annotations), Ok(None)) || matches!(block_wave(&j.annotations), Ok(Some(w)) if w != Wave::new(4)))
            .collect();
        let mut all = jobs.clone();
        all.extend(others);
        prop_assert_eq!(decide(4, &jobs), decide(4, &all));
    }

    #[test]
    fn open_means_every_blocker_completed_its_wave(jobs in jobs()) {
        if let GateDecision::Open { satisfied, .. } = decide(4, &jobs) {
            prop_assert!(is_sorted(&satisfied));
            prop_assert!(jobs.iter().all(|j| block_wave(&j.annotations).is_ok()));
            let blockers: Vec<&Job> = jobs.iter().filter(|j| blocks_four(j)).collect();
            prop_assert_eq!(blockers.len(), satisfied.len());
            for job in blockers {
                let own = sync_wave(&job.annotations).unwrap().unwrap();
                let done: Wave = job.annotations[WAVE_COMPLETE].parse().unwrap();
                prop_assert_eq!(own, done);
                prop_assert_eq!(job.phase, JobPhase::Succeeded);
                prop_assert!(!job.annotations.contains_key(WAVE_FAILED));
            }
        }
    }

    #[test]
    fn waiting_and_failed_name_real_blockers(jobs in jobs()) {
        match decide(4, &jobs) {
            GateDecision::Open { .. } => {}
            GateDecision::Waiting { on, .. } => {
                prop_assert!(is_sorted(&on));
                for name in &on {
                    let waiting = jobs.iter().any(|j| &j.name == name && blocks_four(j)
                        && j.phase != JobPhase::Failed && !j.annotations.contains_key(WAVE_FAILED));
                    prop_assert!(waiting, "{} is not a live blocker", name);
                }
            }
            GateDecision::Failed { failed, .. } => {
                prop_assert!(!failed.is_empty() && is_sorted(&failed));
                for failure in &failed {
                    let culprit = jobs.iter().any(|j| j.name == failure.job && match &failure.reason {
                        FailureReason::RunFailed => blocks_four(j)
                            && (j.phase == JobPhase::Failed || j.annotations.contains_key(WAVE_FAILED)),
                        FailureReason::NoSyncWave => blocks_four(j) && !j.annotations.contains_key(ARGOCD_SYNC_WAVE),
                        FailureReason::Unreadable(e) => j.annotations.get(e.annotation()).is_some_and(|v| v.parse::<Wave>().is_err()),
                    });
                    prop_assert!(culprit, "{} does not explain the failure", failure);
                }
            }
        }
    }
}

#[test]
fn stale_or_foreign_wave_complete_keeps_waiting() {
    let mut job = completed_blocker("train", 4);
    job.annotations
        .insert(WAVE_COMPLETE.to_owned(), "2".to_owned());
    assert!(matches!(
        decide(4, &[job.clone()]),
        GateDecision::Waiting { .. }
    ));
    job.annotations
        .insert(WAVE_COMPLETE.to_owned(), "03".to_owned());
    assert!(decide(4, &[job.clone()]).is_open(), "compared as numbers");
    job.phase = JobPhase::Running;
    assert!(matches!(decide(4, &[job]), GateDecision::Waiting { .. }));
}

#[test]
fn gate_messages() {
    let mut messages = vec![
        decide(4, &[]).to_string(),
        decide(4, &[completed_blocker("train", 4)]).to_string(),
        decide(
            4,
            &[completed_blocker("train", 4), completed_blocker("eval", 4)],
        )
        .to_string(),
        decide(
            4,
            &[running_blocker("train", 4), completed_blocker("eval", 4)],
        )
        .to_string(),
        decide(4, &[running_blocker("b", 4), running_blocker("a", 4)]).to_string(),
    ];
    let many: Vec<Job> = (0..12)
        .map(|i| running_blocker(&format!("job-{i:02}"), 4))
        .collect();
    messages.push(decide(4, &many).to_string());

    let mut failed_run = running_blocker("train", 4);
    failed_run.phase = JobPhase::Failed;
    let mut no_sync = running_blocker("no-sync", 4);
    no_sync.annotations.remove(ARGOCD_SYNC_WAVE);
    let mut bad_sync = running_blocker("bad-sync", 4);
    bad_sync
        .annotations
        .insert(ARGOCD_SYNC_WAVE.to_owned(), "three".to_owned());
    let mut bad_block = running_blocker("bad-block", 4);
    bad_block
        .annotations
        .insert(BLOCK_WAVE.to_owned(), "4 ".to_owned());
    messages.push(decide(4, &[failed_run.clone(), running_blocker("eval", 4)]).to_string());
    messages.push(decide(4, &[failed_run, no_sync, bad_sync, bad_block]).to_string());
    insta::assert_snapshot!(messages.join("\n"));
}
