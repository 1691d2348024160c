//! The Applications' watch cache: every Application of the namespaces nbv serves is
//! watched, and the ones nbv acts on are kept ([`AppInterest`]: those its jobs name,
//! those showing its status).
//!
//! - **The watch starts once the jobs are listed.** The jobs' first listing names the
//!   Applications they need, so the Applications' listing keeps them: a start reads
//!   no Application with a GET.
//! - **An Application first named later** (a new job, a changed annotation) was not
//!   kept, so it is read once with a GET and put in the cache; from then on the watch
//!   keeps it current. The jobs' watch names it before the job reaches the publisher
//!   or a reconcile, and their lookups wait for the reads in flight
//!   ([`crate::context::Applications::find_read`]); the job that named it is also
//!   reconciled again once it is in the cache.
//! - **An Application that stops being of interest** (its nbv status removed, no job
//!   naming it) leaves the cache with its next event.
//!
//! One race is left open: an Application deleted between the GET that reads it and
//! its arrival in the cache stays there until the next listing. A trigger on it then
//! fails as it would have (its PATCH finds nothing), and a publication of a status on
//! it is retried and fails the same way.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::{StreamExt, TryStreamExt};
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;

use crate::projection::{AppInterest, CachedApplication, CachedJob};
use crate::resources::application_resource;

/// An Application a job named for the first time, to be read if the cache lacks it.
#[derive(Debug)]
struct Fetch {
    namespace: Option<String>,
    name: String,
    /// The job that named it, reconciled again once it is in the cache.
    job: ObjectRef<CachedJob>,
    /// Reads of it that failed so far.
    failures: u32,
}

/// Reads of a named Application tried before giving up on it (1 s, then twice as long
/// each time: about 4 minutes in all). It is then read when the watch sees it change,
/// at the next listing, or with a GET when a trigger acts on it.
const FETCH_TRIES: u32 = 8;

/// Names the Applications jobs need, for the Applications' cache to keep. Cloned into
/// the jobs' watch.
#[derive(Clone, Debug)]
pub struct Namer {
    interest: AppInterest,
    fetches: Fetches,
}

/// The reads requested, and how many are not done yet.
#[derive(Clone, Debug)]
struct Fetches {
    requests: UnboundedSender<Fetch>,
    pending: Arc<watch::Sender<usize>>,
}

impl Fetches {
    fn request(&self, fetch: Fetch) {
        self.pending.send_modify(|n| *n += 1);
        // A closed channel means the cache is gone (shutting down).
        if self.requests.unbounded_send(fetch).is_err() {
            self.done();
        }
    }

    fn done(&self) {
        self.pending.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Namer {
    /// Names each of `names` (namespace, name) for `job`; one named for the first time
    /// is read into the cache, unless the cache already has it.
    pub fn name(&self, job: &ObjectRef<CachedJob>, names: Vec<(Option<String>, String)>) {
        for (namespace, name) in names {
            if self.interest.name(namespace.as_deref(), &name) {
                self.fetches.request(Fetch {
                    namespace,
                    name,
                    job: job.clone(),
                    failures: 0,
                });
            }
        }
    }
}

/// The Applications' cache and its inputs.
pub struct ApplicationWatch {
    /// The cache.
    pub store: Store<CachedApplication>,
    /// What the jobs' watch names Applications with.
    pub namer: Namer,
    /// The jobs to reconcile again, each once an Application it named first arrived.
    pub woken: UnboundedReceiver<ObjectRef<CachedJob>>,
    /// Whether the cache has listed. Unlike [`Store::wait_until_ready`], which wakes
    /// only the last of several waiters, any number of tasks may wait on it.
    pub listed: watch::Receiver<bool>,
    /// How many Applications named for the first time are still being read: one
    /// missing from the cache may be among them.
    pub reading: watch::Receiver<usize>,
}

/// Starts the Applications' cache over `namespaces`: its watch once `jobs_listed`
/// counts a complete listing of the jobs, and the reads of Applications named later;
/// both run until `shutdown`.
pub fn watch_applications(
    client: &kube::Client,
    namespaces: &[String],
    jobs_listed: watch::Receiver<u64>,
    shutdown: impl Future<Output = ()> + Send + Clone + 'static,
) -> ApplicationWatch {
    let resource = application_resource();
    let writer = reflector::store::Writer::<CachedApplication>::new(resource.clone());
    let store = writer.as_reader();
    let interest = AppInterest::default();
    let (requests, requested) = unbounded();
    let (pending, reading) = watch::channel(0);
    let fetches = Fetches {
        requests,
        pending: Arc::new(pending),
    };
    let (inject, injected) = unbounded();
    let (wake, woken) = unbounded();
    let (listings, listed) = watch::channel(false);

    let apis: Vec<Api<CachedApplication>> = namespaces
        .iter()
        .map(|ns| Api::namespaced_with(client.clone(), ns, &resource))
        .collect();
    let keep = interest.clone();
    let watching = async move {
        let mut jobs_listed = jobs_listed;
        if jobs_listed
            .wait_for(|listings| *listings > 0)
            .await
            .is_err()
        {
            return;
        }
        // Decoded as `CachedApplication`: only the fields nbv reads are ever allocated.
        let watched = futures::stream::select_all(
            apis.into_iter()
                .map(|api| watcher(api, watcher::Config::default()).boxed()),
        )
        .default_backoff();
        let fetched = injected.map(|app| Ok(watcher::Event::Apply(app)));
        futures::stream::select(watched, fetched)
            .try_filter_map(move |event| futures::future::ready(Ok(kept(&keep, event))))
            .reflect(writer)
            .for_each(|event| {
                match event {
                    Ok(watcher::Event::InitDone) => {
                        listings.send_replace(true);
                    }
                    Ok(_) => {}
                    Err(error) => {
                        tracing::debug!(%error, "Application watch error (is Argo CD installed?)");
                    }
                }
                futures::future::ready(())
            })
            .await;
    };
    let stop = shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = watching => {}
            () = stop => {}
        }
    });
    let reads = read_named(
        client.clone(),
        (store.clone(), listed.clone()),
        namespaces.to_vec(),
        (requested, fetches.clone()),
        inject,
        wake,
    );
    tokio::spawn(async move {
        tokio::select! {
            () = reads => {}
            () = shutdown => {}
        }
    });
    ApplicationWatch {
        store,
        namer: Namer { interest, fetches },
        woken,
        listed,
        reading,
    }
}

