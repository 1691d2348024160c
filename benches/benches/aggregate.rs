//! One job changes phase in an Application of N jobs: the incremental
//! `AggregateIndex` against recounting every job of the Application, which is what an
//! operator that lists all jobs on each completion does.
//!
//! Both sides see the same stream of changes (see `nbv_benches::fleet`) and end with
//! the same counts and failed jobs; neither side sorts (the listing is already in name
//! order, the index keeps its failed set sorted).

use divan::{Bencher, black_box};
use nbv_benches::SIZES;
use nbv_benches::fleet::{Fleet, application, parent, recount};

fn main() {
    nbv_benches::divan().main();
}

/// Baseline: apply the change to the listing, then recount all N jobs.
#[divan::bench(args = SIZES)]
fn recount_all_jobs(bencher: Bencher, n: usize) {
    let fleet = Fleet::new(n);
    let app = application();
    let mut listing = fleet.listing();
    let mut changes = fleet.changes();
    bencher.bench_local(|| {
        if let Some(change) = changes.next() {
            listing[change.job].phase = change.phase;
        }
        recount(black_box(&listing), &app)
    });
}

/// The index: upsert the one job that changed, then read the Application's counts.
///
/// The job's key and parent are cloned for each change, as a shell that builds them
/// from a watch event allocates them.
#[divan::bench(args = SIZES)]
fn index_upsert(bencher: Bencher, n: usize) {
    let fleet = Fleet::new(n);
    let (app, parent) = (application(), parent());
    let mut index = fleet.index();
    let mut changes = fleet.changes();
    bencher.bench_local(|| {
        let changed = changes.next().map(|change| {
            black_box(&mut index).upsert(
                fleet.key(change.job).clone(),
                Some(parent.clone()),
                change.phase,
            )
        });
        let aggregate = index.aggregate(&app);
        (
            changed,
            aggregate.succeeded(),
            aggregate.running(),
            aggregate.failed(),
        )
    });
}
