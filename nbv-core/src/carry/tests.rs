//! The machines against scripted answers: which requests, in which order, and what
//! each answer comes to.

use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::actions::{SyncReport, TriggerOutcome};
use crate::api::NotebookValidationJob;
use crate::events::{NotificationContext, notification};
use crate::io::{Request, Response, Step};
use crate::plan::{Effect, EffectKey, Outcome, PlannedEffect};
use crate::reconcile::{ApiAnswer, ArgocdAccess, Carried, MissingRole};
use crate::triggers::{Trigger, TriggerAccess, parse_triggers};

fn completed_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap()
}

fn now() -> DateTime<Utc> {
    completed_at() + Duration::minutes(5)
}

fn job() -> NotebookValidationJob {
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u-job"},
        "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                 "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
        "status": {"phase": "Succeeded", "startTime": "2026-01-24T22:29:00Z",
                   "completionTime": "2026-01-24T22:30:00Z",
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Done",
                                   "message": "", "lastTransitionTime": "2026-01-24T22:30:00Z"}]}
    }))
    .unwrap()
}

fn trigger(entry: &str) -> Trigger {
    parse_triggers(&format!("- {entry}"), "ml")
        .unwrap()
        .triggers()[0]
        .clone()
}

const ISVC: &str = "{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: predictor, action: restart}";
const DEPLOYMENT: &str = "{apiVersion: apps/v1, kind: Deployment, name: web, action: restart}";
const WIDGET: &str = "{apiVersion: example.com/v1, kind: Widget, name: w, action: restart}";
const SYNC: &str = "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}";
const ELSEWHERE: &str =
    "{apiVersion: v1, kind: ConfigMap, name: cfg, namespace: serving, action: refresh}";

fn pod(name: &str, created: &str, owner_uid: Option<&str>) -> Value {
    let mut pod = json!({"metadata": {"name": name, "uid": format!("uid-{name}"),
                                      "creationTimestamp": created}});
    if let Some(owner) = owner_uid {
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1",
            "kind": "ReplicaSet", "name": "web-7f", "uid": owner}]);
    }
    pod
}

fn status(code: u16, reason: &str) -> Response {
    Response::Failed(ApiAnswer::status(code, reason, "scripted"))
}

fn object(value: Value) -> Response {
    Response::Object(Some(value))
}

/// Drives `machine` through `script`: each request must read as expected, and the
/// machine must be done after the last answer, asking nothing more.
fn run<M: Machine>(machine: &mut M, script: Vec<(&str, Response)>) -> M::Output
where
    M::Output: Clone + PartialEq + std::fmt::Debug,
{
    for (expected, response) in script {
        match machine.next() {
            Step::Io(request) => assert_eq!(request.to_string(), expected),
            Step::Done(output) => panic!("done with {output:?}, expected {expected}"),
        }
        machine.answer(response);
    }
    let Step::Done(output) = machine.next() else {
        panic!("a request beyond the script: {:?}", machine.next());
    };
    assert_eq!(machine.next(), Step::Done(output.clone()));
    output
}

fn fire(entry: &str, facts: &CarryFacts) -> Fire {
    Fire::start(&job(), &trigger(entry), completed_at(), facts, now())
}

#[test]
fn a_rolling_restart_reads_the_workload_then_patches_it_with_the_version_read() {
    let mut fire = fire(DEPLOYMENT, &CarryFacts::default());
    let Step::Io(Request::Get(_)) = fire.next() else {
        panic!("the workload is read first")
    };
    fire.answer(object(
        json!({"metadata": {"name": "web", "resourceVersion": "5"}}),
    ));
    let Step::Io(Request::Patch { patch, .. }) = fire.next() else {
        panic!("then patched")
    };
    assert_eq!(patch["metadata"]["resourceVersion"], "5");
    let done = run(
        &mut fire,
        vec![("PATCH Deployment ml/web", object(json!({})))],
    );
    assert!(matches!(done, Ok(TriggerOutcome::Done { .. })), "{done:?}");
    assert_eq!(
        fire.grant(),
        Some(crate::triggers::Grant::SameNamespace),
        "the grant is known for the log"
    );
}

