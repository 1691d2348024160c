//! Properties under arbitrary statuses, events and policies: the machine's rules always
//! hold.

use super::*;

// ---------------------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------------------

const GENERATIONS: std::ops::RangeInclusive<i64> = 1..=3;

fn arb_time() -> impl Strategy<Value = DateTime<Utc>> {
    // Minutes around the base time, sometimes with a fraction of a second.
    (-30i64..600, prop_oneof![Just(0u32), 0u32..1_000_000_000])
        .prop_map(|(minutes, nanos)| at(minutes) + TimeDelta::nanoseconds(i64::from(nanos)))
}

fn arb_reason() -> impl Strategy<Value = Reason> {
    prop::sample::select(vec![
        "Initializing",
        "ValidationRunning",
        "RetryScheduled",
        "Evicted",
        "ValidationSucceeded",
        "BuildFailed",
    ])
    .prop_map(reason)
}

fn arb_condition() -> impl Strategy<Value = Condition> {
    (
        prop::sample::select(vec!["Ready", "Retrying", "TriggersFailed"]),
        prop::sample::select(vec!["True", "False", "Unknown"]),
        arb_reason(),
        prop::sample::select(vec!["", "ok", "pod evicted"]),
        arb_time(),
        prop::option::of(GENERATIONS),
    )
        .prop_map(
            |(type_, status, reason, message, time, generation)| Condition {
                last_transition_time: Time(
                    k8s_openapi::jiff::Timestamp::from_second(time.timestamp()).expect("in range"),
                ),
                message: message.to_owned(),
                observed_generation: generation,
                reason: reason.as_str().to_owned(),
                status: status.to_owned(),
                type_: type_.to_owned(),
            },
        )
}

fn arb_build_status() -> impl Strategy<Value = BuildStatus> {
    (
        prop::option::of(prop::sample::select(vec![
            BuildPhase::Pending,
            BuildPhase::Running,
            BuildPhase::Complete,
            BuildPhase::Failed,
        ])),
        prop::option::of(Just("build-a".to_owned())),
        prop::option::of(Just("img:a".to_owned())),
    )
        .prop_map(|(phase, build_name, image_reference)| BuildStatus {
            phase,
            build_name,
            image_reference,
            ..BuildStatus::default()
        })
}

/// Any status the API server could hold: every phase (legacy ones too), counts out of
/// range, times in any order, duplicated or disagreeing conditions.
fn arb_status() -> impl Strategy<Value = Status> {
    (
        (
            prop::option::of(prop::sample::select(Phase::ALL.to_vec())),
            prop::option::of(-2i32..7),
            prop::option::of(arb_time()),
            prop::option::of(arb_time()),
            prop::option::of(arb_time()),
            prop::option::of(GENERATIONS),
        ),
        (
            prop::option::of(prop::collection::vec(arb_condition(), 0..4)),
            prop::option::of(prop::sample::select(vec!["", "Validation pod running"])),
            prop::option::of(prop::sample::select(vec!["p0", "train-g1-r0"])),
            prop::option::of(arb_build_status()),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (phase, retry_count, start_time, completion_time, last_retry_time, generation),
                (conditions, message, pod_name, build_status, effects, results),
            )| Status {
                phase,
                conditions,
                start_time,
                completion_time,
                message: message.map(str::to_owned),
                retry_count,
                last_retry_time,
                validation_pod_name: pod_name.map(str::to_owned),
                results: results.then(|| vec![CellResult::default()]),
                build_status,
                observed_generation: generation,
                effects: effects.then(|| EffectLedger::for_run("g1/run")),
                ..Status::default()
            },
        )
}

fn arb_kind() -> impl Strategy<Value = FailureKind> {
    prop_oneof![Just(FailureKind::Transient), Just(FailureKind::Permanent)]
}

fn arb_pod() -> impl Strategy<Value = PodRef> {
    (GENERATIONS, 0u32..5, prop::sample::select(vec!["p0", "p1"]))
        .prop_map(|(generation, retry, name)| PodRef::new(name, Attempt::new(generation, retry)))
}

