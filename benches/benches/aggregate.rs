//! One job changes phase in an Application of N jobs (up to 100 000): the incremental
//! `AggregateIndex`, and the `Board` that the shell feeds every job event, against
//! recounting every job of the Application, which is what an operator that lists all
//! jobs on each completion does.
//!
//! All sides see the same stream of changes (see `nbv_benches::fleet`) and end with
//! the same counts and failed jobs; neither side sorts (the listing is already in name
//! order, the index keeps its failed set sorted).
//!
//! Before the timings, the target prints what the index and the board keep per job:
//! the bytes live on the heap once N jobs are in (counted by the global allocator
//! below), and the allocations one change makes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use divan::{Bencher, black_box};
use nbv_benches::AGGREGATE_SIZES;
use nbv_benches::fleet::{Fleet, Objects, application, parent, recount};
use nbv_core::aggregate::{Board, TrackingSettings};

/// The system allocator, counting the bytes it has handed out and not taken back, and
/// every allocation.
struct Counting;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; the counters are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout` (see `alloc`).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc` is `System`'s.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn live() -> usize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// Heap bytes the index keeps for `n` jobs, and allocations per change.
fn index_memory(n: usize) -> (usize, f64) {
    let fleet = Fleet::new(n);
    let before = live();
    let mut index = fleet.index();
    let kept = live() - before;
    let parent = parent();
    let changes = n.clamp(1, 10_000);
    let counted = allocations();
    for change in fleet.changes().take(changes) {
        let key = fleet.key(change.job).clone();
        black_box(index.upsert(key, Some(parent.clone()), change.phase));
    }
    // The key and parent the shell clones for each change are part of what it costs.
    let per_change = (allocations() - counted) as f64 / changes as f64;
    drop(index);
    (kept, per_change)
}

/// Heap bytes the board keeps for `n` jobs (their objects dropped after each event, as
/// the watch cache, not the board, holds them), and allocations per change (the
/// object's copy excluded).
fn board_memory(n: usize) -> (usize, f64) {
    let (fleet, objects) = (Fleet::new(n), Objects::new());
    let before = live();
    let mut board = Board::new(TrackingSettings::default());
    for i in 0..n {
        black_box(board.apply(&objects.job(fleet.key(i), Objects::initial_phase(i))));
    }
    let kept = live() - before;
    let changes = n.clamp(1, 10_000);
    let mut counted = 0;
    for change in fleet.changes().take(changes) {
        let job = objects.job(fleet.key(change.job), change.phase);
        let start = allocations();
        black_box(board.apply(&job));
        counted += allocations() - start;
    }
    drop(board);
    (kept, counted as f64 / changes as f64)
}

fn print_memory() {
    println!("heap kept per job, and allocations per change (counted by the global allocator):");
    println!(
        "{:>8} | {:>14} {:>9} {:>12} | {:>14} {:>9} {:>12}",
        "jobs", "index bytes", "B/job", "allocs/chg", "board bytes", "B/job", "allocs/chg"
    );
    for n in AGGREGATE_SIZES {
        let (index, index_allocs) = index_memory(n);
        let (board, board_allocs) = board_memory(n);
        println!(
            "{n:>8} | {index:>14} {:>9.1} {index_allocs:>12.2} | {board:>14} {:>9.1} {board_allocs:>12.2}",
            index as f64 / n as f64,
            board as f64 / n as f64,
        );
    }
    println!();
}

fn main() {
    print_memory();
    nbv_benches::divan().main();
}

/// Baseline: apply the change to the listing, then recount all N jobs.
#[divan::bench(args = AGGREGATE_SIZES)]
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
#[divan::bench(args = AGGREGATE_SIZES)]
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

/// The board: apply the watch event of the one job that changed (finding its
/// Application from its labels, updating the index and the publication schedule), then
/// read the Application's counts. The event's object is built outside the timing.
#[divan::bench(args = AGGREGATE_SIZES)]
fn board_apply(bencher: Bencher, n: usize) {
    let (fleet, objects, app) = (Fleet::new(n), Objects::new(), application());
    let mut board = Board::new(TrackingSettings::default());
    for i in 0..n {
        board.apply(&objects.job(fleet.key(i), Objects::initial_phase(i)));
    }
    let mut changes = fleet.changes();
    bencher
        .with_inputs(|| {
            changes
                .next()
                .map(|change| objects.job(fleet.key(change.job), change.phase))
        })
        .bench_local_refs(|job| {
            let changed = job.as_ref().map(|job| black_box(&mut board).apply(job));
            let aggregate = board.aggregate(&app);
            (changed, aggregate.succeeded(), aggregate.failed())
        });
}
