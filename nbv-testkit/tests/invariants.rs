//! The invariants catch what they are about, and only that: each test writes a history
//! with the in-memory cluster (direct writes for the world, API requests for "nbv")
//! and checks what the invariants say about it.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use nbv_core::api::Phase;
use nbv_testkit::FakeCluster;
use nbv_testkit::fixtures::{self, JobBuilder};
use nbv_testkit::invariants::{
    Observation, Settings, Uptime, Violation, applications_show_their_aggregate, check_all,
    nbv_changes_only_what_it_owns, one_notification_per_terminal_transition,
    triggers_take_effect_once, wave_annotations_follow_the_phase,
};
use nbv_testkit::scenario::Mode;
use serde_json::{Value, json};

const ML: &str = "ml";

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn jobs() -> ApiResource {
    resource(
        "mlops.mlops.dev",
        "v1alpha1",
        "NotebookValidationJob",
        "notebookvalidationjobs",
    )
}

fn deployments() -> ApiResource {
    resource("apps", "v1", "Deployment", "deployments")
}

fn applications() -> ApiResource {
    resource("argoproj.io", "v1alpha1", "Application", "applications")
}

/// A merge patch through the API: a change made by "nbv".
async fn client_patch(
    cluster: &FakeCluster,
    what: &ApiResource,
    ns: &str,
    name: &str,
    patch: Value,
) {
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client(), ns, what);
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("patch {name}: {e}"));
}

async fn client_status_patch(cluster: &FakeCluster, ns: &str, name: &str, status: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client(), ns, &jobs());
    api.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": status})),
    )
    .await
    .unwrap_or_else(|e| panic!("patch status of {name}: {e}"));
}

async fn client_create(cluster: &FakeCluster, what: &ApiResource, ns: &str, object: Value) {
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client(), ns, what);
    let object: DynamicObject = serde_json::from_value(object).expect("an object");
    api.create(&PostParams::default(), &object)
        .await
        .expect("created");
}

fn apply(cluster: &FakeCluster, object: Value) -> Value {
    cluster.apply_object(object).expect("stored")
}

async fn wait(seconds: u64) {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
}

/// The invariants over everything so far, with one operator up since `start`.
fn observe(
    cluster: &FakeCluster,
    uptimes: &[Uptime],
    check: fn(&Observation<'_>) -> Vec<Violation>,
) -> Vec<String> {
    let (history, requests) = (cluster.history(), cluster.requests());
    let observation = Observation {
        history: &history,
        requests: &requests,
        end: cluster.now(),
        mode: Mode::GitopsOnly,
        uptimes,
        disturbed: false,
        settings: Settings::default(),
    };
    check(&observation)
        .iter()
        .map(Violation::to_string)
        .collect()
}

fn up_since(start: DateTime<Utc>) -> [Uptime; 1] {
    [Uptime {
        started: start,
        stopped: None,
    }]
}

/// A job that succeeded now, whose trigger restarts Deployment `ml/web`.
fn succeeded_with_restart(
    cluster: &FakeCluster,
    name: &str,
    started: DateTime<Utc>,
) -> DateTime<Utc> {
    let now = cluster.now();
    apply(
        cluster,
        JobBuilder::new(ML, name)
            .on_success_trigger(
                "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}",
            )
            .phase(Phase::Succeeded)
            .started_at(started)
            .completed_at(now)
            .build(),
    );
    now
}

fn run_key(started: DateTime<Utc>) -> String {
    format!("g1@{}", rfc3339(started))
}

const RESTART_KEY: &str = "trigger/restart:apps/Deployment:ml/web";

#[tokio::test(start_paused = true)]
async fn a_trigger_taking_effect_once_and_recorded_is_fine() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::deployment(ML, "web"));
    wait(10).await;
    let completed = succeeded_with_restart(&cluster, "train", start);
    let restart = json!({"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": rfc3339(completed)}}}}});
    client_patch(&cluster, &deployments(), ML, "web", restart).await;
    client_status_patch(
        &cluster,
        ML,
        "train",
        json!({"effects": {"run": run_key(start), "done": [RESTART_KEY]}}),
    )
    .await;
    wait(600).await;
    assert_eq!(
        observe(&cluster, &up_since(start), triggers_take_effect_once),
        Vec::<String>::new()
    );
}