/// No request to run again, or one of two.
fn arb_rerun() -> impl Strategy<Value = Option<RerunRequest>> {
    proptest::option::of(
        prop::sample::select(vec!["1", "2"]).prop_map(|v| RerunRequest::new(v).expect("a request")),
    )
}

/// Any event, most of them stale or out of phase for a given status.
fn arb_event() -> impl Strategy<Value = PhaseEvent> {
    prop_oneof![
        (GENERATIONS, any::<bool>(), arb_rerun()).prop_map(
            |(generation, build_requested, rerun)| {
                PhaseEvent::Observe {
                    generation,
                    build_requested,
                    rerun,
                }
            }
        ),
        (
            GENERATIONS,
            prop::sample::select(vec!["build-a", "build-b"])
        )
            .prop_map(|(generation, name)| PhaseEvent::BuildStarted {
                generation,
                build_name: name.to_owned()
            }),
        (GENERATIONS, prop::sample::select(vec!["img:a", "img:b"])).prop_map(
            |(generation, image)| PhaseEvent::BuildSucceeded {
                generation,
                image: image.to_owned()
            }
        ),
        GENERATIONS.prop_map(|generation| PhaseEvent::BuildFailed {
            generation,
            reason: Reason::BUILD_FAILED,
            message: "no space left".to_owned()
        }),
        arb_pod().prop_map(|pod| PhaseEvent::PodRunning { pod }),
        arb_pod().prop_map(|pod| PhaseEvent::PodSucceeded {
            pod,
            results: vec![],
            message: None,
            comparison: None,
            warnings: vec![],
        }),
        (arb_pod(), arb_kind()).prop_map(|(pod, kind)| PhaseEvent::PodFailed {
            pod,
            failure: Failure {
                kind,
                reason: reason("Evicted"),
                message: "boom".to_owned()
            },
            results: vec![CellResult::default()],
            comparison: None,
            warnings: vec![],
        }),
    ]
}

fn arb_policy() -> impl Strategy<Value = RetryPolicy> {
    (0u32..5, 1u64..300, 1u32..4, 0u64..3600).prop_map(|(max, base, factor, extra)| {
        RetryPolicy::new(
            max,
            Duration::from_secs(base),
            factor,
            Duration::from_secs(base + extra),
        )
        .expect("valid by construction")
    })
}

/// What a pod or build does when the driver delivers the event [`Next`] asks for.
#[derive(Clone, Copy, Debug)]
enum Outcome {
    Progress,
    Succeed,
    Transient,
    Permanent,
}

fn arb_outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Progress),
        Just(Outcome::Succeed),
        Just(Outcome::Transient),
        Just(Outcome::Permanent),
    ]
}

/// How a pod or build ends.
fn arb_end() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Succeed),
        Just(Outcome::Transient),
        Just(Outcome::Permanent)
    ]
}

/// One move of a simulated shell: deliver the event the status asks for, deliver an
/// arbitrary (usually stale) event, or let time pass.
#[derive(Clone, Debug)]
enum Move {
    Follow(Outcome),
    Arbitrary(Box<PhaseEvent>),
    Tick(i64),
}

fn arb_moves() -> impl Strategy<Value = Vec<Move>> {
    prop::collection::vec(
        prop_oneof![
            4 => arb_outcome().prop_map(Move::Follow),
            2 => arb_event().prop_map(|e| Move::Arbitrary(Box::new(e))),
            1 => (0i64..600).prop_map(Move::Tick),
        ],
        0..40,
    )
}

