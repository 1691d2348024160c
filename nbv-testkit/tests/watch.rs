//! Watches through a real `kube::Client` and kube-runtime: raw watch streams, the
//! `watcher`, a `reflector` store and a `Controller`, all in virtual time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector};
use nbv_testkit::cluster::{FakeCluster, Fault, FaultEffect, FaultMatch, Times, VerbKind};
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Longest virtual wait for one expected event.
const STEP: Duration = Duration::from_secs(30);

fn config_map(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    cm
}

async fn next<S, T>(stream: &mut S) -> T
where
    S: Stream<Item = T> + Unpin,
{
    match tokio::time::timeout(STEP, stream.next()).await {
        Ok(Some(item)) => item,
        Ok(None) => panic!("stream ended"),
        Err(_) => panic!("no event within {STEP:?} of virtual time"),
    }
}

/// A watcher event reduced to what the tests compare.
#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Init,
    InitApply(String),
    InitDone,
    Apply(String, String),
    Delete(String),
    Error(u16),
}

fn seen(item: Result<Event<ConfigMap>, watcher::Error>) -> Seen {
    match item {
        Ok(Event::Init) => Seen::Init,
        Ok(Event::InitApply(o)) => Seen::InitApply(o.name_any()),
        Ok(Event::InitDone) => Seen::InitDone,
        Ok(Event::Apply(o)) => {
            let data = o
                .data
                .as_ref()
                .and_then(|d| d.get("v"))
                .cloned()
                .unwrap_or_default();
            Seen::Apply(o.name_any(), data)
        }
        Ok(Event::Delete(o)) => Seen::Delete(o.name_any()),
        Err(watcher::Error::WatchError(status)) => Seen::Error(status.code),
        Err(other) => panic!("unexpected watcher error: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn watcher_sees_changes_in_order_and_recovers() -> TestResult {
    let cluster = FakeCluster::default();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &config_map("before", &[]))
        .await?;

    let mut events = watcher(api.clone(), watcher::Config::default()).boxed();
    assert_eq!(seen(next(&mut events).await), Seen::Init);
    assert_eq!(
        seen(next(&mut events).await),
        Seen::InitApply("before".into())
    );
    assert_eq!(seen(next(&mut events).await), Seen::InitDone);

    api.create(&PostParams::default(), &config_map("b", &[]))
        .await?;
    api.patch(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "1"}})),
    )
    .await?;
    api.delete("b", &DeleteParams::default()).await?;
    assert_eq!(
        seen(next(&mut events).await),
        Seen::Apply("b".into(), String::new())
    );
    assert_eq!(
        seen(next(&mut events).await),
        Seen::Apply("b".into(), "1".into())
    );
    assert_eq!(seen(next(&mut events).await), Seen::Delete("b".into()));

    // A dropped connection: the watcher resumes from its resourceVersion without a relist.
    cluster.drop_watches();
    api.create(&PostParams::default(), &config_map("c", &[]))
        .await?;
    assert_eq!(
        seen(next(&mut events).await),
        Seen::Apply("c".into(), String::new())
    );
    let counts = cluster.request_counts();
    assert_eq!(counts.get(&VerbKind::List), Some(&1));
    assert_eq!(counts.get(&VerbKind::Watch), Some(&2));

    // Disconnected while a change it has not seen is compacted away: 410 Gone, then a
    // full relist.
    cluster.drop_watches();
    api.create(&PostParams::default(), &config_map("d", &[]))
        .await?;
    cluster.compact();
    assert_eq!(seen(next(&mut events).await), Seen::Error(410));
    assert_eq!(seen(next(&mut events).await), Seen::Init);
    let mut relisted = Vec::new();
    loop {
        match seen(next(&mut events).await) {
            Seen::InitApply(name) => relisted.push(name),
            Seen::InitDone => break,
            other => panic!("unexpected {other:?} during relist"),
        }
    }
    assert_eq!(relisted, ["before", "c", "d"]);
    assert_eq!(cluster.request_counts().get(&VerbKind::List), Some(&2));

    // A watch request whose stream is cut at once is retried as well.
    cluster.inject(Fault::new(
        FaultMatch::any(),
        FaultEffect::DropWatch,
        Times::Once,
    ));
    cluster.drop_watches();
    api.create(&PostParams::default(), &config_map("e", &[]))
        .await?;
    assert_eq!(
        seen(next(&mut events).await),
        Seen::Apply("e".into(), String::new())
    );
    Ok(())
}

