//! What each notebook outcome does to a run: success, a raising cell, image pull back-off,
//! the timeout, eviction, an operator restart.

use super::*;

#[test]
fn a_notebook_that_runs_through_succeeds_once_and_fires_its_trigger() {
    let report = play(&scenario(
        "success",
        vec![restarting("train").build()],
        json!([{"job": "ml/train", "outcome": "succeeded", "runFor": "3m", "cells": 7}]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/train");
    view.assert_results(7, None);

    assert_eq!(view.phase.as_deref(), Some("Succeeded"));
    assert_eq!(
        view.phases,
        ["Initializing", "ValidationRunning", "Succeeded"]
    );
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "ValidationSucceeded")
    );
    assert_eq!(
        ready.message,
        format!("Notebook validation succeeded: {}", cells_ran(7))
    );
    assert_eq!(view.pods_created, ["train-g1-r0"]);
    assert_eq!(view.retries(), 0);
    assert!(view.retrying.is_empty(), "{:?}", view.retrying);
    assert_eq!(view.validation_pod(), Some("train-g1-r0"));
    // The Pod starts 5 s after the kubelet sees it and runs its 3 minutes.
    assert_eq!(
        view.kubelet.last().map(|(t, s)| (*t, s.as_str())),
        Some((at("3:06"), "Pod ml/train-g1-r0 ended: Succeeded"))
    );
    assert_eq!(ready.at, at("3:06"));

    assert_eq!(view.completions, [Phase::Succeeded]);
    assert_eq!(view.notifications, ["ValidationSucceeded"]);
    assert_eq!(report.events_by_reason.get("ValidationSucceeded"), Some(&1));
    assert_eq!(view.triggers, [TRIGGER]);
    assert!(
        report.timeline.iter().any(|e| e.who == Who::Nbv
            && e.text
                .starts_with("rolling restart of Deployment ml/model-server")),
        "{}",
        report.render()
    );
}

#[test]
fn a_cell_that_raises_fails_the_run_at_once_without_a_retry() {
    let report = play(&scenario(
        "notebook-error",
        vec![restarting("evaluate").build()],
        json!([{"job": "ml/evaluate", "outcome": "failed", "runFor": "2m", "cells": 5}]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/evaluate");
    view.assert_results(5, Some(4));

    assert_eq!(
        FailureCause::NotebookCellFailed.kind(),
        FailureKind::Permanent
    );
    assert_eq!(view.phase.as_deref(), Some("Failed"));
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "NotebookCellFailed")
    );
    // Cells 0 to 4 ran; the last one raised.
    assert_eq!(
        ready.message,
        format!("Validation failed: NotebookCellFailed: cell 4: {CELL_ERROR}")
    );
    // Permanent: three retries were allowed, none was made.
    assert_eq!(view.pods_created, ["evaluate-g1-r0"]);
    assert_eq!(view.retries(), 0);
    assert!(view.retrying.is_empty(), "{:?}", view.retrying);
    assert_eq!(view.validation_pod(), Some("evaluate-g1-r0"));

    assert_eq!(view.completions, [Phase::Failed]);
    assert_eq!(view.notifications, ["ValidationFailed"]);
    assert_eq!(report.events_by_reason.get("ValidationFailed"), Some(&1));
    assert!(view.triggers.is_empty(), "{:?}", view.triggers);
}

#[test]
fn an_image_pull_back_off_is_retried_and_the_retry_succeeds() {
    let report = play(&scenario(
        "image-pull-back-off",
        vec![restarting("train").build()],
        json!([
            {"job": "ml/train", "attempt": 0, "outcome": "imagePullBackOff"},
            {"job": "ml/train", "outcome": "succeeded", "runFor": "2m", "cells": 4}
        ]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/train");
    view.assert_results(4, None);

    assert_eq!(
        FailureCause::ImagePullBackOff.kind(),
        FailureKind::Transient
    );
    assert_eq!(view.phase.as_deref(), Some("Succeeded"));
    assert_eq!(view.pods_created, ["train-g1-r0", "train-g1-r1"]);
    assert_eq!(view.pods_deleted, ["train-g1-r0"]);
    assert_eq!(view.retries(), 1);
    assert_eq!(view.validation_pod(), Some("train-g1-r1"));

    let stuck = view
        .kubelet
        .iter()
        .find(|(_, s)| s.contains("train-g1-r0 cannot pull the image (ImagePullBackOff)"))
        .map(|(t, _)| *t);
    assert_eq!(stuck, Some(at("0:06")));
    // The first Pod waits on its image from 0:06: nbv gives it the 5-minute start
    // grace, then retries after the first backoff (1 minute); the retry's Pod starts
    // at 6:12 and runs 2 minutes.
    assert_one_retry_then_success(
        &report,
        &view,
        ["5:06", "6:06", "8:12"],
        "2026-03-02T09:06:06Z",
        "ImagePullBackOff",
        4,
    );
}

#[test]
fn a_run_longer_than_spec_timeout_is_stopped_at_the_deadline_and_fails_for_good() {
    let report = play(&scenario(
        "timeout",
        vec![
            restarting("slow")
                .spec_field("timeout", json!("1m"))
                .build(),
            restarting("quick")
                .spec_field("timeout", json!("5m"))
                .build(),
            restarting("stuck")
                .spec_field("timeout", json!("1m"))
                .build(),
        ],
        json!([
            {"job": "ml/slow", "outcome": "succeeded", "runFor": "3m", "cells": 6},
            {"job": "ml/quick", "outcome": "succeeded", "runFor": "3m", "cells": 6},
            {"job": "ml/stuck", "outcome": "imagePullBackOff"}
        ]),
        json!([]),
    ));

    // The core decides a timeout is permanent: the same notebook would take as long.
    assert_eq!(FailureCause::Timeout.kind(), FailureKind::Permanent);
    let slow = JobView::of(&report, "ml/slow");
    // Stopped before the notebook reported anything: no cell results.
    slow.assert_results(0, None);
    assert_stopped_at_one_minute(&slow, "slow");
    let ready = slow.ready();
    assert!(
        ready.message.starts_with(
            "Validation failed: Timeout: the notebook did not finish within spec.timeout (1m)"
        ),
        "{ready:?}"
    );
    assert_eq!(ready.at, at("1:06"));

    // The same run within its timeout is not stopped.
    let quick = JobView::of(&report, "ml/quick");
    assert_eq!(quick.phase.as_deref(), Some("Succeeded"));
    assert_eq!(
        quick.kubelet.last().map(|(t, s)| (*t, s.as_str())),
        Some((at("3:06"), "Pod ml/quick-g1-r0 ended: Succeeded"))
    );
    assert_eq!(quick.notifications, ["ValidationSucceeded"]);
    assert_eq!(quick.triggers, [TRIGGER]);

    // A Pod that waits on its image is stopped at its deadline too, before the
    // 5-minute start grace would fail the attempt as a (transient) image pull
    // back-off.
    let stuck = JobView::of(&report, "ml/stuck");
    assert_stopped_at_one_minute(&stuck, "stuck");
    // The notebook never ran: the message says so, and names what the Pod waited on.
    assert_eq!(
        stuck.status.message.as_deref(),
        Some(
            "Validation failed: Timeout: the notebook never started within spec.timeout (1m): \
             its container was still waiting (ImagePullBackOff) when the pod was stopped; fix \
             what keeps the pod from starting (image, volumes, node resources) or raise \
             spec.timeout"
        )
    );
}

/// Checks job `ml/<name>` with `timeout: 1m`: its Pod, started at 0:06, stopped at its
/// deadline, and the job failed for good (`Timeout`, no retry, no trigger).
fn assert_stopped_at_one_minute(view: &JobView, name: &str) {
    assert_eq!(view.phase.as_deref(), Some("Failed"), "{name}");
    assert_eq!(
        view.kubelet.last().map(|(t, s)| (*t, s.clone())),
        Some((
            at("1:06"),
            format!(
                "Pod ml/{name}-g1-r0 ended: DeadlineExceeded (activeDeadlineSeconds 60 passed \
                 since it started)"
            )
        ))
    );
    let ready = view.ready();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Timeout"),
        "{name}"
    );
    assert_eq!(view.pods_created, [format!("{name}-g1-r0")]);
    assert_eq!(view.retries(), 0, "{name}");
    assert!(view.retrying.is_empty(), "{name}: {:?}", view.retrying);
    assert_eq!(view.completions, [Phase::Failed], "{name}");
    assert_eq!(view.notifications, ["ValidationFailed"], "{name}");
    assert!(view.triggers.is_empty(), "{name}: {:?}", view.triggers);
}

#[test]
fn an_evicted_pod_is_retried_and_the_retry_succeeds() {
    let report = play(&scenario(
        "eviction",
        vec![restarting("train").build()],
        json!([
            {"job": "ml/train", "attempt": 0, "outcome": "evicted", "runFor": "3m"},
            {"job": "ml/train", "attempt": 1, "outcome": "succeeded", "runFor": "4m", "cells": 12}
        ]),
        json!([]),
    ));
    let view = JobView::of(&report, "ml/train");
    view.assert_results(12, None);

    assert_eq!(FailureCause::Evicted.kind(), FailureKind::Transient);
    assert_eq!(view.phase.as_deref(), Some("Succeeded"));
    assert_eq!(view.pods_created, ["train-g1-r0", "train-g1-r1"]);
    assert_eq!(view.pods_deleted, ["train-g1-r0"]);
    assert_eq!(view.retries(), 1);
    assert_eq!(view.validation_pod(), Some("train-g1-r1"));
    // Evicted at 3:06; retried after the first backoff (1 minute); the retry's Pod
    // starts at 4:12 and runs 4 minutes.
    assert_one_retry_then_success(
        &report,
        &view,
        ["3:06", "4:06", "8:12"],
        "2026-03-02T09:04:06Z",
        "Evicted",
        12,
    );
}

#[test]
fn an_operator_restarted_mid_run_observes_the_same_pod() {
    // A crash while the Pod runs (back 30 s later, the Pod still running), and a crash
    // after which the Pod ends while no operator runs.
    for (name, crash, down_for) in [("running", "2m", "30s"), ("ended", "3m", "2m")] {
        let report = play(&scenario(
            &format!("restart-{name}"),
            vec![restarting("train").build()],
            json!([{"job": "ml/train", "outcome": "succeeded", "runFor": "4m", "cells": 9}]),
            json!([{"at": crash, "restartOperator": {"downFor": down_for}}]),
        ));
        let view = JobView::of(&report, "ml/train");
        view.assert_results(9, None);
        let render = report.render();

        assert_eq!(
            (report.operator.starts, report.operator.crashes),
            (2, 1),
            "{render}"
        );
        assert_eq!(view.phase.as_deref(), Some("Succeeded"), "{render}");
        // One Pod for the one attempt, never deleted or replaced.
        assert_eq!(view.pods_created, ["train-g1-r0"], "{render}");
        assert!(view.pods_deleted.is_empty(), "{render}");
        assert_eq!(
            view.kubelet
                .iter()
                .filter(|(_, s)| s.starts_with("scheduled Pod"))
                .count(),
            1,
            "{render}"
        );
        let ready = view.ready();
        assert_eq!(
            ready.message,
            format!("Notebook validation succeeded: {}", cells_ran(9)),
            "{render}"
        );
        // The Pod ends at 4:06; the second operator (up at 2:30 or 5:00) records it.
        let restarted = if name == "running" {
            at("4:06")
        } else {
            at("5:00")
        };
        assert_eq!(ready.at, restarted, "{render}");
        assert_eq!(view.completions, [Phase::Succeeded], "{render}");
        assert_eq!(view.notifications, ["ValidationSucceeded"], "{render}");
        assert_eq!(view.triggers, [TRIGGER], "{render}");
    }
}

// ---------------------------------------------------------------------------------
// The upstream samples.