/// The event a cooperative shell delivers for `next` (and the time it does so).
fn follow(
    next: Next,
    status: &Status,
    outcome: Outcome,
    now: DateTime<Utc>,
) -> (PhaseEvent, DateTime<Utc>) {
    let generation = status.observed_generation.unwrap_or(1);
    let pod_event = |attempt: Attempt, watched: bool| {
        // A shell watches the pod the status names (an adopted run's pod has no name
        // of the shell's making) and names the pods it starts after the attempt.
        let name = match &status.validation_pod_name {
            Some(name) if watched => name.clone(),
            _ => format!("pod-{attempt}"),
        };
        let pod = PodRef::new(name, attempt);
        match outcome {
            Outcome::Progress => PhaseEvent::PodRunning { pod },
            Outcome::Succeed => PhaseEvent::PodSucceeded {
                pod,
                results: vec![],
                message: None,
                comparison: None,
                warnings: vec![],
            },
            Outcome::Transient | Outcome::Permanent => PhaseEvent::PodFailed {
                pod,
                failure: Failure {
                    kind: if matches!(outcome, Outcome::Transient) {
                        FailureKind::Transient
                    } else {
                        FailureKind::Permanent
                    },
                    reason: reason("PodFailed"),
                    message: "exit code 1".to_owned(),
                },
                results: vec![],
                comparison: None,
                warnings: vec![],
            },
        }
    };
    let build_event = |generation| match outcome {
        Outcome::Progress => PhaseEvent::BuildStarted {
            generation,
            build_name: "build-a".to_owned(),
        },
        Outcome::Succeed => PhaseEvent::BuildSucceeded {
            generation,
            image: "img:a".to_owned(),
        },
        Outcome::Transient | Outcome::Permanent => PhaseEvent::BuildFailed {
            generation,
            reason: Reason::BUILD_FAILED,
            message: "no space left".to_owned(),
        },
    };
    match next {
        Next::Observe => (observe(generation), now),
        Next::StartBuild { generation } | Next::WatchBuild { generation } => {
            (build_event(generation), now)
        }
        Next::StartPod(attempt) => (pod_event(attempt, false), now),
        Next::WatchPod(attempt) => (pod_event(attempt, true), now),
        Next::WaitUntil(due) => (observe(generation), due.max(now)),
        Next::Done => (
            PhaseEvent::Observe {
                generation: generation + 1,
                build_requested: matches!(outcome, Outcome::Progress),
                rerun: None,
            },
            now,
        ),
    }
}

/// One step of a simulation, with what it was given.
struct Record {
    before: Option<Status>,
    event: PhaseEvent,
    now: DateTime<Utc>,
    after: Transition,
}

/// Delivers `first` (an Observe) and then `moves` from `start`, with a monotone clock.
fn simulate(
    start: Option<Status>,
    first: PhaseEvent,
    moves: &[Move],
    policy: &RetryPolicy,
    t0: DateTime<Utc>,
) -> Vec<Record> {
    let mut now = t0;
    let mut records: Vec<Record> = Vec::new();
    let mut event = first;
    let mut moves = moves.iter();
    loop {
        let before = records
            .last()
            .map_or_else(|| start.clone(), |r| Some(r.after.status.clone()));
        let after = step(before.as_ref(), &event, now, policy);
        let (status, next) = (after.status.clone(), after.next);
        records.push(Record {
            before,
            event,
            now,
            after,
        });
        event = match moves.next() {
            None => return records,
            Some(Move::Tick(seconds)) => {
                now += TimeDelta::seconds(*seconds);
                observe(status.observed_generation.unwrap_or(1))
            }
            Some(Move::Arbitrary(event)) => (**event).clone(),
            Some(Move::Follow(outcome)) => {
                let (event, at) = follow(next, &status, *outcome, now);
                now = at;
                event
            }
        };
    }
}

// ---------------------------------------------------------------------------------------
// Invariants
// ---------------------------------------------------------------------------------------

