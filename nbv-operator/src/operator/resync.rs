//! The periodic look at every job, handed to the controller at the pace it reconciles.
//!
//! Every job is reconciled once its listing is complete (at the start, and whenever
//! the watch lists again) and, with nothing due sooner, every
//! [`RequeuePolicy::resync`](nbv_core::reconcile::RequeuePolicy) to catch what a
//! watch missed. Asking kube-runtime's scheduler for that job by job (a reconcile per
//! listed job, an `Action::requeue` per reconcile) keeps an entry for every job in its
//! map, its delay queue and, after a start's burst, its set of pending requests, each
//! with its own copy of the job's name and namespace; the hash maps never give their
//! room back. The sweep walks the jobs' cache instead and hands the controller at most
//! [`WINDOW`] jobs it has not reconciled yet: the scheduler holds a window of jobs, not
//! every job of the cluster.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::channel::mpsc::UnboundedSender;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::watch;

use crate::operator::projection::CachedJob;

/// The reconciles the controller runs at once, which the sweep paces itself by.
/// Unbounded, a first start over N jobs starts N reconciles together, and since kube's client speaks HTTP/1.1 each request in flight
/// holds a TLS connection of its own (kept in the pool for 90 s after): thousands of
/// connections and their buffers at the peak, for no gain, as the API server serves
/// only so many requests at once. 32 keeps the API server busy.
pub const RECONCILE_CONCURRENCY: u16 = 32;

/// How many jobs a sweep hands over that the controller has not reconciled yet: twice
/// its concurrency, so that it never waits for the sweep.
pub const WINDOW: u64 = 2 * RECONCILE_CONCURRENCY as u64;

/// How long a sweep waits for a reconcile before it counts the window as free: a job
/// deleted after the sweep handed it over is never reconciled, and a job already
/// queued is reconciled once for two requests.
const STALL: Duration = Duration::from_secs(5);

/// What the sweep knows of the controller's reconciles: how many ended, and which
/// jobs wait in the controller's queue for a time of their own (a running Pod's
/// backstop, a retry, a deferred trigger), which a periodic sweep leaves to it.
#[derive(Debug)]
pub struct Reconciles {
    ended: watch::Sender<u64>,
    requeued: Mutex<HashSet<(String, String)>>,
}

impl Default for Reconciles {
    fn default() -> Self {
        Reconciles {
            ended: watch::Sender::new(0),
            requeued: Mutex::default(),
        }
    }
}

impl Reconciles {
    /// A reconcile of `namespace/name` ended (whatever its outcome); `requeued` if the
    /// job is to be looked at again at a time of its own.
    pub fn ended(&self, namespace: &str, name: &str, requeued: bool) {
        {
            let mut jobs = self.requeued.lock().unwrap_or_else(PoisonError::into_inner);
            let key = (namespace.to_owned(), name.to_owned());
            if requeued {
                jobs.insert(key);
            } else {
                jobs.remove(&key);
            }
        }
        self.ended.send_modify(|n| *n += 1);
    }

    /// `namespace/name` was deleted.
    pub fn forget(&self, namespace: &str, name: &str) {
        let mut jobs = self.requeued.lock().unwrap_or_else(PoisonError::into_inner);
        jobs.remove(&(namespace.to_owned(), name.to_owned()));
    }

    fn is_requeued(&self, job: &CachedJob) -> bool {
        let jobs = self.requeued.lock().unwrap_or_else(PoisonError::into_inner);
        jobs.contains(&(job.namespace().to_owned(), job.name().to_owned()))
    }
}

/// Counts the completed listings of the jobs, for the sweep's start. Dropping it ends
/// the sweep.
#[derive(Debug)]
pub struct Listings(watch::Sender<u64>);

impl Default for Listings {
    fn default() -> Self {
        Listings(watch::Sender::new(0))
    }
}

impl Listings {
    /// A listing of the jobs is complete: the cache holds every job.
    pub fn complete(&self) {
        self.0.send_modify(|n| *n += 1);
    }

    /// The count, for a sweep.
    pub fn follow(&self) -> watch::Receiver<u64> {
        self.0.subscribe()
    }
}

/// Hands every job of `jobs` to `requests` after each completed listing that `listed`
/// counts, and every `every` since the last sweep each job that `reconciles` does not
/// know to be requeued, at most [`WINDOW`] ahead of the reconciles that end. Returns
/// once `requests` is closed or the listings' count is dropped.
pub async fn sweep(
    jobs: Store<CachedJob>,
    mut listed: watch::Receiver<u64>,
    reconciles: Arc<Reconciles>,
    every: Duration,
    requests: UnboundedSender<ObjectRef<CachedJob>>,
) {
    let mut ended = reconciles.ended.subscribe();
    loop {
        // After a listing, every job: the watch may have missed anything.
        let all = tokio::select! {
            changed = listed.changed() => {
                if changed.is_err() {
                    return;
                }
                true
            }
            () = tokio::time::sleep(every) => false,
        };
        // Only what a sweep hands over waits in the controller's queue: the rest of
        // the jobs stay in the cache until their turn.
        let mut sent = 0;
        let mut base = *ended.borrow_and_update();
        for job in jobs.state() {
            if !all && reconciles.is_requeued(&job) {
                continue;
            }
            if sent >= WINDOW {
                let room = base + sent - WINDOW + 1;
                let waited = tokio::time::timeout(STALL, ended.wait_for(|n| *n >= room))
                    .await
                    .map(|count| count.is_ok());
                match waited {
                    Ok(true) => {}
                    Ok(false) => return,
                    Err(_) => {
                        base = *ended.borrow_and_update();
                        sent = 0;
                    }
                }
            }
            if requests.unbounded_send(ObjectRef::from_obj(&*job)).is_err() {
                return;
            }
            sent += 1;
        }
    }
}
