//! What tests observe and inject: the request log, faults, virtual time, discovery, direct
//! access and Events.

use super::*;

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
    jobs.create(
        &PostParams::default(),
        &JobBuilder::new("default", "j").typed()?,
    )
    .await?;
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
    let created = jobs
        .create(
            &PostParams::default(),
            &JobBuilder::new("ml", "train").typed()?,
        )
        .await?;
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
