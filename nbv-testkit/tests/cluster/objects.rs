//! Objects of each kind round-trip with the API server's semantics: generation,
//! resourceVersion, the status subresource.

use super::*;

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

    let with_status = JobBuilder::new("ml", "train")
        .phase(Phase::Succeeded)
        .typed()?;
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
                "spec": (JobBuilder::new("ml", "ignored").build()["spec"]),
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
