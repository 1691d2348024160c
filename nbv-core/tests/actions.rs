//! The trigger actions: what each decides from its target as read, and the invariants
//! that make a retried trigger safe.

use chrono::{DateTime, Duration, TimeZone, Utc};
use k8s_openapi::api::core::v1::Pod;
use nbv_core::actions::restart::{self, Method, Owners, Pace, Replicas, selector_of};
use nbv_core::actions::{Already, Decision, Run, SyncReport, TriggerOutcome, refresh, sync};
use nbv_core::sync::SyncWindow;
use nbv_core::triggers::{TargetRef, parse_triggers};
use proptest::prelude::*;
use serde_json::{Value, json};

fn ended() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap()
}

fn run() -> Run {
    Run::new("ml", "train", ended())
}

fn target(api_version: &str, kind: &str, name: &str, action: &str) -> TargetRef {
    let namespace = if kind == "Application" {
        ", namespace: argocd"
    } else {
        ""
    };
    let yaml = format!(
        "- {{apiVersion: {api_version}, kind: {kind}, name: {name}{namespace}, action: {action}}}"
    );
    parse_triggers(&yaml, "ml").unwrap().triggers()[0]
        .target()
        .clone()
}

fn application() -> TargetRef {
    target("argoproj.io/v1alpha1", "Application", "serving", "sync")
}

fn pod(name: &str, created: Option<&str>, terminating: bool) -> Pod {
    let mut metadata = json!({"name": name, "uid": format!("uid-{name}")});
    if let Some(created) = created {
        metadata["creationTimestamp"] = json!(created);
    }
    if terminating {
        metadata["deletionTimestamp"] = json!("2026-01-24T22:31:00Z");
    }
    serde_json::from_value(json!({"metadata": metadata})).unwrap()
}

/// `patch` applied to `object` as the API server applies a JSON merge patch.
fn merged(object: &Value, patch: &Value) -> Value {
    let mut object = object.clone();
    json_patch::merge(&mut object, patch);
    object
}

#[test]
fn restart_methods_follow_the_kind() {
    let cases = [
        ("apps/v1", "Deployment", Method::RollingRestart),
        ("apps/v1", "StatefulSet", Method::RollingRestart),
        ("apps/v1", "DaemonSet", Method::RollingRestart),
        ("apps/v1", "ReplicaSet", Method::OwnedPods),
        (
            "serving.kserve.io/v1beta1",
            "InferenceService",
            Method::InferenceServicePods,
        ),
        ("v1", "ReplicationController", Method::OwnedPods),
        ("example.com/v1", "Deployment", Method::OwnedPods),
    ];
    for (api_version, kind, method) in cases {
        assert_eq!(
            Method::of(&target(api_version, kind, "x", "restart")),
            method,
            "{api_version} {kind}"
        );
    }
}

#[test]
fn selectors_are_read_as_kubernetes_reads_them_and_never_select_everything() {
    let cases = [
        (json!({"matchLabels": {"app": "web"}}), Ok("app=web")),
        (
            json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}),
            Ok("tier in (a,b)"),
        ),
        (json!({"app": "rc"}), Ok("app=rc")),
        (json!({}), Err("nbv never deletes every pod")),
        (
            json!({"matchLabels": {}}),
            Err("nbv never deletes every pod"),
        ),
        (Value::Null, Err("it has no spec.selector")),
        (
            json!({"app": 3}),
            Err("its spec.selector.app is not a string"),
        ),
        (
            json!({"matchExpressions": [{"key": "k", "operator": "Sometimes"}]}),
            Err("cannot be used"),
        ),
    ];
    for (selector, expected) in cases {
        let object = json!({"spec": {"selector": selector}});
        match (selector_of(&object), expected) {
            (Ok(found), Ok(wanted)) => assert_eq!(found.to_string(), wanted, "{selector}"),
            (Err(found), Err(wanted)) => assert!(found.contains(wanted), "{selector}: {found}"),
            (found, wanted) => panic!("{selector}: {found:?}, expected {wanted:?}"),
        }
    }
}

