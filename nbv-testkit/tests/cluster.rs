//! The in-memory API server through a real `kube::Client`: verbs, semantics, errors,
//! faults, the request log and virtual time.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::core::Status;
use nbv_core::api::NotebookValidationJob;
use nbv_testkit::cluster::{
    Actor, ApiResourceSpec, ClusterError, FakeCluster, Fault, FaultEffect, FaultMatch, PatchType,
    Reason, StatusCode, Times, Verb, VerbKind,
};
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn api_error(err: kube::Error) -> Box<Status> {
    match err {
        kube::Error::Api(status) => status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pod(name: &str, labels: Value) -> Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]}
    }))
    .expect("valid pod")
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]}
            }
        }
    }))
    .expect("valid deployment")
}

fn job(name: &str) -> NotebookValidationJob {
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {"name": name},
        "spec": {
            "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "train.ipynb"},
            "podConfig": {"containerImage": "quay.io/jupyter/minimal-notebook:latest"}
        }
    }))
    .expect("valid job")
}

fn application_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Application"),
        "applications",
    )
}

#[tokio::test]
async fn pod_round_trip() -> TestResult {
    let cluster = FakeCluster::default();
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "ml");

    let created = pods
        .create(&PostParams::default(), &pod("web", json!({"app": "web"})))
        .await?;
    let meta = &created.metadata;
    assert_eq!(meta.namespace.as_deref(), Some("ml"));
    assert_eq!(meta.resource_version.as_deref(), Some("1"));
    assert_eq!(meta.generation, Some(1));
    assert!(meta.uid.is_some());
    assert_eq!(
        meta.creation_timestamp.as_ref().map(|t| t.0.to_string()),
        Some("2026-01-01T00:00:00Z".to_owned())
    );

    let fetched = pods.get("web").await?;
    assert_eq!(fetched, created);

    let err = api_error(
        pods.create(&PostParams::default(), &pod("web", json!({})))
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "AlreadyExists"));

    let mut replaced = fetched.clone();
    replaced.metadata.labels = Some([("app".to_owned(), "api".to_owned())].into());
    let replaced = pods
        .replace("web", &PostParams::default(), &replaced)
        .await?;
    assert_eq!(replaced.metadata.resource_version.as_deref(), Some("2"));
    assert_eq!(replaced.metadata.uid, created.metadata.uid);

    let merged = pods
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"a": "1"}}})),
        )
        .await?;
    assert_eq!(merged.metadata.annotations.unwrap()["a"], "1");
    assert_eq!(merged.metadata.labels.unwrap()["app"], "api");

    let json_patch = serde_json::from_value(json!([
        {"op": "replace", "path": "/metadata/labels/app", "value": "db"}
    ]))?;
    let patched = pods
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::<()>::Json(json_patch),
        )
        .await?;
    assert_eq!(patched.metadata.labels.unwrap()["app"], "db");

    let applied = pods
        .patch(
            "web",
            &PatchParams::apply("nbv"),
            &Patch::Apply(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web", "labels": {"owner": "nbv"}}
            })),
        )
        .await?;
    let labels = applied.metadata.labels.unwrap();
    assert_eq!(
        (labels["owner"].as_str(), labels["app"].as_str()),
        ("nbv", "db")
    );
    let managers = applied.metadata.managed_fields.unwrap();
    assert_eq!(managers.len(), 1);
    assert_eq!(managers[0].manager.as_deref(), Some("nbv"));
    assert_eq!(managers[0].operation.as_deref(), Some("Apply"));

    let deleted = pods.delete("web", &DeleteParams::default()).await?;
    assert!(
        deleted.is_right(),
        "an object without finalizers is gone at once"
    );
    let err = api_error(pods.get("web").await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (404, "NotFound"));
    Ok(())
}

