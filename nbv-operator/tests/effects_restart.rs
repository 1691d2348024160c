//! The `restart` trigger against a scripted API server: which requests, exactly.

mod effects_support;

use effects_support::{
    Exchange, completed_at, job, pod, pod_list, ready, rolling_restart_patch, run, trigger,
    workload,
};
use nbv_core::actions::Already;
use nbv_operator::operator::effects::{EffectError, ExecutorConfig, TriggerOutcome};
use serde_json::json;

const ISVC: &str = "/apis/serving.kserve.io/v1beta1/namespaces/ml/inferenceservices/predictor";
const PODS: &str = "/api/v1/namespaces/ml/pods";

fn isvc_trigger() -> nbv_core::triggers::Trigger {
    trigger(
        "{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: predictor, action: restart}",
        "ml",
    )
}

/// What the restart waits for once it evicted `old-a`.
const EVICTED_OLD_A: &str = "evicted pod old-a; the next waits until it is replaced by a Ready pod";

/// What the restart waits for, once deferred.
fn waits_for(outcome: Result<TriggerOutcome, EffectError>) -> String {
    match outcome {
        Ok(TriggerOutcome::Deferred {
            reason,
            until: Some(_),
        }) => reason,
        other => panic!("not deferred: {other:?}"),
    }
}

async fn fire_isvc(
    script: Vec<Exchange>,
) -> (
    Result<TriggerOutcome, EffectError>,
    Vec<effects_support::Seen>,
) {
    run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &isvc_trigger(), completed_at())
            .await
    })
    .await
}

#[tokio::test]
async fn inference_service_restart_evicts_one_pod_older_than_the_run_never_deletes() {
    // KServe's label finds the pods: the InferenceService itself is not read.
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
            200,
            pod_list(vec![
                ready(pod("old-a", "2026-01-24T22:00:00Z", &[]), true),
                // Created after the run ended: it already serves the new model.
                ready(pod("new-b", "2026-01-24T22:30:30Z", &[]), true),
                // Created in the very second the run ended: not older, spared.
                ready(pod("same-second", "2026-01-24T22:30:00Z", &[]), true),
                ready(pod("old-c", "2026-01-24T22:29:59Z", &[]), true),
            ]),
        ),
        // The version of the Eviction API the server serves, then one eviction: the
        // oldest pod, guarded by its uid.
        Exchange::core_discovery(),
        Exchange::evict("old-a"),
    ];
    let (outcome, seen) = fire_isvc(script).await;
    assert_eq!(waits_for(outcome), EVICTED_OLD_A);
    insta::assert_json_snapshot!(seen);
}

#[tokio::test]
async fn the_next_pod_waits_while_the_last_terminates_or_its_replacement_is_not_ready() {
    let mut terminating = ready(pod("old-a", "2026-01-24T22:00:00Z", &[]), true);
    terminating["metadata"]["deletionTimestamp"] = json!("2026-01-24T22:30:32Z");
    let old_c = || ready(pod("old-c", "2026-01-24T22:29:59Z", &[]), true);
    for (pods, reason) in [
        (vec![terminating, old_c()], "pod old-a is terminating"),
        (
            vec![
                ready(pod("new-b", "2026-01-24T22:30:30Z", &[]), false),
                old_c(),
            ],
            "pod new-b, created after the run, is not Ready yet",
        ),
    ] {
        let script = vec![
            Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor")
                .reply(200, pod_list(pods)),
        ];
        let (outcome, seen) = fire_isvc(script).await;
        assert_eq!(waits_for(outcome), reason);
        assert_eq!(seen.len(), 1, "a LIST and nothing else");
    }
}

const PREDICTOR_RS: &str = "/apis/apps/v1/namespaces/ml/replicasets/predictor-7f";

/// A predictor pod created at `created`, controlled by the ReplicaSet `predictor-7f`.
fn predictor_pod(name: &str, created: &str) -> serde_json::Value {
    let rs = [("apps/v1", "ReplicaSet", "predictor-7f", "rs-1")];
    ready(pod(name, created, &rs), true)
}

/// The ReplicaSet `predictor-7f`, wanting `replicas` pods.
fn predictor_replica_set(replicas: u32) -> serde_json::Value {
    json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
           "metadata": {"name": "predictor-7f", "namespace": "ml", "uid": "rs-1"},
           "spec": {"replicas": replicas}})
}

