//! API requests per completion, in simulation: a table, not a timing (`harness =
//! false`, no divan). `cargo bench -p nbv-benches --bench api_requests` runs the full
//! set; with `NBV_BENCH_QUICK=1` (or `-- --quick`) a small one, as CI does, and so does
//! `cargo test --all-targets` (which runs it without cargo bench's `--bench`). The
//! counts do not depend on the build profile: `NBV_BENCH_FULL=1 cargo test -p
//! nbv-benches --bench api_requests` runs the full set without a release build.
//!
//! Every run is also checked: the simulation's invariants must hold and every job must
//! complete, or the figures mean nothing and the bench fails.

use nbv_benches::requests::{Case, Measured, Triggers, first_start_table, limit, measure, table};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let full = args.iter().any(|a| a == "--bench") || std::env::var_os("NBV_BENCH_FULL").is_some();
    let quick = !full
        || std::env::var_os("NBV_BENCH_QUICK").is_some()
        || args.iter().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[10, 100]
    } else {
        &nbv_benches::SIZES
    };
    let mut cases = Vec::new();
    for &jobs in sizes {
        for triggers in [Triggers::None, Triggers::One, Triggers::Three] {
            cases.push(Case {
                jobs,
                completing: jobs.min(100),
                triggers,
                pods: 2,
            });
        }
    }
    if !quick {
        cases.push(Case {
            jobs: 100,
            completing: 100,
            triggers: Triggers::Three,
            pods: 10,
        });
        cases.push(Case {
            jobs: 1_000,
            completing: 1_000,
            triggers: Triggers::None,
            pods: 0,
        });
    }
    let mut measured: Vec<Measured> = Vec::new();
    let mut failed = false;
    for case in &cases {
        let started = std::time::Instant::now();
        let m = measure(case).unwrap_or_else(|e| panic!("{case:?}: {e}"));
        eprintln!(
            "{} N={} C={}: {:.1} s",
            case.label(),
            case.jobs,
            case.completing,
            started.elapsed().as_secs_f64()
        );
        if !m.problems.is_empty() || m.completed != case.completing {
            eprintln!(
                "{case:?}: {} of {} completed; {:#?}",
                m.completed, case.completing, m.problems
            );
            failed = true;
        }
        let ratio = m.per_completion().total / limit(case);
        if ratio > 1.05 {
            eprintln!("{case:?}: {ratio:.3}× the limit");
        }
        measured.push(m);
    }
    println!(
        "## API requests per completion (simulation)\n\n{}",
        table(&measured)
    );
    let starts: Vec<Measured> = measured
        .iter()
        .filter(|m| m.case.triggers == Triggers::None && m.case.completing == m.case.jobs.min(100))
        .cloned()
        .collect();
    println!(
        "## First start over N unseen jobs (simulation)\n\n{}",
        first_start_table(&starts)
    );
    assert!(
        !failed,
        "a simulation went wrong; its figures are not reported"
    );
}