/// Everything a status written by `step` satisfies.
fn assert_consistent(s: &Status, policy: &RetryPolicy) -> Result<(), TestCaseError> {
    let phase = s
        .phase
        .ok_or_else(|| TestCaseError::fail("a run has a phase"))?;
    prop_assert!(!phase.is_legacy(), "legacy phase {phase} written");
    prop_assert!(s.observed_generation.is_some());
    prop_assert_eq!(
        s.completion_time.is_some(),
        phase.is_terminal(),
        "completionTime iff terminal"
    );
    let retries = s
        .retry_count
        .ok_or_else(|| TestCaseError::fail("retryCount is written"))?;
    prop_assert!((0..=i64::from(policy.max_retries())).contains(&i64::from(retries)));
    if retries == 0 {
        prop_assert_eq!(s.last_retry_time, None);
    }
    let start = s
        .start_time
        .ok_or_else(|| TestCaseError::fail("startTime is set"))?;
    if let Some(retry) = s.last_retry_time {
        prop_assert!(
            start <= retry,
            "startTime {start} after lastRetryTime {retry}"
        );
    }
    if let Some(done) = s.completion_time {
        prop_assert!(s.last_retry_time.unwrap_or(start) <= done);
    }
    let message = s.message.as_deref().unwrap_or_default();
    prop_assert!(!message.is_empty() && message.len() <= MAX_CONDITION_MESSAGE_BYTES);

    let conditions = s.conditions.as_deref().unwrap_or_default();
    let mut types = HashSet::new();
    for c in conditions {
        prop_assert!(types.insert(c.type_.as_str()), "two {} conditions", c.type_);
        prop_assert!(c.message.len() <= MAX_CONDITION_MESSAGE_BYTES);
        prop_assert!(c.status.parse::<ConditionStatus>().is_ok());
        prop_assert!(ConditionType::new(c.type_.clone()).is_ok());
        prop_assert!(
            Reason::new(c.reason.clone()).is_ok(),
            "reason {:?}",
            c.reason
        );
    }
    let ready = find_condition(conditions, &ConditionType::READY)
        .ok_or_else(|| TestCaseError::fail("Ready is set"))?;
    let expected = match phase {
        Phase::Succeeded => "True",
        Phase::Failed => "False",
        _ => "Unknown",
    };
    prop_assert_eq!(
        ready.status.as_str(),
        expected,
        "Ready disagrees with {}",
        phase
    );
    let verdict = match phase {
        Phase::Succeeded => "Current",
        Phase::Failed => "Failed",
        _ => "InProgress",
    };
    prop_assert_eq!(kstatus(s), verdict, "kstatus disagrees with {}", phase);
    Ok(())
}

/// kstatus's verdict on a custom resource whose `metadata.generation` is the status's
/// `observedGeneration`, by its generic rules (cli-utils `pkg/kstatus/status`):
/// `Reconciling=True` is InProgress, then `Stalled=True` Failed, anything else Current.
fn kstatus(s: &Status) -> &'static str {
    let conditions = s.conditions.as_deref().unwrap_or_default();
    let holds = |type_: &ConditionType| {
        find_condition(conditions, type_).is_some_and(|c| c.status == "True")
    };
    if holds(&ConditionType::RECONCILING) {
        "InProgress"
    } else if holds(&ConditionType::STALLED) {
        "Failed"
    } else {
        "Current"
    }
}