#[tokio::test]
async fn before_an_eviction_the_pods_replica_set_is_read_once() {
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
            200,
            pod_list(vec![
                predictor_pod("old-a", "2026-01-24T22:00:00Z"),
                predictor_pod("old-b", "2026-01-24T22:10:00Z"),
            ]),
        ),
        Exchange::get(PREDICTOR_RS).reply(200, predictor_replica_set(2)),
        Exchange::core_discovery(),
        Exchange::evict("old-a"),
    ];
    let (outcome, seen) = fire_isvc(script).await;
    assert_eq!(waits_for(outcome), EVICTED_OLD_A);
    assert_eq!(seen.len(), 4);
}

/// The listing of the predictor's pods once `old-a` was evicted and is gone, its
/// replacement not created yet.
fn only_old_b_left() -> Exchange {
    Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
        200,
        pod_list(vec![predictor_pod("old-b", "2026-01-24T22:10:00Z")]),
    )
}

#[tokio::test]
async fn an_evicted_pod_not_replaced_yet_holds_the_next_eviction_back_without_a_budget() {
    // old-a was evicted and is gone; its ReplicaSet has not created the replacement.
    // What the pods show alone (one old pod, nothing terminating, no newer pod) would
    // evict old-b and leave the model server with no pod at all.
    let script = vec![
        only_old_b_left(),
        Exchange::get(PREDICTOR_RS).reply(200, predictor_replica_set(2)),
    ];
    let (outcome, _) = fire_isvc(script).await;
    assert_eq!(
        waits_for(outcome),
        "ReplicaSet predictor-7f has 1 of its 2 pods; the next pod is evicted once it has them all"
    );
}

#[tokio::test]
async fn a_replica_set_that_cannot_be_read_fails_the_firing_and_evicts_nothing() {
    let script = vec![
        only_old_b_left(),
        Exchange::get(PREDICTOR_RS).fail(
            403,
            "Forbidden",
            "replicasets.apps \"predictor-7f\" is forbidden",
        ),
    ];
    let (outcome, _) = fire_isvc(script).await;
    let error = outcome.expect_err("forbidden");
    assert!(
        error.to_string().contains("ReplicaSet ml/predictor-7f"),
        "{error}"
    );
}

#[tokio::test]
async fn inference_service_restart_finishes_once_every_pod_is_newer_and_ready() {
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
            200,
            pod_list(vec![ready(pod("new-b", "2026-01-24T22:30:30Z", &[]), true)]),
        ),
    ];
    let (outcome, _) = fire_isvc(script).await;
    assert_eq!(
        outcome.expect("restarted"),
        TriggerOutcome::Done {
            summary: "every pod of InferenceService ml/predictor (1, all Ready) was created \
                      after the run ended at 2026-01-24T22:30:00Z"
                .into()
        }
    );
}

#[tokio::test]
async fn a_budget_that_refuses_defers_the_restart_naming_it_and_nothing_is_deleted() {
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
            200,
            pod_list(vec![ready(pod("old", "2026-01-24T22:00:00Z", &[]), true)]),
        ),
        Exchange::core_discovery(),
        Exchange::evict("old").reply(
            429,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 429,
                   "reason": "TooManyRequests",
                   "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                   "details": {"causes": [{"reason": "DisruptionBudget",
                       "message": "The disruption budget predictor needs 1 healthy pods and has 1 currently"}]}}),
        ),
    ];
    let (outcome, _) = fire_isvc(script).await;
    assert_eq!(
        waits_for(outcome),
        "waits for the PodDisruptionBudget to allow evicting pod old: Cannot evict pod as it \
         would violate the pod's disruption budget. (The disruption budget predictor needs 1 \
         healthy pods and has 1 currently)"
    );
}

#[tokio::test]
async fn a_pod_gone_or_replaced_meanwhile_counts_as_evicted() {
    let gone = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
            200,
            pod_list(vec![pod("gone", "2026-01-24T22:00:00Z", &[])]),
        ),
        Exchange::core_discovery(),
        Exchange::evict("gone").fail(404, "NotFound", "pods \"gone\" not found"),
    ];
    let (outcome, _) = fire_isvc(gone).await;
    assert!(waits_for(outcome).starts_with("evicted pod gone;"));

    let replaced = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor").reply(
            200,
            pod_list(vec![pod("replaced", "2026-01-24T22:00:00Z", &[])]),
        ),
        Exchange::core_discovery(),
        Exchange::evict("replaced").fail(
            409,
            "Conflict",
            "Precondition failed: UID in precondition: uid-replaced, UID in object meta: other",
        ),
        // The conflict is confirmed: the pod of that name is another one.
        Exchange::get(format!("{PODS}/replaced")).reply(200, {
            let mut other = pod("replaced", "2026-01-24T22:31:00Z", &[]);
            other["metadata"]["uid"] = json!("other");
            other
        }),
    ];
    let (outcome, _) = fire_isvc(replaced).await;
    assert!(waits_for(outcome).starts_with("evicted pod replaced;"));
}