#[tokio::test(start_paused = true)]
async fn a_users_restart_after_the_run_ended_satisfies_the_trigger_but_an_earlier_one_does_not() {
    for (user_restart_after, violations) in [(5, 0), (-5, 1)] {
        let cluster = FakeCluster::default();
        let start = cluster.now();
        apply(&cluster, fixtures::deployment(ML, "web"));
        wait(10).await;
        let completed = cluster.now() + chrono::Duration::seconds(10);
        wait(10).await;
        // `kubectl rollout restart` by a user, 5 s after (or before) the run ended.
        let mut web = cluster
            .get("deployments", Some(ML), "web")
            .expect("ok")
            .expect("exists");
        let at = completed + chrono::Duration::seconds(user_restart_after);
        web["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
            json!(rfc3339(at));
        apply(&cluster, web);
        wait(10).await;
        apply(
            &cluster,
            JobBuilder::new(ML, "train")
                .on_success_trigger(
                    "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}",
                )
                .phase(Phase::Succeeded)
                .started_at(start)
                .completed_at(completed)
                .build(),
        );
        // nbv finds the newer restart, writes nothing and records the trigger done.
        client_status_patch(
            &cluster,
            ML,
            "train",
            json!({"effects": {"run": run_key(start), "done": [RESTART_KEY]}}),
        )
        .await;
        wait(600).await;
        let found = observe(&cluster, &up_since(start), triggers_take_effect_once);
        assert_eq!(found.len(), violations, "{user_restart_after}: {found:#?}");
        if violations > 0 {
            assert!(found[0].contains("never took effect"), "{}", found[0]);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn nbvs_restart_for_a_later_run_of_another_job_satisfies_an_earlier_trigger() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::deployment(ML, "web"));
    wait(10).await;
    let first = succeeded_with_restart(&cluster, "first", start);
    wait(60).await;
    let later = succeeded_with_restart(&cluster, "later", start);
    assert!(later > first);
    // nbv restarts for the later run only: the first run's restart would move the
    // timestamp backwards, so it records that trigger done without writing.
    let restart = json!({"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": rfc3339(later)}}}}});
    client_patch(&cluster, &deployments(), ML, "web", restart).await;
    for job in ["first", "later"] {
        client_status_patch(
            &cluster,
            ML,
            job,
            json!({"effects": {"run": run_key(start), "done": [RESTART_KEY]}}),
        )
        .await;
    }
    wait(600).await;
    assert_eq!(
        observe(&cluster, &up_since(start), triggers_take_effect_once),
        Vec::<String>::new()
    );
}

#[tokio::test(start_paused = true)]
async fn a_trigger_repeated_after_a_users_restart_is_caught() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::deployment(ML, "web"));
    wait(10).await;
    let completed = succeeded_with_restart(&cluster, "train", start);
    let ours = json!({"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": rfc3339(completed)}}}}});
    client_patch(&cluster, &deployments(), ML, "web", ours.clone()).await;
    client_status_patch(
        &cluster,
        ML,
        "train",
        json!({"effects": {"run": run_key(start), "done": [RESTART_KEY]}}),
    )
    .await;
    wait(30).await;
    // `kubectl rollout restart` by a user: not nbv's change.
    let mut web = cluster
        .get("deployments", Some(ML), "web")
        .expect("ok")
        .expect("exists");
    web["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] =
        json!(rfc3339(cluster.now()));
    apply(&cluster, web);
    wait(30).await;
    client_patch(&cluster, &deployments(), ML, "web", ours).await;
    let violations = observe(&cluster, &up_since(start), triggers_take_effect_once);
    assert_eq!(violations.len(), 1, "{violations:#?}");
    assert!(
        violations[0].contains("was written 2 times"),
        "{}",
        violations[0]
    );
}