#[test]
fn a_restart_by_pods_without_a_uid_or_selector_is_refused() {
    let rc = target("v1", "ReplicationController", "rc", "restart");
    let no_uid =
        restart::pods_to_list(&json!({"spec": {"selector": {"app": "rc"}}}), &rc).unwrap_err();
    assert_eq!(
        no_uid.to_string(),
        "restart ReplicationController ml/rc: it has no metadata.uid"
    );
    let no_selector =
        restart::pods_to_list(&json!({"metadata": {"uid": "u"}, "spec": {}}), &rc).unwrap_err();
    assert!(
        no_selector.reason.contains("never deletes every pod"),
        "{no_selector}"
    );
    let isvc = target(
        "serving.kserve.io/v1beta1",
        "InferenceService",
        "predictor",
        "restart",
    );
    let query = restart::pods_to_list(&json!({}), &isvc).unwrap().unwrap();
    assert_eq!(
        query.label_selector,
        "serving.kserve.io/inferenceservice=predictor"
    );
    assert_eq!(query.owner_uid, None);
    let web = target("apps/v1", "Deployment", "web", "restart");
    assert_eq!(restart::pods_to_list(&json!({}), &web), Ok(None));
}

fn ready(mut pod: Pod, ready: bool) -> Pod {
    pod.status = Some(
        serde_json::from_value(json!({"conditions": [
            {"type": "Ready", "status": if ready { "True" } else { "False" }}]}))
        .unwrap(),
    );
    pod
}

fn at(minutes: i64) -> DateTime<Utc> {
    ended() + Duration::minutes(minutes)
}

#[test]
fn pacing_evicts_only_pods_that_predate_the_run_one_at_a_time() {
    let pods = vec![
        ready(pod("old", Some("2026-01-24T22:29:59Z"), false), true),
        ready(
            pod("same-second", Some("2026-01-24T22:30:00Z"), false),
            true,
        ),
        ready(pod("new", Some("2026-01-24T22:31:00Z"), false), true),
        pod("unknown", None, false),
    ];
    let restart::Pace::Evict(next) = restart::pace(&pods, &Replicas::default(), ended(), at(2))
    else {
        panic!("one pod to evict")
    };
    assert_eq!((next.name.as_str(), next.uid.as_str()), ("old", "uid-old"));

    // The last eviction still terminates: nothing else is evicted.
    let mut leaving = pods.clone();
    leaving.push(pod("leaving", Some("2026-01-24T20:00:00Z"), true));
    assert!(matches!(
        restart::pace(&leaving, &Replicas::default(), ended(), at(2)),
        restart::Pace::Wait { reason, .. } if reason == "pod leaving is terminating"
    ));

    // A replacement that is not Ready yet holds the next eviction back.
    let mut replacing = pods.clone();
    replacing[2] = ready(pod("new", Some("2026-01-24T22:31:00Z"), false), false);
    let restart::Pace::Wait { reason, until } =
        restart::pace(&replacing, &Replicas::default(), ended(), at(2))
    else {
        panic!("a wait")
    };
    assert_eq!(reason, "pod new, created after the run, is not Ready yet");
    assert_eq!(
        until,
        at(2) + Duration::seconds(15),
        "an eighth of the time since the run"
    );

    // ... for at most READY_BOUND after it was created.
    let stuck = restart::pace(&replacing, &Replicas::default(), ended(), at(12));
    assert!(
        matches!(&stuck, restart::Pace::Stuck(why) if why.starts_with("pod new, created after the run, did not become Ready within 10 minutes")),
        "{stuck:?}"
    );

    // Nothing predates the run: finished, the newer pods counted.
    let isvc = target(
        "serving.kserve.io/v1beta1",
        "InferenceService",
        "predictor",
        "restart",
    );
    let restart::Pace::Finished { newer } =
        restart::pace(&pods[1..], &Replicas::default(), ended(), at(2))
    else {
        panic!("finished")
    };
    assert_eq!(newer, 3);
    assert_eq!(
        restart::finished(&isvc, &run(), 0),
        TriggerOutcome::AlreadyDone {
            reason: Already::NoPodPredatesRun,
            summary: "no pod of InferenceService ml/predictor was created before the run ended at \
                      2026-01-24T22:30:00Z"
                .into(),
        }
    );
}