#[tokio::test]
async fn a_conflict_on_a_pod_that_is_still_there_is_retried_not_counted_done() {
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor")
            .reply(200, pod_list(vec![pod("old", "2026-01-24T22:00:00Z", &[])])),
        Exchange::core_discovery(),
        Exchange::evict("old").fail(
            409,
            "Conflict",
            "Operation cannot be fulfilled on pods \"old\": please try again",
        ),
        // The same pod still runs: the restart has not happened.
        Exchange::get(format!("{PODS}/old")).reply(200, pod("old", "2026-01-24T22:00:00Z", &[])),
    ];
    let (outcome, _) = fire_isvc(script).await;
    let error = outcome.expect_err("the old pod still runs");
    assert!(error.is_retryable(), "{error:?}");
    assert!(error.to_string().contains("evict Pod ml/old"), "{error}");
}

#[tokio::test]
async fn a_listing_that_finds_no_pod_reads_the_inference_service_and_reports_it_missing() {
    // A misspelled name finds no pod either: only the read tells the two apart.
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor")
            .reply(200, pod_list(vec![])),
        Exchange::get(ISVC).fail(
            404,
            "NotFound",
            "inferenceservices.serving.kserve.io \"predictor\" not found",
        ),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &isvc_trigger(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("not found");
    assert_eq!(error.to_string(), "InferenceService ml/predictor not found");
    assert!(matches!(error, EffectError::NotFound { .. }));
}

#[tokio::test]
async fn an_inference_service_without_pods_is_read_once_and_nothing_is_evicted() {
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor")
            .reply(200, pod_list(vec![])),
        Exchange::get(ISVC).reply(200, json!({"metadata": {"name": "predictor"}})),
    ];
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &isvc_trigger(), completed_at())
            .await
    })
    .await;
    assert!(
        matches!(
            outcome,
            Ok(TriggerOutcome::AlreadyDone {
                reason: Already::NoPodPredatesRun,
                ..
            })
        ),
        "{outcome:?}"
    );
    assert_eq!(seen.len(), 2, "one LIST, one GET");
}

#[tokio::test]
async fn a_failing_eviction_is_a_retryable_error_naming_the_pod() {
    let script = vec![
        Exchange::list(PODS, "serving.kserve.io/inferenceservice=predictor")
            .reply(200, pod_list(vec![pod("old", "2026-01-24T22:00:00Z", &[])])),
        Exchange::core_discovery(),
        Exchange::evict("old").fail(500, "InternalError", "etcdserver: request timed out"),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &isvc_trigger(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("500");
    assert!(error.is_retryable());
    assert_eq!(
        error.to_string(),
        "evict Pod ml/old failed: HTTP 500 InternalError: etcdserver: request timed out; \
         it will be retried"
    );
}

#[tokio::test]
async fn rolling_restart_of_deployments_statefulsets_and_daemonsets() {
    for (kind, plural) in [
        ("Deployment", "deployments"),
        ("StatefulSet", "statefulsets"),
        ("DaemonSet", "daemonsets"),
    ] {
        let path = format!("/apis/apps/v1/namespaces/ml/{plural}/web");
        let script = vec![
            Exchange::get(path.clone()).reply(200, workload(kind, "ml", "web", None)),
            Exchange::merge_patch(path, rolling_restart_patch())
                .reply(200, json!({"metadata": {"name": "web"}})),
        ];
        let restart = trigger(
            &format!("{{apiVersion: apps/v1, kind: {kind}, name: web, action: restart}}"),
            "ml",
        );
        let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &restart, completed_at())
                .await
        })
        .await;
        assert_eq!(
            outcome.expect("patched"),
            TriggerOutcome::Done {
                summary: format!(
                    "rolling restart of {kind} ml/web (restartedAt 2026-01-24T22:30:00Z)"
                )
            }
        );
        if kind == "Deployment" {
            insta::assert_json_snapshot!("rolling_restart_request", seen);
        }
    }
}

const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/ml/deployments/web";

