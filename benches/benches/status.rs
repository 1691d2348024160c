//! Rendering an Application's status for N failed jobs: the `mlops.dev/notebook-status`
//! JSON, the summary, and the merge patch against what the Application shows (the
//! status published before the last job failed), with the default 32 KiB cap against
//! no cap at all.

use std::collections::BTreeMap;

use divan::{Bencher, black_box};
use nbv_benches::SIZES;
use nbv_benches::fleet::{Fleet, application, parent};
use nbv_benches::job::now;
use nbv_core::aggregate::{Aggregate, AggregateIndex, JobPhase, StatusLimit};
use nbv_core::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};

fn main() {
    nbv_benches::divan().main();
}

/// An index whose Application has `n` jobs, all failed.
fn all_failed(n: usize) -> AggregateIndex {
    let (fleet, parent) = (Fleet::new(n), parent());
    let mut index = AggregateIndex::new();
    for i in 0..fleet.len() {
        index.upsert(fleet.key(i).clone(), Some(parent.clone()), JobPhase::Failed);
    }
    index
}

/// The annotations the Application shows after `aggregate` was published with `limit`.
fn published(aggregate: &Aggregate, limit: StatusLimit) -> BTreeMap<String, String> {
    let status = aggregate.status(now(), limit);
    BTreeMap::from([
        (NOTEBOOK_STATUS.to_owned(), status.to_json()),
        (NOTEBOOK_SUMMARY.to_owned(), status.summary()),
    ])
}

fn render(bencher: Bencher, n: usize, limit: StatusLimit) {
    let app = application();
    let index = all_failed(n);
    let shown = published(all_failed(n - 1).aggregate(&app), limit);
    bencher.bench_local(|| {
        let status = black_box(index.aggregate(&app)).status(now(), limit);
        let patch = status.application_patch(black_box(&shown));
        (status.summary(), patch)
    });
}

/// Baseline: no cap, every failed job listed.
#[divan::bench(args = SIZES)]
fn uncapped(bencher: Bencher, n: usize) {
    // usize::MAX is far above StatusLimit::MIN_BYTES.
    let limit = StatusLimit::new(usize::MAX).unwrap_or_default();
    render(bencher, n, limit);
}

/// The default 32 KiB cap.
#[divan::bench(args = SIZES)]
fn capped_32_kib(bencher: Bencher, n: usize) {
    render(bencher, n, StatusLimit::DEFAULT);
}