#[tokio::test]
async fn deployment_generation_tracks_spec_only() -> TestResult {
    let cluster = FakeCluster::default();
    let deployments: Api<Deployment> = Api::namespaced(cluster.client(), "default");
    let created = deployments
        .create(&PostParams::default(), &deployment("web", 1))
        .await?;
    assert_eq!(created.metadata.generation, Some(1));

    let labelled = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await?;
    assert_eq!(
        labelled.metadata.generation,
        Some(1),
        "metadata changes keep the generation"
    );

    let scaled = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await?;
    assert_eq!(scaled.metadata.generation, Some(2));
    assert_eq!(scaled.spec.replicas, Some(3));

    let restarted = deployments
        .patch(
            "web",
            &PatchParams::apply("nbv"),
            &Patch::Apply(json!({
                "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"template": {"metadata": {"annotations": {
                    "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}}}}
            })),
        )
        .await?;
    assert_eq!(restarted.metadata.generation, Some(3));
    let spec = restarted.spec;
    assert_eq!(
        spec.replicas,
        Some(3),
        "apply merges into the existing spec"
    );
    assert!(spec.template.spec.is_some());

    deployments.delete("web", &DeleteParams::default()).await?;
    assert!(
        cluster
            .get("deployments", Some("default"), "web")?
            .is_none()
    );
    Ok(())
}

#[tokio::test]
async fn noop_writes_do_not_bump_resource_version() -> TestResult {
    let cluster = FakeCluster::default();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cm.data = Some([("k".to_owned(), "v".to_owned())].into());
    let created = cms.create(&PostParams::default(), &cm).await?;
    let same = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "v"}})),
        )
        .await?;
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(cluster.history().len(), 1);
    Ok(())
}

#[tokio::test]
async fn notebook_validation_job_round_trip_and_status_subresource() -> TestResult {
    let cluster = FakeCluster::default();
    let jobs: Api<NotebookValidationJob> = Api::namespaced(cluster.client(), "ml");

    let mut with_status = job("train");
    with_status.status = serde_json::from_value(json!({"phase": "Succeeded"}))?;
    let created = jobs.create(&PostParams::default(), &with_status).await?;
    assert!(
        created.status.is_none(),
        "creation drops .status when it is a subresource"
    );

    // The main resource ignores .status ...
    let ignored = jobs
        .patch(
            "train",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Failed"}})),
        )
        .await?;
    assert!(ignored.status.is_none());
    assert_eq!(
        ignored.metadata.resource_version,
        created.metadata.resource_version
    );

    // ... and the status subresource changes only .status.
    let status = jobs
        .patch_status(
            "train",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}, "spec": {"timeout": "5m"}})),
        )
        .await?;
    assert_eq!(
        status
            .status
            .as_ref()
            .and_then(|s| s.phase.map(|p| p.to_string()))
            .as_deref(),
        Some("Running")
    );
    assert!(
        status.spec.timeout.is_none(),
        "spec changes through /status are ignored"
    );
    assert_eq!(status.metadata.generation, Some(1));
    assert_eq!(status.metadata.resource_version.as_deref(), Some("2"));

    let mut replaced = status.clone();
    replaced.spec.timeout = Some("10m".into());
    replaced.status = None;
    let replaced = jobs
        .replace("train", &PostParams::default(), &replaced)
        .await?;
    assert_eq!(
        replaced.metadata.generation,
        Some(2),
        "spec change bumps the generation"
    );
    assert!(
        replaced.status.is_some(),
        "PUT of the main resource keeps .status"
    );

    let fetched_status = jobs.get_status("train").await?;
    assert_eq!(fetched_status, replaced);

    let via_status_put = jobs
        .replace_status(
            "train",
            &PostParams::default(),
            &serde_json::from_value(json!({
                "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
                "metadata": {"name": "train", "resourceVersion": replaced.metadata.resource_version},
                "spec": job("ignored").spec,
                "status": {"phase": "Succeeded"}
            }))?,
        )
        .await?;
    assert_eq!(via_status_put.spec.timeout.as_deref(), Some("10m"));
    assert_eq!(
        via_status_put
            .status
            .and_then(|s| s.phase)
            .map(|p| p.to_string())
            .as_deref(),
        Some("Succeeded")
    );

    let typed: Option<NotebookValidationJob> = cluster.get_typed(Some("ml"), "train")?;
    assert_eq!(
        typed.map(|j| j.metadata.resource_version),
        Some(via_status_put.metadata.resource_version)
    );
    Ok(())
}

