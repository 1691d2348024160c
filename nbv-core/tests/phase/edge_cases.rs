//! Edge cases: events out of phase or of an earlier run, backoff, huge messages, extreme
//! times.

use super::*;

// ---------------------------------------------------------------------------------------
// Edge cases
// ---------------------------------------------------------------------------------------

#[test]
fn default_backoff_is_one_two_four_minutes() {
    let policy = RetryPolicy::default();
    let minutes: Vec<_> = (1..=3)
        .map(|n| backoff(n, &policy).as_secs() / 60)
        .collect();
    assert_eq!(minutes, [1, 2, 4]);
    assert_eq!(policy.max_retries(), 3);
}

#[test]
fn out_of_phase_events_are_ignored_without_change() {
    let transitions = run(None, &[(0, observe(1)), (1, running(1, 0))]);
    let status = last_status(&transitions);
    let event = build_succeeded("x");
    let t = step(Some(status), &event, at(2), &RetryPolicy::default());
    assert!(!t.changed);
    assert_eq!(&t.status, status);
    assert_eq!(
        t.ignored,
        Some(Ignored::OutOfPhase {
            event: "BuildSucceeded",
            phase: Phase::ValidationRunning
        })
    );
    assert_eq!(t.next, Next::WatchPod(Attempt::new(1, 0)));
}

#[test]
fn build_events_out_of_phase_name_the_phase() {
    let build = observe_with_build(1);
    let built = build_succeeded("img");
    let transitions = run(None, &[(0, build), (1, built), (2, running(1, 0))]);
    let t = step(
        Some(last_status(&transitions)),
        &PhaseEvent::BuildStarted {
            generation: 1,
            build_name: "late".to_owned(),
        },
        at(3),
        &RetryPolicy::default(),
    );
    assert_eq!(
        t.ignored,
        Some(Ignored::OutOfPhase {
            event: "BuildStarted",
            phase: Phase::ValidationRunning
        })
    );
}

#[test]
fn pods_wait_for_the_build() {
    let build = observe_with_build(1);
    let transitions = run(None, &[(0, build), (1, running(1, 0))]);
    assert_eq!(transitions[0].next, Next::StartBuild { generation: 1 });
    assert_eq!(transitions[1].ignored, Some(Ignored::BuildNotComplete));
}

#[test]
fn build_failure_fails_the_run_at_once() {
    let build = observe_with_build(1);
    let failed_build = PhaseEvent::BuildFailed {
        generation: 1,
        reason: Reason::BUILD_FAILED,
        message: "requirements.txt: no matching distribution for torch==9".to_owned(),
    };
    let transitions = run(None, &[(0, build), (2, failed_build)]);
    let status = last_status(&transitions);
    assert_eq!(status.phase, Some(Phase::Failed));
    assert_eq!(status.retry_count, Some(0));
    assert_eq!(
        status.build_status.as_ref().and_then(|b| b.phase),
        Some(BuildPhase::Failed)
    );
    let ready = condition(status, &ConditionType::READY).expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "BuildFailed")
    );
}

#[test]
fn events_of_an_earlier_run_are_ignored() {
    let transitions = run(
        None,
        &[
            (0, observe(1)),
            (1, running(1, 0)),
            (2, observe(2)),
            (3, succeeded(1, 0)),
        ],
    );
    assert_eq!(
        transitions[3].ignored,
        Some(Ignored::OtherRun {
            event: 1,
            current: 2
        })
    );
    assert_eq!(last_status(&transitions).phase, Some(Phase::Initializing));
}

#[test]
fn nothing_applies_before_the_first_observe() {
    let t = step(None, &running(1, 0), at(0), &RetryPolicy::default());
    assert_eq!(t.ignored, Some(Ignored::NoRun));
    assert!(!t.changed);
    assert_eq!(t.next, Next::Observe);
}

