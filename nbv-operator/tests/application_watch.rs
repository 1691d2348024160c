//! The Applications' cache keeps the Applications nbv acts on and no other: those its
//! jobs name (listed once the jobs are, or read once when first named later) and those
//! showing nbv's status; an Application that stops being of interest leaves it.

use std::time::Duration;

use futures::StreamExt;
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use nbv_operator::operator::application_watch::{ApplicationWatch, watch_applications};
use nbv_operator::operator::projection::{CachedApplication, CachedJob};
use nbv_operator::operator::resync::Listings;
use nbv_testkit::cluster::{FakeCluster, VerbKind};
use serde_json::{Value, json};

fn application(name: &str, annotations: Value) -> Value {
    json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": {"name": name, "namespace": "argocd", "annotations": annotations},
           "spec": {"project": "default", "destination": {"namespace": "ml"}}})
}

/// A job of namespace `ml`, as the controller names it.
fn job(name: &str) -> ObjectRef<CachedJob> {
    ObjectRef::new(name).within("ml")
}

/// The names of the Applications `store` holds, sorted.
fn held(store: &Store<CachedApplication>) -> Vec<String> {
    let mut names: Vec<String> = store.state().iter().map(|app| app.name_any()).collect();
    names.sort();
    names
}

fn gets(cluster: &FakeCluster) -> usize {
    cluster
        .request_counts()
        .get(&VerbKind::Get)
        .copied()
        .unwrap_or(0)
}

/// Waits until the cache has listed.
async fn listed(watch: &ApplicationWatch) {
    let mut listed = watch.listed.clone();
    listed
        .wait_for(|listed| *listed)
        .await
        .expect("the cache lists");
}

/// Polls `condition` for up to a minute of virtual time.
async fn eventually(what: &str, condition: impl Fn() -> bool) {
    for _ in 0..600 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not within a minute");
}

/// The Applications' cache of `argocd` over `cluster`, and the jobs' listings that
/// start it.
fn cache_of(cluster: &FakeCluster) -> (ApplicationWatch, Listings) {
    let listings = Listings::default();
    let watch = watch_applications(
        &cluster.client(),
        &["argocd".to_owned()],
        listings.follow(),
        std::future::pending(),
    );
    (watch, listings)
}

/// A cluster with Argo CD's Applications `models` (which the jobs name), `unrelated`,
/// and `old` (showing a status nbv published), and the Applications' cache over it,
/// started with `models` named and the jobs listed.
struct Watching {
    cluster: FakeCluster,
    watch: ApplicationWatch,
    _listings: Listings,
}

impl Watching {
    async fn start() -> Watching {
        let cluster = FakeCluster::default();
        for app in [
            application("models", json!({})),
            application("unrelated", json!({})),
            application(
                "old",
                json!({"mlops.dev/notebook-summary": "1/1 succeeded"}),
            ),
        ] {
            cluster.apply_object(app).expect("an Application");
        }
        let (watch, listings) = cache_of(&cluster);
        watch
            .namer
            .name(&job("train"), vec![(None, "models".to_owned())]);
        listings.complete();
        listed(&watch).await;
        Watching {
            cluster,
            watch,
            _listings: listings,
        }
    }
}

#[tokio::test(start_paused = true)]
async fn only_the_applications_jobs_name_or_showing_a_status_are_kept() {
    let Watching { cluster, watch, .. } = Watching::start().await;
    assert_eq!(held(&watch.store), ["models", "old"]);
    // Named before the listing, `models` came with it: no GET.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(gets(&cluster), 0, "{:?}", cluster.requests());
}

#[tokio::test(start_paused = true)]
async fn the_watch_waits_for_the_jobs_listing() {
    let cluster = FakeCluster::default();
    cluster
        .apply_object(application("models", json!({})))
        .expect("an Application");
    let (watch, listings) = cache_of(&cluster);
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(
        cluster.requests().is_empty(),
        "nothing before the jobs are listed"
    );
    listings.complete();
    listed(&watch).await;
}

#[tokio::test(start_paused = true)]
async fn an_application_first_named_later_is_read_once_and_its_job_woken() {
    let Watching {
        cluster, mut watch, ..
    } = Watching::start().await;
    let before = gets(&cluster);
    watch.namer.name(
        &job("score"),
        vec![(Some("argocd".to_owned()), "unrelated".to_owned())],
    );
    // The read is over only once the Application is in the cache: a lookup that
    // waits for the reads finds it.
    let mut reading = watch.reading.clone();
    assert_eq!(*reading.borrow_and_update(), 1, "one read in flight");
    reading.wait_for(|n| *n == 0).await.expect("the reads end");
    assert_eq!(held(&watch.store), ["models", "old", "unrelated"]);
    let woken = tokio::time::timeout(Duration::from_secs(60), watch.woken.next())
        .await
        .expect("the job is woken")
        .expect("a job");
    assert_eq!(woken.name, "score");
    assert_eq!(held(&watch.store), ["models", "old", "unrelated"]);
    assert_eq!(gets(&cluster) - before, 1, "one GET");

    // From then on the watch keeps it current.
    cluster
        .apply_object(application("unrelated", json!({"team": "risk"})))
        .expect("an update");
    let store = watch.store.clone();
    eventually("the update is cached", || {
        store
            .state()
            .iter()
            .any(|app| app.name_any() == "unrelated" && app.annotations().contains_key("team"))
    })
    .await;
    // Named again by another job: no second read.
    watch.namer.name(
        &job("other"),
        vec![(Some("argocd".to_owned()), "unrelated".to_owned())],
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(gets(&cluster) - before, 1, "still one GET");
}

#[tokio::test(start_paused = true)]
async fn a_named_application_that_does_not_exist_is_read_once() {
    let Watching {
        cluster, mut watch, ..
    } = Watching::start().await;
    let before = gets(&cluster);
    for _ in 0..3 {
        watch.namer.name(
            &job("score"),
            vec![(Some("argocd".to_owned()), "missing".to_owned())],
        );
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(gets(&cluster) - before, 1, "one GET, answered 404");
    assert!(
        tokio::time::timeout(Duration::from_secs(1), watch.woken.next())
            .await
            .is_err(),
        "no job to wake"
    );
    // Created later, it is kept: it is named.
    cluster
        .apply_object(application("missing", json!({})))
        .expect("an Application");
    let store = watch.store.clone();
    eventually("the new Application is cached", || {
        held(&store).contains(&"missing".to_owned())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn an_application_that_stops_showing_nbvs_status_leaves_the_cache() {
    let Watching { cluster, watch, .. } = Watching::start().await;
    cluster
        .apply_object(application("old", json!({})))
        .expect("the status removed");
    let store = watch.store.clone();
    eventually("`old` leaves the cache", || held(&store) == ["models"]).await;
    // An Application nobody named that starts showing a status (published by
    // another nbv, or by hand) is kept from its next event.
    cluster
        .apply_object(application(
            "unrelated",
            json!({"mlops.dev/notebook-status": "{}"}),
        ))
        .expect("a status");
    eventually("`unrelated` is cached", || {
        held(&store) == ["models", "unrelated"]
    })
    .await;
}