#[test]
fn pacing_evicts_a_pod_that_serves_nothing_first_then_the_oldest() {
    let pods = vec![
        ready(pod("b", Some("2026-01-24T20:00:00Z"), false), true),
        ready(pod("a", Some("2026-01-24T21:00:00Z"), false), true),
        ready(pod("c", Some("2026-01-24T22:00:00Z"), false), false),
    ];
    let name = |pods: &[Pod]| match restart::pace(pods, &Replicas::default(), ended(), at(1)) {
        restart::Pace::Evict(next) => next.name,
        other => panic!("{other:?}"),
    };
    assert_eq!(name(&pods), "c");
    assert_eq!(name(&pods[..2]), "b");
}

#[test]
fn a_budget_that_refuses_makes_the_restart_wait_with_a_growing_backoff() {
    let message = "Cannot evict pod as it would violate the pod's disruption budget. \
                   (The disruption budget predictor needs 2 healthy pods and has 2 currently)";
    let wait = |now| match restart::budget_refused("p-1", message, ended(), now) {
        restart::Pace::Wait { reason, until } => (reason, until - now),
        other => panic!("{other:?}"),
    };
    let (reason, first) = wait(ended());
    assert!(reason.contains("disruption budget predictor"), "{reason}");
    assert!(reason.starts_with("waits for the PodDisruptionBudget to allow evicting pod p-1"));
    assert_eq!(first, Duration::seconds(2));
    assert_eq!(
        wait(at(1)).1,
        Duration::seconds(7) + Duration::milliseconds(500)
    );
    assert_eq!(wait(at(60)).1, Duration::seconds(30));
}

#[test]
fn owners_are_read_lazily_and_at_most_a_bounded_number_of_times() {
    let owned_by = |name: &str, uid: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": uid, "uid": uid}]}}))
        .unwrap()
    };
    let direct: Pod =
        serde_json::from_value(json!({"metadata": {"name": "direct", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ReplicationController", "name": "rc", "uid": "target"}]}}))
        .unwrap();
    // Two pods of one ReplicaSet: one read. A pod owned directly: none.
    let pods = vec![
        direct.clone(),
        owned_by("a", "rs1"),
        owned_by("b", "rs1"),
        owned_by("c", "rs2"),
    ];
    let mut owners = Owners::new("target");
    let mut reads = Vec::new();
    while let Some(reference) = owners.next_lookup(&pods) {
        reads.push(reference.uid.clone());
        let found = serde_json::from_value(json!({"uid": reference.uid, "ownerReferences":
            if reference.uid == "rs1" { json!([{"apiVersion": "v1", "kind": "X", "name": "t", "uid": "target"}]) } else { json!([]) }}))
        .unwrap();
        owners.learn(&reference, Some(&found));
    }
    assert_eq!(reads, ["rs1", "rs2"]);
    let owned: Vec<_> = owners
        .owned(pods.clone())
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    assert_eq!(owned, ["direct", "a", "b"]);
    assert!(!owners.bounded(&pods));

    // Many ReplicaSets: the bound stops the reads, and the rest are spared.
    let many: Vec<Pod> = (0..40)
        .map(|i| owned_by(&format!("p{i}"), &format!("rs{i}")))
        .collect();
    let mut owners = Owners::new("target");
    let mut count = 0;
    while let Some(reference) = owners.next_lookup(&many) {
        count += 1;
        owners.learn(&reference, None);
    }
    assert_eq!(count, restart::MAX_OWNER_LOOKUPS);
    assert!(owners.bounded(&many));
    assert!(owners.owned(many).is_empty());
}

#[test]
fn a_namesake_owner_with_another_uid_does_not_own_the_pod() {
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p", "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "old-rs"}]}}))
    .unwrap();
    let mut owners = Owners::new("target");
    let reference = owners.next_lookup(std::slice::from_ref(&pod)).unwrap();
    let namesake = serde_json::from_value(json!({"uid": "new-rs", "ownerReferences": [
        {"apiVersion": "v1", "kind": "X", "name": "t", "uid": "target"}]}))
    .unwrap();
    owners.learn(&reference, Some(&namesake));
    assert!(owners.owned(vec![pod]).is_empty());
}