#[test]
fn a_retry_waits_for_its_backoff_and_then_starts_the_next_attempt() {
    let transitions = run(
        None,
        &[
            (0, observe(1)),
            (1, running(1, 0)),
            (2, failed(1, 0, FailureKind::Transient)),
            (2, running(1, 1)),
        ],
    );
    let scheduled = &transitions[2];
    assert_eq!(scheduled.next, Next::WaitUntil(at(3)));
    let retrying = condition(&scheduled.status, &ConditionType::RETRYING).expect("Retrying");
    assert_eq!(
        (retrying.status.as_str(), retrying.reason.as_str()),
        ("True", "RetryScheduled")
    );
    // A pod of the next attempt that runs early is accepted: it is the current attempt.
    assert_eq!(transitions[3].status.phase, Some(Phase::ValidationRunning));

    let policy = RetryPolicy::default();
    let waiting = &scheduled.status;
    let early = step(
        Some(waiting),
        &observe(1),
        at(2) + TimeDelta::seconds(59),
        &policy,
    );
    assert!(!early.changed);
    assert_eq!(early.requeue_after, Some(Duration::from_secs(1)));
    let due = step(Some(waiting), &observe(1), at(3), &policy);
    assert_eq!(due.next, Next::StartPod(Attempt::new(1, 1)));
    assert_eq!(due.status.validation_pod_name, None);
    let started = condition(&due.status, &ConditionType::RETRYING).expect("Retrying");
    assert_eq!(started.reason, "RetryStarted");
    assert_eq!(
        started.last_transition_time, retrying.last_transition_time,
        "still True, so the transition time stays"
    );
}

#[test]
fn ready_keeps_its_transition_time_while_the_run_progresses() {
    let transitions = run(None, &[(0, observe(1)), (5, running(1, 0))]);
    let before = condition(&transitions[0].status, &ConditionType::READY).expect("Ready");
    let after = condition(&transitions[1].status, &ConditionType::READY).expect("Ready");
    assert_eq!(before.status, "Unknown");
    assert_eq!(after.status, "Unknown");
    assert_eq!(before.last_transition_time, after.last_transition_time);
    assert_ne!(before.reason, after.reason);
}

#[test]
fn without_retries_a_transient_failure_fails_the_run() {
    let policy = RetryPolicy::new(0, Duration::from_secs(60), 2, Duration::from_secs(60))
        .expect("valid policy");
    let t = step(None, &observe(1), at(0), &policy);
    let t = step(
        Some(&t.status),
        &failed(1, 0, FailureKind::Transient),
        at(1),
        &policy,
    );
    assert_eq!(t.status.phase, Some(Phase::Failed));
    assert_eq!(
        t.status.message.as_deref(),
        Some("Validation failed: Evicted: The node was low on memory")
    );
    assert!(condition(&t.status, &ConditionType::RETRYING).is_none());
}

#[test]
fn a_count_recorded_under_a_larger_policy_counts_as_exhausted() {
    let status = Status {
        phase: Some(Phase::ValidationRunning),
        retry_count: Some(7),
        observed_generation: Some(1),
        start_time: Some(at(0)),
        last_retry_time: Some(at(1)),
        ..Status::default()
    };
    let t = step(
        Some(&status),
        &failed(1, 3, FailureKind::Transient),
        at(2),
        &RetryPolicy::default(),
    );
    assert_eq!(t.status.phase, Some(Phase::Failed));
    assert_eq!(t.status.retry_count, Some(3));
}

#[test]
fn a_clock_behind_the_recorded_start_keeps_times_ordered() {
    let transitions = run(None, &[(10, observe(1))]);
    let policy = RetryPolicy::default();
    let t = step(
        Some(last_status(&transitions)),
        &failed(1, 0, FailureKind::Transient),
        at(5),
        &policy,
    );
    assert_eq!(t.status.last_retry_time, Some(at(10)));
    assert_eq!(t.requeue_after, Some(Duration::from_secs(6 * 60)));
}