#[tokio::test]
async fn argo_application_writes_status_through_the_main_resource() -> TestResult {
    let cluster = FakeCluster::default();
    let apps: Api<DynamicObject> =
        Api::namespaced_with(cluster.client(), "argocd", &application_resource());
    let mut app = DynamicObject::new("guestbook", &application_resource());
    app.data = json!({"spec": {"project": "default"}, "status": {"sync": {"status": "Synced"}}});
    let created = apps.create(&PostParams::default(), &app).await?;
    assert_eq!(
        created.data["status"]["sync"]["status"], "Synced",
        "Application has no status subresource"
    );

    let patched = apps
        .patch(
            "guestbook",
            &PatchParams::default(),
            &Patch::Merge(json!({"operation": {"sync": {"revision": "HEAD"}},
                                 "status": {"health": {"status": "Healthy"}}})),
        )
        .await?;
    assert_eq!(patched.data["operation"]["sync"]["revision"], "HEAD");
    assert_eq!(patched.data["status"]["health"]["status"], "Healthy");
    assert_eq!(patched.metadata.generation, Some(2));

    let err = api_error(apps.get_status("guestbook").await.unwrap_err());
    assert_eq!(err.code, 404, "no /status subresource");

    apps.delete("guestbook", &DeleteParams::default()).await?;
    assert!(cluster.objects_of("Application").is_empty());
    Ok(())
}

#[tokio::test]
async fn stale_resource_version_conflicts() -> TestResult {
    let cluster = FakeCluster::default();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    let first = cms.create(&PostParams::default(), &cm).await?;
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await?;

    let err = api_error(
        cms.replace("a", &PostParams::default(), &first)
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));

    let stale_patch = json!({"metadata": {"resourceVersion": first.metadata.resource_version}, "data": {"x": "2"}});
    let err = api_error(
        cms.patch("a", &PatchParams::default(), &Patch::Merge(stale_patch))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 409);
    assert_eq!(
        cluster.get("configmaps", Some("default"), "a")?.unwrap()["data"]["x"],
        "1"
    );

    let err = api_error(
        cms.delete(
            "a",
            &DeleteParams {
                preconditions: Some(kube::api::Preconditions {
                    resource_version: first.metadata.resource_version.clone(),
                    uid: None,
                }),
                ..DeleteParams::default()
            },
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 409);
    Ok(())
}

#[tokio::test]
async fn bad_requests_are_rejected_with_the_right_status() -> TestResult {
    let cluster = FakeCluster::default();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cms.create(&PostParams::default(), &cm).await?;

    let err = api_error(
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Apply(json!({"data": {}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        (err.code, err.reason.as_str()),
        (400, "BadRequest"),
        "apply needs a fieldManager"
    );

    let err = api_error(
        cms.list(&ListParams::default().labels("app in web"))
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 400);

    let err = api_error(
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"name": "b"}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 400, "a patch cannot rename");

    let test_op =
        serde_json::from_value(json!([{"op": "test", "path": "/data", "value": {"x": "y"}}]))?;
    let err = api_error(
        cms.patch("a", &PatchParams::default(), &Patch::<()>::Json(test_op))
            .await
            .unwrap_err(),
    );
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));

    let mut nameless = ConfigMap::default();
    nameless.metadata.generate_name = Some("gen-".into());
    let generated = cms.create(&PostParams::default(), &nameless).await?;
    let name = generated.metadata.name.unwrap_or_default();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");

    let widgets = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let unknown: Api<DynamicObject> = Api::default_namespaced_with(cluster.client(), &widgets);
    let err = api_error(unknown.list(&ListParams::default()).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (404, "NotFound"));

    cluster.register(ApiResourceSpec::namespaced(
        "example.com",
        "v1",
        "Widget",
        "widgets",
    ));
    assert!(unknown.list(&ListParams::default()).await?.items.is_empty());
    Ok(())
}