/// `event` as the cache takes it: an Application nbv does not act on is left out of
/// a listing, and an event of one removes it from the cache (it may have been kept
/// before, while it showed nbv's status).
fn kept(
    interest: &AppInterest,
    event: watcher::Event<CachedApplication>,
) -> Option<watcher::Event<CachedApplication>> {
    match event {
        watcher::Event::Apply(app) if interest.keeps(&app) => Some(watcher::Event::Apply(app)),
        watcher::Event::Apply(app) => Some(watcher::Event::Delete(app)),
        watcher::Event::InitApply(app) => interest
            .keeps(&app)
            .then_some(watcher::Event::InitApply(app)),
        other => Some(other),
    }
}

/// Reads each Application of `requested` that the cache (`store`) lacks once it has
/// `listed` (the
/// listing holds those named before it), in the first of `namespaces` that has it, and
/// hands it to `inject` for the cache; its job goes to `wake`. A read that fails is
/// requested again through `fetches` after a backoff. Returns when `requested` is
/// closed.
async fn read_named(
    client: kube::Client,
    (store, mut listed): (Store<CachedApplication>, watch::Receiver<bool>),
    namespaces: Vec<String>,
    (mut requested, fetches): (UnboundedReceiver<Fetch>, Fetches),
    inject: UnboundedSender<CachedApplication>,
    wake: UnboundedSender<ObjectRef<CachedJob>>,
) {
    if listed.wait_for(|listed| *listed).await.is_err() {
        return;
    }
    while let Some(fetch) = requested.next().await {
        read_one(
            &client,
            &store,
            &namespaces,
            fetch,
            &fetches,
            &inject,
            &wake,
        )
        .await;
        fetches.done();
    }
}

/// Reads the Application of `fetch` unless the cache holds it; see [`read_named`].
async fn read_one(
    client: &kube::Client,
    store: &Store<CachedApplication>,
    namespaces: &[String],
    mut fetch: Fetch,
    fetches: &Fetches,
    inject: &UnboundedSender<CachedApplication>,
    wake: &UnboundedSender<ObjectRef<CachedJob>>,
) {
    let resource = application_resource();
    {
        let candidates: Vec<&String> = namespaces
            .iter()
            .filter(|ns| fetch.namespace.as_ref().is_none_or(|named| named == *ns))
            .collect();
        let cached = candidates.iter().any(|ns| {
            let key = ObjectRef::new_with(&fetch.name, resource.clone()).within(ns);
            store.get(&key).is_some()
        });
        if cached {
            return;
        }
        for ns in candidates {
            let api: Api<CachedApplication> = Api::namespaced_with(client.clone(), ns, &resource);
            match api.get_opt(&fetch.name).await {
                Ok(Some(app)) => {
                    let _ = inject.unbounded_send(app);
                    let _ = wake.unbounded_send(fetch.job.clone());
                    break;
                }
                Ok(None) => {}
                Err(error) => {
                    fetch.failures += 1;
                    tracing::warn!(application = %fetch.name, namespace = %ns, %error,
                        failures = fetch.failures, "reading an Application a job names failed");
                    if fetch.failures < FETCH_TRIES {
                        let backoff = Duration::from_secs(1 << (fetch.failures - 1));
                        let fetches = fetches.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(backoff).await;
                            fetches.request(fetch);
                        });
                    }
                    break;
                }
            }
        }
    }
}
