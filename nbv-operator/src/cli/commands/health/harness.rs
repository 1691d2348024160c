//! `nbv health test`: run health check suites in Argo CD's format (see [`suite`]) and
//! report what fails.
//!
//! Each test runs the suite's `health.lua` on its input in a fresh VM and compares the
//! result with the expectation exactly, as Argo CD's `TestLuaHealthScript` does with
//! `assert.Equal(t, &test.HealthStatus, result)`; a script error fails the test, as
//! Argo CD's `errors.CheckError` does. By default the VM is Argo CD's test harness
//! (`VM{UseOpenLibs: true}`: standard libraries open), closed to the machine (`io`
//! and `os` beyond the clock fail) unless `--allow-host-access` opens them as Argo
//! CD's harness has them; `--production-sandbox` runs the
//! same tests as Argo CD's controller runs the script in a cluster, which is where a
//! script that uses `string.find` or a global `os` breaks.
//!
//! The script of each test is the one Argo CD would pick, as its own harness does: a
//! suite that sits where Argo CD's tree has one (`<DIR>/<group>/<Kind>/`, or
//! `<DIR>/<Kind>/` for the core group, under a directory given on the command line)
//! runs each input with the check Argo CD would run on it, looked up by the input's
//! group and kind in that tree, an exact `group/Kind` before a wildcard directory (see
//! [`customizations`]). An input of a kind no directory matches, and any input of a
//! suite elsewhere (a variant in a subdirectory, a suite given directly), runs the
//! `health.lua` next to its `health_test.yaml`, so that inputs of any kind can test
//! any script.
//!
//! Problems with a suite itself (no `health.lua`, a `health_test.yaml` that is not in
//! the format, a directory that holds no suite) count as one failure each and never
//! stop the other suites; a missing or unreadable input fails its own test.
//!
//! [`suite`]: super::suite
//! [`customizations`]: super::customizations

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use nbv_core::health::{HealthScript, HealthStatus};
use nbv_lua::{EvalOptions, HealthScriptError, LuaHealthRunner, Sandbox};

use super::customizations::Customizations;
use super::suite::{ExpectedHealth, SCRIPT_FILE, Suite};
use super::{SuiteError, TestCli, discovery, health_json, input};

/// What `nbv health test` does.
///
/// # Examples
///
/// ```
/// use nbv_lua::Sandbox;
/// use nbv_operator::cli::commands::health::harness::TestArgs;
/// use nbv_operator::cli::commands::health::{SandboxFlags, TestCli};
///
/// let args = TestArgs::from(TestCli {
///     dirs: vec!["suites".into()],
///     sandbox: SandboxFlags::default(),
///     allow_host_access: false,
/// });
/// assert_eq!(args.options.sandbox, Sandbox::TestHarness);
/// assert!(!args.options.host_access);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestArgs {
    /// Directories searched recursively for suites.
    pub dirs: Vec<PathBuf>,
    /// The sandbox and limits of the Lua VM.
    pub options: EvalOptions,
}

impl From<TestCli> for TestArgs {
    fn from(cli: TestCli) -> Self {
        TestArgs {
            dirs: cli.dirs,
            options: EvalOptions {
                // Argo CD's own suites run with the standard libraries open; what
                // reaches this machine only when asked for.
                sandbox: cli.sandbox.or(Sandbox::TestHarness),
                host_access: cli.allow_host_access,
                ..EvalOptions::default()
            },
        }
    }
}

