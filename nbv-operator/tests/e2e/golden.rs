//! The comparison with a golden notebook, end to end: the validation Pod clones the
//! golden notebook (from the notebook's checkout, or from its own repository in a
//! second init container), papermill runs the notebook, the Pod's script compares, and
//! nbv reads the outcome into `status.comparisonResult` and the phase.

use nbv_core::api::Phase;
use serde_json::{Value, json};

use crate::support::git::{GitServer, notebook};
use crate::support::kubelet::Kubelet;
use crate::support::{OperatorOptions, RUN, Scenario, job, message, phase};

/// What the notebook `metrics.ipynb` prints, cell by cell: a metric, a timestamp, and a
/// float whose last digits are noise.
const METRICS: [&str; 3] = [
    "print('accuracy', 0.9312)",
    "import datetime\nprint('finished at', datetime.datetime.now())",
    "0.1 + 0.2",
];

/// `metrics.ipynb` as a golden run left it: `accuracy` is the golden's value, the
/// timestamp another day's.
fn golden(accuracy: &str) -> String {
    let mut notebook = notebook(&METRICS);
    let outputs = [
        json!([{"output_type": "stream", "name": "stdout", "text": [format!("accuracy {accuracy}\n")]}]),
        json!([{"output_type": "stream", "name": "stdout", "text": ["finished at 2026-01-24 22:30:05.123456\n"]}]),
        json!([{"output_type": "execute_result", "execution_count": 3, "metadata": {},
                "data": {"text/plain": ["0.30000000000000004"]}}]),
    ];
    for (count, (cell, outputs)) in notebook["cells"]
        .as_array_mut()
        .expect("cells")
        .iter_mut()
        .zip(outputs)
        .enumerate()
    {
        cell["outputs"] = outputs;
        cell["execution_count"] = json!(count + 1);
    }
    serde_json::to_string_pretty(&notebook).expect("json")
}