#[tokio::test(start_paused = true)]
async fn writes_no_run_owes_and_triggers_never_carried_out_are_caught() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::deployment(ML, "web"));
    wait(10).await;
    succeeded_with_restart(&cluster, "train", start);
    // nbv restarts with its own clock instead of the run's completion time.
    let stray = json!({"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": "2030-01-01T00:00:00Z"}}}}});
    client_patch(&cluster, &deployments(), ML, "web", stray).await;
    wait(120).await;
    let violations = observe(&cluster, &up_since(start), triggers_take_effect_once);
    assert!(
        violations
            .iter()
            .any(|v| v.contains("which is the trigger of no successful run")),
        "{violations:#?}"
    );
    assert!(
        violations.iter().any(|v| v.contains("never took effect")),
        "{violations:#?}"
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("recorded neither as done nor as failed")),
        "{violations:#?}"
    );

    // The same history without the operator running: nothing was owed yet.
    let down = [Uptime {
        started: start,
        stopped: Some(start),
    }];
    let violations = observe(&cluster, &down, triggers_take_effect_once);
    assert_eq!(
        violations.len(),
        1,
        "only the stray write remains: {violations:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn deleting_a_pod_that_already_serves_the_new_model_is_caught() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::inference_service(ML, "scorer"));
    apply(
        &cluster,
        fixtures::predictor_pod(ML, "scorer", "scorer-old", start),
    );
    wait(60).await;
    let completed = cluster.now();
    apply(
        &cluster,
        JobBuilder::new(ML, "train")
            .on_success_trigger("- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: scorer, action: restart}")
            .phase(Phase::Succeeded)
            .started_at(start)
            .completed_at(completed)
            .build(),
    );
    wait(5).await;
    apply(
        &cluster,
        fixtures::predictor_pod(ML, "scorer", "scorer-new", start),
    );
    let pods: Api<DynamicObject> =
        Api::namespaced_with(cluster.client(), ML, &resource("", "v1", "Pod", "pods"));
    pods.delete("scorer-old", &Default::default())
        .await
        .expect("deleted");
    pods.delete("scorer-new", &Default::default())
        .await
        .expect("deleted");
    let violations = observe(&cluster, &up_since(start), triggers_take_effect_once);
    assert!(
        violations
            .iter()
            .any(|v| v.contains("scorer-new") && v.contains("after the run it restarts for ended")),
        "{violations:#?}"
    );
    assert!(
        !violations.iter().any(|v| v.contains("scorer-old")),
        "{violations:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_record_of_an_earlier_run_in_the_ledger_is_caught() {
    let cluster = FakeCluster::default();
    let first = cluster.now();
    apply(
        &cluster,
        JobBuilder::new(ML, "train")
            .phase(Phase::Initializing)
            .started_at(first)
            .build(),
    );
    wait(600).await;
    let second = cluster.now();
    let failure = json!({"key": RESTART_KEY, "attempts": 5, "lastError": "not found",
                         "lastAttempt": rfc3339(first), "gaveUp": true});
    client_status_patch(
        &cluster,
        ML,
        "train",
        json!({"effects": {"run": run_key(second), "done": [], "failed": [failure]}}),
    )
    .await;
    let violations = observe(&cluster, &up_since(first), triggers_take_effect_once);
    assert_eq!(violations.len(), 1, "{violations:#?}");
    assert!(
        violations[0].contains("a record of an earlier run"),
        "{}",
        violations[0]
    );
}

#[tokio::test(start_paused = true)]
async fn wave_annotations_must_follow_the_phase_once_the_operator_had_time() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    for name in ["kept", "forgotten"] {
        apply(
            &cluster,
            JobBuilder::new(ML, name)
                .sync_wave(3)
                .phase(Phase::Failed)
                .started_at(start)
                .completed_at(start)
                .build(),
        );
    }
    let annotations = json!({"metadata": {"annotations": {
        "mlops.dev/wave-failed": "3", "mlops.dev/completion-time": rfc3339(start)}}});
    client_patch(&cluster, &jobs(), ML, "kept", annotations).await;
    wait(30).await;
    assert_eq!(
        observe(
            &cluster,
            &up_since(start),
            wave_annotations_follow_the_phase
        ),
        Vec::<String>::new()
    );
    wait(60).await;
    let violations = observe(
        &cluster,
        &up_since(start),
        wave_annotations_follow_the_phase,
    );
    assert_eq!(violations.len(), 1, "{violations:#?}");
    assert!(
        violations[0].contains("job ml/forgotten") && violations[0].contains("wave-failed"),
        "{}",
        violations[0]
    );
}

