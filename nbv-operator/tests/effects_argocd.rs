//! `sync` and `refresh` of Argo CD Applications against a scripted API server.

mod effects_support;

use effects_support::{Exchange, completed_at, job, run, trigger};
use nbv_core::triggers::{Trigger, TriggerAccess};
use nbv_operator::effects::{EffectError, ExecutorConfig, TriggerOutcome};
use serde_json::{Value, json};

const APP: &str = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/serving";
const MARKER: &str = "ml/train@2026-01-24T22:30:00Z";

fn sync_trigger() -> Trigger {
    trigger(
        "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}",
        "ml",
    )
}

fn refresh_trigger() -> Trigger {
    trigger(
        "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: refresh}",
        "ml",
    )
}

/// An Application in `argocd` that deploys into `ml`, at resourceVersion 42.
fn application(extra: Value) -> Value {
    let mut app = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "serving", "namespace": "argocd", "resourceVersion": "42"},
        "spec": {
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"},
            "source": {"repoURL": "https://example.com/gitops.git", "path": "serving",
                       "targetRevision": "main"},
        },
        "status": {"operationState": {
            "phase": "Succeeded",
            "operation": {"sync": {}, "initiatedBy": {"automated": true}}
        }}
    });
    merge(&mut app, extra);
    app
}

/// The sync nbv writes to an Application without a sync policy, against version 42.
fn bare_sync() -> Exchange {
    Exchange::merge_patch(
        APP,
        json!({
            "metadata": {"resourceVersion": "42"},
            "operation": {
                "sync": {},
                "initiatedBy": {"username": "nbv-operator"},
                "info": [{"name": "nbv-run", "value": MARKER}]
            }
        }),
    )
}

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch,
    }
}

#[tokio::test]
async fn sync_writes_the_operation_as_the_argocd_cli_does() {
    let app = application(json!({"spec": {"syncPolicy": {
        "syncOptions": ["CreateNamespace=true", "ServerSideApply=true"],
        "retry": {"limit": 2, "backoff": {"duration": "5s", "factor": 2}}
    }}}));
    let script = vec![
        // The Application deploys into the job's namespace: no Namespace is read.
        Exchange::get(APP).reply(200, app.clone()),
        Exchange::merge_patch(
            APP,
            json!({
                "metadata": {"resourceVersion": "42"},
                "operation": {
                    "sync": {"syncOptions": ["CreateNamespace=true", "ServerSideApply=true"]},
                    "initiatedBy": {"username": "nbv-operator"},
                    "info": [{"name": "nbv-run", "value": MARKER}],
                    "retry": {"limit": 2, "backoff": {"duration": "5s", "factor": 2}}
                }
            }),
        )
        .reply(200, app),
    ];
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
            .await
    })
    .await;
    assert_eq!(
        outcome.expect("sync started"),
        TriggerOutcome::Done {
            summary: format!("started a sync of Application argocd/serving (nbv-run: {MARKER})")
        }
    );
    insta::assert_json_snapshot!(seen);
}

#[tokio::test]
async fn sync_without_a_sync_policy_writes_a_bare_operation() {
    let script = vec![
        Exchange::get(APP).reply(200, application(json!({"status": null}))),
        bare_sync().reply(200, json!({})),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn sync_waits_while_an_operation_runs_and_writes_nothing() {
    let busy = [
        (
            json!({"operation": {"sync": {}, "initiatedBy": {"username": "admin"}}}),
            "Application argocd/serving has an operation requested; the sync starts when it has finished",
        ),
        (
            json!({"status": {"operationState": {"phase": "Running"}}}),
            "Application argocd/serving is running an operation (phase Running); the sync starts when it has finished",
        ),
        (
            json!({"status": {"operationState": {"phase": "Terminating"}}}),
            "Application argocd/serving is running an operation (phase Terminating); the sync starts when it has finished",
        ),
    ];
    for (state, reason) in busy {
        let script = vec![Exchange::get(APP).reply(200, application(state))];
        let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
                .await
        })
        .await;
        assert_eq!(
            outcome.expect("deferred"),
            TriggerOutcome::Deferred {
                reason: reason.into()
            }
        );
    }
}

