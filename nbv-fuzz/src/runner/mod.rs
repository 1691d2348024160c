//! The stable-toolchain fuzzer: every target over its seeds, then over inputs mutated
//! from them, for a time budget, each input under a time and a memory limit.
//!
//! It has no coverage guidance (that needs the nightly toolchain's instrumentation:
//! `fuzz/` runs the same targets under libFuzzer). What guides it instead: the
//! target's dictionary of syntax tokens, splices between inputs, and a pool that
//! keeps inputs the parser accepted, so that mutations start from valid syntax more
//! often than random bytes would.
//!
//! A finding (a panic, an input over the time limit, over the memory limit) is
//! printed with the input and saved to `<artifacts>/<target>/`, from where
//! `nbv-fuzz --replay FILE` runs it again.

mod limits;
mod mutate;
mod rng;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use limits::{CountingAllocator, Limits, allocator_installed, live_bytes};
pub use mutate::Mutator;
pub use rng::Rng;

use crate::{Outcome, Target};

/// Inputs the pool keeps at most, besides the seeds.
const MAX_POOL: usize = 2048;

/// What broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// The target panicked: an invariant broke, or the parser crashed.
    Panic(String),
    /// The input ran longer than the limit.
    Timeout {
        /// The limit.
        limit: Duration,
    },
    /// The input made the process hold more memory than the limit.
    Memory {
        /// Bytes live when the limit was crossed.
        live: usize,
        /// The limit.
        limit: usize,
    },
}

impl FindingKind {
    fn slug(&self) -> &'static str {
        match self {
            FindingKind::Panic(_) => "crash",
            FindingKind::Timeout { .. } => "timeout",
            FindingKind::Memory { .. } => "oom",
        }
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindingKind::Panic(message) => write!(f, "panic: {message}"),
            FindingKind::Timeout { limit } => {
                write!(f, "one input ran longer than the limit of {limit:?}")
            }
            FindingKind::Memory { live, limit } => write!(
                f,
                "{live} bytes live, over the memory limit of {limit} bytes"
            ),
        }
    }
}

/// An input that broke a target, and where it was saved.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The target's name.
    pub target: &'static str,
    /// What broke.
    pub kind: FindingKind,
    /// The input.
    pub input: Vec<u8>,
    /// The file it was saved to, if saving worked.
    pub saved: Option<PathBuf>,
}

impl Finding {
    /// Saves the input under `artifacts/<target>/<kind>-<hash>`.
    pub fn save(mut self, artifacts: &Path) -> Finding {
        let dir = artifacts.join(self.target);
        let file = dir.join(format!("{}-{:016x}", self.kind.slug(), fnv(&self.input)));
        match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, &self.input)) {
            Ok(()) => self.saved = Some(file),
            Err(error) => eprintln!("nbv-fuzz: cannot save {}: {error}", file.display()),
        }
        self
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 4096;
        let shown = &self.input[..self.input.len().min(SHOWN)];
        writeln!(f, "nbv-fuzz: target {} failed: {}", self.target, self.kind)?;
        writeln!(
            f,
            "input ({} bytes{}): \"{}\"",
            self.input.len(),
            if self.input.len() > SHOWN {
                ", start shown"
            } else {
                ""
            },
            shown.escape_ascii()
        )?;
        match &self.saved {
            Some(file) => write!(
                f,
                "saved to {}; replay: nbv-fuzz --target {} --replay {}",
                file.display(),
                self.target,
                file.display()
            ),
            None => write!(f, "not saved"),
        }
    }
}

/// FNV-1a, to name a saved input by its content.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where findings go unless told otherwise: `fuzz/artifacts/`, beside cargo-fuzz's.
pub fn default_artifacts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/artifacts")
}

/// The seed inputs of `target`, from `nbv-fuzz/seeds/<target>/`, in name order.
pub fn seeds(target: &Target) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target.name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .filter_map(|file| std::fs::read(file).ok())
        .collect()
}

