//! One reconcile's bookkeeping: what carried-out effects mean, what is persisted, which
//! Events announce a change, and when the job is looked at again.

use std::collections::BTreeMap;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, TimeZone, Utc};
use nbv_core::actions::{Already, SyncReport, TriggerOutcome};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::plan::{Effect, Outcome, Plan, PlanContext, PlannedEffect, plan};
use nbv_core::reconcile::{Carried, RequeuePolicy, Settlement, Wake};
use proptest::prelude::*;

const TRIGGERS: &str = "- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: predictor, action: restart}
- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}
";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap()
}

/// A succeeded run of `train` in `ml`, with these annotations.
fn succeeded_job(annotations: &[(&str, &str)]) -> NotebookValidationJob {
    let annotations: BTreeMap<String, String> = annotations
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    serde_json::from_value(serde_json::json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "generation": 1, "annotations": annotations},
        "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                 "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
        "status": {"phase": "Succeeded", "observedGeneration": 1,
                   "startTime": "2026-01-24T22:29:00Z", "completionTime": "2026-01-24T22:30:00Z"}
    }))
    .unwrap()
}

fn seed_plan() -> Plan {
    let job = succeeded_job(&[
        ("argocd.argoproj.io/sync-wave", "3"),
        ("mlops.dev/on-success-trigger", TRIGGERS),
    ]);
    plan(&job, &PlanContext::default(), t0())
}

/// What a shell that sees `outcome` for every effect of its kind reports.
fn fire(plan: &Plan, outcome: impl Fn(&PlannedEffect) -> Carried) -> (Settlement, Vec<String>) {
    let mut settlement = Settlement::new(plan);
    let mut reports = Vec::new();
    for planned in &plan.effects {
        if let Some(report) =
            settlement.record(planned, outcome(planned), t0(), &Default::default())
        {
            reports.push(format!("{}: {}", report.reason.as_str(), report.message));
        }
    }
    (settlement, reports)
}

fn deferred_sync(planned: &PlannedEffect) -> Carried {
    match &planned.effect {
        Effect::Trigger { trigger, .. } if trigger.to_string().starts_with("sync") => {
            Carried::Trigger(Ok(TriggerOutcome::Deferred {
                reason: "the sync window \"freeze\" is closed".into(),
                until: Some(t0() + Duration::hours(1)),
            }))
        }
        Effect::Trigger { .. } => Carried::Trigger(Ok(TriggerOutcome::Done {
            summary: "deleted 2 pods".into(),
        })),
        _ => Carried::Written(Outcome::Done),
    }
}

#[test]
fn a_deferred_sync_is_owed_announced_once_and_looked_at_when_its_window_opens() {
    let plan = seed_plan();
    let (settlement, reports) = fire(&plan, deferred_sync);
    let ledger = settlement
        .ledger_write(None)
        .expect("the restart and the rest are recorded");
    let change = settlement
        .conditions(&[], t0(), Some(1))
        .expect("new conditions");
    let announced: Vec<String> = change
        .announce
        .iter()
        .map(|r| format!("{}: {}", r.reason.as_str(), r.message))
        .collect();
    insta::assert_yaml_snapshot!((
        reports,
        ledger.done,
        change
            .conditions
            .iter()
            .map(|c| format!("{} {} {}: {}", c.type_, c.status, c.reason, c.message))
            .collect::<Vec<_>>(),
        announced,
    ));
    // A second after the window opens.
    assert_eq!(
        settlement.wake().requeue(t0(), &RequeuePolicy::default()),
        StdDuration::from_secs(3601)
    );
    // Written once, the same conditions change nothing and announce nothing again.
    assert_eq!(
        settlement.conditions(&change.conditions, t0() + Duration::seconds(5), Some(1)),
        None
    );
}