fn restart_deployment() -> nbv_core::triggers::Trigger {
    trigger(
        "{apiVersion: apps/v1, kind: Deployment, name: web, action: restart}",
        "ml",
    )
}

#[tokio::test]
async fn a_workload_restarted_at_the_run_or_later_is_not_restarted_again() {
    // A newer run's restart (also written with an offset), and this run's own, whose
    // answer was lost: writing would move the time back or change nothing.
    for existing in [
        "2026-01-24T22:31:00Z",
        "2026-01-24T23:31:00+01:00",
        "2026-01-24T22:30:00Z",
    ] {
        let script = vec![
            Exchange::get(DEPLOYMENT)
                .reply(200, workload("Deployment", "ml", "web", Some(existing))),
        ];
        let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &restart_deployment(), completed_at())
                .await
        })
        .await;
        assert_eq!(seen.len(), 1, "only the read, for {existing}");
        assert_eq!(
            outcome.expect("nothing to do"),
            TriggerOutcome::AlreadyDone {
                reason: Already::Restarted {
                    at: existing.to_string()
                },
                summary: format!(
                    "Deployment ml/web already restarted at {existing} (not older than this run)"
                )
            }
        );
    }
}

#[tokio::test]
async fn an_older_or_foreign_restart_time_is_overwritten_with_the_version_read() {
    // An older run's restart, and values that are not times nbv wrote.
    for existing in ["2026-01-24T22:29:59Z", "2026-01-24 22:31", "soon"] {
        let script = vec![
            Exchange::get(DEPLOYMENT)
                .reply(200, workload("Deployment", "ml", "web", Some(existing))),
            Exchange::merge_patch(DEPLOYMENT, rolling_restart_patch()).reply(200, json!({})),
        ];
        let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &restart_deployment(), completed_at())
                .await
        })
        .await;
        assert!(
            matches!(outcome, Ok(TriggerOutcome::Done { .. })),
            "{existing:?}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn a_restart_written_meanwhile_makes_the_patch_conflict_and_retry() {
    let script = vec![
        Exchange::get(DEPLOYMENT).reply(200, workload("Deployment", "ml", "web", None)),
        Exchange::merge_patch(DEPLOYMENT, rolling_restart_patch()).fail(
            409,
            "Conflict",
            "Operation cannot be fulfilled on deployments.apps \"web\": the object has been \
             modified; please apply your changes to the latest version and try again",
        ),
    ];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart_deployment(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("conflict");
    assert!(matches!(error, EffectError::Conflict { .. }), "{error:?}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn a_missing_workload_is_reported_and_nothing_is_written() {
    let script =
        vec![Exchange::get(DEPLOYMENT).fail(404, "NotFound", "deployments.apps \"web\" not found")];
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart_deployment(), completed_at())
            .await
    })
    .await;
    let error = outcome.expect_err("not found");
    assert_eq!(error.to_string(), "Deployment ml/web not found");
}

#[tokio::test]
async fn other_kinds_restart_the_old_pods_they_own_directly_or_through_a_replicaset() {
    let rollouts = "/apis/argoproj.io/v1alpha1/namespaces/ml/rollouts/web";
    let replicasets = "/apis/apps/v1/namespaces/ml/replicasets";
    let rs1 = [("apps/v1", "ReplicaSet", "web-1", "rs-1")];
    let rs2 = [("apps/v1", "ReplicaSet", "other-2", "rs-2")];
    let script = vec![
        Exchange::get(rollouts).reply(
            200,
            json!({"metadata": {"name": "web", "uid": "rollout"},
                   "spec": {"selector": {"matchLabels": {"app": "web"}}}}),
        ),
        Exchange::list(PODS, "app=web").reply(
            200,
            pod_list(vec![
                ready(pod("via-rs", "2026-01-24T22:00:00Z", &rs1), true),
                ready(pod("other-owner", "2026-01-24T22:00:00Z", &rs2), true),
                ready(
                    pod(
                        "direct",
                        "2026-01-24T22:00:00Z",
                        &[("argoproj.io/v1alpha1", "Rollout", "web", "rollout")],
                    ),
                    true,
                ),
                ready(pod("via-rs-new", "2026-01-24T22:33:00Z", &rs1), true),
                ready(pod("via-rs-again", "2026-01-24T22:10:00Z", &rs1), true),
                ready(pod("orphan", "2026-01-24T22:00:00Z", &[]), true),
            ]),
        ),
        // Each intermediate owner is read once, whatever the number of its pods.
        Exchange::get(format!("{replicasets}/web-1")).reply(
            200,
            json!({"metadata": {"name": "web-1", "uid": "rs-1",
                   "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
                                        "name": "web", "uid": "rollout"}]}}),
        ),
        Exchange::get(format!("{replicasets}/other-2")).reply(
            200,
            json!({"metadata": {"name": "other-2", "uid": "rs-2",
                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "other", "uid": "someone-else"}]}}),
        ),
        // Ownership is decided for every pod before the first eviction, of the oldest
        // pod the Rollout owns (not `other-owner`, not `orphan`), ties broken by name.
        Exchange::core_discovery(),
        Exchange::evict("direct"),
    ];
    let restart = trigger(
        "{apiVersion: argoproj.io/v1alpha1, kind: Rollout, name: web, action: restart}",
        "ml",
    );
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart, completed_at())
            .await
    })
    .await;
    assert_eq!(
        waits_for(outcome),
        "evicted pod direct; the next waits until it is replaced by a Ready pod"
    );
    insta::assert_json_snapshot!(seen);
}

