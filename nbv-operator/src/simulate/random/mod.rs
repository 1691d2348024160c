//! Random scenarios: many small worlds, each played and checked against the invariants.
//!
//! Each case is a scenario generated from its own seed, derived from the run's seed and
//! the case's index: one to four jobs in one or two namespaces, with sync waves, block
//! waves, parents (tracking id, instance or part-of label, none) and triggers (restart
//! of an InferenceService or a Deployment, refresh of a ConfigMap or an Application,
//! sync of an Application; some into a namespace they may not reach, some at a target
//! that does not exist, some annotations malformed); one or two runs per job that
//! succeed or fail, a spec edit between runs, and another controller that sometimes
//! rewrites a terminal status from scratch (dropping nbv's ledger). Around them: API
//! faults (500, 503, 429, 409, timeouts, lost responses) on random verbs and
//! resources, dropped watches, a compacted change feed, operator crashes and graceful
//! restarts, a user's `kubectl rollout restart`, Argo CD syncs of its own.
//!
//! The generator is a SplitMix64 sequence: no clock, no process randomness, so a seed
//! always gives the same scenarios, and cases run on worker threads are reported in
//! case order.

mod generate;

use std::collections::BTreeMap;
use std::sync::mpsc;

use nbv_testkit::invariants::Violation;
use nbv_testkit::scenario::Action;
use serde::Serialize;
use serde_json::Value;

pub use generate::{case_seed, random_scenario};

use super::options::Options;
use super::runner::run;

/// The first broken invariant of a random run, with what is needed to replay it.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, random_scenario, run_random};
///
/// // A clean run has none; when there is one, its scenario replays it:
/// // `nbv simulate first.yaml` with the file written from `scenario_yaml`.
/// let summary = run_random(1, 2, &Options::default());
/// assert!(summary.first_violation.is_none());
/// let yaml = random_scenario(5).to_yaml()?;
/// assert!(yaml.contains("timeline:"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FirstViolation {
    /// The case's index.
    pub case: u32,
    /// The case's seed ([`random_scenario`] of it gives the scenario again).
    pub case_seed: u64,
    /// The violation.
    pub violation: Violation,
    /// The scenario as a file for `nbv simulate <file>`.
    pub scenario_yaml: String,
}

/// A case that broke invariants.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run_random};
///
/// assert!(run_random(1, 3, &Options::default()).failed.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailedCase {
    /// The case's index.
    pub case: u32,
    /// The invariants it broke, in the order they were found.
    pub invariants: Vec<u8>,
}

/// What the random scenarios exercised, summed over the cases.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run_random};
///
/// let coverage = run_random(2, 4, &Options::default()).coverage;
/// assert!(coverage.requests > 0);
/// assert!(coverage.operator_stops >= 2); // at least the final stop of each case
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Terminal transitions of jobs.
    pub completions: usize,
    /// Triggers recorded as carried out.
    pub triggers_fired: usize,
    /// Faults injected.
    pub faults: usize,
    /// Operator stops (crashes and graceful).
    pub operator_stops: u32,
    /// API requests nbv made.
    pub requests: usize,
    /// Answers with an error status.
    pub error_answers: usize,
    /// Jobs whose image was built (`status.buildStatus.phase` Complete at the end).
    pub builds: usize,
    /// Runs started by a request to run again (`status.rerun.count` at the end, summed
    /// over the jobs).
    pub reruns: u64,
}

/// The outcome of [`run_random`].
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run_random};
///
/// let summary = run_random(2, 4, &Options::default());
/// assert_eq!((summary.cases, summary.seed, summary.violations), (2, 4, 0));
/// assert!(summary.violations_by_invariant.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RandomSummary {
    /// Scenarios run.
    pub cases: u32,
    /// The seed they were generated from.
    pub seed: u64,
    /// Broken invariants over all cases (a scenario that could not be played counts as
    /// one).
    pub violations: usize,
    /// Cases with at least one.
    pub failed_cases: u32,
    /// Violations by invariant number (0: a scenario that could not be played).
    pub violations_by_invariant: BTreeMap<u8, usize>,
    /// The first, by case order.
    pub first_violation: Option<FirstViolation>,
    /// The failed cases in case order (the first 100 of each worker's, then cut to
    /// 100): each replays alone with `nbv simulate --random N --seed S --case K`.
    pub failed: Vec<FailedCase>,
    /// What was exercised.
    pub coverage: Coverage,
}