/// A restart by eviction that waits (here for a PodDisruptionBudget) is owed, says
/// why in its `TargetsRestarted` condition, announces it once, and is looked at again
/// when the pacing asks.
#[test]
fn a_waiting_restart_is_owed_and_its_condition_names_the_budget() {
    let plan = seed_plan();
    let budget = "waits for the PodDisruptionBudget to allow evicting pod p-1: Cannot evict pod \
                  as it would violate the pod's disruption budget. (The disruption budget \
                  predictor needs 2 healthy pods and has 2 currently)";
    let (settlement, reports) = fire(&plan, |planned| match &planned.effect {
        Effect::Trigger { trigger, .. } if trigger.to_string().starts_with("restart") => {
            Carried::Trigger(Ok(TriggerOutcome::Deferred {
                reason: budget.into(),
                until: Some(t0() + Duration::seconds(4)),
            }))
        }
        _ => deferred_sync(planned),
    });
    assert!(reports.is_empty(), "{reports:?}");
    let change = settlement
        .conditions(&[], t0(), Some(1))
        .expect("new conditions");
    let restarted = change
        .conditions
        .iter()
        .find(|c| c.type_ == "TargetsRestarted")
        .expect("the TargetsRestarted condition");
    assert_eq!(
        (restarted.status.as_str(), restarted.reason.as_str()),
        ("Unknown", "RestartWaiting")
    );
    assert!(
        restarted
            .message
            .contains("The disruption budget predictor"),
        "{}",
        restarted.message
    );
    let announced: Vec<&str> = change.announce.iter().map(|r| r.reason.as_str()).collect();
    assert!(announced.contains(&"RestartWaiting"), "{announced:?}");
    assert_eq!(
        settlement.wake().requeue(t0(), &RequeuePolicy::default()),
        StdDuration::from_secs(5)
    );
}

/// One reconcile of `job` at `now`: each planned effect carried out as `outcome` says,
/// then what it wrote applied to the job. Returns the job as the write left it,
/// whether anything was written, and every Event (at once and announced).
fn reconcile(
    job: &NotebookValidationJob,
    now: DateTime<Utc>,
    outcome: impl Fn(&PlannedEffect) -> Carried,
) -> (NotebookValidationJob, bool, Vec<String>) {
    let plan = plan(job, &PlanContext::default(), now);
    let mut settlement = Settlement::new(&plan);
    let mut events = Vec::new();
    for planned in &plan.effects {
        if let Some(report) = settlement.record(planned, outcome(planned), now, &Default::default())
        {
            events.push(report.reason.as_str().to_owned());
        }
    }
    let status = job.status.clone().unwrap_or_default();
    let before = status.conditions.clone().unwrap_or_default();
    let write = settlement.status_write(status.effects.as_ref(), &before, now, Some(1));
    let mut after = job.clone();
    if let Some(write) = &write {
        events.extend(
            write
                .announce()
                .iter()
                .map(|r| r.reason.as_str().to_owned()),
        );
        let status = after.status.as_mut().unwrap();
        if let Some(ledger) = &write.ledger {
            status.effects = Some(ledger.clone());
        }
        if let Some(change) = &write.conditions {
            status.conditions = Some(change.conditions.clone());
        }
    }
    (after, write.is_some(), events)
}

/// Every effect done; the sync trigger's follow-up sees `sync`.
fn sync_reads(sync: SyncReport) -> impl Fn(&PlannedEffect) -> Carried {
    move |planned| match &planned.effect {
        Effect::Trigger { .. } => Carried::Trigger(Ok(TriggerOutcome::Done {
            summary: "done".into(),
        })),
        Effect::SyncResult { .. } => Carried::Sync(Ok(sync.clone())),
        _ => Carried::Written(Outcome::Done),
    }
}

fn running() -> SyncReport {
    SyncReport::InProgress {
        summary: "the sync is Running".into(),
    }
}

fn ended(succeeded: bool) -> SyncReport {
    SyncReport::Finished {
        succeeded,
        summary: format!("the sync ended, succeeded: {succeeded}"),
    }
}

fn application_synced(job: &NotebookValidationJob) -> Option<(String, String)> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    let c = conditions.iter().find(|c| c.type_ == "ApplicationSynced")?;
    Some((c.status.clone(), c.reason.clone()))
}

fn sync_job() -> NotebookValidationJob {
    succeeded_job(&[
        ("argocd.argoproj.io/sync-wave", "3"),
        ("mlops.dev/on-success-trigger", TRIGGERS),
    ])
}

#[test]
fn a_sync_that_succeeds_costs_no_write_beyond_the_completion() {
    let at = |s| t0() + Duration::seconds(s);
    // The completion: one write, the trigger's Event; no condition about the sync.
    let (job, wrote, events) = reconcile(&sync_job(), at(1), sync_reads(running()));
    assert!(wrote);
    assert!(
        events.contains(&"TriggerSucceeded".to_owned()),
        "{events:?}"
    );
    assert_eq!(application_synced(&job), None);
    // Argo CD runs the sync, then it succeeds, then another operation follows it:
    // nothing more is written or announced.
    for (s, sync) in [
        (2, running()),
        (3, ended(true)),
        (4, ended(true)),
        (
            5,
            SyncReport::Replaced {
                summary: "gone".into(),
            },
        ),
    ] {
        let (after, wrote, events) = reconcile(&job, at(s), sync_reads(sync.clone()));
        assert!(!wrote, "{sync:?} wrote");
        assert_eq!(events, Vec::<String>::new(), "{sync:?}");
        assert_eq!(after, job);
    }
}

