//! `nbv-fuzz`: the fuzz targets on the stable toolchain (see fuzz/README.md).
//!
//! ```text
//! nbv-fuzz [--seconds N] [--runs N] [--seed N] [--time-limit-ms N]
//!          [--memory-limit-mb N] [--artifacts DIR] [--target NAME]...
//! nbv-fuzz --replay FILE [--target NAME]
//! nbv-fuzz --list
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use nbv_fuzz::runner::{self, Budget, CountingAllocator, Limits};
use nbv_fuzz::{TARGETS, Target};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const USAGE: &str = "usage:
  nbv-fuzz [--seconds N] [--runs N] [--seed N] [--time-limit-ms N]
           [--memory-limit-mb N] [--artifacts DIR] [--target NAME]...
      fuzz every target (or those named) for N seconds each (default 10), or for N
      mutated inputs each; inputs are deterministic from the seed (default 1)
  nbv-fuzz --replay FILE [--target NAME]
      run one saved input again (the target defaults to the name of FILE's directory)
  nbv-fuzz --list
      the targets";

struct Options {
    budget: Budget,
    seed: u64,
    limits: Limits,
    artifacts: PathBuf,
    targets: Vec<&'static Target>,
    replay: Option<PathBuf>,
    list: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        budget: Budget::Time(Duration::from_secs(10)),
        seed: 1,
        limits: Limits::default(),
        artifacts: runner::default_artifacts(),
        targets: Vec::new(),
        replay: None,
        list: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let number = |name: &str, text: String| {
            text.parse::<u64>()
                .map_err(|_| format!("{name} {text:?} is not a whole number"))
        };
        match arg.as_str() {
            "--seconds" => {
                let seconds = number(arg, value(arg)?)?;
                options.budget = Budget::Time(Duration::from_secs(seconds));
            }
            "--runs" => options.budget = Budget::Runs(number(arg, value(arg)?)?),
            "--seed" => options.seed = number(arg, value(arg)?)?,
            "--time-limit-ms" => {
                options.limits.time = Duration::from_millis(number(arg, value(arg)?)?);
            }
            "--memory-limit-mb" => {
                options.limits.memory = (number(arg, value(arg)?)? as usize) << 20;
            }
            "--artifacts" => options.artifacts = PathBuf::from(value(arg)?),
            "--target" => {
                let name = value(arg)?;
                let target = nbv_fuzz::target(&name)
                    .ok_or_else(|| format!("no target {name:?}; `nbv-fuzz --list` lists them"))?;
                options.targets.push(target);
            }
            "--replay" => options.replay = Some(PathBuf::from(value(arg)?)),
            "--list" => options.list = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn replay(file: &PathBuf, targets: &[&'static Target], limits: &Limits) -> ExitCode {
    let target = match targets {
        [target] => *target,
        [] => {
            let dir = file
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|d| d.to_str())
                .unwrap_or_default();
            match nbv_fuzz::target(dir) {
                Some(target) => target,
                None => {
                    eprintln!("name the target of {} with --target", file.display());
                    return ExitCode::from(2);
                }
            }
        }
        _ => {
            eprintln!("--replay runs one target");
            return ExitCode::from(2);
        }
    };
    let input = match std::fs::read(file) {
        Ok(input) => input,
        Err(error) => {
            eprintln!("cannot read {}: {error}", file.display());
            return ExitCode::from(2);
        }
    };
    // A replay saves nothing new: its findings go to a scratch directory.
    let scratch = std::env::temp_dir().join("nbv-fuzz-replay");
    match runner::run_one(target, &input, limits, &scratch) {
        Ok(outcome) => {
            println!("{}: {outcome:?}, every invariant held", target.name);
            ExitCode::SUCCESS
        }
        Err(finding) => {
            eprintln!("{finding}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let options = match parse(&args) {
        Ok(options) => options,
        Err(problem) => {
            if !problem.is_empty() {
                eprintln!("nbv-fuzz: {problem}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if options.list {
        for target in TARGETS {
            println!("{}", target.name);
        }
        return ExitCode::SUCCESS;
    }
    if !runner::allocator_installed() {
        eprintln!("nbv-fuzz: the counting allocator is not installed; no memory limit");
        return ExitCode::FAILURE;
    }
    if let Some(file) = &options.replay {
        return replay(file, &options.targets, &options.limits);
    }
    let targets: Vec<&Target> = if options.targets.is_empty() {
        TARGETS.iter().collect()
    } else {
        options.targets
    };
    println!(
        "nbv-fuzz: {} targets, seed {}, {:?} each, limits {:?} and {} MiB per input \
         (mutation-based, no coverage guidance)",
        targets.len(),
        options.seed,
        options.budget,
        options.limits.time,
        options.limits.memory >> 20
    );
    let mut failed = false;
    for target in targets {
        let started = Instant::now();
        match runner::fuzz(
            target,
            options.seed,
            options.budget,
            &options.limits,
            &options.artifacts,
        ) {
            Ok(stats) => println!(
                "{:<20} ok: {} inputs in {:.1}s ({} read, {} refused, {} skipped; pool {})",
                target.name,
                stats.runs,
                started.elapsed().as_secs_f64(),
                stats.read,
                stats.refused,
                stats.skipped,
                stats.pool
            ),
            Err(finding) => {
                eprintln!("{finding}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