/// One Application state per row, and what a sync trigger decides on it.
fn sync_table() -> Vec<(&'static str, Value)> {
    let marker = json!([{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]);
    let meta = json!({"name": "serving", "namespace": "argocd", "resourceVersion": "42"});
    vec![
        ("idle", json!({"metadata": meta})),
        (
            "requested by this run",
            json!({"metadata": meta, "operation": {"info": marker}}),
        ),
        (
            "running for this run",
            json!({"metadata": meta, "status": {"operationState": {"phase": "Running", "operation": {"info": marker}}}}),
        ),
        (
            "another operation requested",
            json!({"metadata": meta, "operation": {"sync": {}}}),
        ),
        (
            "full sync since the run",
            json!({"metadata": meta, "status": {"operationState": {
            "phase": "Succeeded", "startedAt": "2026-01-24T22:31:00Z", "operation": {"sync": {}}}}}),
        ),
        (
            "stuck operation state",
            json!({"metadata": meta, "status": {"operationState": {"phase": "Running"}}}),
        ),
        (
            "being deleted",
            json!({"metadata": {"name": "serving", "resourceVersion": "42", "deletionTimestamp": "2026-01-24T22:31:00Z"}}),
        ),
        (
            "no resourceVersion",
            json!({"metadata": {"name": "serving"}}),
        ),
    ]
}

#[test]
fn sync_decisions_snapshot() {
    let now = ended() + Duration::minutes(1);
    let decisions: Vec<(&str, Decision<_>)> = sync_table()
        .into_iter()
        .map(|(state, app)| {
            (
                state,
                sync::decide(&app, None, &application(), &run(), "nbv-operator", now),
            )
        })
        .collect();
    insta::assert_json_snapshot!(decisions);
}

#[test]
fn a_closed_sync_window_defers_until_it_opens() {
    let freeze = SyncWindow {
        kind: "deny".into(),
        schedule: "0 22 * * *".into(),
        duration: "1h".into(),
        applications: vec!["*".into()],
        ..SyncWindow::default()
    };
    let app = json!({"metadata": {"name": "serving", "namespace": "argocd", "resourceVersion": "1"}, "spec": {"project": "ml"}});
    let now = ended() + Duration::minutes(1);
    let decision = sync::decide(
        &app,
        Some(&[freeze]),
        &application(),
        &run(),
        "nbv-operator",
        now,
    );
    let Decision::Deferred { reason, until } = decision else {
        panic!("{decision:?}");
    };
    assert_eq!(
        until,
        Some(Utc.with_ymd_and_hms(2026, 1, 24, 23, 0, 0).unwrap())
    );
    assert!(
        reason.starts_with("Application argocd/serving: a sync window of its AppProject ml: "),
        "{reason}"
    );
    assert!(
        reason.ends_with("the sync starts when it opens, at 2026-01-24T23:00:00Z"),
        "{reason}"
    );
}

#[test]
fn sync_reports_follow_the_runs_operation() {
    let marker = json!([{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]);
    let cases = [
        (
            json!({"operation": {"info": marker}}),
            "in progress: the sync of Application argocd/serving for this run is Requested",
        ),
        (
            json!({"status": {"operationState": {"phase": "Failed", "message": "boom", "operation": {"info": marker}}}}),
            "failed: the sync of Application argocd/serving for this run ended in phase Failed: boom",
        ),
        (
            json!({"status": {"operationState": {"phase": "Succeeded", "operation": {"info": []}}}}),
            "replaced: Application argocd/serving shows no operation of this run any more (nbv-run: \
          ml/train@2026-01-24T22:30:00Z): another operation replaced it, and no full sync has \
          succeeded since the run ended",
        ),
        (
            json!({"status": {"operationState": {"phase": "Succeeded", "startedAt": "2026-01-24T22:31:00Z",
                "operation": {"sync": {}, "initiatedBy": {"automated": true}}}}}),
            "succeeded: Application argocd/serving was synced successfully in a full sync started \
             at 2026-01-24T22:31:00Z, after the run ended at 2026-01-24T22:30:00Z",
        ),
        (
            // A full sync that started before the run ended did not deploy it.
            json!({"status": {"operationState": {"phase": "Succeeded", "startedAt": "2026-01-24T22:29:00Z",
                "operation": {"sync": {}, "initiatedBy": {"automated": true}}}}}),
            "replaced: Application argocd/serving shows no operation of this run any more (nbv-run: \
          ml/train@2026-01-24T22:30:00Z): another operation replaced it, and no full sync has \
          succeeded since the run ended",
        ),
    ];
    for (app, expected) in cases {
        let shown = match sync::report(&app, &application(), &run()) {
            SyncReport::InProgress { summary } => format!("in progress: {summary}"),
            SyncReport::Finished {
                succeeded: true,
                summary,
            } => format!("succeeded: {summary}"),
            SyncReport::Finished {
                succeeded: false,
                summary,
            } => format!("failed: {summary}"),
            SyncReport::Replaced { summary } => format!("replaced: {summary}"),
        };
        assert_eq!(shown, expected);
    }
}

#[test]
fn only_a_full_sync_since_the_run_counts_as_deployed() {
    let now = ended() + Duration::minutes(1);
    for (state, app) in sync_table() {
        let decision = sync::decide(&app, None, &application(), &run(), "nbv-operator", now);
        let deployed =
            matches!(&decision, Decision::AlreadyDone { reason, .. } if reason.deployed());
        assert_eq!(deployed, state == "full sync since the run", "{state}");
    }
}

/// An RFC 3339 time within a day of the run's end, at whole or fractional seconds, in
/// UTC or with an offset; or something that is not a time at all.
fn written_time() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("not a time".to_owned())),
        (
            -86_400i64..86_400,
            0u32..1_000_000_000,
            prop_oneof![Just(0i32), Just(3600), Just(-19_800)]
        )
            .prop_map(|(seconds, nanos, offset)| {
                let at =
                    ended() + Duration::seconds(seconds) + Duration::nanoseconds(i64::from(nanos));
                let offset = chrono::FixedOffset::east_opt(offset).unwrap();
                Some(at.with_timezone(&offset).to_rfc3339())
            }),
    ]
}

