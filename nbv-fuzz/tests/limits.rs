//! The time and memory limits end the process with the input saved. A broken limit
//! exits, so each case runs in a child process: this test binary again, running the
//! ignored test `child` with `NBV_FUZZ_LIMIT_CASE` set.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use nbv_fuzz::runner::{self, CountingAllocator, Limits};
use nbv_fuzz::{Outcome, Target};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const CASE: &str = "NBV_FUZZ_LIMIT_CASE";
const ARTIFACTS: &str = "NBV_FUZZ_LIMIT_ARTIFACTS";

fn slow(_: &[u8]) -> Outcome {
    std::thread::sleep(Duration::from_secs(30));
    Outcome::Read
}

fn greedy(data: &[u8]) -> Outcome {
    let big = vec![data.len() as u8; 64 << 20];
    std::hint::black_box(&big);
    Outcome::Read
}

/// Runs in the child: the case's target on one input, which must not return.
#[test]
#[ignore = "run in a child process by the tests below"]
fn child() {
    let case = std::env::var(CASE).expect("NBV_FUZZ_LIMIT_CASE names the case");
    let artifacts = std::env::var(ARTIFACTS).expect("NBV_FUZZ_LIMIT_ARTIFACTS is set");
    let (run, limits): (fn(&[u8]) -> Outcome, Limits) = match case.as_str() {
        "time" => (
            slow,
            Limits {
                time: Duration::from_millis(200),
                ..Limits::default()
            },
        ),
        _ => (
            greedy,
            Limits {
                memory: 16 << 20,
                ..Limits::default()
            },
        ),
    };
    let target = Target {
        name: "limits",
        run,
        dictionary: &[],
        max_len: 8,
    };
    let _ = runner::run_one(&target, b"input", &limits, &PathBuf::from(artifacts));
    panic!("the {case} limit did not stop the input");
}

/// What a child left: its exit code, its stderr, and the files it saved (name and
/// content).
type Child = (Option<i32>, String, Vec<(String, Vec<u8>)>);

/// Runs `case` in a child process.
fn run_child(case: &str) -> Child {
    let artifacts =
        std::env::temp_dir().join(format!("nbv-fuzz-limits-{case}-{}", std::process::id()));
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "child", "--ignored", "--nocapture"])
        .env(CASE, case)
        .env(ARTIFACTS, &artifacts)
        .output()
        .expect("the child runs");
    let saved = std::fs::read_dir(artifacts.join("limits"))
        .map(|dir| {
            dir.filter_map(|entry| {
                let path = entry.ok()?.path();
                let name = path.file_name()?.to_string_lossy().into_owned();
                Some((name, std::fs::read(&path).ok()?))
            })
            .collect()
        })
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&artifacts);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr, saved)
}

#[test]
fn an_input_over_the_time_limit_fails_the_run_and_is_saved() {
    let (code, stderr, saved) = run_child("time");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("target limits failed: one input ran longer than the limit of 200ms"),
        "{stderr}"
    );
    assert!(stderr.contains("input (5 bytes): \"input\""), "{stderr}");
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(saved[0].0.starts_with("timeout-"), "{saved:?}");
    assert_eq!(saved[0].1, b"input");
}

#[test]
fn an_input_over_the_memory_limit_fails_the_run_and_is_saved() {
    let (code, stderr, saved) = run_child("memory");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("over the memory limit of 16777216 bytes"),
        "{stderr}"
    );
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(saved[0].0.starts_with("oom-"), "{saved:?}");
    assert_eq!(saved[0].1, b"input");
}