fn with_golden(mut job: Value, url: &str, path: &str, comparison: Value) -> Value {
    job["spec"]["goldenNotebook"] = json!({"git": {"url": url, "ref": "main"}, "path": path});
    if !comparison.is_null() {
        job["spec"]["comparisonConfig"] = comparison;
    }
    job
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn outputs_are_compared_with_the_golden_notebook() {
    let s = Scenario::new("e2e-golden").await;
    let git = GitServer::start();
    let hello = notebook(&["print('Hello, world!')"]);
    let mut hello_golden = hello.clone();
    hello_golden["cells"][0]["outputs"] =
        json!([{"output_type": "stream", "name": "stdout", "text": ["Hello, world!\n"]}]);
    let models = git.repository(
        "models",
        &[
            (
                "metrics.ipynb",
                serde_json::to_string_pretty(&notebook(&METRICS)).expect("json"),
            ),
            ("golden/metrics.ipynb", golden("0.9312")),
            // Noise: 0.93121 is within the default relative tolerance (1e-4) of 0.9312.
            ("golden/metrics-noisy.ipynb", golden("0.93121")),
            (
                "notebooks/tier1-simple/01-hello-world.ipynb",
                serde_json::to_string_pretty(&hello).expect("json"),
            ),
            (
                "notebooks/tier1-simple/01-hello-world-golden.ipynb",
                serde_json::to_string_pretty(&hello_golden).expect("json"),
            ),
        ],
    );
    // A golden notebook in a repository of its own: the Pod clones it separately.
    let goldens = git.repository("goldens", &[("metrics.ipynb", golden("0.95"))]);
    let kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));

    let base = |name| job(name, &models, "main", "metrics.ipynb", json!({}));
    let jobs = [
        (
            "matched",
            with_golden(
                base("matched"),
                &models,
                "golden/metrics.ipynb",
                Value::Null,
            ),
        ),
        (
            "drifted",
            with_golden(base("drifted"), &goldens, "metrics.ipynb", Value::Null),
        ),
        (
            "noise-within",
            with_golden(
                base("noise-within"),
                &models,
                "golden/metrics-noisy.ipynb",
                Value::Null,
            ),
        ),
        (
            "noise-beyond",
            with_golden(
                base("noise-beyond"),
                &models,
                "golden/metrics-noisy.ipynb",
                json!({"floatingPointTolerance": "0.000001"}),
            ),
        ),
        (
            "timestamps-kept",
            with_golden(
                base("timestamps-kept"),
                &models,
                "golden/metrics.ipynb",
                json!({"ignoreTimestamps": false}),
            ),
        ),
        (
            "golden-missing",
            with_golden(
                base("golden-missing"),
                &models,
                "golden/absent.ipynb",
                Value::Null,
            ),
        ),
    ];
    for (_, job) in &jobs {
        s.apply(job.clone()).await;
    }
    // The upstream golden sample, its URLs pointed at the suite's git daemon.
    let sample = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../nbv-core/tests/data/upstream/samples/mlops_v1alpha1_notebookvalidationjob_golden.yaml"
    ))
    .expect("the upstream golden sample");
    let mut sample: Value = serde_yaml_ng::from_str(&sample).expect("YAML");
    sample["metadata"]["namespace"] = json!(s.namespace);
    sample["metadata"]["name"] = json!("upstream-golden");
    for source in ["notebook", "goldenNotebook"] {
        sample["spec"][source]["git"]["url"] = json!(models);
    }
    sample["spec"]["podConfig"]["containerImage"] =
        json!("quay.io/jupyter/minimal-notebook:2026-01-05");
    s.apply(sample.clone()).await;
    // The same without the credentials the daemon does not need: it runs, compared
    // exactly as its annotation asks.
    sample["metadata"]["name"] = json!("upstream-golden-anonymous");
    for source in ["notebook", "goldenNotebook"] {
        sample["spec"][source]["git"]
            .as_object_mut()
            .expect("git")
            .remove("credentialsSecret");
    }
    s.apply(sample).await;

    let matched = s.ended("matched", RUN).await;
    assert_eq!(
        phase(&matched),
        Some(Phase::Succeeded),
        "{:?}",
        matched.status
    );
    let result = matched
        .status
        .as_ref()
        .unwrap()
        .comparison_result
        .clone()
        .expect("comparisonResult");
    assert_eq!(result.result, "matched", "{result:?}");
    assert_eq!(result.strategy, "normalized");
    assert_eq!(
        (
            result.total_cells,
            result.matched_cells,
            result.mismatched_cells
        ),
        (3, 3, 0)
    );
    assert!(
        message(&matched).contains("match the golden notebook"),
        "{}",
        message(&matched)
    );

    let drifted = s.ended("drifted", RUN).await;
    assert_eq!(phase(&drifted), Some(Phase::Failed), "{:?}", drifted.status);
    let text = message(&drifted);
    assert!(text.contains("cell 0") && text.contains("0.95"), "{text}");
    let status = drifted.status.as_ref().unwrap();
    assert_eq!(
        status.retry_count.unwrap_or(0),
        0,
        "a mismatch is not retried"
    );
    let result = status.comparison_result.clone().expect("comparisonResult");
    assert_eq!(result.result, "failed");
    let diffs = result.diffs.unwrap_or_default();
    assert_eq!(diffs[0].cell_index, 0, "{diffs:?}");
    assert_eq!(diffs[0].diff_type, "output_content");
    assert_eq!(s.events("drifted", "ValidationFailed").await.len(), 1);

    let within = s.ended("noise-within", RUN).await;
    assert_eq!(
        phase(&within),
        Some(Phase::Succeeded),
        "{:?}",
        within.status
    );
    let beyond = s.ended("noise-beyond", RUN).await;
    assert_eq!(phase(&beyond), Some(Phase::Failed), "{:?}", beyond.status);
    assert!(message(&beyond).contains("cell 0"), "{}", message(&beyond));

    // With timestamps compared, the finishing time differs: masking is what made
    // `matched` match.
    let kept = s.ended("timestamps-kept", RUN).await;
    assert_eq!(phase(&kept), Some(Phase::Failed), "{:?}", kept.status);
    assert!(message(&kept).contains("cell 1"), "{}", message(&kept));

    let missing = s.ended("golden-missing", RUN).await;
    assert_eq!(phase(&missing), Some(Phase::Failed));
    assert!(
        message(&missing).contains("golden/absent.ipynb"),
        "{}",
        message(&missing)
    );

    // Upstream's sample asks for credentials over the daemon's git://, which nbv
    // refuses (they would cross the network unencrypted), naming the field.
    let upstream = s.ended("upstream-golden", RUN).await;
    assert_eq!(
        phase(&upstream),
        Some(Phase::Failed),
        "{:?}",
        upstream.status
    );
    assert!(
        message(&upstream).contains("spec.notebook.git.credentialsSecret"),
        "{}",
        message(&upstream)
    );
    let anonymous = s.ended("upstream-golden-anonymous", RUN).await;
    assert_eq!(
        phase(&anonymous),
        Some(Phase::Succeeded),
        "{:?}",
        anonymous.status
    );
    let result = anonymous
        .status
        .as_ref()
        .unwrap()
        .comparison_result
        .clone()
        .expect("comparisonResult");
    assert_eq!(
        (result.strategy.as_str(), result.result.as_str()),
        ("exact", "matched")
    );
    drop(kubelet);
    s.clean_up().await;
}