fn labels() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        "[a-c]{1,2}",
        prop_oneof![Just(json!("x")), Just(json!(1)), Just(json!(null))],
        0..3,
    )
    .prop_map(|map| json!(map))
}

/// One action's decision on an object.
type Decide<'a> = dyn Fn(&Value) -> Decision<nbv_core::actions::Patch> + 'a;

proptest! {
    /// A restart by pods never lists with a selector of every pod, whatever the
    /// target's `spec.selector` holds.
    #[test]
    fn a_restart_never_selects_every_pod_of_a_namespace(
        selector in prop_oneof![
            Just(Value::Null),
            labels(),
            labels().prop_map(|l| json!({"matchLabels": l})),
            labels().prop_map(|l| json!({"matchLabels": l, "matchExpressions": []})),
        ]
    ) {
        let object = json!({"metadata": {"uid": "u"}, "spec": {"selector": selector}});
        if let Ok(Some(query)) = restart::pods_to_list(&object, &target("v1", "ReplicationController", "rc", "restart")) {
            let selector = selector_of(&object).unwrap();
            prop_assert!(!selector.selects_all());
            prop_assert!(!query.label_selector.is_empty());
        }
    }

    /// A refresh or a rolling restart writes only over an older time (or one that is
    /// not nbv's), so the target's time never moves backwards.
    #[test]
    fn a_refresh_never_moves_a_timestamp_backwards(existing in written_time(), late in 0i64..3) {
        let target = target("v1", "ConfigMap", "model", "refresh");
        let mut object = json!({"metadata": {"name": "model", "resourceVersion": "1"}});
        if let Some(at) = &existing {
            object["metadata"]["annotations"] = json!({"mlops.dev/restart-timestamp": at});
        }
        let run = Run::new("ml", "train", ended() + Duration::seconds(late));
        let decision = refresh::decide(&object, &target, &run, run.completed_at);
        let old = existing.as_deref().and_then(|at| DateTime::parse_from_rfc3339(at).ok());
        match decision {
            Decision::Write(write) => {
                let new = write.patch["metadata"]["annotations"]["mlops.dev/restart-timestamp"].as_str().unwrap();
                let new = DateTime::parse_from_rfc3339(new).unwrap();
                if let Some(old) = old {
                    prop_assert!(new > old, "{new} over {old}");
                }
            }
            Decision::AlreadyDone { reason: Already::Refreshed { at }, .. } => {
                prop_assert_eq!(Some(at.as_str()), existing.as_deref());
                prop_assert!(old.is_some_and(|old| old.timestamp() >= run.completed_at.timestamp()));
            }
            other => prop_assert!(false, "{other:?}"),
        }
    }

    /// Deciding again on what a write produced is already done: a retry after a lost
    /// answer writes nothing, for every action.
    #[test]
    fn deciding_twice_on_the_result_of_a_write_is_already_done(
        existing in written_time(),
        with_project in any::<bool>(),
        stuck in prop_oneof![Just(None), Just(Some("Running")), Just(Some("Failed"))],
        minutes in 0i64..120,
    ) {
        let now = ended() + Duration::minutes(minutes);
        let mut object = json!({"metadata": {"name": "x", "namespace": "ml", "resourceVersion": "1"}});
        if with_project {
            object["spec"] = json!({"project": "ml", "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}});
        }
        if let Some(at) = &existing {
            object["metadata"]["annotations"] = json!({"mlops.dev/restart-timestamp": at});
            object["spec"]["template"]["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/restartedAt": at});
        }
        if let Some(phase) = stuck {
            object["status"] = json!({"operationState": {"phase": phase}});
        }
        let web = target("apps/v1", "Deployment", "web", "restart");
        let config = target("v1", "ConfigMap", "x", "refresh");
        let app = target("argoproj.io/v1alpha1", "Application", "x", "refresh");
        let decisions: [(&str, &Decide<'_>); 4] = [
            ("rolling restart", &|o| restart::rolling_restart(o, &web, &run())),
            ("refresh", &|o| refresh::decide(o, &config, &run(), now)),
            ("refresh of an Application", &|o| refresh::decide(o, &app, &run(), now)),
            ("sync", &|o| sync::decide(o, None, &application(), &run(), "nbv-operator", now)),
        ];
        for (action, decide) in decisions {
            let first = decide(&object);
            let after = match &first {
                Decision::Write(write) => merged(&object, &write.patch),
                Decision::AlreadyDone { .. } => object.clone(),
                other => { prop_assert!(false, "{action}: {other:?}"); unreachable!() }
            };
            let second = decide(&after);
            prop_assert!(matches!(second, Decision::AlreadyDone { .. }), "{action}: {first:?} then {second:?}");
        }
        // Evicting the pods pacing names, each replaced, leaves none to evict.
        let mut pods = vec![
            ready(pod("a", existing.as_deref().filter(|at| DateTime::parse_from_rfc3339(at).is_ok()), false), true),
            ready(pod("b", Some("2026-01-24T21:00:00Z"), false), true),
            ready(pod("c", Some("2026-01-24T23:00:00Z"), false), true),
        ];
        let mut evicted = 0;
        while let restart::Pace::Evict(next) = restart::pace(&pods, &Replicas::default(), ended(), at(1)) {
            pods.retain(|p| p.metadata.uid.as_ref() != Some(&next.uid));
            evicted += 1;
            prop_assert!(evicted <= 2, "evicted {} again", next.name);
        }
        let finished = matches!(restart::pace(&pods, &Replicas::default(), ended(), at(1)), restart::Pace::Finished { .. });
        prop_assert!(finished);
    }
}

/// A cluster of one target's pods that a paced restart evicts, in random order of
/// events: the API server's eviction, the kubelet ending a pod, the workload's
/// controller (a ReplicaSet) creating a replacement, the replacement becoming Ready.
#[derive(Clone, Debug)]
enum Happening {
    /// nbv looks at the pods (and evicts what pacing names).
    Look,
    /// A terminating pod is gone.
    Gone,
    /// The ReplicaSet creates a pod if it has fewer than it wants.
    Create,
    /// A replacement becomes Ready.
    Ready,
}

fn happening() -> impl Strategy<Value = Happening> {
    prop_oneof![
        Just(Happening::Look),
        Just(Happening::Gone),
        Just(Happening::Create),
        Just(Happening::Ready)
    ]
}

/// `pod` controlled by the ReplicaSet `rs1`.
fn controlled(mut pod: Pod) -> Pod {
    pod.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "predictor-7f", "uid": "rs1", "controller": true}))
        .unwrap(),
    ]);
    pod
}

