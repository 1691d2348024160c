//! Snapshots of canonical sequences: success, retries, builds, new runs, adoption,
//! messages.

use super::*;

// ---------------------------------------------------------------------------------------
// Snapshots of canonical sequences
// ---------------------------------------------------------------------------------------

#[test]
fn success() {
    let events = [(0, observe(1)), (1, running(1, 0)), (7, succeeded(1, 0))];
    let transitions = run(None, &events);
    assert_eq!(last_status(&transitions).phase, Some(Phase::Succeeded));
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn transient_then_success() {
    let events = [
        (0, observe(1)),
        (1, running(1, 0)),
        (3, failed(1, 0, FailureKind::Transient)),
        (3, failed(1, 0, FailureKind::Transient)), // the failed pod, observed again
        (3, observe(1)),                           // before the backoff elapsed
        (4, observe(1)),                           // at lastRetryTime + 1m
        (5, running(1, 1)),
        (9, succeeded(1, 1)),
    ];
    let transitions = run(None, &events);
    let status = last_status(&transitions);
    assert_eq!(status.phase, Some(Phase::Succeeded));
    assert_eq!(status.retry_count, Some(1));
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn retries_exhausted() {
    // Attempt r fails at minute 10r + 2 and the retry is due 1, 2, 4 minutes later.
    let mut events = vec![(0, observe(1))];
    for (retry, due_after) in [(0, 1), (1, 2), (2, 4), (3, 0)] {
        let start = 10 * i64::from(retry);
        events.push((start + 1, running(1, retry)));
        events.push((start + 2, failed(1, retry, FailureKind::Transient)));
        if due_after > 0 {
            events.push((start + 2 + due_after, observe(1)));
        }
    }
    let transitions = run(None, &events);
    let requeues: Vec<_> = transitions.iter().filter_map(|t| t.requeue_after).collect();
    assert_eq!(
        requeues,
        [60, 120, 240].map(Duration::from_secs),
        "one requeue per scheduled retry, after 1m, 2m and 4m"
    );
    let status = last_status(&transitions);
    assert_eq!(status.phase, Some(Phase::Failed));
    assert_eq!(status.retry_count, Some(3));
    assert!(
        status
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("after 3 retries")
    );
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn permanent_failure() {
    let events = [
        (0, observe(1)),
        (1, running(1, 0)),
        (2, failed(1, 0, FailureKind::Permanent)),
        (3, observe(1)),
    ];
    let transitions = run(None, &events);
    assert_eq!(last_status(&transitions).retry_count, Some(0));
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn build_path() {
    let events = [
        (0, observe_with_build(1)),
        (
            1,
            PhaseEvent::BuildStarted {
                generation: 1,
                build_name: "train-build-1".to_owned(),
            },
        ),
        (6, build_succeeded("registry.example.com/ml/train:g1")),
        (7, running(1, 0)),
        (8, build_succeeded("registry.example.com/ml/train:g1")),
        (12, succeeded(1, 0)),
    ];
    let transitions = run(None, &events);
    let entered: Vec<_> = transitions.iter().filter_map(|t| t.entered).collect();
    assert_eq!(
        entered,
        [
            Phase::Initializing,
            Phase::Building,
            Phase::BuildComplete,
            Phase::ValidationRunning,
            Phase::Succeeded
        ]
    );
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn new_run_after_success() {
    let mut events = vec![(0, observe(1)), (1, running(1, 0)), (7, succeeded(1, 0))];
    let first = run(None, &events);
    let mut status = last_status(&first).clone();
    // Another part of nbv recorded its own condition and effects for the first run.
    let plan_type = ConditionType::new("TriggersFailed").expect("valid type");
    set_condition(
        status.conditions.get_or_insert_with(Vec::new),
        &plan_type,
        ConditionStatus::True,
        &reason("TriggerFailed"),
        "restart Deployment/serving failed",
        at(8),
        Some(1),
    );
    status.effects = Some(EffectLedger::for_run("g1/2026-01-24T22:07:00Z"));

    events = vec![(30, observe(2))];
    let second = run(Some(status), &events);
    let t = &second[0];
    assert!(t.run_started);
    assert!(
        condition(&t.status, &plan_type).is_some(),
        "conditions of other types stay"
    );
    assert_eq!(
        t.status.effects, None,
        "the effect ledger belongs to the run"
    );
    insta::assert_json_snapshot!(trace(&events, &second));
}

#[test]
fn run_again_on_request_once() {
    let asked = |request: &str| PhaseEvent::Observe {
        generation: 1,
        build_requested: false,
        rerun: RerunRequest::new(request),
    };
    let rerun_pod = |retry| {
        let attempt = Attempt {
            generation: 1,
            rerun: 1,
            retry,
        };
        PodRef::new(format!("train-{attempt}"), attempt)
    };
    let events = vec![
        (0, observe(1)),
        (1, running(1, 0)),
        (7, succeeded(1, 0)),
        // Asked to run again: one new run of the same generation.
        (20, asked("1")),
        // The first run's Pod, reported again, belongs to the ended run.
        (20, succeeded(1, 0)),
        (21, PhaseEvent::PodRunning { pod: rerun_pod(0) }),
        (
            25,
            PhaseEvent::PodSucceeded {
                pod: rerun_pod(0),
                results: vec![],
                message: None,
                comparison: None,
                warnings: vec![],
            },
        ),
        // The same request, read again by any replica, is answered already.
        (30, asked("1")),
    ];
    let transitions = run(None, &events);
    assert!(transitions[3].run_started);
    assert_eq!(transitions[3].next, Next::StartPod(rerun_pod(0).attempt));
    assert!(transitions[4].ignored.is_some());
    assert!(!transitions[7].changed && !transitions[7].run_started);
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn legacy_running_status_is_adopted() {
    // As the upstream operator writes it: a legacy phase and no observedGeneration.
    let upstream: Status = serde_json::from_value(json!({
        "phase": "Running",
        "startTime": "2026-01-24T21:50:00Z",
        "retryCount": 1,
        "lastRetryTime": "2026-01-24T21:55:00Z",
        "validationPodName": "train-validation-2",
        "message": "Validation pod running"
    }))
    .expect("upstream status");
    // The adopted run's pod carries no attempt label of nbv's making: the shell watches
    // the pod the status names and reports it as the current attempt.
    let adopted_pod = PodRef::new("train-validation-2", Attempt::new(4, 1));
    let done = PhaseEvent::PodSucceeded {
        pod: adopted_pod,
        results: vec![],
        message: None,
        comparison: None,
        warnings: vec![],
    };
    let events = [(0, observe(4)), (3, done)];
    let transitions = run(Some(upstream), &events);
    assert_eq!(transitions[0].status.phase, Some(Phase::ValidationRunning));
    assert_eq!(
        transitions[0].entered, None,
        "migrating a legacy phase enters nothing"
    );
    assert!(
        !transitions[0].run_started,
        "a run in progress is adopted, not restarted"
    );
    assert_eq!(last_status(&transitions).phase, Some(Phase::Succeeded));
    insta::assert_json_snapshot!(trace(&events, &transitions));
}

#[test]
fn unknown_phase_message() {
    let error = parse_phase("Done").expect_err("Done is not a phase");
    insta::assert_snapshot!(error.to_string());
}

#[test]
fn messages_of_ignored_events_and_errors() {
    let attempt = |retry| Attempt::new(2, retry);
    let ignored = [
        Ignored::NoRun,
        Ignored::NotObserved,
        Ignored::RunEnded {
            phase: Phase::Failed,
        },
        Ignored::OtherRun {
            event: 1,
            current: 2,
        },
        Ignored::OtherAttempt {
            event: attempt(0),
            current: attempt(1),
        },
        Ignored::OtherPod {
            event: "train-a".to_owned(),
            current: "train-b".to_owned(),
        },
        Ignored::OtherBuild {
            event: "build-a".to_owned(),
            current: "build-b".to_owned(),
        },
        Ignored::BuildNotRequested,
        Ignored::BuildNotComplete,
        Ignored::OutOfPhase {
            event: "BuildSucceeded",
            phase: Phase::ValidationRunning,
        },
    ];
    let s = Duration::from_secs;
    let policies = [
        RetryPolicy::new(u32::MAX, s(60), 2, s(60)),
        RetryPolicy::new(3, Duration::ZERO, 2, s(60)),
        RetryPolicy::new(3, s(60), 0, s(60)),
        RetryPolicy::new(3, s(60), 2, s(30)),
    ];
    let mut lines: Vec<String> = ignored.iter().map(ToString::to_string).collect();
    lines.extend(
        policies
            .iter()
            .filter_map(|p| p.err())
            .map(|e| e.to_string()),
    );
    lines.push(Reason::new("image pull").expect_err("space").to_string());
    lines.push(
        Reason::new("Failed:")
            .expect_err("trailing colon")
            .to_string(),
    );
    lines.push(
        ConditionType::new("Example.com/Ready")
            .expect_err("uppercase prefix")
            .to_string(),
    );
    lines.push("3-1".parse::<Attempt>().expect_err("no prefix").to_string());
    insta::assert_snapshot!(lines.join("\n"));
}
