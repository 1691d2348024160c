//! Writes: conflicts, bad requests, dry runs, selectors, cascading deletion and finalizers.

use super::*;

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
    let mut j = JobBuilder::new("default", "train").typed()?;
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
