//! The phase machine: invariants over arbitrary event sequences from arbitrary statuses,
//! snapshots of canonical runs, and edge cases.

use std::collections::HashSet;
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use nbv_core::api::{
    BuildPhase, BuildStatus, CellResult, CellStatus, EffectLedger, NotebookValidationJobStatus,
    Phase,
};
use nbv_core::phase::{
    Attempt, ConditionStatus, ConditionType, Failure, FailureKind, Ignored, InvalidRetryPolicy,
    MAX_CONDITION_MESSAGE_BYTES, Next, PhaseEvent, PodRef, Reason, RerunRequest, RetryPolicy,
    TRUNCATION_MARKER, Transition, backoff, find_condition, parse_phase, set_condition, step,
    truncate_message,
};
use proptest::prelude::*;
use serde_json::json;

type Status = NotebookValidationJobStatus;

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

/// 2026-01-24T22:00:00Z plus `minutes`.
fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0)
        .single()
        .expect("valid date")
        + TimeDelta::minutes(minutes)
}

fn reason(value: &str) -> Reason {
    Reason::new(value).expect("valid reason")
}

fn observe(generation: i64) -> PhaseEvent {
    PhaseEvent::Observe {
        generation,
        build_requested: false,
        rerun: None,
    }
}

fn observe_with_build(generation: i64) -> PhaseEvent {
    PhaseEvent::Observe {
        generation,
        build_requested: true,
        rerun: None,
    }
}

fn build_succeeded(image: &str) -> PhaseEvent {
    PhaseEvent::BuildSucceeded {
        generation: 1,
        image: image.to_owned(),
    }
}

fn pod(generation: i64, retry: u32) -> PodRef {
    let attempt = Attempt::new(generation, retry);
    PodRef::new(format!("train-{attempt}"), attempt)
}

fn running(generation: i64, retry: u32) -> PhaseEvent {
    PhaseEvent::PodRunning {
        pod: pod(generation, retry),
    }
}

fn succeeded(generation: i64, retry: u32) -> PhaseEvent {
    PhaseEvent::PodSucceeded {
        pod: pod(generation, retry),
        results: vec![CellResult {
            cell_index: 0,
            status: CellStatus::Success,
            execution_time: Some("1.2s".to_owned()),
            ..CellResult::default()
        }],
        message: Some("12/12 cells passed".to_owned()),
        comparison: None,
        warnings: vec![],
    }
}

fn failed(generation: i64, retry: u32, kind: FailureKind) -> PhaseEvent {
    let failure = match kind {
        FailureKind::Transient => {
            Failure::transient(reason("Evicted"), "The node was low on memory")
        }
        FailureKind::Permanent => {
            Failure::permanent(reason("CellFailed"), "cell 4: KeyError 'label'")
        }
    };
    PhaseEvent::PodFailed {
        pod: pod(generation, retry),
        failure,
        results: vec![],
        comparison: None,
        warnings: vec![],
    }
}

/// Runs `events` (each at its minute) from `status` under the default policy; returns
/// every transition.
fn run(status: Option<Status>, events: &[(i64, PhaseEvent)]) -> Vec<Transition> {
    let policy = RetryPolicy::default();
    let mut status = status;
    let mut transitions = Vec::new();
    for (minute, event) in events {
        let t = step(status.as_ref(), event, at(*minute), &policy);
        status = Some(t.status.clone());
        transitions.push(t);
    }
    transitions
}

fn last_status(transitions: &[Transition]) -> &Status {
    &transitions.last().expect("at least one step").status
}

/// A snapshot of a sequence: one line per step, then the final status.
fn trace(events: &[(i64, PhaseEvent)], transitions: &[Transition]) -> serde_json::Value {
    let steps: Vec<_> = events
        .iter()
        .zip(transitions)
        .map(|((minute, event), t)| {
            json!({
                "minute": minute,
                "event": event.name(),
                "phase": t.status.phase,
                "changed": t.changed,
                "entered": t.entered,
                "next": t.next.to_string(),
                "requeueAfterSecs": t.requeue_after.map(|d| d.as_secs()),
                "retryScheduled": t.retry_scheduled.as_ref().map(ToString::to_string),
                "ignored": t.ignored.as_ref().map(ToString::to_string),
            })
        })
        .collect();
    json!({ "steps": steps, "status": last_status(transitions) })
}

fn condition<'a>(status: &'a Status, type_: &ConditionType) -> Option<&'a Condition> {
    find_condition(status.conditions.as_deref().unwrap_or(&[]), type_)
}

mod edge_cases;
mod properties;
mod sequences;
