//! The transition function: [`step`].

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::api::{BuildPhase, NotebookValidationJobStatus, Phase};

use super::adopt::settle;
use super::build::{build_failed, build_started, build_succeeded};
use super::conditions::dedupe_conditions;
use super::pod_events::{admit_pod, pod_failed, pod_running, pod_succeeded, record_warnings};
use super::record::{build_phase, current_attempt, retry_due, set_ready, set_retrying};
use super::{
    Build, BuildStage, ConditionStatus, ConditionType, Ignored, Next, PhaseEvent, Reason,
    RerunRequest, RetryPolicy, Run, RunState, ScheduledRetry, Transition, messages,
    remove_condition,
};

type Status = NotebookValidationJobStatus;

/// Applies `event`, observed at `now`, to a job's `status` (`None` when the job has
/// none yet) and returns the status to write and what to do next.
///
/// `step` is pure and total: the same inputs always give the same transition, and no
/// input makes it fail or panic. An event that does not fit the recorded run (stale,
/// duplicated, about another attempt, or out of phase) leaves the status unchanged and
/// says why in [`Transition::ignored`]. Any status the API server may hold is accepted:
/// [`PhaseEvent::Observe`] adopts one written by another operator, migrating legacy
/// phases and repairing fields that contradict each other.
///
/// # Examples
///
/// A first attempt that fails transiently, then a retry that succeeds:
///
/// ```
/// use chrono::{Duration, TimeZone, Utc};
/// use nbv_core::api::Phase;
/// use nbv_core::phase::{step, Attempt, Failure, Next, PhaseEvent, PodRef, Reason, RetryPolicy};
///
/// let policy = RetryPolicy::default();
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let observe = PhaseEvent::Observe { generation: 1, build_requested: false, rerun: None };
///
/// let t = step(None, &observe, t0, &policy);
/// let Next::StartPod(first) = t.next else { panic!("expected a pod to start") };
/// let pod = PodRef::new("train-g1-r0", first);
/// let t = step(Some(&t.status), &PhaseEvent::PodRunning { pod: pod.clone() }, t0, &policy);
/// assert_eq!(t.entered, Some(Phase::ValidationRunning));
///
/// let failure = Failure::transient(Reason::new("Evicted")?, "node drained");
/// let failed = PhaseEvent::PodFailed { pod, failure, results: vec![], comparison: None, warnings: vec![] };
/// let t = step(Some(&t.status), &failed, t0, &policy);
/// assert_eq!(t.status.retry_count, Some(1));
/// assert_eq!(t.requeue_after, Some(std::time::Duration::from_secs(60)));
///
/// // Reporting the same failed pod again changes nothing: it belongs to attempt 0.
/// assert!(!step(Some(&t.status), &failed, t0, &policy).changed);
///
/// let t = step(Some(&t.status), &observe, t0 + Duration::minutes(1), &policy);
/// let Next::StartPod(retry) = t.next else { panic!("expected the retry's pod") };
/// assert_eq!(retry, Attempt::new(1, 1));
/// let done = PhaseEvent::PodSucceeded {
///     pod: PodRef::new("train-g1-r1", retry), results: vec![], message: None, comparison: None,
///     warnings: vec![],
/// };
/// let t = step(Some(&t.status), &done, t0 + Duration::minutes(3), &policy);
/// assert_eq!(t.status.phase, Some(Phase::Succeeded));
/// assert_eq!(t.status.message.as_deref(), Some("Notebook validation succeeded after 1 retry"));
/// # Ok::<(), nbv_core::phase::InvalidReason>(())
/// ```
pub fn step(
    status: Option<&NotebookValidationJobStatus>,
    event: &PhaseEvent,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> Transition {
    let before = status.cloned().unwrap_or_default();
    let (applied, ignored) = match apply(&before, event, now, policy) {
        Ok(applied) => (applied, None),
        Err(ignored) => (Applied::unchanged(before.clone()), Some(ignored)),
    };
    let Applied {
        status: after,
        state,
        run_started,
        retry_scheduled,
    } = applied;
    let previous = before.phase.map(Phase::migrated);
    let entered = after
        .phase
        .filter(|phase| run_started || Some(*phase) != previous);
    let next = match &state {
        Some(state) => next(state, now, policy),
        None => next_as_recorded(&after, now, policy),
    };
    let requeue_after = match next {
        Next::WaitUntil(at) => Some((at - now).to_std().unwrap_or(Duration::ZERO)),
        _ => None,
    };
    Transition {
        changed: after != before,
        status: after,
        entered,
        run_started,
        retry_scheduled,
        next,
        requeue_after,
        ignored,
    }
}

/// An event that was applied: the new status and what happened on the way.
struct Applied {
    status: Status,
    /// The run `status` records; `None` for a status returned as it was given, which
    /// the machine has not read (nor repaired).
    state: Option<RunState>,
    run_started: bool,
    retry_scheduled: Option<ScheduledRetry>,
}

impl Applied {
    fn unchanged(status: Status) -> Self {
        Applied {
            status,
            state: None,
            run_started: false,
            retry_scheduled: None,
        }
    }

    fn to(status: Status, state: RunState) -> Self {
        Applied {
            status,
            state: Some(state),
            run_started: false,
            retry_scheduled: None,
        }
    }
}

fn apply(
    before: &Status,
    event: &PhaseEvent,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> Result<Applied, Ignored> {
    if let PhaseEvent::Observe {
        generation,
        build_requested,
        rerun,
    } = event
    {
        let asked = Asked {
            generation: *generation,
            build_requested: *build_requested,
            rerun: rerun.as_ref(),
        };
        return Ok(observe(before, &asked, now, policy));
    }
    // Read at the edge: repairing the status may have moved the phase.
    let state = RunState::read(before, now, policy);
    let run = admit(&state, event)?;
    let mut s = before.clone();
    settle(&mut s, &state, now);
    let state = match event {
        // Handled above; kept so that the match stays exhaustive without a wildcard.
        PhaseEvent::Observe { .. } => state.clone(),
        PhaseEvent::BuildStarted { build_name, .. } => {
            build_started(&state, &mut s, build_name, now)?
        }
        PhaseEvent::BuildSucceeded { image, .. } => build_succeeded(&state, &mut s, image, now)?,
        PhaseEvent::BuildFailed {
            reason, message, ..
        } => build_failed(&state, &mut s, reason, message, now)?,
        PhaseEvent::PodRunning { pod } => {
            admit_pod(&state, run, pod)?;
            pod_running(&state, run, &mut s, pod, now)
        }
        PhaseEvent::PodSucceeded {
            pod,
            results,
            message,
            comparison,
            warnings,
        } => {
            admit_pod(&state, run, pod)?;
            s.comparison_result = comparison.clone();
            let state = pod_succeeded(run, &mut s, pod, results, message.as_deref(), now, policy);
            record_warnings(&mut s, warnings, now);
            state
        }
        PhaseEvent::PodFailed {
            pod,
            failure,
            results,
            comparison,
            warnings,
        } => {
            admit_pod(&state, run, pod)?;
            s.comparison_result = comparison.clone();
            let (state, retry_scheduled) =
                pod_failed(run, &mut s, pod, failure, results, now, policy);
            record_warnings(&mut s, warnings, now);
            return Ok(Applied {
                status: s,
                state: Some(state),
                run_started: false,
                retry_scheduled,
            });
        }
    };
    Ok(Applied::to(s, state))
}

/// What an `Observe` event reports of the job.
struct Asked<'a> {
    generation: i64,
    build_requested: bool,
    rerun: Option<&'a RerunRequest>,
}

/// Starts a run (of a new generation, or again on request), adopts a status written
/// by another operator, or starts a due retry.
fn observe(
    before: &Status,
    asked: &Asked<'_>,
    now: DateTime<Utc>,
    policy: &RetryPolicy,
) -> Applied {
    let generation = asked.generation;
    let state = RunState::read(before, now, policy);
    let starts_run = match state.run() {
        None => true,
        // A run recorded without observedGeneration was written by another operator:
        // adopt it rather than throw away a run in progress.
        Some(run) => run
            .generation
            .is_some_and(|observed| observed != generation),
    };
    let state = if starts_run {
        state
    } else {
        state.adopted(generation)
    };
    let rerun = match &state {
        // The request is consumed by the run it starts, whatever started it.
        _ if starts_run => Some(Rerun {
            count: 0,
            request: asked.rerun.cloned(),
        }),
        RunState::Succeeded { run, .. } | RunState::Failed { run, .. }
            if asked.rerun.is_some() && asked.rerun != run.rerun_request.as_ref() =>
        {
            Some(Rerun {
                // Saturates after 2³² reruns of one generation: Pod names would repeat
                // the last rerun's, whose Pods are gone by then.
                count: run.reruns.saturating_add(1),
                request: asked.rerun.cloned(),
            })
        }
        _ => None,
    };
    if let Some(rerun) = rerun {
        let (status, state) = new_run(before, asked, rerun, now);
        return Applied {
            status,
            state: Some(state),
            run_started: true,
            retry_scheduled: None,
        };
    }
    let mut state = state;
    let mut s = before.clone();
    settle(&mut s, &state, now);
    if let RunState::Initializing(run) = &state
        && state.retry_due(policy).is_some_and(|due| due <= now)
    {
        state = resume(&mut s, run, now, policy);
    }
    Applied::to(s, state)
}

/// Which run of its generation a new run is, and the request to run again it answers.
struct Rerun {
    count: u32,
    request: Option<RerunRequest>,
}

/// A fresh run: everything that belongs to a run is reset; conditions of other types
/// (owned by other parts of nbv) are kept.
fn new_run(
    before: &Status,
    asked: &Asked<'_>,
    rerun: Rerun,
    now: DateTime<Utc>,
) -> (Status, RunState) {
    let build_requested = asked.build_requested;
    let mut conditions = before.conditions.clone().unwrap_or_default();
    dedupe_conditions(&mut conditions);
    remove_condition(&mut conditions, &ConditionType::RETRYING);
    remove_condition(&mut conditions, &ConditionType::VALIDATION_WARNINGS);
    // The refusals of an earlier run's Pod do not concern this run's.
    remove_condition(&mut conditions, &ConditionType::POD_ADMITTED);
    let waiting = if build_requested {
        messages::WAITING_FOR_BUILD
    } else {
        messages::WAITING_FOR_POD
    };
    let message = match (&rerun.request, rerun.count) {
        (Some(request), 1..) => messages::rerun(request.as_str(), waiting),
        _ => waiting.to_owned(),
    };
    let state = RunState::Initializing(Run {
        // A pending build records, for the rest of the run, that the run builds its
        // image: the spec cannot change within a run (that would be a new run).
        build: if build_requested {
            Build::requested()
        } else {
            Build::default()
        },
        reruns: rerun.count,
        rerun_request: rerun.request,
        ..Run::new(Some(asked.generation), now)
    });
    let mut s = Status {
        conditions: Some(conditions),
        message: Some(message),
        ..Status::default()
    };
    state.write(&mut s);
    set_ready(&mut s, &Reason::of_phase(Phase::Initializing), now);
    (s, state)
}

/// The retry's backoff has elapsed: the retry attempt of `run` starts. Depends only on
/// the status, so a later `Observe` finds nothing more to change.
fn resume(s: &mut Status, run: &Run, now: DateTime<Utc>, policy: &RetryPolicy) -> RunState {
    let message = messages::retry_started(run.retry_count(), policy.max_retries());
    // The failed attempt's pod and results are superseded by the new attempt's.
    let next = RunState::Initializing(Run {
        pod: None,
        ..run.clone()
    });
    next.write(s);
    s.results = None;
    s.comparison_result = None;
    // The refusals of the failed attempt's Pod do not concern the retry's (whose
    // deadline counts from its own first refusal).
    if let Some(conditions) = s.conditions.as_mut() {
        remove_condition(conditions, &ConditionType::POD_ADMITTED);
    }
    s.message = Some(message.clone());
    set_retrying(
        s,
        ConditionStatus::True,
        &Reason::RETRY_STARTED,
        &message,
        now,
    );
    set_ready(s, &Reason::of_phase(Phase::Initializing), now);
    next
}

/// Whether the event may apply to the run `state` records; the run when it may.
fn admit<'a>(state: &'a RunState, event: &PhaseEvent) -> Result<&'a Run, Ignored> {
    let run = match state {
        RunState::NotStarted => return Err(Ignored::NoRun),
        RunState::Succeeded { .. } => {
            return Err(Ignored::RunEnded {
                phase: Phase::Succeeded,
            });
        }
        RunState::Failed { .. } => {
            return Err(Ignored::RunEnded {
                phase: Phase::Failed,
            });
        }
        RunState::Initializing(run)
        | RunState::Building(run)
        | RunState::BuildComplete(run)
        | RunState::ValidationRunning(run) => run,
    };
    let current = run.generation.ok_or(Ignored::NotObserved)?;
    if event.generation() != current {
        return Err(Ignored::OtherRun {
            event: event.generation(),
            current,
        });
    }
    Ok(run)
}

