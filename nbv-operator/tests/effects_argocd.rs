//! `sync` and `refresh` of Argo CD Applications against a scripted API server.

mod effects_support;

use std::time::Duration;

use effects_support::{Exchange, Seen, cache, completed_at, job, run_with, trigger};
use nbv_core::actions::Already;
use nbv_core::triggers::{Trigger, TriggerAccess};
use nbv_operator::operator::effects::{EffectError, Executor, ExecutorConfig, TriggerOutcome};
use nbv_operator::operator::effects::{SyncReport, appproject_resource};
use nbv_operator::operator::resources::application_resource;
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
            },
            "status": {"operationState": null}
        }),
    )
}

type Fired = (Result<TriggerOutcome, EffectError>, Vec<Seen>);

/// Fires `trigger` of job `ml/train` for its run that ended at [`completed_at`],
/// against the API server's `script`.
async fn fire(config: ExecutorConfig, trigger: Trigger, script: Vec<Exchange>) -> Fired {
    fire_with(config, |executor| executor, script, trigger).await
}

/// [`fire`], with the executor `setup` first (its watch caches).
async fn fire_with(
    config: ExecutorConfig,
    setup: impl FnOnce(Executor) -> Executor,
    script: Vec<Exchange>,
    trigger: Trigger,
) -> Fired {
    run_with(config, setup, script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &trigger, completed_at())
            .await
    })
    .await
}

/// Sets the executor up to read `applications` from a watch cache of `argocd`.
fn cached(applications: Vec<Value>) -> impl FnOnce(Executor) -> Executor {
    |executor| {
        executor.with_applications(
            cache(application_resource(), applications),
            vec!["argocd".into()],
        )
    }
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
                },
                "status": {"operationState": null}
            }),
        )
        .reply(200, app),
    ];
    let (outcome, seen) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
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
    let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn sync_waits_while_an_operation_is_requested_and_writes_nothing() {
    let state = json!({"operation": {"sync": {}, "initiatedBy": {"username": "admin"}}});
    let script = vec![Exchange::get(APP).reply(200, application(state))];
    let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
    assert_eq!(
        outcome.expect("deferred"),
        TriggerOutcome::Deferred {
            reason: "Application argocd/serving has an operation requested; the sync starts \
                     when it has finished"
                .into(),
            until: None,
        }
    );
}