fn ready_pod(name: &str, created: &str, ready: bool) -> Value {
    let mut pod = pod(name, created, None);
    pod["status"] =
        json!({"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]});
    pod
}

const LIST_PREDICTOR: &str = "LIST Pod in ml with serving.kserve.io/inferenceservice=predictor";

#[test]
fn an_inference_service_restart_evicts_one_older_pod_and_waits_for_its_replacement() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let listed = Response::Objects(vec![
        ready_pod("old", "2026-01-24T22:00:00Z", true),
        ready_pod("older", "2026-01-24T21:00:00Z", true),
        ready_pod("new", "2026-01-24T22:30:00Z", true),
    ]);
    let done = run(
        &mut fire,
        vec![
            (LIST_PREDICTOR, listed),
            ("POST Pod ml/older eviction", Response::Deleted),
        ],
    );
    let Ok(TriggerOutcome::Deferred {
        reason,
        until: Some(until),
    }) = done
    else {
        panic!("{done:?}")
    };
    assert_eq!(
        reason,
        "evicted pod older; the next waits until it is replaced by a Ready pod"
    );
    assert!(until > now());
}

#[test]
fn an_eviction_carries_the_pods_uid_as_precondition() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let _list = fire.next();
    fire.answer(Response::Objects(vec![ready_pod(
        "old",
        "2026-01-24T22:00:00Z",
        true,
    )]));
    assert_eq!(
        fire.next().request(),
        Some(&Request::Evict {
            pod: crate::io::ObjectRef::namespaced("v1", "Pod", "ml", "old"),
            uid: "uid-old".into(),
        })
    );
}

#[test]
fn a_restart_waits_while_a_pod_terminates_or_a_replacement_is_not_ready() {
    for (pods, waits_for) in [
        (
            vec![ready_pod("old", "2026-01-24T22:00:00Z", true), {
                let mut leaving = ready_pod("gone", "2026-01-24T21:00:00Z", true);
                leaving["metadata"]["deletionTimestamp"] = json!("2026-01-24T22:34:00Z");
                leaving
            }],
            "pod gone is terminating",
        ),
        (
            vec![
                ready_pod("old", "2026-01-24T22:00:00Z", true),
                ready_pod("new", "2026-01-24T22:33:00Z", false),
            ],
            "pod new, created after the run, is not Ready yet",
        ),
    ] {
        let mut fire = fire(ISVC, &CarryFacts::default());
        let done = run(&mut fire, vec![(LIST_PREDICTOR, Response::Objects(pods))]);
        let Ok(TriggerOutcome::Deferred { reason, .. }) = done else {
            panic!("{done:?}")
        };
        assert_eq!(reason, waits_for);
    }
}

#[test]
fn a_budget_that_refuses_defers_the_restart_and_never_deletes() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let refused = Response::Failed(ApiAnswer::status(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget. \
         (The disruption budget predictor needs 2 healthy pods and has 2 currently)",
    ));
    let done = run(
        &mut fire,
        vec![
            (
                LIST_PREDICTOR,
                Response::Objects(vec![ready_pod("old", "2026-01-24T22:00:00Z", true)]),
            ),
            ("POST Pod ml/old eviction", refused),
        ],
    );
    let Ok(TriggerOutcome::Deferred {
        reason,
        until: Some(_),
    }) = done
    else {
        panic!("{done:?}")
    };
    assert!(reason.starts_with("waits for the PodDisruptionBudget to allow evicting pod old"));
    assert!(
        reason.contains("The disruption budget predictor needs 2 healthy pods"),
        "{reason}"
    );
}