impl RandomSummary {
    /// `{"cases", "seed", "violations", "failed_cases", "violations_by_invariant",
    /// "first_violation", "failed", "coverage"}`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::simulate::{Options, run_random};
    ///
    /// let json = run_random(1, 7, &Options::default()).to_json();
    /// assert_eq!(json["cases"], 1);
    /// assert_eq!(json["violations"], 0);
    /// ```
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One case's result.
struct CaseResult {
    violations: Vec<Violation>,
    coverage: Coverage,
}

fn run_case(seed: u64, options: &Options) -> CaseResult {
    let scenario = random_scenario(seed);
    let options = Options { seed, ..*options };
    match run(&scenario, &options) {
        Ok(report) => CaseResult {
            coverage: Coverage {
                completions: report.completions.len(),
                triggers_fired: report.triggers_fired.len(),
                faults: scenario
                    .timeline
                    .iter()
                    .filter(|s| matches!(s.action, Action::Fault(_)))
                    .count(),
                operator_stops: report.operator.crashes + report.operator.graceful_stops,
                requests: report.api.requests_total,
                error_answers: report.api.errors_by_code.values().sum(),
                builds: report
                    .jobs
                    .values()
                    .filter(|job| job.status["buildStatus"]["phase"] == "Complete")
                    .count(),
                reruns: report
                    .jobs
                    .values()
                    .filter_map(|job| job.status["rerun"]["count"].as_u64())
                    .sum(),
            },
            violations: report.violations,
        },
        Err(e) => CaseResult {
            violations: vec![Violation {
                invariant: 0,
                at: None,
                message: format!("the scenario could not be played: {e}"),
            }],
            coverage: Coverage::default(),
        },
    }
}

/// Generates `cases` scenarios from `seed`, runs each (on as many threads as the
/// machine has cores) and checks the invariants after each.
///
/// Memory does not grow with `cases`: a case's scenario is dropped once played (the
/// first violating one is generated again from its seed for the report).
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run_random};
///
/// let summary = run_random(2, 1, &Options::default());
/// assert_eq!(summary.cases, 2);
/// assert_eq!(summary.violations, 0, "{:?}", summary.first_violation);
/// assert!(summary.coverage.completions > 0);
/// ```
pub fn run_random(cases: u32, seed: u64, options: &Options) -> RandomSummary {
    run_cases(seed, 0..cases, options, u32::MAX, &mut |_| {})
}

/// How far a random run is, told by [`run_random_reporting`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Cases played so far, on all workers.
    pub played: u32,
    /// Of those, the cases that broke an invariant.
    pub failed: u32,
}

/// How many cases `nbv simulate --random` plays between two [`Progress`] lines.
pub const PROGRESS_EVERY: u32 = 1000;

/// [`run_random`], telling `progress` how far it is every `every` cases: a long run
/// that is stopped still says how many cases it played, and how many failed.
/// `progress` runs on the calling thread, so it may write where that thread holds a
/// lock (the CLI's standard error).
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, Progress, run_random_reporting};
///
/// let caller = std::thread::current().id();
/// let mut told = Vec::new();
/// let summary = run_random_reporting(3, 1, &Options::default(), 2, &mut |p: Progress| {
///     assert_eq!(std::thread::current().id(), caller);
///     told.push(p);
/// });
/// assert_eq!(summary.cases, 3);
/// assert_eq!(told, [Progress { played: 2, failed: 0 }]);
/// ```
pub fn run_random_reporting(
    cases: u32,
    seed: u64,
    options: &Options,
    every: u32,
    progress: &mut dyn FnMut(Progress),
) -> RandomSummary {
    run_cases(seed, 0..cases, options, every, progress)
}

/// Runs case `case` of the random scenarios of `seed` alone: what `run_random` with
/// that seed reports for it, with its scenario when it breaks an invariant.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::{Options, run_one_case, run_random};
///
/// let one = run_one_case(1, 1, &Options::default());
/// assert_eq!((one.cases, one.violations), (1, 0));
/// assert_eq!(one.coverage.requests, run_random(2, 1, &Options::default()).coverage.requests
///     - run_random(1, 1, &Options::default()).coverage.requests);
/// ```
pub fn run_one_case(seed: u64, case: u32, options: &Options) -> RandomSummary {
    run_cases(
        seed,
        case..case.saturating_add(1),
        options,
        u32::MAX,
        &mut |_| {},
    )
}

/// The failed cases a summary lists, at most: enough to replay each with
/// `--case`, bounded whatever the run.
const LISTED_FAILURES: usize = 100;