/// Why one test failed.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatus, HealthStatusCode};
/// use nbv_operator::cli::commands::health::harness::Failure;
/// use nbv_operator::cli::commands::health::suite::ExpectedHealth;
///
/// let failure = Failure::Mismatch {
///     suite: "suites/batch/Job".into(),
///     input: "testdata/failed.yaml".into(),
///     expected: ExpectedHealth { status: "Degraded".into(), message: "BackoffLimitExceeded".into() },
///     got: Some(HealthStatus::new(HealthStatusCode::Progressing, "1 active pod")),
/// };
/// assert_eq!(
///     failure.to_string(),
///     "FAIL suites/batch/Job: testdata/failed.yaml\n\
///      \x20 expected: {\"status\":\"Degraded\",\"message\":\"BackoffLimitExceeded\"}\n\
///      \x20 got:      {\"status\":\"Progressing\",\"message\":\"1 active pod\"}"
/// );
/// ```
#[derive(Debug)]
pub enum Failure {
    /// The script returned another health than expected.
    Mismatch {
        /// The suite's directory.
        suite: PathBuf,
        /// The test's `inputPath`, as written.
        input: String,
        /// What the test expects.
        expected: ExpectedHealth,
        /// What the script returned (`None`: the empty health).
        got: Option<HealthStatus>,
    },
    /// The script failed on the input (a Lua error, a stopped script, a result Argo CD
    /// cannot read).
    Script {
        /// The suite's directory.
        suite: PathBuf,
        /// The test's `inputPath`, as written.
        input: String,
        /// What the test expects.
        expected: ExpectedHealth,
        /// The error.
        error: HealthScriptError,
    },
    /// The input cannot be read.
    Input {
        /// The suite's directory.
        suite: PathBuf,
        /// The test's `inputPath`, as written.
        input: String,
        /// The error, naming the file.
        error: SuiteError,
    },
    /// The suite (or a directory given) cannot be run at all.
    Suite {
        /// The suite's directory, or the directory searched.
        suite: PathBuf,
        /// The error, naming the file.
        error: SuiteError,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Mismatch {
                suite,
                input,
                expected,
                got,
            } => write!(
                f,
                "FAIL {}: {input}\n  expected: {}\n  got:      {}",
                suite.display(),
                expected.to_json(),
                health_json(got.as_ref())
            ),
            Failure::Script {
                suite,
                input,
                expected,
                error,
            } => write!(
                f,
                "FAIL {}: {input}\n  expected: {}\n  error:    {error}",
                suite.display(),
                expected.to_json()
            ),
            Failure::Input {
                suite,
                input,
                error,
            } => write!(f, "FAIL {}: {input}\n  error:    {error}", suite.display()),
            Failure::Suite { suite, error } => {
                write!(f, "FAIL {}\n  error:    {error}", suite.display())
            }
        }
    }
}

/// The outcome of a run.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::harness::Report;
///
/// let report = Report { passed: 41, failures: Vec::new() };
/// assert_eq!(report.summary(), "41 passed, 0 failed");
/// assert!(report.all_passed());
/// ```
#[derive(Debug, Default)]
pub struct Report {
    /// How many tests passed.
    pub passed: usize,
    /// Every failure, in the order the suites and their tests were run.
    pub failures: Vec<Failure>,
}

impl Report {
    /// How many tests (or suites that cannot run) failed.
    pub fn failed(&self) -> usize {
        self.failures.len()
    }