#[test]
fn huge_messages_are_bounded_everywhere() {
    let transitions = run(None, &[(0, observe(1))]);
    let failure = Failure::permanent(
        reason("CellFailed"),
        "x".repeat(10 * MAX_CONDITION_MESSAGE_BYTES),
    );
    let event = PhaseEvent::PodFailed {
        pod: pod(1, 0),
        failure,
        results: vec![],
        comparison: None,
        warnings: vec![],
    };
    let t = step(
        Some(last_status(&transitions)),
        &event,
        at(1),
        &RetryPolicy::default(),
    );
    let message = t.status.message.as_deref().unwrap_or_default();
    assert!(message.len() <= MAX_CONDITION_MESSAGE_BYTES && message.ends_with(TRUNCATION_MARKER));
    let ready = condition(&t.status, &ConditionType::READY).expect("Ready");
    assert!(ready.message.len() <= MAX_CONDITION_MESSAGE_BYTES);
}

#[test]
fn extreme_times_and_backoffs_neither_panic_nor_break_the_rules() {
    let huge = RetryPolicy::new(3, Duration::MAX, 2, Duration::MAX).expect("valid policy");
    let events = [
        observe(1),
        running(1, 0),
        failed(1, 0, FailureKind::Transient),
        observe(1),
        running(1, 1),
        succeeded(1, 1),
    ];
    for policy in [RetryPolicy::default(), huge] {
        for now in [DateTime::<Utc>::MIN_UTC, at(0), DateTime::<Utc>::MAX_UTC] {
            let mut status = None;
            for event in &events {
                let t = step(status.as_ref(), event, now, &policy);
                if let Next::WaitUntil(due) = t.next {
                    assert!(due > now);
                }
                let s = t.status;
                assert!(s.start_time <= s.last_retry_time.or(s.start_time));
                status = Some(s);
            }
        }
    }
}

#[test]
fn observe_of_a_job_reads_generation_and_build() {
    let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "generation": 7},
        "spec": {
            "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
            "podConfig": {"containerImage": "img", "buildConfig": {"enabled": false}}
        }
    }))
    .expect("job");
    assert_eq!(PhaseEvent::observe(&job), observe(7));
}

#[test]
fn observe_of_a_job_reads_its_request_to_run_again() {
    let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "generation": 7,
                     "annotations": {"mlops.dev/rerun": "4"}},
        "spec": {
            "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
            "podConfig": {"containerImage": "img"}
        }
    }))
    .expect("job");
    let PhaseEvent::Observe { rerun, .. } = PhaseEvent::observe(&job) else {
        panic!("an Observe event")
    };
    assert_eq!(rerun, RerunRequest::new("4"));
}

#[test]
fn a_request_waits_for_the_run_in_progress_and_a_new_spec_consumes_it() {
    let asked = |generation, request: &str| PhaseEvent::Observe {
        generation,
        build_requested: false,
        rerun: RerunRequest::new(request),
    };
    // Asked while the first run validates: nothing happens until it ends.
    let transitions = run(
        None,
        &[(0, observe(1)), (1, running(1, 0)), (2, asked(1, "a"))],
    );
    assert!(!transitions[2].run_started && !transitions[2].changed);
    let after_end = run(
        Some(last_status(&transitions).clone()),
        &[(5, succeeded(1, 0)), (6, asked(1, "a"))],
    );
    assert!(after_end[1].run_started, "answered once the run ended");

    // A spec change starts a run that answers the request pending at that time: no
    // second run follows for it.
    let transitions = run(
        None,
        &[
            (0, observe(1)),
            (1, running(1, 0)),
            (5, succeeded(1, 0)),
            (6, asked(2, "b")),
        ],
    );
    let status = last_status(&transitions);
    assert_eq!(
        status.rerun.as_ref().map(|r| (r.request.as_str(), r.count)),
        Some(("b", 0))
    );
    let later = run(
        Some(status.clone()),
        &[(7, running(2, 0)), (8, succeeded(2, 0)), (9, asked(2, "b"))],
    );
    assert!(!later[2].run_started);
}
