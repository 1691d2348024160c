//! `nbv_reconcile_queue_depth`: the jobs that wait for a reconcile.
//!
//! controller-runtime's operators expose this as `workqueue_depth{name="…"}`; nbv
//! has one controller, so its gauge has no `name` label and carries nbv's prefix
//! like the other reconcile families (`nbv_reconcile_total`,
//! `nbv_reconcile_duration_seconds`).
//!
//! kube-runtime's `Controller` keeps its queue (a scheduler and a runner) to itself,
//! so the depth is measured where nbv meets it. The scheduler holds at most one entry
//! per job: a request for a job that is already queued, or that is being reconciled,
//! merges with the entry (the running one is held until its reconcile ends), and the
//! runner takes the entry off the queue when it calls the reconcile function, or
//! drops it when the job is no longer in the cache. So the jobs that wait are exactly
//!
//! - the jobs a trigger asked for ([`ReconcileQueue::requested`]: the jobs' watch, the
//!   Pods' owners, the sweep, the model and Application wakes) since their last start
//!   ([`ReconcileQueue::started`]), counted once per job however often they were asked
//!   for; and
//! - the jobs whose requeue (a reconcile's `Action::requeue`, a retry) is due
//!   ([`ReconcileQueue::requeued`]) and that have not started since. A requeue that
//!   is not due yet is a timer, not work: client-go's delaying queue does not count it
//!   either.
//!
//! A count of triggers minus starts would not do: the scheduler merges requests, and
//! a start after a burst of events for one job would leave the count too high for
//! good.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
// The scheduler's clock: it is tokio's (and virtual in `nbv simulate` and the
// tests), so a requeue comes due here when it comes due there.
use tokio::time::Instant;

/// A job, as `(namespace, name)`.
type Key = (String, String);

#[derive(Debug, Default)]
struct Queued {
    /// Jobs asked for now.
    waiting: HashSet<Key>,
    /// Jobs to be asked for again at a time of their own.
    requeues: HashMap<Key, Instant>,
}

/// The controller's queue as nbv sees it, and the gauge that shows its depth at each
/// scrape. See the [module](self) for why this equals the depth of kube-runtime's
/// queue.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::metrics::Metrics;
///
/// let metrics = Metrics::new();
/// let queue = metrics.queue();
/// queue.requested("ml", "train");
/// queue.requested("ml", "train"); // merged with the first request
/// queue.requested("ml", "score");
/// assert!(metrics.encode().contains("\nnbv_reconcile_queue_depth 2\n"));
/// queue.started("ml", "train");
/// assert!(metrics.encode().contains("\nnbv_reconcile_queue_depth 1\n"));
/// ```
#[derive(Debug)]
pub struct ReconcileQueue {
    queued: Mutex<Queued>,
    depth: Gauge,
}

impl ReconcileQueue {
    /// Registers `nbv_reconcile_queue_depth` (at 0 until something is queued).
    pub(super) fn register(registry: &mut Registry) -> Self {
        let depth = Gauge::default();
        registry.register(
            "nbv_reconcile_queue_depth",
            "NotebookValidationJobs waiting for a reconcile to start (controller-runtime's workqueue_depth)",
            depth.clone(),
        );
        ReconcileQueue {
            queued: Mutex::default(),
            depth,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queued> {
        // A poisoned lock means a panic between two set operations; each set is still
        // consistent on its own.
        self.queued.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A trigger asked the controller to reconcile `namespace/name` now.
    pub fn requested(&self, namespace: &str, name: &str) {
        self.lock()
            .waiting
            .insert((namespace.to_owned(), name.to_owned()));
    }

    /// The controller took `namespace/name` off its queue: its reconcile starts, or
    /// the job is gone from the cache. Whatever was asked for it is served by this
    /// start, requeue included: the scheduler kept one entry for the job.
    pub fn started(&self, namespace: &str, name: &str) {
        let key = (namespace.to_owned(), name.to_owned());
        let mut queued = self.lock();
        queued.waiting.remove(&key);
        queued.requeues.remove(&key);
    }

    /// The reconcile of `namespace/name` that just ended asked to run again `after`
    /// (`None`: only when something changes).
    pub fn requeued(&self, namespace: &str, name: &str, after: Option<Duration>) {
        let key = (namespace.to_owned(), name.to_owned());
        let mut queued = self.lock();
        match after.and_then(|after| Instant::now().checked_add(after)) {
            Some(due) => {
                queued.requeues.insert(key, due);
            }
            None => {
                queued.requeues.remove(&key);
            }
        }
    }

    /// Forgets everything: the controller that held the queue stopped (the replica
    /// stopped leading), and its queue went with it.
    pub fn clear(&self) {
        let mut queued = self.lock();
        // Fresh sets: a cleared one would keep the room of the largest queue it held.
        *queued = Queued::default();
        self.depth.set(0);
    }

    /// How many jobs wait: asked for, or with a requeue that is due.
    pub fn depth(&self) -> usize {
        let queued = self.lock();
        let now = Instant::now();
        let due = queued
            .requeues
            .iter()
            .filter(|(key, at)| **at <= now && !queued.waiting.contains(*key))
            .count();
        queued.waiting.len() + due
    }

    /// Sets the gauge, at a scrape.
    pub(super) fn refresh(&self) {
        self.depth
            .set(i64::try_from(self.depth()).unwrap_or(i64::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> ReconcileQueue {
        ReconcileQueue::register(&mut Registry::default())
    }

    #[test]
    fn requests_for_one_job_are_one_entry() {
        let queue = queue();
        for _ in 0..3 {
            queue.requested("ml", "train");
        }
        queue.requested("other", "train");
        assert_eq!(queue.depth(), 2);
        queue.started("ml", "train");
        assert_eq!(queue.depth(), 1);
        // A job gone from the cache is taken off the queue too (and only once).
        queue.started("other", "train");
        queue.started("other", "train");
        assert_eq!(queue.depth(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_requeue_waits_only_once_it_is_due() {
        let queue = queue();
        queue.requeued("ml", "train", Some(Duration::from_secs(30)));
        queue.requeued("ml", "score", None);
        assert_eq!(queue.depth(), 0);
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(queue.depth(), 1);
        // Asked for as well: still one entry.
        queue.requested("ml", "train");
        assert_eq!(queue.depth(), 1);
        queue.started("ml", "train");
        assert_eq!(queue.depth(), 0);
        // A reconcile that ends without a requeue cancels the previous one.
        queue.requeued("ml", "train", Some(Duration::ZERO));
        assert_eq!(queue.depth(), 1);
        queue.requeued("ml", "train", None);
        assert_eq!(queue.depth(), 0);
    }

    #[test]
    fn clearing_empties_the_queue_and_the_gauge() {
        let queue = queue();
        queue.requested("ml", "train");
        queue.refresh();
        assert_eq!(queue.depth.get(), 1);
        queue.clear();
        assert_eq!(queue.depth(), 0);
        assert_eq!(queue.depth.get(), 0);
    }
}