fn watcher(
    api: Api<ConfigMap>,
    config: watcher::Config,
) -> impl Stream<Item = Result<Event<ConfigMap>, watcher::Error>> {
    kube::runtime::watcher(api, config)
}

#[tokio::test(start_paused = true)]
async fn streaming_list_uses_send_initial_events() -> TestResult {
    let cluster = FakeCluster::default();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let mut events = watcher(api.clone(), watcher::Config::default().streaming_lists()).boxed();
    assert_eq!(seen(next(&mut events).await), Seen::Init);
    assert_eq!(seen(next(&mut events).await), Seen::InitApply("a".into()));
    assert_eq!(seen(next(&mut events).await), Seen::InitDone);
    api.create(&PostParams::default(), &config_map("b", &[]))
        .await?;
    assert_eq!(
        seen(next(&mut events).await),
        Seen::Apply("b".into(), String::new())
    );
    let log = cluster.requests();
    assert!(
        log.iter().all(|r| r.verb.kind() != VerbKind::List),
        "no LIST with streaming lists"
    );
    let watch = log.iter().find(|r| r.verb.kind() == VerbKind::Watch);
    assert_eq!(
        watch
            .and_then(|r| r.query.get("sendInitialEvents"))
            .map(String::as_str),
        Some("true")
    );
    assert!(
        watch.is_some_and(|r| r.bytes_out > 0),
        "streamed bytes are counted"
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn selector_watches_see_objects_enter_and_leave() -> TestResult {
    let cluster = FakeCluster::default();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(
        &PostParams::default(),
        &config_map("web", &[("app", "web")]),
    )
    .await?;
    api.create(&PostParams::default(), &config_map("db", &[("app", "db")]))
        .await?;

    let params = WatchParams::default().labels("app=web");
    let mut stream = api.watch(&params, "0").await?.boxed();
    let mut kinds = Vec::new();
    let relabel = |name: &'static str, app: &'static str| {
        let api = api.clone();
        async move {
            api.patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"labels": {"app": app}}})),
            )
            .await
        }
    };
    let describe = |e: WatchEvent<ConfigMap>| match e {
        WatchEvent::Added(o) => format!("ADDED {}", o.name_any()),
        WatchEvent::Modified(o) => format!("MODIFIED {}", o.name_any()),
        WatchEvent::Deleted(o) => format!("DELETED {}", o.name_any()),
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.metadata.resource_version),
        WatchEvent::Error(s) => format!("ERROR {}", s.code),
    };
    kinds.push(describe(next(&mut stream).await?));
    relabel("db", "web").await?;
    kinds.push(describe(next(&mut stream).await?));
    relabel("web", "api").await?;
    kinds.push(describe(next(&mut stream).await?));
    api.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await?;
    kinds.push(describe(next(&mut stream).await?));
    assert_eq!(
        kinds,
        ["ADDED web", "ADDED db", "DELETED web", "MODIFIED db"]
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn watch_timeout_ends_with_a_bookmark_at_the_latest_version() -> TestResult {
    let cluster = FakeCluster::default();
    let client = cluster.client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "quiet");
    let rv = cluster.resource_version().to_string();
    let mut stream = api
        .watch(&WatchParams::default().timeout(10), &rv)
        .await?
        .boxed();
    // Writes elsewhere move the global resourceVersion; this watch sees none of them.
    let busy: Api<ConfigMap> = Api::namespaced(client, "busy");
    for i in 0..3 {
        busy.create(&PostParams::default(), &config_map(&format!("x{i}"), &[]))
            .await?;
    }
    let start = cluster.now();
    match next(&mut stream).await? {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, "3"),
        other => panic!("expected a bookmark, got {other:?}"),
    }
    assert!(
        stream.next().await.is_none(),
        "the watch ends after its timeout"
    );
    assert_eq!((cluster.now() - start).num_seconds(), 10);
    assert_eq!(cluster.open_watches(), 0);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn reflector_store_follows_the_cluster() -> TestResult {
    let cluster = FakeCluster::default();
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client());
    api.create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let (reader, writer) = reflector::store();
    let driver = tokio::spawn(
        reflector(
            writer,
            kube::runtime::watcher(api.clone(), watcher::Config::default()),
        )
        .default_backoff()
        .applied_objects()
        .for_each(|_| async {}),
    );
    tokio::time::timeout(STEP, reader.wait_until_ready()).await??;

    api.create(&PostParams::default(), &config_map("b", &[]))
        .await?;
    api.delete("a", &DeleteParams::default()).await?;
    cluster.drop_watches();
    api.patch(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"v": "2"}})),
    )
    .await?;

    let wanted = |names: &[&str]| {
        let mut state: Vec<String> = reader.state().iter().map(|o| o.name_any()).collect();
        state.sort();
        state == names
    };
    let mut waited = Duration::ZERO;
    while !(wanted(&["b"])
        && reader
            .state()
            .iter()
            .all(|o| o.data.as_ref().is_some_and(|d| d["v"] == "2")))
    {
        assert!(waited < STEP, "store never caught up: {:?}", reader.state());
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    driver.abort();
    Ok(())
}

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed")]
struct ReconcileError;

