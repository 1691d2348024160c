//! Planning a job whose run just succeeded, with 0, 1 and 10 on-success triggers: the
//! first plan (every effect owed) against planning again once every effect was carried
//! out and recorded in the ledger (nothing owed), which is what every later reconcile
//! of the same run does.

use divan::{Bencher, black_box};
use nbv_benches::job::{now, recorded, succeeded};
use nbv_core::plan::{PlanContext, plan};

fn main() {
    nbv_benches::divan().main();
}

const TRIGGERS: [usize; 3] = [0, 1, 10];

/// Baseline: nothing recorded yet.
#[divan::bench(args = TRIGGERS)]
fn first_plan(bencher: Bencher, triggers: usize) {
    let ctx = PlanContext::default();
    let job = succeeded(triggers);
    bencher.bench_local(|| plan(black_box(&job), &ctx, now()));
}

/// Every effect recorded as done.
#[divan::bench(args = TRIGGERS)]
fn replan_from_ledger(bencher: Bencher, triggers: usize) {
    let ctx = PlanContext::default();
    let job = recorded(succeeded(triggers), &ctx);
    bencher.bench_local(|| plan(black_box(&job), &ctx, now()));
}