#[tokio::test]
async fn dry_run_changes_nothing() -> TestResult {
    let cluster = FakeCluster::default();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    let pp = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let would = cms.create(&pp, &cm).await?;
    assert_eq!(would.metadata.name.as_deref(), Some("a"));
    assert!(cluster.get("configmaps", Some("default"), "a")?.is_none());
    assert_eq!(cluster.resource_version(), 0);
    Ok(())
}

#[tokio::test]
async fn label_and_field_selectors_and_delete_collection() -> TestResult {
    let cluster = FakeCluster::default();
    let client = cluster.client();
    for (ns, name, labels) in [
        ("a", "p1", json!({"app": "web", "tier": "front"})),
        ("a", "p2", json!({"app": "web", "tier": "back"})),
        ("a", "p3", json!({"app": "db"})),
        ("b", "p4", json!({"app": "web"})),
    ] {
        Api::<Pod>::namespaced(client.clone(), ns)
            .create(&PostParams::default(), &pod(name, labels))
            .await?;
    }
    let names = |list: kube::api::ObjectList<Pod>| -> Vec<String> {
        list.items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect()
    };
    let all: Api<Pod> = Api::all(client.clone());
    let in_a: Api<Pod> = Api::namespaced(client.clone(), "a");

    let cases = [
        ("app=web", vec!["p1", "p2", "p4"]),
        ("app!=web", vec!["p3"]),
        ("tier in (front,middle)", vec!["p1"]),
        ("tier notin (front)", vec!["p2", "p3", "p4"]),
        ("tier", vec!["p1", "p2"]),
        ("!tier", vec!["p3", "p4"]),
        ("app=web,!tier", vec!["p4"]),
    ];
    for (selector, expected) in cases {
        let listed = names(all.list(&ListParams::default().labels(selector)).await?);
        assert_eq!(listed, expected, "selector {selector}");
    }
    let list = all
        .list(&ListParams::default().fields("metadata.namespace=b"))
        .await?;
    assert_eq!(list.metadata.resource_version.as_deref(), Some("4"));
    assert_eq!(names(list), ["p4"]);
    assert_eq!(
        names(
            in_a.list(&ListParams::default().fields("metadata.name=p2"))
                .await?
        ),
        ["p2"]
    );

    let deleted = in_a
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("app=web"),
        )
        .await?;
    let deleted_names: Vec<String> = deleted
        .left()
        .map(|l| {
            l.items
                .into_iter()
                .filter_map(|p| p.metadata.name)
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(deleted_names, ["p1", "p2"]);
    assert_eq!(names(all.list(&ListParams::default()).await?), ["p3", "p4"]);
    Ok(())
}

#[tokio::test]
async fn deleting_an_owner_deletes_its_dependents() -> TestResult {
    let cluster = FakeCluster::default();
    let client = cluster.client();
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let owner = deployments
        .create(&PostParams::default(), &deployment("web", 1))
        .await?;
    let owner_ref = json!([{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
        "uid": owner.metadata.uid, "controller": true
    }]);
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    let mut child = pod("web-1", json!({}));
    child.metadata.owner_references = Some(serde_json::from_value(owner_ref.clone())?);
    let child = pods.create(&PostParams::default(), &child).await?;
    // A grandchild owned by the pod, and a pod with a second, surviving owner.
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let mut grandchild = ConfigMap::default();
    grandchild.metadata.name = Some("web-1-cache".into());
    grandchild.metadata.owner_references = Some(serde_json::from_value(json!([{
        "apiVersion": "v1", "kind": "Pod", "name": "web-1", "uid": child.metadata.uid
    }]))?);
    cms.create(&PostParams::default(), &grandchild).await?;
    let other = deployments
        .create(&PostParams::default(), &deployment("other", 1))
        .await?;
    let mut shared = pod("shared", json!({}));
    shared.metadata.owner_references = Some(serde_json::from_value(json!([
        owner_ref[0],
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other", "uid": other.metadata.uid}
    ]))?);
    pods.create(&PostParams::default(), &shared).await?;

    deployments
        .delete("web", &DeleteParams::background())
        .await?;
    assert!(cluster.get("pods", Some("default"), "web-1")?.is_none());
    assert!(
        cluster
            .get("configmaps", Some("default"), "web-1-cache")?
            .is_none()
    );
    assert!(
        cluster.get("pods", Some("default"), "shared")?.is_some(),
        "another owner remains"
    );
    let gc: Vec<String> = cluster
        .history()
        .into_iter()
        .filter(|c| c.actor == Actor::GarbageCollector)
        .map(|c| c.name)
        .collect();
    assert_eq!(gc, ["web-1", "web-1-cache"]);

    // Orphan propagation keeps dependents and drops the reference.
    deployments.delete("other", &DeleteParams::orphan()).await?;
    let survivor = cluster.get("pods", Some("default"), "shared")?.unwrap();
    let refs = survivor["metadata"]["ownerReferences"]
        .as_array()
        .map(Vec::len);
    assert_eq!(refs, Some(1));
    Ok(())
}

#[tokio::test]
async fn finalizers_delay_deletion_until_removed() -> TestResult {
    let cluster = FakeCluster::default();
    let jobs: Api<NotebookValidationJob> = Api::default_namespaced(cluster.client());
    let mut j = job("train");
    j.metadata.finalizers = Some(vec!["nbv.mlops.dev/cleanup".into()]);
    jobs.create(&PostParams::default(), &j).await?;

    let pending = jobs.delete("train", &DeleteParams::default()).await?;
    let marked = pending
        .left()
        .expect("object with finalizers is returned, not a Status");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert!(jobs.get("train").await.is_ok());

    let err = api_error(
        jobs.patch(
            "train",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["nbv.mlops.dev/cleanup", "new"]}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(err.code, 422, "no new finalizers while deleting");

    // Deleting again changes nothing.
    let again = jobs.delete("train", &DeleteParams::default()).await?;
    assert_eq!(
        again.left().map(|j| j.metadata.resource_version),
        Some(marked.metadata.resource_version)
    );

    jobs.patch(
        "train",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await?;
    let err = api_error(jobs.get("train").await.unwrap_err());
    assert_eq!(err.code, 404);
    Ok(())
}

#[tokio::test]
async fn request_log_records_verbs_resources_and_sizes() -> TestResult {
    let cluster = FakeCluster::default();
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client(), "ml");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cms.create(&PostParams::default(), &cm).await?;
    cms.patch(
        "a",
        &PatchParams::apply("nbv"),
        &Patch::Apply(json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}
        })),
    )
    .await?;
    let _ = cms.get("missing").await;
    cms.list(&ListParams::default().labels("x=y")).await?;

    let log = cluster.requests();
    let verbs: Vec<Verb> = log.iter().map(|r| r.verb).collect();
    assert_eq!(
        verbs,
        [
            Verb::Create,
            Verb::Patch {
                patch_type: PatchType::Apply
            },
            Verb::Get,
            Verb::List
        ]
    );
    assert!(
        log.iter()
            .all(|r| r.resource == "configmaps" && r.namespace.as_deref() == Some("ml"))
    );
    let statuses: Vec<u16> = log.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [201, 200, 404, 200]);
    assert_eq!(
        log[1].query.get("fieldManager").map(String::as_str),
        Some("nbv")
    );
    assert_eq!(
        log[1].body.as_ref().map(|b| b["data"]["k"].clone()),
        Some(json!("v"))
    );
    assert_eq!(
        log[1].bytes_in,
        serde_json::to_vec(log[1].body.as_ref().unwrap())?.len()
    );
    assert!(log.iter().all(|r| r.bytes_out > 0));
    assert_eq!(
        log[3].query.get("labelSelector").map(String::as_str),
        Some("x=y")
    );
    assert!(log.windows(2).all(|w| w[0].id < w[1].id));

    let counts = cluster.request_counts();
    assert_eq!(counts.get(&VerbKind::Get), Some(&1));
    assert_eq!(counts.get(&VerbKind::Patch), Some(&1));
    cluster.clear_requests();
    assert!(cluster.requests().is_empty());
    Ok(())
}

