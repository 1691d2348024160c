//! `spec.validationConfig` end to end: the validation Pod's script runs the notebook
//! with the probe under a real papermill, and nbv turns the findings into the job's
//! outcome, its `ValidationWarnings` condition and its Event. The jobs run
//! concurrently, in one scenario.

use nbv_core::api::{NotebookValidationJob, Phase};
use serde_json::{Value, json};

use crate::support::git::{GitServer, notebook};
use crate::support::kubelet::Kubelet;
use crate::support::{OperatorOptions, RUN, Scenario, eventually, job};

fn repository(git: &GitServer) -> String {
    let text = |cells: &[&str]| serde_json::to_string_pretty(&notebook(cells)).expect("json");
    git.repository(
        "checked",
        &[
            (
                "stderr.ipynb",
                text(&[
                    "x = 1",
                    "import sys\nprint('retrying the download', file=sys.stderr)",
                ]),
            ),
            (
                "frame.ipynb",
                text(&[
                    "import pandas as pd",
                    "pd.DataFrame({'a': [1, 2], 'b': [3, 4], 'c': [5, 6]})",
                ]),
            ),
            (
                "warns.ipynb",
                text(&[
                    "import warnings\nwarnings.warn('the default will change', FutureWarning)",
                    "assert 6 * 7 == 42",
                ]),
            ),
            (
                "silent.ipynb",
                text(&["scores = [0.9, float('nan')]", "sum(scores) / len(scores)"]),
            ),
        ],
    )
}

fn checked(name: &str, url: &str, path: &str, config: Value) -> Value {
    let mut job = job(name, url, "main", path, json!({}));
    job["spec"]["validationConfig"] = config;
    job
}

fn outcome(job: &NotebookValidationJob) -> (Option<Phase>, String, String) {
    let status = job.status.clone().unwrap_or_default();
    let ready = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready")
        .map(|c| c.reason.clone())
        .unwrap_or_default();
    (status.phase, ready, status.message.unwrap_or_default())
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn output_checks_fail_or_warn_as_the_level_says() {
    let s = Scenario::new("e2e-checks").await;
    let git = GitServer::start();
    let url = repository(&git);
    let _kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));

    for manifest in [
        checked(
            "stderr",
            &url,
            "stderr.ipynb",
            json!({"failOnStderr": true}),
        ),
        checked(
            "frame",
            &url,
            "frame.ipynb",
            json!({"expectedOutputs": [{"cell": 1, "type": "pandas.DataFrame", "shape": "-1,2"}]}),
        ),
        checked("warns", &url, "warns.ipynb", json!({"level": "learning"})),
        checked(
            "silent",
            &url,
            "silent.ipynb",
            json!({"level": "development"}),
        ),
    ] {
        s.apply(manifest).await;
    }

    let stderr = s.ended("stderr", RUN).await;
    let (phase, reason, message) = outcome(&stderr);
    assert_eq!(phase, Some(Phase::Failed), "{message}");
    assert_eq!(reason, "CheckFailed");
    assert!(
        message.contains("cell 1 wrote to stderr: retrying the download (stderr)"),
        "{message}"
    );
    assert_eq!(
        stderr.status.unwrap().retry_count.unwrap_or(0),
        0,
        "not retried"
    );

    let frame = s.ended("frame", RUN).await;
    let (phase, reason, message) = outcome(&frame);
    assert_eq!(phase, Some(Phase::Failed), "{message}");
    assert_eq!(reason, "CheckFailed");
    assert!(
        message.contains("cell 1: expected shape -1,2, got 2,3 (shape)"),
        "{message}"
    );

    let warns = s.ended("warns", RUN).await;
    let (phase, _, message) = outcome(&warns);
    assert_eq!(phase, Some(Phase::Succeeded), "{message}");
    let expected =
        "1 check warning: cell 0 raised FutureWarning: the default will change (warning)";
    assert!(message.contains(expected), "{message}");
    let condition = warns
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "ValidationWarnings").cloned())
        .expect("a ValidationWarnings condition");
    assert_eq!(condition.status, "True");
    assert_eq!(condition.reason, "CheckWarnings");
    assert_eq!(condition.message, expected);
    let events = eventually("the success Event", RUN, || async {
        let events = s.events("warns", "ValidationSucceeded").await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    let note = events[0].message.clone().unwrap_or_default();
    assert!(note.contains(expected), "{note}");

    let silent = s.ended("silent", RUN).await;
    let (phase, reason, message) = outcome(&silent);
    assert_eq!(phase, Some(Phase::Failed), "{message}");
    assert_eq!(reason, "CheckFailed");
    assert!(
        message.contains("cell 1: the value is NaN (nan)"),
        "{message}"
    );
}
