//! Planning a job whose run just succeeded, with 0, 1 and 10 on-success triggers: the
//! first plan (every effect owed, the annotation parsed) against planning again once
//! every effect was carried out and recorded in the ledger (nothing owed), which is
//! what every later reconcile of the same run does, without and with the parse kept in
//! a `PlanCache`.

use divan::{Bencher, black_box};
use nbv_benches::job::{now, recorded, succeeded};
use nbv_core::plan::{PlanCache, PlanContext, plan};

fn main() {
    nbv_benches::divan().main();
}

const TRIGGERS: [usize; 3] = [0, 1, 10];

/// Baseline: nothing recorded yet, nothing cached.
#[divan::bench(args = TRIGGERS)]
fn first_plan(bencher: Bencher, triggers: usize) {
    let ctx = PlanContext::default();
    let job = succeeded(triggers);
    bencher.bench_local(|| plan(black_box(&job), &ctx, now()));
}

/// Every effect recorded as done; the annotation parsed again.
#[divan::bench(args = TRIGGERS)]
fn replan_from_ledger(bencher: Bencher, triggers: usize) {
    let ctx = PlanContext::default();
    let job = recorded(succeeded(triggers), &ctx);
    bencher.bench_local(|| plan(black_box(&job), &ctx, now()));
}

/// Every effect recorded as done; the annotation's parse found in the cache (the
/// lookup by uid and the comparison of the annotation's text are timed).
#[divan::bench(args = TRIGGERS)]
fn replan_cached(bencher: Bencher, triggers: usize) {
    let ctx = PlanContext::default();
    let job = recorded(succeeded(triggers), &ctx);
    let mut cache = PlanCache::default();
    cache.plan(&job, &ctx, now());
    bencher.bench_local(|| black_box(&mut cache).plan(black_box(&job), &ctx, now()));
}

/// Nothing recorded yet, every effect owed, the parse found in the cache (the run's
/// earlier reconciles put it there).
#[divan::bench(args = TRIGGERS)]
fn first_plan_cached(bencher: Bencher, triggers: usize) {
    let ctx = PlanContext::default();
    let job = succeeded(triggers);
    let mut cache = PlanCache::default();
    cache.plan(&job, &ctx, now());
    bencher.bench_local(|| black_box(&mut cache).plan(black_box(&job), &ctx, now()));
}