fn run_fields_reset(
    s: &Status,
    generation: i64,
    build_requested: bool,
    now: DateTime<Utc>,
) -> bool {
    s.phase == Some(Phase::Initializing)
        && s.start_time == Some(now)
        && s.completion_time.is_none()
        && s.retry_count == Some(0)
        && s.last_retry_time.is_none()
        && s.validation_pod_name.is_none()
        && s.results.is_none()
        && s.effects.is_none()
        && s.comparison_result.is_none()
        && s.model_validation_result.is_none()
        && s.observed_generation == Some(generation)
        && s.build_status.is_some() == build_requested
        && condition(s, &ConditionType::RETRYING).is_none()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The trajectory of a simulated shell, from any status, keeps every invariant.
    #[test]
    fn invariants_hold_along_any_trajectory(
        start in prop::option::of(arb_status()),
        generation in GENERATIONS,
        build_requested in any::<bool>(),
        moves in arb_moves(),
        policy in arb_policy(),
        t0 in arb_time(),
    ) {
        let first = PhaseEvent::Observe { generation, build_requested, rerun: None };
        let records = simulate(start.clone(), first, &moves, &policy, t0);

        // Legacy phases migrate on the first Observe.
        let adopted = &records[0].after;
        let start_phase = start.as_ref().and_then(|s| s.phase);
        if let Some(legacy) = start_phase.filter(|p| p.is_legacy())
            && !adopted.run_started
        {
            // Pending is Initializing, or Building when its build already runs.
            let allowed: &[Phase] = match legacy {
                Phase::Pending => &[Phase::Initializing, Phase::Building],
                _ => &[Phase::ValidationRunning],
            };
            let phase = adopted.status.phase.unwrap_or(legacy);
            prop_assert!(allowed.contains(&phase), "{} became {}", legacy, phase);
        }

        for (i, r) in records.iter().enumerate() {
            let t = &r.after;
            let before = r.before.clone().unwrap_or_default();

            // Deterministic, and a repeated event changes nothing more.
            let again = step(r.before.as_ref(), &r.event, r.now, &policy);
            prop_assert_eq!(&again, t);
            let twice = step(Some(&t.status), &r.event, r.now, &policy);
            prop_assert!(!twice.changed, "{} applied twice changed the status again", r.event.name());

            prop_assert_eq!(t.changed, t.status != before);
            if t.ignored.is_some() {
                prop_assert_eq!(&t.status, &before);
            }
            prop_assert_eq!(t.requeue_after.is_some(), matches!(t.next, Next::WaitUntil(_)));
            if let Next::WaitUntil(due) = t.next {
                prop_assert!(due > r.now, "waiting for a time already past");
            }

            // From the first Observe on, every status is consistent.
            assert_consistent(&t.status, &policy)?;

            let observed_gen = match &r.event {
                PhaseEvent::Observe { generation, build_requested, rerun } => Some((*generation, *build_requested, rerun.clone())),
                _ => None,
            };
            let new_generation = observed_gen.as_ref().is_some_and(|(g, _, _)| {
                before.phase.is_none() || before.observed_generation.is_some_and(|o| o != *g)
            });
            // A finished run of the same generation, asked again with a request it has
            // not answered.
            let recorded = before.rerun.as_ref().and_then(|r| RerunRequest::new(&r.request));
            let asked_again = !new_generation && observed_gen.as_ref().is_some_and(|(g, _, rerun)| {
                before.phase.is_some_and(|p| p.is_terminal())
                    && before.observed_generation.is_none_or(|o| o == *g)
                    && rerun.is_some()
                    && *rerun != recorded
            });
            prop_assert_eq!(t.run_started, new_generation || asked_again);
            if let (true, Some((g, build, rerun))) = (t.run_started, observed_gen) {
                prop_assert!(run_fields_reset(&t.status, g, build, r.now), "new run kept run fields: {:?}", t.status);
                // The new run answers the request, and counts as a rerun only when it
                // is one: its attempts are named apart from the earlier runs'.
                let record = t.status.rerun.clone().unwrap_or_default();
                prop_assert_eq!(RerunRequest::new(&record.request), rerun);
                let expected = if asked_again { before.rerun.as_ref().map_or(0, |r| r.count) + 1 } else { 0 };
                prop_assert_eq!(record.count, expected);
                continue;
            }
            if i == 0 {
                continue;
            }
            // Within a run (the previous status was written by `step`):
            let before_phase = before.phase.unwrap_or(Phase::Initializing);
            if before_phase.is_terminal() {
                prop_assert!(!t.changed, "{} left terminal phase {}", r.event.name(), before_phase);
            }
            let (b, a) = (before.retry_count.unwrap_or(0), t.status.retry_count.unwrap_or(0));
            prop_assert!(a == b || a == b + 1, "retryCount went from {b} to {a}");
            prop_assert_eq!(t.status.start_time, before.start_time, "startTime kept through the run");
            if let Some(retry) = &t.retry_scheduled {
                prop_assert_eq!(i64::from(retry.retry), i64::from(a));
                let last = t.status.last_retry_time.ok_or_else(|| TestCaseError::fail("lastRetryTime set"))?;
                prop_assert!(last >= r.now);
                prop_assert_eq!(retry.at, last + TimeDelta::from_std(backoff(retry.retry, &policy)).unwrap_or(TimeDelta::MAX));
            }
        }
    }

    /// A shell that always delivers what `next` asks for ends every run, in a number of
    /// steps bounded by the policy, whatever the pods do.
    #[test]
    fn every_run_ends_in_a_bounded_number_of_steps(
        start in prop::option::of(arb_status()),
        build_requested in any::<bool>(),
        outcomes in prop::collection::vec((arb_end(), any::<bool>()), 0..64),
        policy in arb_policy(),
        t0 in arb_time(),
    ) {
        // Per attempt: start the pod, see it run, see it end, wait for the retry.
        let bound = 4 + 4 * (policy.max_retries() as usize + 1);
        let generation = start.as_ref().and_then(|s| s.observed_generation).unwrap_or(1);
        let mut now = t0;
        let mut t = step(start.as_ref(), &PhaseEvent::Observe { generation, build_requested, rerun: None }, now, &policy);
        let mut outcomes = outcomes.into_iter().chain(std::iter::repeat((Outcome::Transient, false)));
        let mut steps = 1;
        while !t.next.is_done() {
            prop_assert!(steps <= bound, "run not over after {steps} steps: {:?}", t.status);
            // A pod or build may be seen running before it ends; once running, it ends.
            let (end, seen_running_first) = outcomes.next().unwrap_or((Outcome::Transient, false));
            let starting = matches!(t.next, Next::StartPod(_) | Next::StartBuild { .. });
            let outcome = if starting && seen_running_first { Outcome::Progress } else { end };
            let (event, at) = follow(t.next, &t.status, outcome, now);
            now = at;
            t = step(Some(&t.status), &event, now, &policy);
            steps += 1;
        }
        prop_assert!(t.status.phase.is_some_and(Phase::is_terminal));
    }

    /// Pods that always fail transiently use every retry, then fail the run and say so.
    #[test]
    fn transient_failures_use_every_retry(policy in arb_policy(), build_requested in any::<bool>()) {
        let mut now = at(0);
        let mut t = step(None, &PhaseEvent::Observe { generation: 1, build_requested, rerun: None }, now, &policy);
        let mut scheduled = Vec::new();
        while !t.next.is_done() {
            let outcome = if matches!(t.next, Next::StartBuild { .. } | Next::WatchBuild { .. }) {
                Outcome::Succeed
            } else {
                Outcome::Transient
            };
            let (event, at) = follow(t.next, &t.status, outcome, now);
            now = at;
            t = step(Some(&t.status), &event, now, &policy);
            if let Some(retry) = &t.retry_scheduled {
                scheduled.push((retry.retry, t.requeue_after));
            }
        }
        let expected: Vec<_> = (1..=policy.max_retries())
            .map(|n| (n, Some(backoff(n, &policy))))
            .collect();
        prop_assert_eq!(scheduled, expected);
        prop_assert_eq!(t.status.phase, Some(Phase::Failed));
        prop_assert_eq!(t.status.retry_count, Some(policy.max_retries() as i32));
        let message = t.status.message.clone().unwrap_or_default();
        if policy.max_retries() > 0 {
            let retries = format!(
                "after {} {}",
                policy.max_retries(),
                if policy.max_retries() == 1 { "retry" } else { "retries" }
            );
            prop_assert!(message.contains(&retries), "{message}");
        }
    }

    /// Backoff grows by the factor, never shrinks, never exceeds the cap.
    #[test]
    fn backoff_is_monotone_and_capped(policy in arb_policy(), n in 0u32..64) {
        let (this, next) = (backoff(n, &policy), backoff(n + 1, &policy));
        prop_assert!(this <= next);
        prop_assert!(next <= policy.cap());
        if n > 0 {
            prop_assert_eq!(next, this.saturating_mul(policy.factor()).min(policy.cap()));
        } else {
            prop_assert_eq!(next, policy.base());
        }
    }

    /// `lastTransitionTime` moves exactly when the status changes; one condition per type.
    #[test]
    fn set_condition_moves_the_transition_time_only_on_status_change(
        updates in prop::collection::vec(
            (
                prop::sample::select(vec!["Ready", "Retrying"]),
                prop::sample::select(vec![ConditionStatus::True, ConditionStatus::False, ConditionStatus::Unknown]),
                arb_reason(),
                0i64..1000,
            ),
            1..20,
        ),
    ) {
        let mut conditions = Vec::new();
        let mut now = at(0);
        for (type_, status, reason, minutes) in updates {
            now += TimeDelta::minutes(minutes);
            let type_ = ConditionType::new(type_).expect("valid");
            let before = find_condition(&conditions, &type_).cloned();
            set_condition(&mut conditions, &type_, status, &reason, "m", now, Some(1));
            let after = find_condition(&conditions, &type_).cloned().expect("set");
            prop_assert_eq!(after.status.as_str(), status.as_str());
            prop_assert_eq!(&after.reason, reason.as_str());
            match before {
                Some(before) if before.status == after.status => {
                    prop_assert_eq!(before.last_transition_time, after.last_transition_time);
                }
                _ => prop_assert_eq!(after.last_transition_time.0.as_second(), now.timestamp()),
            }
            let types: HashSet<_> = conditions.iter().map(|c| c.type_.clone()).collect();
            prop_assert_eq!(types.len(), conditions.len());
        }
    }

    /// Truncation bounds the size, keeps a prefix, and leaves short messages alone.
    #[test]
    fn truncation_bounds_and_keeps_a_prefix(
        unit in prop::sample::select(vec!["x", "é", "€", "😀"]),
        count in 0usize..20_000,
    ) {
        let message = unit.repeat(count);
        let cut = truncate_message(&message);
        prop_assert!(cut.len() <= MAX_CONDITION_MESSAGE_BYTES);
        if message.len() <= MAX_CONDITION_MESSAGE_BYTES {
            prop_assert_eq!(&*cut, message.as_str());
        } else {
            let kept = cut.strip_suffix(TRUNCATION_MARKER).expect("marked");
            prop_assert!(message.starts_with(kept));
            prop_assert!(kept.len() + unit.len() > MAX_CONDITION_MESSAGE_BYTES - TRUNCATION_MARKER.len());
        }
    }

    /// Every string of the CRD's reason pattern is accepted…
    #[test]
    fn reasons_of_the_crd_pattern_are_accepted(
        value in "[A-Za-z]([A-Za-z0-9_,:]{0,40}[A-Za-z0-9_])?",
    ) {
        prop_assert!(Reason::new(value).is_ok());
    }

    /// …and a character outside the pattern, anywhere, is rejected.
    #[test]
    fn reasons_outside_the_crd_pattern_are_rejected(
        value in "[A-Za-z]([A-Za-z0-9_,:]{0,40}[A-Za-z0-9_])?",
        bad in prop::sample::select(vec![' ', '-', '.', '/', 'é', '\n', '!']),
        index in any::<prop::sample::Index>(),
    ) {
        let mut chars: Vec<char> = value.chars().collect();
        let at = index.index(chars.len() + 1);
        chars.insert(at, bad);
        prop_assert!(Reason::new(chars.into_iter().collect::<String>()).is_err());
    }

    /// Every string of the CRD's type pattern is accepted, and a bad character rejects it.
    #[test]
    fn condition_types_follow_the_crd_pattern(
        value in "([a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?){0,2}/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,20})?[A-Za-z0-9]",
        bad in prop::sample::select(vec![' ', '!', 'é', ':', ',']),
        index in any::<prop::sample::Index>(),
    ) {
        prop_assert!(ConditionType::new(value.clone()).is_ok(), "{value}");
        let mut chars: Vec<char> = value.chars().collect();
        let at = index.index(chars.len() + 1);
        chars.insert(at, bad);
        prop_assert!(ConditionType::new(chars.into_iter().collect::<String>()).is_err());
    }

    /// Attempts survive the trip through a label value.
    #[test]
    fn attempts_round_trip(generation in any::<i64>(), rerun in any::<u32>(), retry in any::<u32>()) {
        let attempt = Attempt { generation, rerun, retry };
        prop_assert_eq!(attempt.to_string().parse::<Attempt>(), Ok(attempt));
    }

    /// A policy is accepted exactly when its parameters are in range.
    #[test]
    fn retry_policies_are_valid_exactly_when_in_range(
        max in any::<u32>(), base in 0u64..100, factor in 0u32..4, cap in 0u64..100,
    ) {
        let result = RetryPolicy::new(max, Duration::from_secs(base), factor, Duration::from_secs(cap));
        let valid = i32::try_from(max).is_ok() && base > 0 && factor > 0 && cap >= base;
        prop_assert_eq!(result.is_ok(), valid, "{:?}", result);
        if let Err(InvalidRetryPolicy::CapBelowBase { base: b, cap: c }) = result {
            prop_assert!(c < b);
        }
    }
}
