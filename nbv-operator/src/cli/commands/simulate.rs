//! `nbv simulate [SCENARIO.yaml] [--json]` and `nbv simulate --random N --seed S`: run
//! the operator against an in-memory cluster in virtual time (see
//! [`crate::simulate`] and `docs/simulate.md`).
//!
//! # Exit codes
//!
//! | Code | Meaning |
//! |------|---------|
//! | 0 | every invariant held and every expectation was met |
//! | 1 | an invariant was broken or an expectation was not met |
//! | 2 | the scenario cannot be read or played, or the arguments are wrong |

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use nbv_testkit::scenario::{MAX_SCENARIO_BYTES, Scenario};

use crate::simulate::{self, Options, SEED_SCENARIO};

/// Flags of `nbv simulate`.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::simulate::SimulateArgs;
///
/// let args = SimulateArgs { random: Some(3), seed: 1, ..SimulateArgs::default() };
/// assert!(args.scenario.is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Args)]
pub struct SimulateArgs {
    /// The scenario file; without one, the built-in end-to-end scenario of ADR-049.
    pub scenario: Option<PathBuf>,
    /// Print one JSON object instead of the timeline.
    #[arg(long)]
    pub json: bool,
    /// Generate and run this many random scenarios, checking the invariants after
    /// each; prints `{"cases", "violations", "first_violation", ...}` (and how far it
    /// is on standard error every 1000 cases).
    #[arg(long, value_name = "N", conflicts_with = "scenario")]
    pub random: Option<u32>,
    /// Seed of the random scenarios (and of the backoff jitter).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// With `--random N`: run only case K (from 0) of those N, as listed in `failed`,
    /// and print its scenario in `first_violation` when it breaks an invariant.
    #[arg(long, value_name = "K", requires = "random")]
    pub case: Option<u32>,
}

/// Reads at most one byte more than a scenario may have, so that an oversized file is
/// refused by [`Scenario::from_yaml`] without being read whole.
fn read_bounded(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let limit = u64::try_from(MAX_SCENARIO_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// Runs `nbv simulate`, writing the report to `out` and problems to `err`; returns the
/// exit code.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::simulate::{SimulateArgs, run};
///
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// let code = run(&SimulateArgs { json: true, ..SimulateArgs::default() }, &mut out, &mut err);
/// assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
/// let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
/// assert_eq!(report["scenario"], "seed-end-to-end");
/// ```
pub fn run(args: &SimulateArgs, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let options = Options {
        seed: args.seed,
        ..Options::default()
    };
    if let Some(cases) = args.random {
        let summary = match args.case {
            Some(case) if case >= cases => {
                let _ = writeln!(
                    err,
                    "error: --case {case} is not one of the {cases} cases (0 to {})",
                    cases.saturating_sub(1)
                );
                return 2;
            }
            Some(case) => simulate::run_one_case(args.seed, case, &options),
            // A long run says how far it is, so one that is stopped still tells.
            None => simulate::run_random_reporting(
                cases,
                args.seed,
                &options,
                simulate::PROGRESS_EVERY,
                &mut |p| {
                    let _ = writeln!(
                        err,
                        "simulate: {}/{cases} cases played, {} failed",
                        p.played, p.failed
                    );
                },
            ),
        };
        let _ = writeln!(out, "{}", summary.to_json());
        return u8::from(summary.violations > 0);
    }
    let (source, text) = match &args.scenario {
        None => ("the built-in scenario".to_owned(), SEED_SCENARIO.to_owned()),
        Some(path) => match read_bounded(path) {
            Ok(text) => (path.display().to_string(), text),
            Err(e) => {
                let _ = writeln!(err, "error: cannot read {}: {e}", path.display());
                return 2;
            }
        },
    };
    let scenario = match Scenario::from_yaml(&text) {
        Ok(scenario) => scenario,
        Err(e) => {
            let _ = writeln!(err, "error: {source} is not a valid scenario: {e}");
            return 2;
        }
    };
    let report = match simulate::run(&scenario, &options) {
        Ok(report) => report,
        Err(e) => {
            let _ = writeln!(err, "error: {source}: {e}");
            return 2;
        }
    };
    if args.json {
        let _ = writeln!(out, "{}", report.to_json());
    } else {
        let _ = write!(out, "{}", report.render());
    }
    u8::from(!report.passed())
}