#[tokio::test]
async fn sync_is_skipped_when_the_application_already_carries_this_run() {
    let info = json!([{"name": "nbv-run", "value": MARKER}]);
    let states = [
        // Argo CD ran it (or is running it): the operation is in operationState.
        json!({"status": {"operationState": {"phase": "Running",
            "operation": {"sync": {}, "info": info.clone()}}}}),
        json!({"status": {"operationState": {"phase": "Succeeded",
            "operation": {"sync": {}, "info": info.clone()}}}}),
        // Requested, not yet picked up.
        json!({"operation": {"sync": {}, "info": info}}),
    ];
    for state in states {
        let script = vec![Exchange::get(APP).reply(200, application(state))];
        let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
                .await
        })
        .await;
        assert!(
            matches!(outcome, Ok(TriggerOutcome::AlreadyDone { .. })),
            "{outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_sync_of_another_run_does_not_count_as_this_one() {
    let other = json!({"status": {"operationState": {"phase": "Succeeded",
        "operation": {"sync": {}, "info": [{"name": "nbv-run",
                                             "value": "ml/train@2026-01-23T10:00:00Z"}]}}}});
    let script = vec![
        Exchange::get(APP).reply(200, application(other)),
        bare_sync().reply(200, json!({})),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_sync_that_succeeded_after_the_run_ended_counts_as_done() {
    // Argo CD's auto-sync started a second after the run ended (30 min past) and
    // replaced the operation that carried this run's marker.
    let auto_sync = |phase: &str, started: &str| {
        application(json!({"status": {"operationState": {"phase": phase,
            "startedAt": started, "operation": {"sync": {}, "initiatedBy": {"automated": true}}}}}))
    };
    let script =
        vec![Exchange::get(APP).reply(200, auto_sync("Succeeded", "2026-01-24T22:30:01Z"))];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
            .await
    })
    .await;
    let Ok(TriggerOutcome::AlreadyDone { summary }) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(
        summary.contains("operation started at 2026-01-24T22:30:01Z"),
        "{summary}"
    );

    // Started before the run ended, or failed: nbv still syncs.
    for (phase, started) in [
        ("Succeeded", "2026-01-24T22:29:59Z"),
        ("Failed", "2026-01-24T22:30:01Z"),
    ] {
        let script = vec![
            Exchange::get(APP).reply(200, auto_sync(phase, started)),
            bare_sync().reply(200, json!({})),
        ];
        let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
                .await
        })
        .await;
        assert!(
            matches!(outcome, Ok(TriggerOutcome::Done { .. })),
            "{phase} at {started}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn an_operation_started_meanwhile_makes_the_sync_conflict_and_retry() {
    let script = vec![
        Exchange::get(APP).reply(200, application(json!({}))),
        bare_sync().fail(
            409,
            "Conflict",
            "the object has been modified; please apply your changes to the latest version",
        ),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("conflict");
    assert!(matches!(error, EffectError::Conflict { .. }));
    assert!(error.is_retryable());
    insta::assert_snapshot!(error.to_string());
}

#[tokio::test]
async fn refresh_of_an_application_sets_both_annotations() {
    let body = json!({"metadata": {
        "resourceVersion": "42",
        "annotations": {
            "mlops.dev/restart-timestamp": "2026-01-24T22:30:00Z",
            "argocd.argoproj.io/refresh": "normal"
        }
    }});
    // Allowed by the operator flag: the Application is read only for its timestamp.
    let flagged = ExecutorConfig {
        trigger_access: TriggerAccess::from_list("argocd"),
        ..ExecutorConfig::default()
    };
    let script = vec![
        Exchange::get(APP).reply(200, application(json!({}))),
        Exchange::merge_patch(APP, body.clone()).reply(200, json!({})),
    ];
    let (outcome, seen) = run(flagged, script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &refresh_trigger(), completed_at())
            .await
    })
    .await;
    assert_eq!(
        outcome.expect("refreshed"),
        TriggerOutcome::Done {
            summary: "Application argocd/serving refreshed (mlops.dev/restart-timestamp: \
                      2026-01-24T22:30:00Z, argocd.argoproj.io/refresh: normal)"
                .into()
        }
    );
    insta::assert_json_snapshot!(seen);

    // Without the flag, the Application is read to learn where it deploys, and that
    // one read also serves the refresh.
    let script = vec![
        Exchange::get(APP).reply(200, application(json!({}))),
        Exchange::merge_patch(APP, body).reply(200, json!({})),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &refresh_trigger(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn an_application_refreshed_by_a_newer_run_is_not_refreshed_again() {
    let newer = application(json!({"metadata": {"annotations": {
        "mlops.dev/restart-timestamp": "2026-01-24T22:31:00Z"
    }}}));
    let script = vec![Exchange::get(APP).reply(200, newer)];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &refresh_trigger(), completed_at())
            .await
    })
    .await;
    assert_eq!(
        outcome.expect("nothing to do"),
        TriggerOutcome::AlreadyDone {
            summary: "Application argocd/serving already refreshed at 2026-01-24T22:31:00Z \
                      (not older than this run)"
                .into()
        }
    );
}

#[tokio::test]
async fn an_application_being_deleted_is_not_synced() {
    let deleting = application(json!({"metadata": {"deletionTimestamp": "2026-01-24T22:29:00Z"}}));
    let script = vec![Exchange::get(APP).reply(200, deleting)];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &sync_trigger(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("deleting");
    assert_eq!(
        error.to_string(),
        "sync Application argocd/serving: the Application is being deleted"
    );
    assert!(!error.is_retryable());
}