/// The last panic's message and place, recorded by the hook `run_one` installs.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is running a target: its panics are findings, reported by
    /// the runner, not printed by the hook.
    static IN_TARGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn record_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_TARGET.with(std::cell::Cell::get) {
                return previous(info);
            }
            let message = match info.payload().downcast_ref::<&str>() {
                Some(text) => (*text).to_owned(),
                None => info
                    .payload()
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_default(),
            };
            let place = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{message}{place}"));
        }));
    });
}

/// Runs `target` on `input` under `limits`. A panic is returned as a finding (saved
/// under `artifacts`); a broken time or memory limit ends the process after saving
/// and printing the input.
///
/// # Errors
///
/// The finding, when the target panics.
pub fn run_one(
    target: &Target,
    input: &[u8],
    limits: &Limits,
    artifacts: &Path,
) -> Result<Outcome, Finding> {
    record_panics();
    // The limits and the panic record are the process's: one input at a time.
    static RUNNING: Mutex<()> = Mutex::new(());
    let _running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let result = limits::limited(target.name, input, limits, artifacts, || {
        IN_TARGET.with(|flag| flag.set(true));
        let result = catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
        IN_TARGET.with(|flag| flag.set(false));
        result
    });
    result.map_err(|_| {
        let message = PANIC
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_default();
        Finding {
            target: target.name,
            kind: FindingKind::Panic(message),
            input: input.to_vec(),
            saved: None,
        }
        .save(artifacts)
    })
}

/// How a fuzzing run of one target went.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Inputs run, seeds included.
    pub runs: u64,
    /// Inputs the target read (accepted).
    pub read: u64,
    /// Inputs it refused.
    pub refused: u64,
    /// Inputs outside its domain.
    pub skipped: u64,
    /// Inputs in the pool at the end.
    pub pool: usize,
}

impl Stats {
    fn count(&mut self, outcome: Outcome) {
        self.runs += 1;
        match outcome {
            Outcome::Read => self.read += 1,
            Outcome::Refused => self.refused += 1,
            Outcome::Skipped => self.skipped += 1,
        }
    }
}

/// How long, or how many inputs, to fuzz a target for.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// Until this much time has passed.
    Time(Duration),
    /// This many mutated inputs (deterministic from the seed).
    Runs(u64),
}

/// Runs `target` over its seeds, then over mutated inputs until `budget` is spent,
/// deterministic from `seed` (up to where a time budget stops).
///
/// # Errors
///
/// The first finding.
pub fn fuzz(
    target: &Target,
    seed: u64,
    budget: Budget,
    limits: &Limits,
    artifacts: &Path,
) -> Result<Stats, Finding> {
    let mut stats = Stats::default();
    let mut pool = seeds(target);
    for input in &pool {
        stats.count(run_one(target, input, limits, artifacts)?);
    }
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let seeded = pool.len();
    let mut mutator = Mutator::new(
        seed ^ fnv(target.name.as_bytes()),
        target.dictionary,
        target.max_len,
    );
    let started = Instant::now();
    let mut mutated = 0u64;
    loop {
        let done = match budget {
            Budget::Time(time) => started.elapsed() >= time,
            Budget::Runs(runs) => mutated >= runs,
        };
        if done {
            break;
        }
        mutated += 1;
        let base = mutator.rng().below(pool.len());
        let input = mutator.mutate(&pool[base], &pool);
        let outcome = run_one(target, &input, limits, artifacts)?;
        stats.count(outcome);
        if outcome == Outcome::Read && input != pool[base] {
            if pool.len() < seeded + MAX_POOL {
                pool.push(input);
            } else if mutator.rng().one_in(4) {
                let replaced = seeded + mutator.rng().below(MAX_POOL);
                pool[replaced] = input;
            }
        }
    }
    stats.pool = pool.len();
    Ok(stats)
}