/// What nbv knows after reading the ReplicaSet `rs1` that wants `wanted` pods.
fn replica_set(wanted: usize) -> Replicas {
    let mut replicas = Replicas::default();
    replicas.learn(
        "rs1",
        Some(&json!({"kind": "ReplicaSet",
            "metadata": {"name": "predictor-7f", "uid": "rs1"}, "spec": {"replicas": wanted}})),
    );
    replicas
}

proptest! {
    /// The pacing rule: a paced restart never has two evictions outstanding (it never
    /// evicts while a pod terminates, nor while an evicted pod is gone but not yet
    /// replaced), never evicts while a replacement is not Ready, never evicts a pod
    /// created after the run, and evicts each old pod once; when the cluster replaces
    /// every pod, it finishes.
    #[test]
    fn a_paced_restart_never_evicts_while_the_last_eviction_is_not_replaced(
        old in prop::collection::vec(any::<bool>(), 1..6),
        happenings in prop::collection::vec(happening(), 0..80),
    ) {
        let wanted = old.len();
        let replicas = replica_set(wanted);
        let mut pods: Vec<Pod> = old.iter().enumerate().map(|(i, is_ready)| {
            controlled(ready(pod(&format!("old-{i}"), Some("2026-01-24T22:00:00Z"), false), *is_ready))
        }).collect();
        let mut evicted: Vec<String> = Vec::new();
        let mut replacements = 0;
        let now = at(1);
        // Then the cluster settles: pods end, are replaced, and become Ready.
        let settle = std::iter::repeat_n(
            [Happening::Gone, Happening::Create, Happening::Ready, Happening::Look], 12).flatten();
        for happening in happenings.into_iter().chain(settle) {
            match happening {
                Happening::Look => {
                    let Pace::Evict(next) = restart::pace(&pods, &replicas, ended(), now) else { continue };
                    prop_assert!(pods.iter().all(|p| p.metadata.deletion_timestamp.is_none()),
                        "evicted {} while another pod terminates", next.name);
                    prop_assert_eq!(pods.len(), wanted,
                        "evicted {} while an evicted pod is not replaced", next.name);
                    prop_assert!(pods.iter().filter(|p| !restart::predates(&p.metadata, ended()))
                        .all(restart::is_ready), "evicted {} while a replacement is not Ready", next.name);
                    prop_assert!(next.name.starts_with("old-"), "evicted {}", next.name);
                    prop_assert!(!evicted.contains(&next.name), "evicted {} twice", next.name);
                    evicted.push(next.name.clone());
                    // The API server marks it terminating.
                    let chosen = pods.iter_mut().find(|p| p.metadata.name.as_ref() == Some(&next.name)).unwrap();
                    *chosen = pod_terminating(chosen.clone());
                }
                Happening::Gone => pods.retain(|p| p.metadata.deletion_timestamp.is_none()),
                Happening::Create => {
                    // A ReplicaSet counts pods being deleted as gone (it replaces them
                    // at once).
                    let active = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).count();
                    if active < wanted {
                        replacements += 1;
                        pods.push(controlled(ready(pod(&format!("new-{replacements}"), Some("2026-01-24T22:31:00Z"), false), false)));
                    }
                }
                Happening::Ready => {
                    if let Some(p) = pods.iter_mut().find(|p| !restart::is_ready(p) && !restart::predates(&p.metadata, ended())) {
                        *p = ready(p.clone(), true);
                    }
                }
            }
        }
        prop_assert_eq!(evicted.len(), old.len());
        let finished = matches!(restart::pace(&pods, &replicas, ended(), now), Pace::Finished { .. });
        prop_assert!(finished);
    }
}

