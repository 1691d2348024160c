//! Inputs for the benchmarks of `nbv-core`, and the baselines they are measured against.
//!
//! The bench targets in `benches/` time `nbv-core`'s pure functions; the inputs they
//! need (a fleet of jobs, trigger annotations, jobs to plan for, status objects) are
//! built here so that every target builds them the same way and so that the builders
//! themselves are tested. The figures are reported in `docs/performance.md`, which also
//! says how to reproduce them.
//!
//! | module | inputs for |
//! |---|---|
//! | [`fleet`] | the Application aggregate: N jobs of one Application, and the recount baseline |
//! | [`annotation`] | trigger annotations: typical, 64 KiB, alias bomb, and the same entries as JSON |
//! | [`job`] | succeeded jobs to plan for, with and without a recorded ledger |
//! | [`object`] | job objects as Argo CD's health check receives them |
//! | [`requests`] | the API cost of completions in simulation, and the upstream baseline |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::time::Duration;

pub mod annotation;
pub mod fleet;
pub mod job;
pub mod object;
pub mod requests;

/// The job counts the scaling benchmarks are run at.
///
/// # Examples
///
/// ```
/// assert!(nbv_benches::SIZES.is_sorted());
/// assert_eq!(nbv_benches::SIZES.last(), Some(&10_000));
/// ```
pub const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

/// The job counts the Application aggregate is measured at: [`SIZES`] and 100 000.
///
/// # Examples
///
/// ```
/// use nbv_benches::{AGGREGATE_SIZES, SIZES};
///
/// assert!(AGGREGATE_SIZES.starts_with(&SIZES));
/// assert_eq!(AGGREGATE_SIZES.last(), Some(&100_000));
/// ```
pub const AGGREGATE_SIZES: [usize; 5] = [10, 100, 1_000, 10_000, 100_000];

/// The environment variable that turns on the quick mode of every bench target: any
/// value but empty or `0`.
pub const QUICK_ENV: &str = "NBV_BENCH_QUICK";

/// Whether the quick mode is on ([`QUICK_ENV`]).
///
/// # Examples
///
/// ```
/// // Off unless the variable is set (the doctests run without it).
/// if std::env::var_os(nbv_benches::QUICK_ENV).is_none() {
///     assert!(!nbv_benches::quick());
/// }
/// ```
pub fn quick() -> bool {
    std::env::var_os(QUICK_ENV).is_some_and(|value| !value.is_empty() && value != "0")
}

/// The settings every bench target runs with, overridable on the command line
/// (`cargo bench -p nbv-benches -- --sample-count 100`, say).
///
/// 500 samples and at least one second per benchmark make the medians stable even on
/// a busy 2-core machine; three seconds at most keep the slow baselines (a YAML parser
/// expanding an alias bomb, a recount of 100 000 jobs) from dominating the run. The
/// whole suite takes a few minutes.
///
/// In quick mode ([`quick`]) each benchmark takes 10 samples of one iteration for at
/// most 20 ms: a smoke test that every benchmark runs and prints a figure, in seconds
/// for the whole suite. Its figures are too few to be compared with anything.
///
/// # Examples
///
/// ```no_run
/// // The `main` of every bench target.
/// nbv_benches::divan().main();
/// ```
pub fn divan() -> divan::Divan {
    let divan = divan::Divan::default();
    let divan = if quick() {
        divan
            .sample_count(10)
            .sample_size(1)
            .min_time(Duration::ZERO)
            .max_time(Duration::from_millis(20))
    } else {
        divan
            .sample_count(500)
            .min_time(Duration::from_secs(1))
            .max_time(Duration::from_secs(3))
    };
    divan.config_with_args()
}