#[tokio::test]
async fn faults_fail_requests_without_side_effects() -> TestResult {
    let cluster = FakeCluster::default();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());

    // 500 once, then success.
    cluster.inject(Fault::new(
        FaultMatch::verb(VerbKind::Create),
        Fault::status(500),
        Times::Once,
    ));
    let err = api_error(cms.create(&PostParams::default(), &cm).await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (500, "InternalError"));
    assert_eq!(
        cluster.resource_version(),
        0,
        "a failed write changes nothing"
    );
    cms.create(&PostParams::default(), &cm).await?;

    // An injected conflict on one object only.
    cluster.inject(Fault::new(
        FaultMatch::verb(VerbKind::Patch)
            .resource("configmaps")
            .name("a"),
        Fault::status(409),
        Times::N(2),
    ));
    let patch = Patch::Merge(json!({"data": {"k": "v"}}));
    for _ in 0..2 {
        let err = api_error(
            cms.patch("a", &PatchParams::default(), &patch)
                .await
                .unwrap_err(),
        );
        assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    }
    cms.patch("a", &PatchParams::default(), &patch).await?;

    // 429 carries the reason kube's retry logic looks at.
    cluster.inject(Fault::new(
        FaultMatch::verb(VerbKind::Get),
        Fault::status(429),
        Times::Once,
    ));
    let err = api_error(cms.get("a").await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (429, "TooManyRequests"));

    // A lost response: the write happened, the client saw 503.
    cluster.inject(Fault::new(
        FaultMatch::verb(VerbKind::Patch),
        FaultEffect::AfterCommit(StatusCode::SERVICE_UNAVAILABLE),
        Times::Once,
    ));
    let lost = Patch::Merge(json!({"data": {"lost": "response"}}));
    let err = api_error(
        cms.patch("a", &PatchParams::default(), &lost)
            .await
            .unwrap_err(),
    );
    assert_eq!(err.code, 503);
    assert_eq!(
        cluster.get("configmaps", Some("default"), "a")?.unwrap()["data"]["lost"],
        "response"
    );

    // Faults on the status subresource only.
    let jobs: Api<NotebookValidationJob> = Api::default_namespaced(cluster.client());
    jobs.create(&PostParams::default(), &job("j")).await?;
    cluster.inject(Fault::new(
        FaultMatch::any().resource("notebookvalidationjobs/status"),
        Fault::status(500),
        Times::Always,
    ));
    assert!(jobs.get("j").await.is_ok());
    assert!(jobs.get_status("j").await.is_err());
    cluster.clear_faults();
    assert!(jobs.get_status("j").await.is_ok());
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn timeouts_and_timestamps_run_in_virtual_time() -> TestResult {
    let cluster = FakeCluster::default();
    let start = cluster.now();
    let cms: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    let wall = std::time::Instant::now();

    tokio::time::sleep(Duration::from_secs(300)).await;
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    let created = cms.create(&PostParams::default(), &cm).await?;
    assert_eq!(
        created.metadata.creation_timestamp.map(|t| t.0.to_string()),
        Some("2026-01-01T00:05:00Z".to_owned())
    );

    cluster.inject(Fault::new(
        FaultMatch::verb(VerbKind::Get),
        FaultEffect::Timeout(Duration::from_secs(60)),
        Times::Once,
    ));
    let err = api_error(cms.get("a").await.unwrap_err());
    assert_eq!((err.code, err.reason.as_str()), (504, "Timeout"));
    assert_eq!((cluster.now() - start).num_seconds(), 360);
    assert_eq!(
        cluster.requests()[1].at,
        start + chrono::Duration::seconds(300)
    );
    assert!(
        wall.elapsed() < Duration::from_secs(5),
        "virtual minutes take no real time"
    );
    Ok(())
}