#[test]
fn a_failed_sync_is_shown_on_any_job_once() {
    let (job, _, _) = reconcile(&sync_job(), t0(), sync_reads(running()));
    let (job, wrote, events) = reconcile(&job, t0(), sync_reads(ended(false)));
    assert!(wrote);
    assert_eq!(events, ["SyncFailed"]);
    assert_eq!(
        application_synced(&job),
        Some(("False".into(), "SyncFailed".into()))
    );
    // Recorded: not followed any more, nothing announced again.
    let (again, wrote, events) = reconcile(&job, t0(), sync_reads(ended(false)));
    assert!(!wrote && events.is_empty() && again == job, "{events:?}");
}

#[test]
fn a_job_that_shows_its_syncs_has_each_stage_reported_and_the_end_announced_once() {
    let job = sync_job();
    let (job, _, events) = reconcile(&job, t0(), deferred_sync);
    assert!(events.contains(&"SyncDeferred".to_owned()), "{events:?}");
    let (job, _, _) = reconcile(&job, t0(), sync_reads(running()));
    assert_eq!(
        application_synced(&job),
        Some(("Unknown".into(), "SyncStarted".into()))
    );
    let (job, wrote, _) = reconcile(&job, t0(), sync_reads(running()));
    assert!(wrote, "Argo CD running the sync is shown");
    let (job, _, events) = reconcile(&job, t0(), sync_reads(ended(true)));
    assert_eq!(events, ["SyncSucceeded"]);
    assert_eq!(
        application_synced(&job),
        Some(("True".into(), "SyncSucceeded".into()))
    );
    let (again, wrote, events) = reconcile(
        &job,
        t0(),
        sync_reads(SyncReport::Replaced {
            summary: "gone".into(),
        }),
    );
    assert!(!wrote && events.is_empty() && again == job, "{events:?}");
}

#[test]
fn a_sync_already_deployed_by_a_later_full_sync_reads_as_succeeded_where_syncs_are_shown() {
    let already = |planned: &PlannedEffect| match &planned.effect {
        Effect::Trigger { .. } => Carried::Trigger(Ok(TriggerOutcome::AlreadyDone {
            summary: "already synced successfully".into(),
            reason: Already::Synced {
                started_at: "2026-01-24T22:30:01Z".into(),
            },
        })),
        _ => Carried::Written(Outcome::Done),
    };
    let (shown, _, _) = reconcile(&sync_job(), t0(), deferred_sync);
    let (shown, _, _) = reconcile(&shown, t0(), already);
    assert_eq!(
        application_synced(&shown),
        Some(("True".into(), "SyncSucceeded".into()))
    );
    let (quiet, _, _) = reconcile(&sync_job(), t0(), already);
    assert_eq!(application_synced(&quiet), None);
}

#[test]
fn a_failed_trigger_is_reported_at_once_and_recorded_for_a_retry() {
    let plan = seed_plan();
    let (settlement, reports) = fire(&plan, |planned| match &planned.effect {
        Effect::Trigger { .. } => Carried::Trigger(Err(Outcome::Failed("503 unavailable".into()))),
        _ => Carried::Written(Outcome::Done),
    });
    assert_eq!(reports.len(), 2);
    assert!(
        reports
            .iter()
            .all(|r| r.starts_with("TriggerFailed: ") && r.ends_with("503 unavailable"))
    );
    assert_eq!(settlement.ledger().failed.len(), 2);
}

#[test]
fn an_outcome_of_the_wrong_kind_is_a_failure_not_a_success() {
    let plan = seed_plan();
    let (settlement, _) = fire(&plan, |planned| match &planned.effect {
        Effect::Notify { .. } => Carried::Sync(Ok(SyncReport::Finished {
            succeeded: true,
            summary: "?".into(),
        })),
        _ => Carried::Written(Outcome::Done),
    });
    assert!(!settlement.ledger().is_done("notify"));
    assert!(settlement.ledger().failure("notify").is_some());
}

