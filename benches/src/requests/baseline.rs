//! The upstream operator's algorithm, as its documentation describes it, carried out
//! against the same in-memory API server, so that its requests are counted the same
//! way as nbv's.
//!
//! Per completion, in its order:
//!
//! 1. the triggers, before the status is written: an InferenceService is read, its
//!    pods listed and deleted one DELETE each; a Deployment is read and updated whole
//!    (PUT) with the restart annotation; an Application is read live (GET) and updated
//!    whole with a sync operation;
//! 2. the status, updated whole (PUT of the status subresource);
//! 3. the wave annotations, an update of the whole job (PUT);
//! 4. the notification Event;
//! 5. the Application's aggregate: a LIST of every job of the namespace, a live GET of
//!    the Application and an update of it (PUT).
//!
//! The objects it updates come from its informer cache (read here without a request,
//! as a cache would be); every read and write above is a request.

use chrono::{DateTime, Utc};
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use nbv_testkit::FakeCluster;
use serde_json::{Value, json};

use super::count::Counts;
use super::scenario::{Case, NAMESPACE, PLATFORM, Triggers, job_name, scenario};

/// The upstream algorithm's requests for `case`'s completions (its first start is not
/// counted: only what the completions cost).
///
/// # Panics
///
/// When the in-memory API server refuses the scenario's objects or one of the
/// algorithm's requests (a bug in this baseline, never a measurement).
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::{Case, Triggers, upstream};
///
/// let case = Case { jobs: 5, completing: 2, triggers: Triggers::None, pods: 0 };
/// let counts = upstream(&case);
/// // Per completion: status, wave and Application updates, the Event, a LIST of the
/// // jobs and a GET of the Application.
/// assert_eq!((counts.status, counts.wave, counts.events, counts.app_status, counts.reads), (2, 2, 2, 2, 4));
/// ```
pub fn upstream(case: &Case) -> Counts {
    let scenario: Value =
        serde_json::from_str(&scenario(case, false)).expect("the scenario is JSON");
    let epoch: DateTime<Utc> = serde_json::from_value(scenario["epoch"].clone()).expect("epoch");
    let cluster = FakeCluster::new(epoch);
    for object in scenario["objects"].as_array().expect("objects") {
        cluster
            .apply_object(object.clone())
            .expect("the object is accepted");
    }
    let before = cluster.requests().len();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let client = cluster.client();
        for i in 0..case.completing {
            complete(&client, &cluster, case, i).await;
        }
    });
    Counts::of(&cluster.requests()[before..])
}

fn api(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
    namespace: &str,
) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind));
    Api::namespaced_with(client.clone(), namespace, &resource)
}

fn jobs(client: &Client) -> Api<DynamicObject> {
    api(
        client,
        "mlops.mlops.dev",
        "v1alpha1",
        "NotebookValidationJob",
        NAMESPACE,
    )
}

fn applications(client: &Client) -> Api<DynamicObject> {
    api(client, "argoproj.io", "v1alpha1", "Application", "argocd")
}

/// The object as the informer cache holds it: read without a request.
fn cached(cluster: &FakeCluster, resource: &str, namespace: &str, name: &str) -> DynamicObject {
    let object = cluster
        .get(resource, Some(namespace), name)
        .expect("a known resource")
        .expect("the object exists");
    serde_json::from_value(object).expect("an object")
}

async fn complete(client: &Client, cluster: &FakeCluster, case: &Case, i: usize) {
    let params = PostParams::default();
    let now = cluster.now().to_rfc3339();
    // 1. The triggers, first.
    if case.triggers == Triggers::Three {
        let isvc = format!("isvc-{i:05}");
        api(
            client,
            "serving.kserve.io",
            "v1beta1",
            "InferenceService",
            NAMESPACE,
        )
        .get(&isvc)
        .await
        .expect("GET InferenceService");
        let pods = api(client, "", "v1", "Pod", NAMESPACE);
        let listed = pods
            .list(
                &ListParams::default()
                    .labels(&format!("serving.kserve.io/inferenceservice={isvc}")),
            )
            .await
            .expect("LIST pods");
        for pod in listed.items {
            let name = pod.metadata.name.unwrap_or_default();
            pods.delete(&name, &DeleteParams::default())
                .await
                .expect("DELETE pod");
        }
    }
    if case.triggers != Triggers::None {
        let deployments = api(client, "apps", "v1", "Deployment", NAMESPACE);
        let mut deployment = deployments
            .get(&format!("model-{i:05}"))
            .await
            .expect("GET Deployment");
        deployment.data["spec"]["template"]["metadata"]["annotations"] =
            json!({"kubectl.kubernetes.io/restartedAt": now});
        let name = deployment.metadata.name.clone().unwrap_or_default();
        deployments
            .replace(&name, &params, &deployment)
            .await
            .expect("PUT Deployment");
    }
    if case.triggers == Triggers::Three {
        let apps = applications(client);
        let mut app = apps
            .get(&format!("app-{i:05}"))
            .await
            .expect("GET Application");
        app.data["operation"] =
            json!({"sync": {"revision": "main"}, "initiatedBy": {"username": "notebook-operator"}});
        let name = app.metadata.name.clone().unwrap_or_default();
        apps.replace(&name, &params, &app)
            .await
            .expect("PUT Application");
    }
    // 2. The status, whole.
    let name = job_name(i);
    let mut job = cached(
        cluster,
        "notebookvalidationjobs.mlops.mlops.dev",
        NAMESPACE,
        &name,
    );
    job.data["status"]["phase"] = json!("Succeeded");
    job.data["status"]["completionTime"] = json!(now);
    let stored = jobs(client)
        .replace_status(&name, &params, &job)
        .await
        .expect("PUT status");
    // 3. The wave annotations, with the whole job.
    let mut job = stored;
    job.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("mlops.dev/wave-complete".into(), "1".into());
    jobs(client)
        .replace(&name, &params, &job)
        .await
        .expect("PUT job");
    // 4. The notification.
    let events = api(client, "", "v1", "Event", NAMESPACE);
    let event: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"generateName": format!("{name}."), "namespace": NAMESPACE},
        "involvedObject": {"apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
                           "namespace": NAMESPACE, "name": name},
        "reason": "ValidationSucceeded", "message": "the notebook ran", "type": "Normal",
        "firstTimestamp": now, "lastTimestamp": now, "count": 1
    }))
    .expect("an Event");
    events.create(&params, &event).await.expect("POST Event");
    // 5. The aggregate: every job of the namespace, the Application live, updated whole.
    let all = jobs(client)
        .list(&ListParams::default())
        .await
        .expect("LIST jobs");
    let succeeded = all
        .items
        .iter()
        .filter(|j| j.data["status"]["phase"] == "Succeeded")
        .count();
    let apps = applications(client);
    let mut app = apps.get(PLATFORM).await.expect("GET Application");
    app.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            "mlops.dev/notebook-summary".into(),
            format!("{succeeded}/{} succeeded", all.items.len()),
        );
    apps.replace(PLATFORM, &params, &app)
        .await
        .expect("PUT Application");
}