#[tokio::test]
async fn discovery_maps_kinds_to_plurals() -> TestResult {
    let cluster = FakeCluster::default();
    let client = cluster.client();
    let gvk = GroupVersionKind::gvk("serving.kserve.io", "v1beta1", "InferenceService");
    let (resource, caps) = kube::discovery::pinned_kind(&client, &gvk).await?;
    assert_eq!(resource.plural, "inferenceservices");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    assert!(caps.subresources.iter().any(|(r, _)| r.plural == "status"));
    let version = client.apiserver_version().await?;
    assert_eq!(version.major, "1");
    Ok(())
}

#[test]
fn direct_access_errors_name_the_problem() {
    let cluster = FakeCluster::default();
    let err = cluster.apply_object(json!({"kind": "Pod"})).unwrap_err();
    assert!(err.to_string().contains("apiVersion and kind"), "{err}");
    let err = cluster
        .apply_object(json!({"apiVersion": "v1", "kind": "Widget"}))
        .unwrap_err();
    assert!(
        matches!(err, ClusterError::UnknownResource { ref resource } if resource == "v1/Widget")
    );
    let err = cluster
        .apply_object(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}))
        .unwrap_err();
    assert!(
        matches!(&err, ClusterError::Api(e) if e.reason == Reason::Invalid && e.message.contains("namespace")),
        "{err}"
    );
    let err = cluster.delete("pods", Some("default"), "x").unwrap_err();
    assert!(matches!(err, ClusterError::Api(e) if e.reason == Reason::NotFound));
}

