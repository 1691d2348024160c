//! The resync's sweep hands the controller every job of the cache once a listing is
//! complete and again every period, never more than a window of jobs ahead of the
//! reconciles, and it does not stall on a job that is never reconciled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use kube::runtime::reflector::{ObjectRef, store::Writer};
use kube::runtime::watcher::Event;
use nbv_core::aggregate::TrackingSettings;
use nbv_operator::operator::projection::CachedJob;
use nbv_operator::operator::resync::{Listings, Reconciles, WINDOW, sweep};
use nbv_testkit::fixtures::JobBuilder;

const EVERY: Duration = Duration::from_secs(300);

/// A cache holding `n` jobs, as the watch leaves it once its listing is done.
fn cache_of(n: usize) -> Writer<CachedJob> {
    let mut cache = Writer::<CachedJob>::default();
    for i in 0..n {
        let job = JobBuilder::new("ml", format!("job-{i:04}"))
            .typed()
            .expect("a job");
        let job = CachedJob::pack(job, &TrackingSettings::default());
        cache.apply_watcher_event(&Event::Apply(job));
    }
    cache
}

/// What the controller saw of the sweep's requests.
#[derive(Default)]
struct Seen {
    /// How many times each job was handed over.
    handed: HashMap<String, usize>,
    /// The most requests handed over and not yet reconciled at any moment.
    most_ahead: u64,
}

/// A controller that reconciles each job handed over in `reconcile` (none if `None`),
/// four at a time, and requeues none.
fn controller(
    mut requests: UnboundedReceiver<ObjectRef<CachedJob>>,
    reconciles: Arc<Reconciles>,
    reconcile: Option<Duration>,
) -> Arc<Mutex<Seen>> {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let record = seen.clone();
    tokio::spawn(async move {
        let (done, mut reconciled) = futures::channel::mpsc::unbounded::<String>();
        let (mut ahead, mut running) = (0u64, 0usize);
        let mut waiting = std::collections::VecDeque::new();
        loop {
            tokio::select! {
                request = requests.next() => {
                    let Some(request) = request else { return };
                    ahead += 1;
                    let mut seen = record.lock().unwrap();
                    *seen.handed.entry(request.name.clone()).or_default() += 1;
                    seen.most_ahead = seen.most_ahead.max(ahead);
                    waiting.push_back(request);
                }
                Some(name) = reconciled.next() => {
                    ahead -= 1;
                    running -= 1;
                    reconciles.ended("ml", &name, false);
                }
            }
            let Some(wait) = reconcile else { continue };
            while running < 4 {
                let Some(job) = waiting.pop_front() else {
                    break;
                };
                running += 1;
                let done = done.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(wait).await;
                    let _ = done.unbounded_send(job.name);
                });
            }
        }
    });
    seen
}

/// A sweep over a cache of jobs, handing them to [`controller`].
struct Sweeping {
    /// Kept for as long as the test runs: the cache.
    _cache: Writer<CachedJob>,
    listings: Listings,
    reconciles: Arc<Reconciles>,
    seen: Arc<Mutex<Seen>>,
}

/// A sweep over `jobs` jobs, to a controller that takes `reconcile` for each.
fn sweeping(jobs: usize, reconcile: Option<Duration>) -> Sweeping {
    let cache = cache_of(jobs);
    let (listings, reconciles) = (Listings::default(), Arc::new(Reconciles::default()));
    let (requests, handed) = futures::channel::mpsc::unbounded();
    let seen = controller(handed, reconciles.clone(), reconcile);
    tokio::spawn(sweep(
        cache.as_reader(),
        listings.follow(),
        reconciles.clone(),
        EVERY,
        requests,
    ));
    Sweeping {
        _cache: cache,
        listings,
        reconciles,
        seen,
    }
}

#[tokio::test(start_paused = true)]
async fn every_job_is_handed_over_once_its_listing_is_complete_a_window_at_a_time() {
    let run = sweeping(1000, Some(Duration::from_millis(20)));

    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(
        run.seen.lock().unwrap().handed.is_empty(),
        "nothing before the listing is complete"
    );

    run.listings.complete();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let seen = run.seen.lock().unwrap();
    assert_eq!(seen.handed.len(), 1000);
    assert!(seen.handed.values().all(|&n| n == 1), "each job once");
    assert_eq!(
        seen.most_ahead, WINDOW,
        "a window ahead of the reconciles, never more"
    );
}

#[tokio::test(start_paused = true)]
async fn every_job_is_handed_over_again_every_period() {
    let run = sweeping(100, Some(Duration::from_millis(20)));
    run.listings.complete();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(run.seen.lock().unwrap().handed.values().all(|&n| n == 1));

    // The period runs from the end of the last sweep.
    tokio::time::sleep(EVERY).await;
    assert!(run.seen.lock().unwrap().handed.values().all(|&n| n == 2));
    tokio::time::sleep(EVERY).await;
    let seen = run.seen.lock().unwrap();
    assert_eq!(seen.handed.len(), 100);
    assert!(seen.handed.values().all(|&n| n == 3));
}

#[tokio::test(start_paused = true)]
async fn jobs_never_reconciled_do_not_stop_the_sweep() {
    // Jobs deleted after the sweep handed them over are never reconciled: the sweep
    // waits a while for each window, then goes on.
    let run = sweeping(3 * WINDOW as usize, None);
    run.listings.complete();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(run.seen.lock().unwrap().handed.len(), WINDOW as usize);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(run.seen.lock().unwrap().handed.len(), 3 * WINDOW as usize);
}

#[tokio::test(start_paused = true)]
async fn the_sweep_ends_with_the_jobs_watch() {
    let cache = cache_of(10);
    let listings = Listings::default();
    let (requests, _handed) = futures::channel::mpsc::unbounded();
    let sweeping = tokio::spawn(sweep(
        cache.as_reader(),
        listings.follow(),
        Arc::default(),
        EVERY,
        requests,
    ));
    drop(listings);
    tokio::time::timeout(Duration::from_secs(1), sweeping)
        .await
        .expect("the sweep ends")
        .expect("without a panic");
}

#[tokio::test(start_paused = true)]
async fn a_job_requeued_at_a_time_of_its_own_is_left_to_it_until_the_next_listing() {
    let run = sweeping(10, Some(Duration::from_millis(20)));
    run.listings.complete();
    tokio::time::sleep(Duration::from_secs(10)).await;
    // A running Pod's backstop, say: its own requeue looks at it before the resync.
    run.reconciles.ended("ml", "job-0003", true);

    tokio::time::sleep(EVERY).await;
    assert_eq!(run.seen.lock().unwrap().handed["job-0003"], 1);
    assert_eq!(run.seen.lock().unwrap().handed["job-0004"], 2);

    // Its next reconcile asks for nothing sooner: the sweep takes it back.
    run.reconciles.ended("ml", "job-0003", false);
    tokio::time::sleep(EVERY).await;
    assert_eq!(run.seen.lock().unwrap().handed["job-0003"], 2);

    // A listing may follow missed events: every job then.
    run.reconciles.ended("ml", "job-0005", true);
    run.listings.complete();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(run.seen.lock().unwrap().handed["job-0005"], 4);
}