#[tokio::test(start_paused = true)]
async fn controller_reconciles_each_object_once_per_change() -> TestResult {
    let cluster = FakeCluster::default();
    let api: Api<ConfigMap> = Api::all(cluster.client());
    let ns_api: Api<ConfigMap> = Api::namespaced(cluster.client(), "ml");
    ns_api
        .create(&PostParams::default(), &config_map("early", &[]))
        .await?;

    let reconciled: Arc<Mutex<BTreeMap<String, u32>>> = Arc::default();
    let controller = Controller::new(api, watcher::Config::default())
        .run(
            |obj: Arc<ConfigMap>, seen: Arc<Mutex<BTreeMap<String, u32>>>| async move {
                let mut seen = seen.lock().map_err(|_| ReconcileError)?;
                *seen.entry(obj.name_any()).or_insert(0) += 1;
                Ok::<_, ReconcileError>(Action::await_change())
            },
            |_, _, _| Action::requeue(Duration::from_secs(1)),
            Arc::clone(&reconciled),
        )
        .try_for_each(|_| async { Ok(()) });
    let driver = tokio::spawn(controller);

    tokio::time::sleep(Duration::from_secs(1)).await;
    for name in ["late-1", "late-2"] {
        ns_api
            .create(&PostParams::default(), &config_map(name, &[]))
            .await?;
    }
    // Ten quiet virtual minutes: watches time out and resume, but nothing is reconciled twice.
    tokio::time::sleep(Duration::from_secs(600)).await;
    let counts = reconciled.lock().map(|m| m.clone()).unwrap_or_default();
    let expected: BTreeMap<String, u32> = [
        ("early".to_owned(), 1),
        ("late-1".to_owned(), 1),
        ("late-2".to_owned(), 1),
    ]
    .into();
    assert_eq!(counts, expected);
    assert!(
        cluster
            .request_counts()
            .get(&VerbKind::Watch)
            .is_some_and(|n| *n >= 3),
        "watches were renewed after their server-side timeout"
    );
    assert_eq!(
        cluster.request_counts().get(&VerbKind::List),
        Some(&1),
        "and never relisted"
    );

    ns_api
        .patch(
            "late-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "v"}})),
        )
        .await?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let late = reconciled
        .lock()
        .ok()
        .and_then(|m| m.get("late-1").copied());
    assert_eq!(late, Some(2), "a change is reconciled again");
    driver.abort();
    Ok(())
}