#[tokio::test]
async fn match_expressions_become_a_label_selector() {
    let script = vec![
        Exchange::get("/apis/example.com/v1/namespaces/ml/widgets/w").reply(
            200,
            json!({"metadata": {"name": "w", "uid": "w"},
            "spec": {"selector": {
                "matchLabels": {"app": "w"},
                "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["a", "b"]},
                    {"key": "canary", "operator": "DoesNotExist"}
                ]}}}),
        ),
        Exchange::list(PODS, "app=w,tier in (a,b),!canary").reply(200, pod_list(vec![])),
    ];
    let restart = trigger(
        "{apiVersion: example.com/v1, kind: Widget, name: w, action: restart}",
        "ml",
    );
    let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart, completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::AlreadyDone { .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_target_without_a_selector_is_refused_and_no_pod_is_listed() {
    let specs = [
        json!({}),
        json!({"selector": {}}),
        json!({"selector": {"matchLabels": {}}}),
        json!({"selector": null}),
    ];
    for spec in specs {
        let script = vec![
            Exchange::get("/apis/example.com/v1/namespaces/ml/widgets/w").reply(
                200,
                json!({"metadata": {"name": "w", "uid": "w"}, "spec": spec}),
            ),
        ];
        let restart = trigger(
            "{apiVersion: example.com/v1, kind: Widget, name: w, action: restart}",
            "ml",
        );
        let (outcome, _) = run(ExecutorConfig::default(), script, |executor| async move {
            executor
                .fire_trigger(&job("ml", "train"), &restart, completed_at())
                .await
        })
        .await;
        let error = outcome.expect_err("no selector");
        assert!(!error.is_retryable());
        insta::assert_snapshot!("no_selector_message", error.to_string());
    }
}

#[tokio::test]
async fn intermediate_owner_lookups_are_bounded() {
    let names: Vec<String> = (0..20).map(|i| format!("rs-{i}")).collect();
    let pods = names
        .iter()
        .map(|rs| {
            pod(
                &format!("pod-of-{rs}"),
                "2026-01-24T22:00:00Z",
                &[("apps/v1", "ReplicaSet", rs, rs)],
            )
        })
        .collect();
    let mut script = vec![
        Exchange::get("/apis/example.com/v1/namespaces/ml/widgets/w").reply(
            200,
            json!({"metadata": {"name": "w", "uid": "w"},
                   "spec": {"selector": {"matchLabels": {"app": "w"}}}}),
        ),
        Exchange::list(PODS, "app=w").reply(200, pod_list(pods)),
    ];
    // Only the first 16 owners are read; the pods of the others are spared.
    script.extend(names.iter().take(16).map(|rs| {
        Exchange::get(format!("/apis/apps/v1/namespaces/ml/replicasets/{rs}")).reply(
            200,
            json!({"metadata": {"name": rs, "uid": rs, "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "not-w"}
            ]}}),
        )
    }));
    let restart = trigger(
        "{apiVersion: example.com/v1, kind: Widget, name: w, action: restart}",
        "ml",
    );
    let (outcome, seen) = run(ExecutorConfig::default(), script, |executor| async move {
        executor
            .fire_trigger(&job("ml", "train"), &restart, completed_at())
            .await
    })
    .await;
    assert!(
        matches!(outcome, Ok(TriggerOutcome::AlreadyDone { .. })),
        "{outcome:?}"
    );
    assert_eq!(seen.len(), 2 + 16);
}
