//! nbval's own sample notebooks as NotebookValidationJobs: each sample (named
//! `test-<what>-pass-…` or `test-<what>-fail-…` for the verdict nbval reaches on it) is
//! run with itself as golden notebook, compared as nbval compares by default, and the
//! job's verdict is nbval's.
//!
//! The samples come from nbval's sdist, which `scripts/control-plane install` caches
//! and unpacks (`NBV_NBVAL_SAMPLES`); asked for without it, the scenario fails naming
//! it.

use std::path::PathBuf;

use nbv_core::api::Phase;
use serde_json::json;

use crate::support::git::GitServer;
use crate::support::kubelet::Kubelet;
use crate::support::{OperatorOptions, RUN, Scenario, job, message, phase};

/// The samples: (file name, whether nbval passes it, its text).
fn samples() -> Vec<(String, bool, String)> {
    let dir = std::env::var_os("NBV_NBVAL_SAMPLES")
        .map(PathBuf::from)
        .expect(
            "the nbval scenario needs NBV_NBVAL_SAMPLES, the directory scripts/control-plane \
         install unpacks nbval's samples into (/var/cache/nbv/nbval-samples)",
        );
    let mut samples: Vec<(String, bool, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("NBV_NBVAL_SAMPLES={}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_owned();
            let verdict = name.strip_suffix(".ipynb")?.split('-').nth(2)?;
            if !name.starts_with("test-") {
                return None;
            }
            let pass = match verdict {
                "pass" => true,
                "fail" => false,
                other => panic!("{name}: verdict {other:?} is neither pass nor fail"),
            };
            Some((
                name,
                pass,
                std::fs::read_to_string(&path).expect("readable"),
            ))
        })
        .collect();
    samples.sort();
    assert!(
        samples.len() >= 6,
        "{} holds {} samples; nbval 0.11.0 has 6",
        dir.display(),
        samples.len()
    );
    samples
}

/// A job name for a sample file name.
fn job_name(file: &str) -> String {
    let stem = file.trim_end_matches(".ipynb").trim_start_matches("test-");
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("nbval-{name}").chars().take(63).collect()
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn nbvals_samples_get_nbvals_verdict() {
    let s = Scenario::new("e2e-nbval").await;
    let samples = samples();
    let git = GitServer::start();
    let files: Vec<(String, String)> = samples
        .iter()
        .map(|(name, _, text)| (format!("samples/{name}"), text.clone()))
        .collect();
    let files: Vec<(&str, String)> = files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
    let repository = git.repository("nbval", &files);
    let kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));

    for (name, _, _) in &samples {
        let path = format!("samples/{name}");
        let mut job = job(&job_name(name), &repository, "main", &path, json!({}));
        job["spec"]["goldenNotebook"] =
            json!({"git": {"url": repository, "ref": "main"}, "path": path});
        // nbval's defaults: texts exactly, PNG and JPEG left out, counts not compared.
        job["spec"]["comparisonConfig"] = json!({
            "strategy": "exact",
            "ignoreOutputTypes": ["image/png", "image/jpeg"],
            "ignoreExecutionCount": true,
        });
        s.apply(job).await;
    }

    let mut verdicts = Vec::new();
    for (name, pass, _) in &samples {
        let job = s.ended(&job_name(name), RUN).await;
        let comparison = job
            .status
            .as_ref()
            .and_then(|status| status.comparison_result.clone());
        let agrees = if *pass {
            phase(&job) == Some(Phase::Succeeded)
                && comparison.as_ref().is_some_and(|c| c.result == "matched")
        } else {
            // Failed, by the comparison or by the run (a cell that raised is not
            // compared), never by a comparison that matched.
            phase(&job) == Some(Phase::Failed)
                && comparison.as_ref().is_none_or(|c| c.result == "failed")
        };
        verdicts.push((
            agrees,
            format!(
                "{} {name} (nbval: {}): {:?}, comparison {}: {}",
                if agrees { "ok  " } else { "DIFF" },
                if *pass { "pass" } else { "fail" },
                phase(&job),
                comparison.as_ref().map_or("none", |c| c.result.as_str()),
                message(&job),
            ),
        ));
    }
    let table: Vec<&str> = verdicts.iter().map(|(_, line)| line.as_str()).collect();
    println!("{}", table.join("\n"));
    assert!(
        verdicts.iter().all(|(agrees, _)| *agrees),
        "nbv's verdict differs from nbval's:\n{}",
        table.join("\n")
    );
    drop(kubelet);
    s.clean_up().await;
}