#[test]
fn pacing_waits_for_a_controller_to_replace_an_evicted_pod() {
    let replicas = replica_set(2);
    // old-1 was evicted and is gone; the ReplicaSet has not created its replacement.
    let pods = vec![controlled(ready(
        pod("old-0", Some("2026-01-24T22:00:00Z"), false),
        true,
    ))];
    let Pace::Wait { reason, .. } = restart::pace(&pods, &replicas, ended(), at(1)) else {
        panic!("a wait")
    };
    assert_eq!(
        reason,
        "ReplicaSet predictor-7f has 1 of its 2 pods; the next pod is evicted once it has them all"
    );
    // Unread, the ReplicaSet is not known to want more: what the pods show is all.
    assert!(matches!(
        restart::pace(&pods, &Replicas::default(), ended(), at(1)),
        Pace::Evict(_)
    ));
    // However long it takes (nothing shows since when the pod is missing).
    assert!(matches!(
        restart::pace(&pods, &replicas, ended(), at(600)),
        Pace::Wait { .. }
    ));
    // With no pod left to evict the restart is done, even while a replica is missing
    // (a quota, say): every pod there is runs what the run validated.
    let renewed = vec![controlled(ready(
        pod("new-1", Some("2026-01-24T22:31:00Z"), false),
        true,
    ))];
    assert!(matches!(
        restart::pace(&renewed, &replicas, ended(), at(2)),
        Pace::Finished { newer: 1 }
    ));
    // Pods that ended do not count, as their ReplicaSet does not count them.
    let mut failed = pods.clone();
    let mut ended_pod = controlled(pod("old-9", Some("2026-01-24T22:00:00Z"), false));
    ended_pod.status = Some(serde_json::from_value(json!({"phase": "Failed"})).unwrap());
    failed.push(ended_pod);
    assert!(matches!(
        restart::pace(&failed, &replicas, ended(), at(1)),
        Pace::Wait { .. }
    ));
}

