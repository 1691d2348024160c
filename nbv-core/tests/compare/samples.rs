//! nbval's own sample notebooks (`tests/ipynb-test-samples` of its sdist, each named
//! `test-<what>-pass-…` or `test-<what>-fail-…` for the verdict nbval reaches on it),
//! re-executed by a real papermill and compared with themselves as golden: nbv reaches
//! nbval's verdict on each.

use std::path::{Path, PathBuf};
use std::process::Command;

use nbv_core::compare::{ComparisonReport, compare};

use super::*;

/// The directory an environment variable names; panics saying how to get it.
fn required_dir(name: &str, what: &str) -> PathBuf {
    let Some(value) = std::env::var_os(name) else {
        panic!(
            "{name} is not set: run `scripts/control-plane install`, then set {name} to \
             {what} (see .ci/run)"
        );
    };
    PathBuf::from(value)
}

/// The settings that compare as nbval compares by default: text byte for byte (nbval
/// sanitizes nothing unless told to), PNG and JPEG images left out (nbval skips them
/// unless it runs with nbdime), execution counts not compared.
fn nbval_settings() -> Settings {
    let config = ComparisonConfig {
        strategy: Some(ComparisonStrategy::Exact),
        ignore_output_types: Some(vec!["image/png".into(), "image/jpeg".into()]),
        ignore_execution_count: Some(true),
        ..ComparisonConfig::default()
    };
    Settings::resolve(Some(&config), None).expect("valid settings")
}

/// What running one sample gave.
struct Verdict {
    name: String,
    expected_pass: bool,
    papermill_ok: bool,
    report: ComparisonReport,
}

impl Verdict {
    /// nbv's verdict agrees with nbval's: a passing sample runs through and matches; a
    /// failing one is failed by the comparison itself (not only by the run).
    fn agrees(&self) -> bool {
        if self.expected_pass {
            self.papermill_ok && self.report.matched()
        } else {
            !self.report.matched()
        }
    }
}

fn run_sample(python: &Path, sample: &Path, work: &Path) -> Verdict {
    let name = sample
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a UTF-8 file name")
        .to_owned();
    let expected_pass = match name.split('-').nth(2) {
        Some("pass") => true,
        Some("fail") => false,
        other => panic!("{name}: the verdict part of the name is {other:?}, not pass or fail"),
    };
    let output = work.join(&name);
    let run = Command::new(python)
        .args(["-m", "papermill", "--no-progress-bar"])
        .arg(sample)
        .arg(&output)
        .current_dir(work)
        .output()
        .expect("python runs");
    assert!(
        output.is_file(),
        "{name}: papermill wrote no notebook: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let read = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("JSON")
    };
    let report = compare(&read(&output), &read(sample), &nbval_settings());
    Verdict {
        name,
        expected_pass,
        papermill_ok: run.status.success(),
        report,
    }
}

#[test]
#[ignore = "needs papermill and nbval's samples: scripts/control-plane install"]
fn nbv_reaches_nbvals_verdict_on_nbvals_samples() {
    let python = required_dir("NBV_E2E_PYTHON", "the papermill virtualenv's python");
    let samples = required_dir("NBV_NBVAL_SAMPLES", "/var/cache/nbv/nbval-samples");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&samples)
        .unwrap_or_else(|e| panic!("{}: {e}", samples.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| {
            path.extension().is_some_and(|e| e == "ipynb")
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("test-"))
        })
        .collect();
    paths.sort();
    assert!(
        paths.len() >= 6,
        "{} holds {} samples, nbval 0.11.0 has 6",
        samples.display(),
        paths.len()
    );
    let work = std::env::temp_dir().join(format!("nbv-nbval-samples-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a work directory");
    let verdicts: Vec<Verdict> = paths
        .iter()
        .map(|p| run_sample(&python, p, &work))
        .collect();
    let _ = std::fs::remove_dir_all(&work);
    let table: Vec<String> = verdicts
        .iter()
        .map(|v| {
            format!(
                "{} {}: papermill {}, comparison {} ({})",
                if v.agrees() { "ok  " } else { "DIFF" },
                v.name,
                if v.papermill_ok {
                    "ran through"
                } else {
                    "failed"
                },
                if v.report.matched() {
                    "matched"
                } else {
                    "failed"
                },
                v.report
                    .differences
                    .first()
                    .map_or_else(String::new, |d| format!("cell {}: {}", d.cell, d.detail)),
            )
        })
        .collect();
    println!("{}", table.join("\n"));
    assert!(
        verdicts.iter().all(Verdict::agrees),
        "nbv's verdict differs from nbval's:\n{}",
        table.join("\n")
    );
}