/// What the shell does next in `state`.
fn next(state: &RunState, now: DateTime<Utc>, policy: &RetryPolicy) -> Next {
    let run = match state {
        RunState::NotStarted => return Next::Observe,
        RunState::Succeeded { .. } | RunState::Failed { .. } => return Next::Done,
        RunState::Initializing(run)
        | RunState::Building(run)
        | RunState::BuildComplete(run)
        | RunState::ValidationRunning(run) => run,
    };
    let Some(attempt) = run.attempt() else {
        return Next::Observe;
    };
    let generation = attempt.generation;
    match state {
        RunState::Building(_) => Next::WatchBuild { generation },
        RunState::BuildComplete(_) => Next::StartPod(attempt),
        RunState::ValidationRunning(_) => Next::WatchPod(attempt),
        _ => match run.build.stage {
            BuildStage::Pending => Next::StartBuild { generation },
            BuildStage::Running => Next::WatchBuild { generation },
            _ => match state.retry_due(policy) {
                Some(due) if due > now => Next::WaitUntil(due),
                _ => Next::StartPod(attempt),
            },
        },
    }
}

/// What the shell does next, from a status returned as it was given because the event
/// was ignored. Such a status may be one the machine has not repaired (an event
/// delivered before the first `Observe`), so it is read as it stands, not as a
/// [`RunState`]: the answer is the one the status itself gives, until `Observe`
/// adopts it.
fn next_as_recorded(s: &Status, now: DateTime<Utc>, policy: &RetryPolicy) -> Next {
    let Some(phase) = s.phase.map(Phase::migrated) else {
        return Next::Observe;
    };
    if phase.is_terminal() {
        return Next::Done;
    }
    let (Some(generation), Some(attempt)) = (s.observed_generation, current_attempt(s)) else {
        return Next::Observe;
    };
    match phase {
        Phase::Building => Next::WatchBuild { generation },
        Phase::BuildComplete => Next::StartPod(attempt),
        Phase::ValidationRunning => Next::WatchPod(attempt),
        _ => match build_phase(s) {
            Some(BuildPhase::Pending) => Next::StartBuild { generation },
            Some(BuildPhase::Running) => Next::WatchBuild { generation },
            _ => match retry_due(s, policy) {
                Some(due) if due > now => Next::WaitUntil(due),
                _ => Next::StartPod(attempt),
            },
        },
    }
}