fn run_cases(
    seed: u64,
    cases: std::ops::Range<u32>,
    options: &Options,
    every: u32,
    progress: &mut dyn FnMut(Progress),
) -> RandomSummary {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8);
    let all: Vec<u32> = cases.collect();
    let shares: Vec<Vec<u32>> = (0..workers)
        .map(|worker| all.iter().copied().skip(worker).step_by(workers).collect())
        .collect();
    // Each worker folds its cases into a summary as it goes; the summaries are merged
    // in case order. Workers say when a case was played (and whether it failed); the
    // calling thread counts and reports.
    let (sender, outcomes) = mpsc::channel::<bool>();
    let mut partials: Vec<RandomSummary> = std::thread::scope(|scope| {
        let handles: Vec<_> = shares
            .iter()
            .map(|share| {
                let played = sender.clone();
                scope.spawn(move || {
                    let mut partial = RandomSummary::empty(seed);
                    for &case in share {
                        let case_seed = case_seed(seed, case);
                        let result = run_case(case_seed, options);
                        // The caller counts; it may have stopped listening.
                        let _ = played.send(!result.violations.is_empty());
                        partial.add(case, case_seed, result);
                    }
                    partial
                })
            })
            .collect();
        // Ends when every worker has ended and dropped its sender.
        drop(sender);
        let mut told = Progress {
            played: 0,
            failed: 0,
        };
        for failed in outcomes {
            told.played += 1;
            told.failed += u32::from(failed);
            if told.played.is_multiple_of(every.max(1)) {
                progress(told);
            }
        }
        handles
            .into_iter()
            .zip(&shares)
            .map(|(handle, share)| {
                handle.join().unwrap_or_else(|_| {
                    // The simulator itself panicked (the operator's panics are caught and
                    // reported as violations): every case of that worker counts as failed.
                    let mut partial = RandomSummary::empty(seed);
                    for &case in share {
                        let result = CaseResult {
                            violations: vec![Violation {
                                invariant: 0,
                                at: None,
                                message: "the simulator panicked while playing this case"
                                    .to_owned(),
                            }],
                            coverage: Coverage::default(),
                        };
                        partial.add(case, case_seed(seed, case), result);
                    }
                    partial
                })
            })
            .collect()
    });
    let mut summary = RandomSummary::empty(seed);
    summary.cases = u32::try_from(all.len()).unwrap_or(u32::MAX);
    for partial in partials.drain(..) {
        summary.merge(partial);
    }
    summary.failed.sort_by_key(|failed| failed.case);
    summary.failed.truncate(LISTED_FAILURES);
    if let Some(first) = summary.first_violation.as_mut() {
        first.scenario_yaml = random_scenario(first.case_seed)
            .to_yaml()
            .unwrap_or_default();
    }
    summary
}

impl RandomSummary {
    fn empty(seed: u64) -> Self {
        RandomSummary {
            cases: 0,
            seed,
            violations: 0,
            failed_cases: 0,
            violations_by_invariant: BTreeMap::new(),
            first_violation: None,
            failed: Vec::new(),
            coverage: Coverage::default(),
        }
    }

    /// Counts one played case.
    fn add(&mut self, case: u32, case_seed: u64, result: CaseResult) {
        self.coverage.add(&result.coverage);
        if result.violations.is_empty() {
            return;
        }
        self.failed_cases += 1;
        self.violations += result.violations.len();
        for v in &result.violations {
            *self.violations_by_invariant.entry(v.invariant).or_default() += 1;
        }
        if self
            .first_violation
            .as_ref()
            .is_none_or(|first| case < first.case)
        {
            self.first_violation = Some(FirstViolation {
                case,
                case_seed,
                violation: result.violations[0].clone(),
                scenario_yaml: String::new(),
            });
        }
        if self.failed.len() < LISTED_FAILURES {
            let mut invariants: Vec<u8> = result.violations.iter().map(|v| v.invariant).collect();
            invariants.dedup();
            self.failed.push(FailedCase { case, invariants });
        }
    }

    /// Adds what another worker counted.
    fn merge(&mut self, other: RandomSummary) {
        self.coverage.add(&other.coverage);
        self.violations += other.violations;
        self.failed_cases += other.failed_cases;
        for (invariant, count) in other.violations_by_invariant {
            *self.violations_by_invariant.entry(invariant).or_default() += count;
        }
        if let Some(theirs) = other.first_violation
            && self
                .first_violation
                .as_ref()
                .is_none_or(|mine| theirs.case < mine.case)
        {
            self.first_violation = Some(theirs);
        }
        self.failed.extend(other.failed);
    }
}

impl Coverage {
    fn add(&mut self, other: &Coverage) {
        self.completions += other.completions;
        self.triggers_fired += other.triggers_fired;
        self.faults += other.faults;
        self.operator_stops += other.operator_stops;
        self.requests += other.requests;
        self.error_answers += other.error_answers;
        self.builds += other.builds;
        self.reruns += other.reruns;
    }
}