    /// Whether nothing failed.
    pub fn all_passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The closing line: `N passed, N failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed())
    }
}

/// Runs every suite found under `args.dirs`.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use nbv_lua::EvalOptions;
/// use nbv_operator::cli::commands::health::harness::{TestArgs, run_suites};
///
/// let dirs = vec![PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/health"))];
/// let report = run_suites(&TestArgs { dirs, options: EvalOptions::default() });
/// assert!(report.all_passed(), "{:?}", report.failures);
/// assert!(report.passed > 10);
/// ```
pub fn run_suites(args: &TestArgs) -> Report {
    let runner = LuaHealthRunner::new(args.options.clone());
    let mut report = Report::default();
    for dir in &args.dirs {
        let (suites, problems) = discovery::find_suites(dir);
        report
            .failures
            .extend(problems.into_iter().map(|error| Failure::Suite {
                suite: dir.clone(),
                error,
            }));
        let mut tree = Tree {
            customizations: Customizations::scan(dir),
            scripts: BTreeMap::new(),
        };
        for suite_dir in suites {
            match Suite::load(&suite_dir) {
                Ok(suite) => {
                    // Only a suite at a `<group>/<Kind>` (or core `<Kind>`) position is
                    // one Argo CD's own harness would look scripts up for.
                    let depth = suite_dir
                        .strip_prefix(dir)
                        .map_or(0, |p| p.components().count());
                    let resolve = (1..=2).contains(&depth);
                    run_suite(&runner, &suite, resolve.then_some(&mut tree), &mut report);
                }
                Err(error) => report.failures.push(Failure::Suite {
                    suite: suite_dir,
                    error,
                }),
            }
        }
    }
    report
}

/// The checks of a directory given on the command line, and the scripts read so far.
struct Tree {
    customizations: Customizations,
    scripts: BTreeMap<PathBuf, String>,
}

impl Tree {
    /// The script Argo CD would run on `object`, when it is another suite's: its path
    /// and text.
    fn script_for(
        &mut self,
        suite: &Suite,
        object: &serde_json::Value,
    ) -> Option<Result<(PathBuf, &str), SuiteError>> {
        let dir = self.customizations.script_dir(object)?;
        if same_dir(dir, &suite.dir) {
            return None;
        }
        let path = dir.join(SCRIPT_FILE);
        if !self.scripts.contains_key(&path) {
            match input::read_file(&path) {
                Ok(text) => {
                    self.scripts.insert(path.clone(), text);
                }
                Err(error) => return Some(Err(error.into())),
            }
        }
        self.scripts
            .get(&path)
            .map(|text| Ok((path, text.as_str())))
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

fn run_suite(
    runner: &LuaHealthRunner,
    suite: &Suite,
    mut tree: Option<&mut Tree>,
    report: &mut Report,
) {
    let own_name = suite.dir.join(SCRIPT_FILE).display().to_string();
    for case in &suite.tests {
        let object = match suite.input(case) {
            Ok(object) => object,
            Err(error) => {
                report.failures.push(Failure::Input {
                    suite: suite.dir.clone(),
                    input: case.input_path.clone(),
                    error,
                });
                continue;
            }
        };
        let resolved = tree
            .as_deref_mut()
            .and_then(|tree| tree.script_for(suite, &object));
        let (name, source) = match &resolved {
            None => (own_name.clone(), suite.script.as_str()),
            Some(Ok((path, source))) => (path.display().to_string(), *source),
            Some(Err(_)) => {
                if let Some(Err(error)) = resolved {
                    report.failures.push(Failure::Input {
                        suite: suite.dir.clone(),
                        input: case.input_path.clone(),
                        error,
                    });
                }
                continue;
            }
        };
        let script = HealthScript::new(&name, source);
        match runner.evaluate(&script, &object) {
            Ok(got) if case.health_status.matches(got.as_ref()) => report.passed += 1,
            Ok(got) => report.failures.push(Failure::Mismatch {
                suite: suite.dir.clone(),
                input: case.input_path.clone(),
                expected: case.health_status.clone(),
                got,
            }),
            Err(error) => report.failures.push(Failure::Script {
                suite: suite.dir.clone(),
                input: case.input_path.clone(),
                expected: case.health_status.clone(),
                error,
            }),
        }
    }
}

/// Runs the suites, prints each failure and then the line `N passed, N failed` to
/// `out`. Returns 0 when every test passed, 1 otherwise.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use nbv_lua::EvalOptions;
/// use nbv_operator::cli::commands::health::harness::{TestArgs, run};
///
/// let dirs = vec![PathBuf::from("/nonexistent/suites")];
/// let mut out = Vec::new();
/// assert_eq!(run(&TestArgs { dirs, options: EvalOptions::default() }, &mut out), 1);
/// let out = String::from_utf8(out)?;
/// assert!(out.starts_with("FAIL /nonexistent/suites\n  error:    cannot list /nonexistent/suites: "));
/// assert!(out.ends_with("\n0 passed, 1 failed\n"));
/// # Ok::<(), std::string::FromUtf8Error>(())
/// ```
pub fn run(args: &TestArgs, out: &mut impl Write) -> u8 {
    let report = run_suites(args);
    let mut written = Ok(());
    for failure in &report.failures {
        written = written.and_then(|()| writeln!(out, "{failure}"));
    }
    written = written.and_then(|()| writeln!(out, "{}", report.summary()));
    if written.is_ok() && report.all_passed() {
        0
    } else {
        1
    }
}