#[test]
fn nothing_owed_and_nothing_recorded_writes_nothing() {
    let job = succeeded_job(&[]);
    let mut job = job;
    job.status.as_mut().unwrap().phase = Some(Phase::ValidationRunning);
    job.status.as_mut().unwrap().completion_time = None;
    let plan = plan(&job, &PlanContext::default(), t0());
    assert!(plan.effects.is_empty());
    let settlement = Settlement::new(&plan);
    assert_eq!(settlement.ledger_write(None), None);
}

fn carried() -> impl Strategy<Value = u8> {
    0u8..8
}

/// The outcome numbered `n` for `planned`: successes, failures, deferrals, syncs.
fn outcome_of(planned: &PlannedEffect, n: u8) -> Carried {
    match (&planned.effect, n) {
        (Effect::Trigger { .. }, 0) => Carried::Trigger(Ok(TriggerOutcome::Deferred {
            reason: "an operation is running".into(),
            until: None,
        })),
        (Effect::Trigger { .. }, 1) => Carried::Trigger(Ok(TriggerOutcome::Deferred {
            reason: "window".into(),
            until: Some(t0() + Duration::minutes(i64::from(n) + 1)),
        })),
        (Effect::Trigger { .. }, 2) => Carried::Trigger(Err(Outcome::GiveUp("refused".into()))),
        (Effect::Trigger { .. }, 3) => Carried::Trigger(Ok(TriggerOutcome::AlreadyDone {
            summary: "in place".into(),
            reason: Already::SyncRequested,
        })),
        (Effect::Trigger { .. }, _) => Carried::Trigger(Ok(TriggerOutcome::Done {
            summary: "done".into(),
        })),
        (_, 4) => Carried::Written(Outcome::Failed("500".into())),
        _ => Carried::Written(Outcome::Done),
    }
}

proptest! {
    /// Whatever the outcomes: the conditions written once are a fixed point (a second
    /// reconcile with the same outcomes writes nothing and announces nothing), a
    /// deferral is never recorded as done, every recorded failure is in the ledger, and
    /// the requeue never waits longer than the resync.
    #[test]
    fn settling_is_stable_and_records_exactly_what_happened(
        outcomes in proptest::collection::vec(carried(), 4), later in 0i64..600,
    ) {
        let plan = seed_plan();
        let mut settlement = Settlement::new(&plan);
        for (planned, n) in plan.effects.iter().zip(outcomes.iter().cycle()) {
            let carried = outcome_of(planned, *n);
            let deferred = matches!(carried, Carried::Trigger(Ok(TriggerOutcome::Deferred { .. })));
            let failed = carried.failure().is_some();
            settlement.record(planned, carried, t0(), &Default::default());
            let key = planned.key.as_str();
            prop_assert_eq!(settlement.ledger().is_done(key), !deferred && !failed, "{}", key);
            prop_assert_eq!(settlement.ledger().failure(key).is_some(), failed, "{}", key);
        }
        let change = settlement.conditions(&[], t0(), Some(1)).expect("conditions are new");
        let again = settlement.conditions(&change.conditions, t0() + Duration::seconds(later), Some(1));
        prop_assert_eq!(again, None);
        let policy = RequeuePolicy::default();
        let wait = settlement.wake().requeue(t0(), &policy);
        prop_assert!(wait <= policy.resync && wait >= StdDuration::from_millis(100));
    }

    /// The earliest reason to look again wins, whatever the order they come in.
    #[test]
    fn the_earliest_wake_wins(waits in proptest::collection::vec(1u64..1000, 1..5), busy: bool) {
        let policy = RequeuePolicy::default();
        let (mut forward, mut backward) = (Wake::default(), Wake::default());
        for w in &waits {
            forward.after(Some(StdDuration::from_secs(*w)));
        }
        for w in waits.iter().rev() {
            backward.at(t0() + Duration::seconds(i64::try_from(*w).unwrap()));
        }
        if busy {
            forward.busy();
            backward.busy();
        }
        let mut expected = StdDuration::from_secs(*waits.iter().min().unwrap());
        if busy {
            expected = expected.min(policy.deferred_retry);
        }
        prop_assert_eq!(forward.requeue(t0(), &policy), expected);
        prop_assert_eq!(backward.requeue(t0(), &policy), expected);
        prop_assert_eq!(forward.due(t0(), &policy), Some(expected));
        // Without a reason, only the resync is due, which a shell may keep on its own.
        prop_assert_eq!(Wake::default().due(t0(), &policy), None);
    }
}