#[test]
fn an_eviction_of_a_pod_already_gone_counts_as_done() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![
            (
                LIST_PREDICTOR,
                Response::Objects(vec![ready_pod("old", "2026-01-24T22:00:00Z", true)]),
            ),
            ("POST Pod ml/old eviction", status(404, "NotFound")),
        ],
    );
    assert!(
        matches!(done, Ok(TriggerOutcome::Deferred { .. })),
        "{done:?}"
    );
}

#[test]
fn a_restart_finishes_once_every_pod_is_newer_and_ready() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![(
            LIST_PREDICTOR,
            Response::Objects(vec![
                ready_pod("new-1", "2026-01-24T22:31:00Z", true),
                ready_pod("new-2", "2026-01-24T22:32:00Z", true),
            ]),
        )],
    );
    let Ok(TriggerOutcome::Done { summary }) = done else {
        panic!("{done:?}")
    };
    assert!(summary.starts_with("every pod of InferenceService ml/predictor (2, all Ready)"));
}

#[test]
fn a_replacement_never_ready_stops_the_restart_naming_it() {
    let late = Fire::start(
        &job(),
        &trigger(ISVC),
        completed_at(),
        &CarryFacts::default(),
        completed_at() + Duration::minutes(45),
    );
    let mut late = late;
    let done = run(
        &mut late,
        vec![(
            LIST_PREDICTOR,
            Response::Objects(vec![
                ready_pod("old", "2026-01-24T22:00:00Z", true),
                ready_pod("new", "2026-01-24T22:31:00Z", false),
            ]),
        )],
    );
    let Err(failure) = done else {
        panic!("{done:?}")
    };
    assert!(!failure.is_retryable());
    assert!(
        failure
            .to_string()
            .contains("pod new, created after the run, did not become Ready within 10 minutes"),
        "{failure}"
    );
}

#[test]
fn a_listing_that_finds_no_pod_reads_the_target_to_report_a_misspelled_name() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![
            (
                "LIST Pod in ml with serving.kserve.io/inferenceservice=predictor",
                Response::Objects(vec![]),
            ),
            ("GET InferenceService ml/predictor", Response::Object(None)),
        ],
    );
    assert_eq!(
        done,
        Err(Failure::NotFound {
            object: "InferenceService ml/predictor".into()
        })
    );
}

#[test]
fn a_conflicting_eviction_reads_the_pod_and_spares_one_that_was_replaced() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let listed = Response::Objects(vec![pod("old", "2026-01-24T22:00:00Z", None)]);
    let replaced = object(json!({"metadata": {"name": "old", "uid": "another"}}));
    let done = run(
        &mut fire,
        vec![
            (
                "LIST Pod in ml with serving.kserve.io/inferenceservice=predictor",
                listed,
            ),
            ("POST Pod ml/old eviction", status(409, "Conflict")),
            ("GET Pod ml/old", replaced),
        ],
    );
    assert!(
        matches!(done, Ok(TriggerOutcome::Deferred { .. })),
        "{done:?}"
    );
}

#[test]
fn a_conflicting_eviction_of_the_same_pod_is_retried() {
    let mut fire = fire(ISVC, &CarryFacts::default());
    let listed = Response::Objects(vec![pod("old", "2026-01-24T22:00:00Z", None)]);
    let same = object(pod("old", "2026-01-24T22:00:00Z", None));
    let done = run(
        &mut fire,
        vec![
            (
                "LIST Pod in ml with serving.kserve.io/inferenceservice=predictor",
                listed,
            ),
            ("POST Pod ml/old eviction", status(409, "Conflict")),
            ("GET Pod ml/old", same),
        ],
    );
    let Err(failure) = done else {
        panic!("{done:?}")
    };
    assert!(failure.is_retryable());
    assert!(
        failure.to_string().contains("evict Pod ml/old"),
        "{failure}"
    );
}