#[tokio::test]
async fn kube_runtime_event_recorder_creates_then_patches_a_series() -> TestResult {
    use kube::runtime::events::{Event, EventType, Recorder, Reporter};
    let cluster = FakeCluster::default();
    let jobs: Api<NotebookValidationJob> = Api::namespaced(cluster.client(), "ml");
    let created = jobs.create(&PostParams::default(), &job("train")).await?;
    let recorder = Recorder::new(cluster.client(), Reporter::from("nbv"));
    let event = Event {
        type_: EventType::Normal,
        reason: "ValidationSucceeded".into(),
        note: Some("notebook train succeeded".into()),
        action: "Validate".into(),
        secondary: None,
    };
    let reference = kube::Resource::object_ref(&created, &());
    recorder.publish(&event, &reference).await?;
    recorder.publish(&event, &reference).await?;

    let events = cluster.list("events.events.k8s.io", Some("ml"))?;
    assert_eq!(
        events.len(),
        1,
        "the repeat is patched into a series: {events:?}"
    );
    assert_eq!(events[0]["reason"], "ValidationSucceeded");
    assert_eq!(events[0]["series"]["count"], 2);
    assert_eq!(events[0]["regarding"]["name"], "train");
    let verbs: Vec<VerbKind> = cluster
        .requests()
        .iter()
        .filter(|r| r.resource == "events")
        .map(|r| r.verb.kind())
        .collect();
    assert_eq!(verbs, [VerbKind::Create, VerbKind::Patch]);
    Ok(())
}