#[test]
fn only_the_controllers_that_pods_name_are_read_and_compared() {
    let pods = vec![controlled(ready(
        pod("old-0", Some("2026-01-24T22:00:00Z"), false),
        true,
    ))];
    let mut replicas = Replicas::default();
    // A Rollout wants 3 pods but controls none of them directly: not compared.
    replicas.learn_object(&json!({"kind": "Rollout",
        "metadata": {"name": "web", "uid": "rollout1"}, "spec": {"replicas": 3}}));
    let next = replicas.next_lookup(&pods).expect("the ReplicaSet to read");
    assert_eq!(
        (next.kind.as_str(), next.name.as_str()),
        ("ReplicaSet", "predictor-7f")
    );
    // A namesake with another uid is not the controller: nothing learnt.
    replicas.learn(
        "rs1",
        Some(&json!({"kind": "ReplicaSet",
        "metadata": {"name": "predictor-7f", "uid": "rs2"}, "spec": {"replicas": 5}})),
    );
    assert_eq!(replicas.next_lookup(&pods), None, "read once");
    assert_eq!(replicas.shortfall(&pods), None);
    // Controllers of other kinds are not read.
    let mut by_job = pods[0].clone();
    by_job.metadata.owner_references.as_mut().unwrap()[0].kind = "Job".into();
    by_job.metadata.owner_references.as_mut().unwrap()[0].api_version = "batch/v1".into();
    assert_eq!(Replicas::default().next_lookup(&[by_job]), None);
}

fn pod_terminating(mut pod: Pod) -> Pod {
    pod.metadata.deletion_timestamp =
        Some(serde_json::from_value(json!("2026-01-24T22:31:00Z")).unwrap());
    pod
}