#[test]
fn the_pods_of_another_kind_are_evicted_once_their_replica_set_shows_it_owns_them() {
    let mut fire = fire(WIDGET, &CarryFacts::default());
    let widget = object(json!({"metadata": {"name": "w", "uid": "u-w"},
                               "spec": {"selector": {"matchLabels": {"app": "w"}}}}));
    let replica_set = object(json!({"metadata": {"name": "web-7f", "uid": "rs1",
        "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "u-w"}]}}));
    let done = run(
        &mut fire,
        vec![
            ("GET Widget ml/w", widget),
            (
                "LIST Pod in ml with app=w",
                Response::Objects(vec![pod("a", "2026-01-24T22:00:00Z", Some("rs1"))]),
            ),
            ("GET ReplicaSet ml/web-7f", replica_set),
            ("POST Pod ml/a eviction", Response::Deleted),
        ],
    );
    assert!(
        matches!(done, Ok(TriggerOutcome::Deferred { .. })),
        "{done:?}"
    );
}

#[test]
fn a_refused_trigger_reads_the_namespace_and_writes_nothing() {
    let mut fire = fire(ELSEWHERE, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![("GET Namespace serving", object(json!({"metadata": {}})))],
    );
    assert!(matches!(done, Err(Failure::Refused(_))), "{done:?}");
}

#[test]
fn a_namespace_that_opts_in_lets_the_trigger_act() {
    let mut fire = fire(ELSEWHERE, &CarryFacts::default());
    let accepting = object(json!({"metadata": {"annotations": {
        "mlops.dev/accept-triggers-from": "ml"}}}));
    let config_map = object(json!({"metadata": {"name": "cfg", "resourceVersion": "3"}}));
    let done = run(
        &mut fire,
        vec![
            ("GET Namespace serving", accepting),
            ("GET ConfigMap serving/cfg", config_map),
            ("PATCH ConfigMap serving/cfg", object(json!({}))),
        ],
    );
    assert!(matches!(done, Ok(TriggerOutcome::Done { .. })), "{done:?}");
}

fn application(destination: &str) -> Value {
    deploying_to("https://kubernetes.default.svc", destination)
}

fn deploying_to(server: &str, namespace: &str) -> Value {
    json!({"metadata": {"name": "serving", "namespace": "argocd", "resourceVersion": "42"},
           "spec": {"project": "ml", "destination": {"server": server, "namespace": namespace}}})
}

#[test]
fn an_application_deploying_to_the_jobs_namespace_of_another_cluster_is_refused() {
    let mut fire = fire(SYNC, &syncing());
    let done = run(
        &mut fire,
        vec![
            (
                "read Application argocd/serving from the cache",
                object(deploying_to("https://prod.example.com:6443", "ml")),
            ),
            ("GET Namespace argocd", Response::Object(None)),
        ],
    );
    let Err(Failure::Refused(refusal)) = done else {
        panic!("{done:?}")
    };
    assert!(
        !refusal.to_string().contains("prod.example.com"),
        "{refusal}"
    );
}

#[test]
fn a_target_whose_kind_is_spelled_otherwise_is_not_acted_on() {
    let shouting = "{apiVersion: example.com/v1, kind: WIDGET, name: w, action: restart}";
    let mut fire = fire(shouting, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![(
            "GET WIDGET ml/w",
            object(json!({"kind": "Widget", "metadata": {"name": "w"}})),
        )],
    );
    let Err(failure @ Failure::Invalid { .. }) = done else {
        panic!("{done:?}")
    };
    assert!(
        failure.to_string().contains("spelled \"Widget\""),
        "{failure}"
    );
}

fn syncing() -> CarryFacts {
    CarryFacts {
        projects_cached: true,
        ..CarryFacts::default()
    }
}

#[test]
fn a_sync_reads_the_application_and_the_windows_from_the_caches_then_writes() {
    let mut fire = fire(SYNC, &syncing());
    let done = run(
        &mut fire,
        vec![
            (
                "read Application argocd/serving from the cache",
                object(application("ml")),
            ),
            (
                "read AppProject argocd/ml from the cache",
                object(json!({"spec": {}})),
            ),
            ("PATCH Application argocd/serving", object(json!({}))),
        ],
    );
    assert!(matches!(done, Ok(TriggerOutcome::Done { .. })), "{done:?}");
}

#[test]
fn an_application_the_cache_does_not_hold_is_read_with_a_get() {
    let mut fire = fire(SYNC, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![
            (
                "read Application argocd/serving from the cache",
                Response::NotCached,
            ),
            ("GET Application argocd/serving", object(application("ml"))),
            ("PATCH Application argocd/serving", object(json!({}))),
        ],
    );
    assert!(matches!(done, Ok(TriggerOutcome::Done { .. })), "{done:?}");
}

#[test]
fn a_sync_waits_for_an_appproject_cache_that_has_not_listed() {
    let mut fire = fire(SYNC, &syncing());
    let done = run(
        &mut fire,
        vec![
            (
                "read Application argocd/serving from the cache",
                object(application("ml")),
            ),
            (
                "read AppProject argocd/ml from the cache",
                Response::NotCached,
            ),
        ],
    );
    let Err(failure @ Failure::CacheNotReady { .. }) = done else {
        panic!("{done:?}")
    };
    assert!(failure.is_retryable());
}

#[test]
fn a_sync_waits_for_the_role_when_the_appprojects_may_not_be_read() {
    let facts = CarryFacts {
        argocd_access: ArgocdAccess::Missing(MissingRole::new("argocd", ["list appprojects"])),
        ..syncing()
    };
    let mut fire = fire(SYNC, &facts);
    let done = run(
        &mut fire,
        vec![(
            "read Application argocd/serving from the cache",
            object(application("ml")),
        )],
    );
    let Ok(TriggerOutcome::Deferred {
        reason,
        until: None,
    }) = done
    else {
        panic!("{done:?}")
    };
    assert!(reason.contains("nbv-operator-argocd"), "{reason}");
}

#[test]
fn a_missing_application_is_refused_rather_than_reported_missing() {
    let mut fire = fire(SYNC, &CarryFacts::default());
    let done = run(
        &mut fire,
        vec![
            (
                "read Application argocd/serving from the cache",
                Response::Object(None),
            ),
            ("GET Application argocd/serving", Response::Object(None)),
            ("GET Namespace argocd", Response::Object(None)),
        ],
    );
    assert!(matches!(done, Err(Failure::Refused(_))), "{done:?}");
}

#[test]
fn a_missing_application_where_triggers_may_act_is_not_found() {
    let facts = CarryFacts {
        trigger_access: TriggerAccess::from_list("argocd"),
        ..CarryFacts::default()
    };
    let mut fire = fire(SYNC, &facts);
    let done = run(
        &mut fire,
        vec![
            (
                "read Application argocd/serving from the cache",
                Response::NotCached,
            ),
            ("GET Application argocd/serving", Response::Object(None)),
        ],
    );
    assert_eq!(
        done,
        Err(Failure::NotFound {
            object: "Application argocd/serving".into()
        })
    );
}

#[test]
fn a_sync_result_that_looks_replaced_in_the_cache_is_read_again_with_a_get() {
    let sync = trigger(SYNC);
    let mut follow = SyncResult::start(&job(), sync.target(), completed_at());
    let running = object(json!({"status": {"operationState": {"phase": "Running",
        "operation": {"info": [{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]}}}}));
    let done = run(
        &mut follow,
        vec![
            (
                "read Application argocd/serving from the cache",
                object(json!({})),
            ),
            ("GET Application argocd/serving", running),
        ],
    );
    assert!(
        matches!(done, Ok(SyncReport::InProgress { .. })),
        "{done:?}"
    );
}

#[test]
fn an_existing_notification_counts_as_delivered_and_is_not_counted_again() {
    let event = notification(&job(), &NotificationContext::default()).unwrap();
    let planned = PlannedEffect {
        key: EffectKey::notify(),
        effect: Effect::Notify { event },
    };
    let mut carry = Carry::start(&job(), &planned, &CarryFacts::default(), now());
    let name = "POST Event ml/train.succeeded.1769293800";
    let done = run(&mut carry, vec![(name, status(409, "AlreadyExists"))]);
    assert_eq!(done, Carried::Written(Outcome::Done));
    assert!(!carry.notified(), "an earlier attempt counted it");

    let mut carry = Carry::start(&job(), &planned, &CarryFacts::default(), now());
    run(&mut carry, vec![(name, object(json!({})))]);
    assert!(carry.notified());
}

#[test]
fn a_wave_patch_leaves_the_job_as_stored_for_the_status_write() {
    let planned = PlannedEffect {
        key: EffectKey::notify(),
        effect: Effect::PatchJob {
            patch: json!({"metadata": {"annotations": {"mlops.dev/wave-complete": "3"}}}),
        },
    };
    let mut carry = Carry::start(&job(), &planned, &CarryFacts::default(), now());
    let stored = object(json!({"metadata": {"resourceVersion": "9"},
        "status": {"conditions": []}}));
    let done = run(
        &mut carry,
        vec![("PATCH NotebookValidationJob ml/train", stored)],
    );
    assert_eq!(done, Carried::Written(Outcome::Done));
    let mut job = job();
    carry.follow(&mut job);
    assert_eq!(job.metadata.resource_version.as_deref(), Some("9"));
    assert_eq!(job.status.and_then(|s| s.conditions), Some(vec![]));
}

#[test]
fn a_wave_patch_beyond_the_metadata_is_given_up_without_a_request() {
    let planned = PlannedEffect {
        key: EffectKey::notify(),
        effect: Effect::PatchJob {
            patch: json!({"spec": {"timeout": "1h"}}),
        },
    };
    let mut carry = Carry::start(&job(), &planned, &CarryFacts::default(), now());
    let done = run(&mut carry, vec![]);
    assert!(
        matches!(done, Carried::Written(Outcome::GiveUp(_))),
        "{done:?}"
    );
}

#[test]
fn a_job_without_a_name_asks_nothing_and_gives_up() {
    let mut nameless = job();
    nameless.metadata.name = None;
    let mut fire = Fire::start(
        &nameless,
        &trigger(DEPLOYMENT),
        completed_at(),
        &CarryFacts::default(),
        now(),
    );
    let done = run(&mut fire, vec![]);
    assert!(matches!(&done, Err(Failure::Invalid { .. })), "{done:?}");
}

#[test]
fn a_forbidden_write_is_given_up_and_an_overloaded_server_is_retried() {
    for (answer, retried) in [(status(403, "Forbidden"), false), (status(503, ""), true)] {
        let planned = PlannedEffect {
            key: EffectKey::notify(),
            effect: Effect::Trigger {
                trigger: trigger(DEPLOYMENT),
                completed_at: completed_at(),
            },
        };
        let mut carry = Carry::start(&job(), &planned, &CarryFacts::default(), now());
        let read = object(json!({"metadata": {"name": "web", "resourceVersion": "5"}}));
        let done = run(
            &mut carry,
            vec![
                ("GET Deployment ml/web", read),
                ("PATCH Deployment ml/web", answer),
            ],
        );
        let Carried::Trigger(Err(outcome)) = done else {
            panic!("{done:?}")
        };
        assert_eq!(
            matches!(outcome, Outcome::Failed(_)),
            retried,
            "{outcome:?}"
        );
        assert_eq!(carry.trigger_status(), Some(TriggerStatus::Failed));
    }
}

#[test]
fn an_abandoned_effect_is_reported_under_a_name_the_api_server_generates() {
    let planned = PlannedEffect {
        key: EffectKey::notify(),
        effect: Effect::ReportGaveUp {
            effect: EffectKey::notify(),
            error: "403 forbidden".into(),
            attempts: 5,
        },
    };
    let mut carry = Carry::start(&job(), &planned, &CarryFacts::default(), now());
    let Step::Io(Request::Create { body, .. }) = carry.next() else {
        panic!("one POST")
    };
    assert_eq!(body["metadata"]["generateName"], "train.");
    assert_eq!(body["reason"], "EffectAbandoned");
    assert_eq!(body["involvedObject"]["uid"], "u-job");
    let done = run(
        &mut carry,
        vec![("POST Event ml/", status(503, "ServiceUnavailable"))],
    );
    assert!(
        matches!(done, Carried::Written(Outcome::Failed(_))),
        "{done:?}"
    );
}

#[test]
fn the_application_status_patch_writes_only_its_two_annotations() {
    let summary = json!({"metadata": {"annotations": {"mlops.dev/notebook-summary": "1/1"}}});
    let mut write = ApplicationStatus::start("argocd", "fraud", &summary);
    let done = run(
        &mut write,
        vec![("PATCH Application argocd/fraud", status(404, "NotFound"))],
    );
    assert_eq!(
        done,
        Err(Failure::NotFound {
            object: "Application argocd/fraud".into()
        })
    );
    let labels = json!({"metadata": {"labels": {"a": "b"}}});
    let mut refused = ApplicationStatus::start("argocd", "fraud", &labels);
    let done = run(&mut refused, vec![]);
    assert!(matches!(done, Err(Failure::Invalid { .. })), "{done:?}");
}

#[test]
fn a_namespace_that_cannot_be_read_fails_the_trigger_with_what_was_asked() {
    let mut opt_in = NamespaceOptIn::start("serving");
    let done = run(
        &mut opt_in,
        vec![("GET Namespace serving", status(403, "Forbidden"))],
    );
    let Err(failure) = done else {
        panic!("{done:?}")
    };
    assert!(
        failure
            .to_string()
            .starts_with("get Namespace serving: forbidden"),
        "{failure}"
    );
}

/// Any answer a shell could give, to any request.
fn any_response() -> impl Strategy<Value = Response> {
    let codes = prop::sample::select(vec![
        (403u16, "Forbidden"),
        (404, "NotFound"),
        (409, "Conflict"),
        (422, "Invalid"),
        (500, ""),
        (503, "ServiceUnavailable"),
    ]);
    prop_oneof![
        Just(Response::Object(None)),
        Just(Response::NotCached),
        Just(Response::Deleted),
        Just(Response::Objects(vec![pod(
            "p",
            "2026-01-24T22:00:00Z",
            None
        )])),
        Just(object(application("ml"))),
        Just(object(
            json!({"metadata": {"name": "x", "uid": "uid-p", "resourceVersion": "1"},
                           "spec": {"selector": {"matchLabels": {"app": "x"}}}})
        )),
        codes.prop_map(|(code, reason)| status(code, reason)),
    ]
}

fn any_effect() -> impl Strategy<Value = Effect> {
    let triggers = prop::sample::select(vec![ISVC, DEPLOYMENT, WIDGET, SYNC, ELSEWHERE]);
    prop_oneof![
        triggers.prop_map(|entry| Effect::Trigger {
            trigger: trigger(entry),
            completed_at: completed_at(),
        }),
        Just(Effect::SyncResult {
            trigger: trigger(SYNC),
            completed_at: completed_at(),
        }),
        Just(Effect::Notify {
            event: notification(&job(), &NotificationContext::default()).unwrap(),
        }),
        Just(Effect::PatchJob {
            patch: json!({"metadata": {"labels": {"a": "b"}}}),
        }),
        Just(Effect::ReportGaveUp {
            effect: EffectKey::notify(),
            error: "503".into(),
            attempts: 3,
        }),
    ]
}

proptest! {
    /// Whatever the answers, every effect ends within a bounded number of requests,
    /// asks nothing once done, and reports a failed write as a failure.
    #[test]
    fn every_effect_ends_and_asks_nothing_once_done(
        effect in any_effect(),
        answers in prop::collection::vec(any_response(), 40),
        facts in prop::sample::select(vec![CarryFacts::default(), syncing()]),
    ) {
        let planned = PlannedEffect { key: EffectKey::notify(), effect };
        let mut carry = Carry::start(&job(), &planned, &facts, now());
        let mut answers = answers.into_iter();
        let mut last_write_failed = false;
        let done = loop {
            match carry.next() {
                Step::Io(request) => {
                    let Some(answer) = answers.next() else {
                        return Err(TestCaseError::fail("more than 40 requests"));
                    };
                    last_write_failed = request.writes()
                        && answer.failure().is_some_and(|a| {
                            !matches!(a.class(), crate::reconcile::AnswerClass::NotFound
                                | crate::reconcile::AnswerClass::Conflict)
                        });
                    carry.answer(answer);
                }
                Step::Done(done) => break done,
            }
        };
        prop_assert_eq!(carry.next(), Step::Done(done.clone()));
        carry.answer(Response::Deleted);
        prop_assert_eq!(carry.next(), Step::Done(done.clone()));
        if last_write_failed {
            prop_assert!(done.failure().is_some(), "a failed write reported as {:?}", done);
        }
    }

    /// A restart never evicts a pod created at or after the run's completion (nor one
    /// whose creation is unknown), evicts at most one pod per firing, and never deletes
    /// one, whatever the answers.
    #[test]
    fn a_restart_never_evicts_a_pod_that_does_not_predate_the_run(
        offsets in prop::collection::vec(prop::option::of(-120i64..120), 0..6),
        answers in prop::collection::vec(any_response(), 20),
        entry in prop::sample::select(vec![ISVC, WIDGET]),
    ) {
        let pods: Vec<Value> = offsets.iter().enumerate().map(|(i, offset)| {
            let mut p = pod(&format!("p{i}"), "", Some("rs1"));
            p["metadata"]["ownerReferences"][0]["uid"] = json!("u-w");
            match offset {
                Some(seconds) => p["metadata"]["creationTimestamp"] =
                    json!((completed_at() + Duration::seconds(*seconds)).to_rfc3339()),
                None => { p["metadata"].as_object_mut().unwrap().remove("creationTimestamp"); }
            }
            p
        }).collect();
        let older: Vec<String> = offsets.iter().enumerate()
            .filter(|(_, offset)| offset.is_some_and(|s| s < 0))
            .map(|(i, _)| format!("p{i}"))
            .collect();
        let mut fire = fire(entry, &CarryFacts::default());
        let widget = object(json!({"metadata": {"name": "w", "uid": "u-w"},
                                   "spec": {"selector": {"matchLabels": {"app": "w"}}}}));
        let mut answers = answers.into_iter();
        let mut evictions = 0;
        for _ in 0..40 {
            let Step::Io(request) = fire.next() else { break };
            prop_assert!(!matches!(request, Request::Delete { .. }), "{request}");
            let answer = match &request {
                Request::List { .. } => Response::Objects(pods.clone()),
                Request::Get(object) if object.kind == "Widget" => widget.clone(),
                Request::Evict { pod, .. } => {
                    prop_assert!(older.contains(&pod.name), "evicted {}", pod.name);
                    evictions += 1;
                    prop_assert!(evictions <= 1, "two evictions in one firing");
                    answers.next().unwrap_or(Response::Deleted)
                }
                _ => answers.next().unwrap_or(Response::Object(None)),
            };
            fire.answer(answer);
        }
        prop_assert!(matches!(fire.next(), Step::Done(_)));
    }
}