#[tokio::test(start_paused = true)]
async fn applications_show_their_jobs_and_are_patched_at_most_once_a_minute() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::application("argocd", "models", ML));
    apply(
        &cluster,
        JobBuilder::new(ML, "train")
            .part_of("models")
            .phase(Phase::Succeeded)
            .started_at(start)
            .completed_at(start)
            .build(),
    );
    let publish = |summary: &str| json!({"metadata": {"annotations": {"mlops.dev/notebook-summary": summary}}});
    client_patch(
        &cluster,
        &applications(),
        "argocd",
        "models",
        publish("first"),
    )
    .await;
    wait(20).await;
    client_patch(
        &cluster,
        &applications(),
        "argocd",
        "models",
        publish("second"),
    )
    .await;
    wait(120).await;
    let violations = observe(
        &cluster,
        &up_since(start),
        applications_show_their_aggregate,
    );
    assert_eq!(violations.len(), 2, "{violations:#?}");
    assert!(
        violations.iter().any(|v| v.contains("20 s apart")),
        "{violations:#?}"
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("\"1/1 succeeded (100% success rate)\"")),
        "{violations:#?}"
    );

    // An operator that restarted in between does not know of the earlier patch.
    let restarted = [
        Uptime {
            started: start,
            stopped: Some(start + chrono::Duration::seconds(10)),
        },
        Uptime {
            started: start + chrono::Duration::seconds(10),
            stopped: None,
        },
    ];
    let violations = observe(&cluster, &restarted, applications_show_their_aggregate);
    assert!(
        !violations.iter().any(|v| v.contains("apart")),
        "{violations:#?}"
    );
}

fn notification(job: &str, reason: &str, at: DateTime<Utc>, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ML},
        "involvedObject": {"apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
                           "name": job, "namespace": ML},
        "reason": reason, "type": "Warning", "message": "failed",
        "eventTime": at.to_rfc3339_opts(SecondsFormat::Micros, true)
    })
}

