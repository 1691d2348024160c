//! The API cost of completions: nbv's requests, counted by the in-memory API server of
//! `nbv-testkit` while the real operator runs in `nbv simulate`, beside the limit the
//! work allows and beside the upstream operator's algorithm on the same cluster.
//!
//! A [`Case`] is run twice: once as a first start alone, once with its completions. The
//! difference is what the completions cost ([`measure`]); the first run is what a
//! first start over N jobs nbv has never seen costs ([`Measured::first_start`]).
//!
//! | module | what |
//! |---|---|
//! | [`scenario`](mod@scenario) | the simulated clusters |
//! | [`count`](mod@count) | requests sorted by purpose |
//! | [`baseline`](mod@baseline) | the upstream algorithm |

pub mod baseline;
pub mod count;
pub mod scenario;

use nbv_operator::simulate::{Options, Report, run};
use nbv_testkit::scenario::{Bounds, Scenario};

pub use baseline::upstream;
pub use count::{Counts, PerCompletion};
pub use scenario::{Case, Triggers};

/// What one case cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The case.
    pub case: Case,
    /// Requests of the first start alone (no completion).
    pub first_start: Counts,
    /// Requests the completions added.
    pub completions: Counts,
    /// The upstream algorithm's requests for the same completions.
    pub upstream: Counts,
    /// Broken invariants or unmet expectations of the simulation with completions
    /// (empty when the run was correct: a cheap run that is wrong measures nothing).
    pub problems: Vec<String>,
    /// How many completions the simulation recorded.
    pub completed: usize,
}

impl Measured {
    /// The completions' requests per completion.
    pub fn per_completion(&self) -> PerCompletion {
        self.completions.per(self.case.completing)
    }

    /// The upstream algorithm's requests per completion.
    pub fn upstream_per_completion(&self) -> PerCompletion {
        self.upstream.per(self.case.completing)
    }
}

/// The fewest requests a completion of `case` can cost, per completion: the status
/// (ledger and conditions in one patch), the wave annotations and the notification
/// Event; per trigger its Event and, for a rolling restart, a GET and a PATCH, for an
/// Application sync one PATCH (its state read from the watch cache); for an
/// InferenceService restarted by eviction, per pod (k) one label-selected LIST, a GET
/// of the pods' ReplicaSet, the eviction, the `TargetsRestarted` status patch and its
/// `RestartWaiting` Event, then a last LIST that finds every pod replaced; and one
/// patch of the tracking Application's status for all the completions (at most one per
/// Application per minute; they all complete within one).
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::{Case, Triggers, limit};
///
/// let case = Case { jobs: 100, completing: 100, triggers: Triggers::Three, pods: 2 };
/// // 3 + 3 Events + (5 × 2 + 1) + (GET + PATCH) + 1 PATCH, and 1/100 of the
/// // Application status patch.
/// assert!((limit(&case) - 20.01).abs() < 1e-9);
/// ```
pub fn limit(case: &Case) -> f64 {
    let triggers = match case.triggers {
        Triggers::None => 0,
        Triggers::One => 1 + 2,
        Triggers::Three => 3 + (5 * case.pods + 1) + 2 + 1,
    };
    (3 + triggers) as f64 + 1.0 / case.completing.max(1) as f64
}

/// Runs `case` in simulation (first start, then with completions) and the upstream
/// algorithm.
///
/// # Errors
///
/// The simulation's error, when a scenario cannot be run.
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::{Case, Triggers, measure};
///
/// let case = Case { jobs: 4, completing: 2, triggers: Triggers::None, pods: 0 };
/// let measured = measure(&case)?;
/// assert!(measured.problems.is_empty(), "{:?}", measured.problems);
/// assert_eq!(measured.completed, 2);
/// assert_eq!(measured.completions.status, 2, "one status patch per completion");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn measure(case: &Case) -> Result<Measured, Box<dyn std::error::Error>> {
    let start = simulate(case, false)?;
    let full = simulate(case, true)?;
    let mut problems: Vec<String> = full.violations.iter().map(|v| v.to_string()).collect();
    problems.extend(full.expectation_failures.iter().cloned());
    let first_start = Counts::of(&start.requests);
    Ok(Measured {
        case: *case,
        first_start,
        completions: Counts::of(&full.requests) - first_start,
        upstream: upstream(case),
        problems,
        completed: full.completions.len(),
    })
}

fn simulate(case: &Case, complete: bool) -> Result<Report, Box<dyn std::error::Error>> {
    // Larger than a scenario file may be: 10,000 jobs are about 6 MB of objects.
    let bounds = Bounds {
        bytes: 64 * 1024 * 1024,
        entries: 100_000,
    };
    let scenario = Scenario::from_yaml_within(&scenario::scenario(case, complete), bounds)?;
    Ok(run(&scenario, &Options::default())?)
}

/// The table of [`Measured`] cases, in Markdown, as `docs/performance.md` shows it.
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::{Case, Triggers, measure, table};
///
/// let measured = measure(&Case { jobs: 4, completing: 2, triggers: Triggers::One, pods: 0 })?;
/// let table = table(&[measured]);
/// assert!(table.lines().nth(2).unwrap().starts_with("| 1 trigger (rolling restart) | 4 | 2 |"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn table(measured: &[Measured]) -> String {
    let mut out = String::from(
        "| scenario | N jobs | completing | status | wave | Events | trigger writes | reads | App status | per completion | limit | ÷ limit | upstream | ÷ upstream |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in measured {
        let p = m.per_completion();
        let u = m.upstream_per_completion();
        let limit = limit(&m.case);
        out.push_str(&format!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.3} | {:.2} | {:.2} | {:.3} | {:.2} | {:.3} |\n",
            m.case.label(),
            m.case.jobs,
            m.case.completing,
            p.status,
            p.wave,
            p.events,
            p.trigger_writes,
            p.reads,
            p.app_status,
            p.total,
            limit,
            p.total / limit,
            u.total,
            p.total / u.total,
        ));
    }
    out
}

/// The first starts of `measured`, in Markdown: the requests of a start over N jobs
/// nbv has never seen, none of which it has anything to record for.
pub fn first_start_table(measured: &[Measured]) -> String {
    let mut out = String::from(
        "| N jobs | status writes | per job | wave writes | Events | reads (LISTs) | App status | all requests |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for m in measured {
        let s = &m.first_start;
        out.push_str(&format!(
            "| {} | {} | {:.3} | {} | {} | {} | {} | {} |\n",
            m.case.jobs,
            s.status,
            s.status as f64 / m.case.jobs.max(1) as f64,
            s.wave,
            s.events,
            s.reads,
            s.app_status,
            s.total(),
        ));
    }
    out
}