#[tokio::test]
async fn a_stuck_operation_state_is_cleared_and_the_sync_starts() {
    // No operation, yet an operation state that never completed (the controller died
    // mid-sync): `argocd app sync` clears it and starts; so does nbv.
    for phase in ["Running", "Terminating", ""] {
        let state = json!({"status": {"operationState": {"phase": phase}}});
        let script = vec![
            Exchange::get(APP).reply(200, application(state)),
            bare_sync().reply(200, json!({})),
        ];
        let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
        let Ok(TriggerOutcome::Done { summary }) = outcome else {
            panic!("{phase}: {outcome:?}");
        };
        assert!(
            summary.contains("clearing a leftover operation state"),
            "{summary}"
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
        let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
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
    let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
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
    let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
    let Ok(TriggerOutcome::AlreadyDone {
        reason: Already::Synced { .. },
        summary,
    }) = outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(
        summary.contains("full sync started at 2026-01-24T22:30:01Z"),
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
        let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
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
    let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
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
            "argocd.argoproj.io/refresh": "normal",
            // The time of the request, as newer Argo CD writes it with every refresh.
            "argocd.argoproj.io/refresh-timestamp": "2026-01-24T22:35:00.000000000Z"
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
    let (outcome, seen) = fire(flagged, refresh_trigger(), script).await;
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
    let (outcome, _) = fire(ExecutorConfig::default(), refresh_trigger(), script).await;
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
    let (outcome, _) = fire(ExecutorConfig::default(), refresh_trigger(), script).await;
    assert_eq!(
        outcome.expect("nothing to do"),
        TriggerOutcome::AlreadyDone {
            reason: Already::Refreshed {
                at: "2026-01-24T22:31:00Z".into()
            },
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
    let (outcome, _) = fire(ExecutorConfig::default(), sync_trigger(), script).await;
    let error = outcome.expect_err("deleting");
    assert_eq!(
        error.to_string(),
        "sync Application argocd/serving: the Application is being deleted"
    );
    assert!(!error.is_retryable());
}

/// The AppProject `default` in `argocd` with these sync windows.
fn project(windows: Value) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
        "metadata": {"name": "default", "namespace": "argocd", "resourceVersion": "7"},
        "spec": {"syncWindows": windows}
    })
}

#[tokio::test]
async fn the_application_comes_from_the_watch_cache_not_a_get() {
    let app = application(json!({}));
    // The only request: the sync itself.
    let script = vec![bare_sync().reply(200, json!({}))];
    let (outcome, seen) = fire_with(
        ExecutorConfig::default(),
        cached(vec![app]),
        script,
        sync_trigger(),
    )
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
    assert_eq!(seen.len(), 1);

    // Not in the cache of a namespace it watches: the cache keeps only the
    // Applications jobs name, and one named a moment ago may not be there yet, so it
    // is read. It does not exist, and (as for any missing Application) only the
    // Namespace's opt-in could still allow the trigger.
    let (outcome, _) = fire_with(
        ExecutorConfig::default(),
        cached(vec![]),
        vec![
            Exchange::get(APP).fail(404, "NotFound", "applications \"serving\" not found"),
            Exchange::get("/api/v1/namespaces/argocd").fail(
                404,
                "NotFound",
                "namespaces \"argocd\" not found",
            ),
        ],
        sync_trigger(),
    )
    .await;
    assert!(
        matches!(outcome, Err(EffectError::Refused(_))),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_closed_sync_window_defers_the_sync_until_it_opens() {
    // The executor's clock reads 22:35; a freeze from 22:00 for 2h covers it.
    let freeze = json!([{"kind": "deny", "schedule": "0 22 * * *", "duration": "2h",
                         "namespaces": ["ml"], "description": "nightly freeze"}]);
    let (outcome, seen) = fire_with(
        ExecutorConfig::default(),
        |executor| {
            cached(vec![application(json!({}))])(executor)
                .with_projects(cache(appproject_resource(), vec![project(freeze)]))
        },
        vec![],
        sync_trigger(),
    )
    .await;
    assert!(
        seen.is_empty(),
        "nothing is written while the window is closed"
    );
    let Ok(TriggerOutcome::Deferred { reason, until }) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        until,
        Some(chrono::TimeZone::with_ymd_and_hms(&chrono::Utc, 2026, 1, 25, 0, 0, 0).unwrap())
    );
    insta::assert_snapshot!(reason);

    // A window that allows manual syncs lets nbv's sync (a manual one) through.
    let manual = json!([{"kind": "deny", "schedule": "0 22 * * *", "duration": "2h",
                         "namespaces": ["ml"], "manualSync": true}]);
    let (outcome, _) = fire_with(
        ExecutorConfig::default(),
        |executor| {
            cached(vec![application(json!({}))])(executor)
                .with_projects(cache(appproject_resource(), vec![project(manual)]))
        },
        vec![bare_sync().reply(200, json!({}))],
        sync_trigger(),
    )
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn the_result_of_the_sync_nbv_started_is_read_from_the_cache() {
    let info = json!([{"name": "nbv-run", "value": MARKER}]);
    let cases = [
        (
            json!({"operation": {"sync": {}, "info": info.clone()}, "status": null}),
            "in progress",
        ),
        (
            json!({"status": {"operationState": {"phase": "Running", "operation": {"info": info.clone()}}}}),
            "in progress",
        ),
        (
            json!({"status": {"operationState": {"phase": "Succeeded", "message": "successfully synced (all tasks run)", "operation": {"info": info.clone()}}}}),
            "succeeded",
        ),
        (
            json!({"status": {"operationState": {"phase": "Failed", "message": "one or more objects failed to apply", "operation": {"info": info}}}}),
            "failed",
        ),
    ];
    for (state, expected) in cases {
        let app = application(state);
        let (report, seen) = run_with(
            ExecutorConfig::default(),
            cached(vec![app]),
            vec![],
            |executor| async move {
                executor
                    .sync_result(&job("ml", "train"), sync_trigger().target(), completed_at())
                    .await
            },
        )
        .await;
        assert!(seen.is_empty());
        let report = report.expect("read");
        let kind = match &report {
            SyncReport::InProgress { .. } => "in progress",
            SyncReport::Finished {
                succeeded: true, ..
            } => "succeeded",
            SyncReport::Finished {
                succeeded: false, ..
            } => "failed",
            SyncReport::Replaced { .. } => "replaced",
        };
        assert_eq!(kind, expected, "{report:?}");
    }
}

#[tokio::test]
async fn a_sync_that_looks_replaced_in_the_cache_is_read_again() {
    // The cache shows no trace of the run's sync: it may not hold the operation nbv
    // wrote a moment ago yet. A GET decides: still there (in progress), or gone.
    let info = json!([{"name": "nbv-run", "value": MARKER}]);
    let ours = application(json!({"operation": {"sync": {}, "info": info}, "status": null}));
    let cases = [(ours, "in progress"), (application(json!({})), "replaced")];
    for (read, expected) in cases {
        let (report, seen) = run_with(
            ExecutorConfig::default(),
            cached(vec![application(json!({}))]),
            vec![Exchange::get(APP).reply(200, read)],
            |executor| async move {
                executor
                    .sync_result(&job("ml", "train"), sync_trigger().target(), completed_at())
                    .await
            },
        )
        .await;
        assert_eq!(seen.len(), 1, "one GET");
        let kind = match report.expect("read") {
            SyncReport::InProgress { .. } => "in progress",
            SyncReport::Replaced { .. } => "replaced",
            other => panic!("{other:?}"),
        };
        assert_eq!(kind, expected);
    }
}

#[tokio::test(start_paused = true)]
async fn reads_waiting_together_for_the_cache_all_read_it_once_listed() {
    // At a start with several syncs due, each waits for the Application cache. All of
    // them read it once it lists, a second later: no GET, no wait of the full patience.
    let mut writer = kube::runtime::reflector::store::Writer::<
        nbv_operator::operator::projection::CachedApplication,
    >::new(application_resource());
    let store = writer.as_reader();
    let info = json!([{"name": "nbv-run", "value": MARKER}]);
    let ours = application(json!({"operation": {"sync": {}, "info": info}, "status": null}));
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let app = serde_json::from_value(ours).expect("an Application");
        writer.apply_watcher_event(&kube::runtime::watcher::Event::Init);
        writer.apply_watcher_event(&kube::runtime::watcher::Event::InitApply(app));
        writer.apply_watcher_event(&kube::runtime::watcher::Event::InitDone);
    });
    let started = tokio::time::Instant::now();
    let (reports, seen) = run_with(
        ExecutorConfig::default(),
        |executor| executor.with_applications(store, vec!["argocd".into()]),
        vec![],
        |executor| async move {
            // Each in a task of its own, as the controller's reconciles are woken.
            let reads = (0..4).map(|_| {
                let executor = executor.clone();
                tokio::spawn(async move {
                    let trigger = sync_trigger();
                    executor
                        .sync_result(&job("ml", "train"), trigger.target(), completed_at())
                        .await
                })
            });
            futures::future::join_all(reads).await
        },
    )
    .await;
    assert!(seen.is_empty(), "{seen:?}");
    for report in reports {
        let report = report.expect("the read's task");
        assert!(
            matches!(report, Ok(SyncReport::InProgress { .. })),
            "{report:?}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_cache_that_has_not_listed_yet_is_not_trusted() {
    // At the operator's start the cache is empty because it has not listed yet, not
    // because the Application is gone: after a short wait, nbv reads it with a GET.
    let empty = kube::runtime::reflector::store::Writer::<
        nbv_operator::operator::projection::CachedApplication,
    >::new(application_resource())
    .as_reader();
    let script = vec![
        Exchange::get(APP).reply(200, application(json!({}))),
        bare_sync().reply(200, json!({})),
    ];
    let (outcome, _) = fire_with(
        ExecutorConfig::default(),
        |executor| executor.with_applications(empty, vec!["argocd".into()]),
        script,
        sync_trigger(),
    )
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_sync_waits_for_the_appproject_cache_to_list() {
    // An AppProject cache that has not listed yet knows no window: syncing then could
    // go through a freeze it would show a moment later. The sync waits and is retried.
    let empty = kube::runtime::reflector::store::Writer::<kube::api::DynamicObject>::new(
        appproject_resource(),
    )
    .as_reader();
    let (outcome, seen) = fire_with(
        ExecutorConfig::default(),
        |executor| cached(vec![application(json!({}))])(executor).with_projects(empty),
        vec![],
        sync_trigger(),
    )
    .await;
    assert!(seen.is_empty(), "nothing is written: {seen:?}");
    let Err(error) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(error.is_retryable(), "{error}");
    insta::assert_snapshot!(error.to_string());
}

/// The AppProjects may not be read (the Role of config/rbac/argocd_role.yaml is missing,
/// as under OLM until the second install step).
fn role_missing() -> nbv_operator::operator::argocd::AccessWatch {
    let access = nbv_operator::operator::argocd::AccessWatch::new("openshift-gitops");
    access.projects_read(false);
    access
}

#[tokio::test(start_paused = true)]
async fn without_the_role_a_sync_waits_and_names_it() {
    // No sync window can be read: nbv does not sync inside one it cannot see. Nothing
    // is written, no attempt is counted, and the reason says which Role is missing.
    let (outcome, seen) = fire_with(
        ExecutorConfig::default(),
        |executor| {
            cached(vec![application(json!({}))])(executor).with_argocd_access(role_missing())
        },
        vec![],
        sync_trigger(),
    )
    .await;
    assert!(seen.is_empty(), "nothing is written: {seen:?}");
    let Ok(TriggerOutcome::Deferred { reason, until }) = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(until, None);
    for part in [
        "Role nbv-operator-argocd and RoleBinding nbv-operator-argocd",
        "config/rbac/argocd_role.yaml",
        "namespace openshift-gitops",
        "list/watch appprojects.argoproj.io",
    ] {
        assert!(reason.contains(part), "{part}: {reason}");
    }
}

#[tokio::test(start_paused = true)]
async fn without_the_role_a_sync_already_done_stays_done() {
    // The run's sync is already on the Application: reported as done, not as waiting.
    let requested = application(json!({"operation": {
        "sync": {}, "initiatedBy": {"username": "nbv-operator"},
        "info": [{"name": "nbv-run", "value": MARKER}]
    }}));
    let (outcome, seen) = fire_with(
        ExecutorConfig::default(),
        |executor| cached(vec![requested])(executor).with_argocd_access(role_missing()),
        vec![],
        sync_trigger(),
    )
    .await;
    assert!(seen.is_empty(), "{seen:?}");
    assert!(
        matches!(
            outcome,
            Ok(TriggerOutcome::AlreadyDone {
                reason: Already::SyncRequested,
                ..
            })
        ),
        "{outcome:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn once_the_role_is_there_the_sync_is_written() {
    let access = role_missing();
    access.projects_read(true);
    let script = vec![bare_sync().reply(200, json!({}))];
    let (outcome, _) = fire_with(
        ExecutorConfig::default(),
        |executor| cached(vec![application(json!({}))])(executor).with_argocd_access(access),
        script,
        sync_trigger(),
    )
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::Done { .. })),
        "{outcome:?}"
    );
}