#[tokio::test(start_paused = true)]
async fn one_notification_per_terminal_transition_and_none_for_anything_else() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    let events = resource("", "v1", "Event", "events");
    apply(
        &cluster,
        JobBuilder::new(ML, "twice")
            .phase(Phase::Failed)
            .started_at(start)
            .completed_at(start)
            .build(),
    );
    apply(
        &cluster,
        JobBuilder::new(ML, "never")
            .phase(Phase::Failed)
            .started_at(start)
            .completed_at(start)
            .build(),
    );
    apply(
        &cluster,
        JobBuilder::new(ML, "once")
            .phase(Phase::Failed)
            .started_at(start)
            .completed_at(start)
            .build(),
    );
    client_create(
        &cluster,
        &events,
        ML,
        notification("twice", "ValidationFailed", start, "a"),
    )
    .await;
    client_create(
        &cluster,
        &events,
        ML,
        notification("twice", "ValidationFailed", start, "b"),
    )
    .await;
    client_create(
        &cluster,
        &events,
        ML,
        notification("once", "ValidationFailed", start, "c"),
    )
    .await;
    client_create(
        &cluster,
        &events,
        ML,
        notification("once", "ValidationSucceeded", start, "d"),
    )
    .await;
    wait(120).await;
    let violations = observe(
        &cluster,
        &up_since(start),
        one_notification_per_terminal_transition,
    );
    assert_eq!(violations.len(), 3, "{violations:#?}");
    for expected in [
        "2 notifications (a, b) for job ml/twice",
        "no notification for job ml/never",
        "notification d says job ml/once Succeeded",
    ] {
        assert!(
            violations.iter().any(|v| v.contains(expected)),
            "{expected}: {violations:#?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn nbv_may_only_change_what_it_owns_and_must_report_bad_annotations() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::deployment(ML, "web"));
    apply(&cluster, JobBuilder::new(ML, "train").sync_wave(1).build());
    apply(
        &cluster,
        JobBuilder::new(ML, "typo").sync_wave("three").build(),
    );
    // Its own fields: fine.
    client_patch(
        &cluster,
        &jobs(),
        ML,
        "train",
        json!({"metadata": {"annotations": {"mlops.dev/wave-complete": "1"}}}),
    )
    .await;
    client_status_patch(
        &cluster,
        ML,
        "train",
        json!({"effects": {"run": "g1", "done": ["wave"]}}),
    )
    .await;
    // Someone else's: caught, named.
    client_patch(
        &cluster,
        &jobs(),
        ML,
        "train",
        json!({"spec": {"timeout": "2h"}}),
    )
    .await;
    client_patch(
        &cluster,
        &deployments(),
        ML,
        "web",
        json!({"spec": {"replicas": 3}}),
    )
    .await;
    client_create(&cluster, &resource("", "v1", "ConfigMap", "configmaps"), ML,
                  json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": ML}})).await;
    wait(120).await;
    let violations = observe(&cluster, &up_since(start), nbv_changes_only_what_it_owns);
    assert_eq!(violations.len(), 5, "{violations:#?}");
    assert!(
        violations
            .iter()
            .any(|v| v.contains("nbv changed spec.timeout of NotebookValidationJob ml/train")),
        "{violations:#?}"
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("nbv changed spec.replicas of Deployment ml/web")),
        "{violations:#?}"
    );
    assert!(
        violations
            .iter()
            .any(|v| v.contains("nbv created ConfigMap ml/x")),
        "{violations:#?}"
    );
    assert!(violations.iter().any(|v| v.contains("job ml/typo has malformed annotations (argocd.argoproj.io/sync-wave) but its AnnotationsValid condition is absent")), "{violations:#?}");
    assert!(
        violations
            .iter()
            .any(|v| v.contains("no InvalidAnnotation Event reports them")),
        "{violations:#?}"
    );

    // Reported as it should be: nothing more to say about the job.
    client_status_patch(&cluster, ML, "typo", json!({"conditions": [{
        "type": "AnnotationsValid", "status": "False", "reason": "InvalidAnnotation",
        "message": "argocd.argoproj.io/sync-wave: \"three\" is not a wave", "lastTransitionTime": rfc3339(cluster.now())}]})).await;
    let mut event = notification("typo", "InvalidAnnotation", cluster.now(), "typo.1");
    event["type"] = json!("Warning");
    client_create(&cluster, &resource("", "v1", "Event", "events"), ML, event).await;
    let violations = observe(&cluster, &up_since(start), nbv_changes_only_what_it_owns);
    assert!(
        !violations.iter().any(|v| v.contains("ml/typo")),
        "{violations:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_quiet_history_breaks_nothing() {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    apply(&cluster, fixtures::namespace(ML));
    apply(&cluster, JobBuilder::new(ML, "idle").sync_wave(2).build());
    wait(600).await;
    let (history, requests) = (cluster.history(), cluster.requests());
    let uptimes = up_since(start);
    let observation = Observation {
        history: &history,
        requests: &requests,
        end: cluster.now(),
        mode: Mode::Default,
        uptimes: &uptimes,
        disturbed: true,
        settings: Settings::default(),
    };
    assert_eq!(check_all(&observation), Vec::new());
}
