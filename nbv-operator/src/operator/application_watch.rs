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
//!   ([`crate::operator::applications::Applications::find_read`]); the job that named it is also
//!   reconciled again once it is in the cache.
//! - **An Application that stops being of interest** (its nbv status removed, no job
//!   naming it) leaves the cache with its next event.
//!
//! One race is left open: an Application deleted between the GET that reads it and
//! its arrival in the cache stays there until the next listing. A trigger on it then
//! fails as it would have (its PATCH finds nothing), and a publication of a status on
//! it is retried and fails the same way.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::{StreamExt, TryStreamExt};
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;

use crate::operator::projection::{AppInterest, CachedApplication, CachedJob};
use crate::operator::resources::application_resource;
use crate::runtime::backoff::WatchBackoff;

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

/// The reads requested, and how many are not over yet: a read is over when it found
/// nothing to read, gave up, or its Application is in the cache.
#[derive(Clone, Debug)]
struct Fetches {
    requests: UnboundedSender<Fetch>,
    pending: Arc<watch::Sender<usize>>,
    /// `namespace/name` of the Applications read and on their way into the cache.
    arriving: Arc<Mutex<HashSet<String>>>,
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

    fn arriving(&self, namespace: &str, name: &str) {
        self.arrivals().insert(format!("{namespace}/{name}"));
    }

    /// `app` is in the cache: the read that brought it (or that the watch overtook) is
    /// over.
    fn arrived(&self, app: &CachedApplication) {
        let key = format!("{}/{}", app.namespace().unwrap_or_default(), app.name_any());
        if self.arrivals().remove(&key) {
            self.done();
        }
    }

    fn arrivals(&self) -> MutexGuard<'_, HashSet<String>> {
        self.arriving.lock().unwrap_or_else(|e| e.into_inner())
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
    /// How many Applications named for the first time are still being read into the
    /// cache: one missing from it may be among them.
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
        arriving: Arc::default(),
    };
    let (inject, injected) = unbounded();
    let (wake, woken) = unbounded();
    let (listings, listed) = watch::channel(false);

    let apis: Vec<Api<CachedApplication>> = namespaces
        .iter()
        .map(|ns| Api::namespaced_with(client.clone(), ns, &resource))
        .collect();
    let keep = interest.clone();
    let arrivals = fetches.clone();
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
                .map(|api| watcher(api, crate::runtime::watch::config()).patient_backoff()),
        );
        let read = injected.map(|app| Ok(watcher::Event::Apply(app)));
        futures::stream::select(watched, read)
            .try_filter_map(move |event| futures::future::ready(Ok(kept(&keep, event))))
            .reflect(writer)
            .for_each(|event| {
                match event {
                    Ok(watcher::Event::InitDone) => {
                        listings.send_replace(true);
                    }
                    Ok(watcher::Event::Apply(app)) => arrivals.arrived(&app),
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
    let reader = Reader {
        client: client.clone(),
        store: store.clone(),
        namespaces: namespaces.to_vec(),
        fetches: fetches.clone(),
        inject,
        wake,
    };
    let reads = reader.run(listed.clone(), requested);
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

/// Reads the Applications named for the first time that the cache lacks into it.
struct Reader {
    client: kube::Client,
    store: Store<CachedApplication>,
    /// The namespaces the cache watches, in the order a lookup searches them.
    namespaces: Vec<String>,
    fetches: Fetches,
    /// Into the cache's stream.
    inject: UnboundedSender<CachedApplication>,
    /// The jobs whose Application arrived.
    wake: UnboundedSender<ObjectRef<CachedJob>>,
}

impl Reader {
    /// Reads each fetch of `requested` once the cache has `listed` (the listing holds
    /// the Applications named before it). Returns when `requested` is closed.
    async fn run(self, mut listed: watch::Receiver<bool>, mut requested: UnboundedReceiver<Fetch>) {
        if listed.wait_for(|listed| *listed).await.is_err() {
            return;
        }
        while let Some(fetch) = requested.next().await {
            if !self.read(fetch).await {
                self.fetches.done();
            }
        }
    }

    /// Reads the Application of `fetch` from the first of the watched namespaces that
    /// has it, unless the cache holds it, and hands it to the cache. Returns whether
    /// it is on its way there (the read is over once it has arrived). A read that
    /// fails is requested again after a backoff.
    async fn read(&self, mut fetch: Fetch) -> bool {
        let resource = application_resource();
        let candidates: Vec<&String> = self
            .namespaces
            .iter()
            .filter(|ns| fetch.namespace.as_ref().is_none_or(|named| named == *ns))
            .collect();
        let cached = candidates.iter().any(|ns| {
            let key = ObjectRef::new_with(&fetch.name, resource.clone()).within(ns);
            self.store.get(&key).is_some()
        });
        if cached {
            return false;
        }
        for ns in candidates {
            let api: Api<CachedApplication> =
                Api::namespaced_with(self.client.clone(), ns, &resource);
            match api.get_opt(&fetch.name).await {
                Ok(Some(app)) => {
                    self.fetches.arriving(ns, &fetch.name);
                    let on_its_way = self.inject.unbounded_send(app).is_ok();
                    let _ = self.wake.unbounded_send(fetch.job);
                    return on_its_way;
                }
                Ok(None) => {}
                Err(error) => {
                    fetch.failures += 1;
                    tracing::warn!(application = %fetch.name, namespace = %ns, %error,
                        failures = fetch.failures, "reading an Application a job names failed");
                    if fetch.failures < FETCH_TRIES {
                        let backoff = Duration::from_secs(1 << (fetch.failures - 1));
                        let fetches = self.fetches.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(backoff).await;
                            fetches.request(fetch);
                        });
                    }
                    return false;
                }
            }
        }
        false
    }
}
