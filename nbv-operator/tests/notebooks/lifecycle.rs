//! A job's lifecycle around its runs: a spec edit starts a new run, deletion ends it.

use super::*;

#[test]
fn a_spec_edit_starts_a_new_run_with_its_own_pods_retries_and_records() {
    let mut train = restarting("train").build();
    train["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = json!("1");
    // Each run: the first attempt is evicted, the retry succeeds.
    let report = play(&scenario(
        "spec-edit",
        vec![train],
        json!([
            {"job": "ml/train", "attempt": 0, "outcome": "evicted", "runFor": "1m"},
            {"job": "ml/train", "attempt": 1, "outcome": "succeeded", "runFor": "2m", "cells": 5}
        ]),
        json!([{"at": "6m", "patch": {
            "object": {"kind": "NotebookValidationJob", "namespace": "ml", "name": "train"},
            "patch": {"spec": {"timeout": "45m"}}}}]),
    ));
    let view = JobView::of(&report, "ml/train");

    // Two runs, each with its own Pods; only the current run's last Pod is left.
    assert_eq!(
        view.pods_created,
        ["train-g1-r0", "train-g1-r1", "train-g2-r0", "train-g2-r1"]
    );
    assert_eq!(
        view.pods_deleted,
        ["train-g1-r0", "train-g1-r1", "train-g2-r0"]
    );
    assert_eq!(report.validation_pods, ["ml/train-g2-r1"]);
    // The retry count starts again: one retry in the second run, not three in all.
    assert_eq!(view.status.retry_count, Some(1));
    assert_eq!(view.validation_pod(), Some("train-g2-r1"));
    view.assert_results(5, None);
    // The new run cleared the first run's wave annotations and records, then wrote its
    // own.
    assert!(
        report.timeline.iter().any(|e| e.at == at("6:00")
            && e.text
                .contains("job ml/train: wave annotations mlops.dev/wave-complete removed")),
        "{}",
        report.render()
    );
    let effects = view.status.effects.as_ref().expect("a ledger");
    assert!(effects.run.starts_with("g2@"), "{effects:?}");
    assert!(
        effects
            .done
            .contains("trigger/restart:apps/Deployment:ml/model-server"),
        "{effects:?}"
    );
    assert_eq!(
        report.jobs["ml/train"]
            .annotations
            .get("mlops.dev/wave-complete")
            .map(String::as_str),
        Some("1")
    );
    // One success, one notification and one restart per run.
    assert_eq!(view.completions, [Phase::Succeeded, Phase::Succeeded]);
    assert_eq!(
        view.notifications,
        ["ValidationSucceeded", "ValidationSucceeded"]
    );
    assert_eq!(view.triggers, [TRIGGER, TRIGGER]);
}

#[test]
fn deleting_a_job_removes_its_pod_and_ends_its_run_without_a_notification() {
    let report = play(&scenario(
        "job-deleted",
        vec![restarting("keep").build(), restarting("gone").build()],
        json!([{"outcome": "succeeded", "runFor": "10m", "cells": 4, "job": "ml/keep"},
               {"outcome": "succeeded", "runFor": "10m", "cells": 4, "job": "ml/gone"}]),
        json!([{"at": "2m", "delete":
            {"kind": "NotebookValidationJob", "namespace": "ml", "name": "gone"}}]),
    ));
    // The job's Pod went with it (owner reference): it never ran to its end.
    assert_eq!(report.validation_pods, ["ml/keep-g1-r0"]);
    let gone = JobView::of(&report, "ml/gone");
    assert_eq!(gone.pods_created, ["gone-g1-r0"]);
    assert!(
        gone.kubelet.iter().all(|(_, line)| !line.contains("ended")),
        "{:?}",
        gone.kubelet
    );
    assert!(!report.jobs.contains_key("ml/gone"));
    assert!(gone.completions.is_empty(), "{:?}", gone.completions);
    assert!(gone.notifications.is_empty(), "{:?}", gone.notifications);
    assert!(gone.triggers.is_empty(), "{:?}", gone.triggers);

    let keep = JobView::of(&report, "ml/keep");
    assert_eq!(keep.phase.as_deref(), Some("Succeeded"));
    assert_eq!(keep.triggers, [TRIGGER]);
}
