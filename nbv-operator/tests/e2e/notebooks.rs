//! nbv's default mode: it creates each run's validation Pod, the suite's kubelet runs
//! the Pod's own commands (the clone script against `git daemon`, the notebook script
//! under a real papermill), and nbv reads the outcome from the Pod's status.

use nbv_core::api::{CellStatus, Phase};
use serde_json::json;

use crate::support::git::{GitServer, notebook};
use crate::support::kubelet::Kubelet;
use crate::support::{OperatorOptions, RUN, Scenario, job, message, phase};

/// The notebooks of the test repository.
pub fn repository(git: &GitServer, name: &str) -> String {
    let text = |cells: &[&str]| serde_json::to_string_pretty(&notebook(cells)).expect("json");
    git.repository(
        name,
        &[
            (
                "passes.ipynb",
                text(&["x = 6 * 7", "assert x == 42", "print('accuracy', 0.93)"]),
            ),
            (
                "raises.ipynb",
                text(&["data = {'loss': 0.1}", "data['accuracy']", "print('never')"]),
            ),
        ],
    )
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn real_notebooks_run_in_the_validation_pod() {
    let s = Scenario::new("e2e-notebooks").await;
    let git = GitServer::start();
    let url = repository(&git, "models");
    let kubelet = Kubelet::start(s.client.clone(), &s.namespace);
    // The first attempt of this job is evicted; the retry runs.
    kubelet.evict("evicted-g1-r0");
    let _operator = s.operator(&OperatorOptions::default_mode(&s.namespace));

    for (name, git_ref, path) in [
        ("passes", "main", "passes.ipynb"),
        ("raises", "main", "raises.ipynb"),
        ("missing", "main", "absent.ipynb"),
        ("bad-ref", "no-such-branch", "passes.ipynb"),
        ("evicted", "main", "passes.ipynb"),
    ] {
        s.apply(job(name, &url, git_ref, path, json!({}))).await;
    }

    let passes = s.ended("passes", RUN).await;
    assert_eq!(
        phase(&passes),
        Some(Phase::Succeeded),
        "{:?}",
        passes.status
    );
    let status = passes.status.clone().unwrap();
    let results = status.results.clone().unwrap_or_default();
    assert_eq!(results.len(), 3, "one result per code cell: {results:?}");
    assert!(
        results.iter().all(|r| r.status == CellStatus::Success),
        "{results:?}"
    );
    assert_eq!(status.validation_pod_name.as_deref(), Some("passes-g1-r0"));
    assert_eq!(status.retry_count.unwrap_or(0), 0);
    assert_eq!(s.events("passes", "ValidationSucceeded").await.len(), 1);

    let raises = s.ended("raises", RUN).await;
    assert_eq!(phase(&raises), Some(Phase::Failed));
    let text = message(&raises);
    assert!(
        text.contains("KeyError") && text.contains("accuracy"),
        "{text}"
    );
    let results = raises
        .status
        .as_ref()
        .unwrap()
        .results
        .clone()
        .unwrap_or_default();
    assert!(
        results.iter().any(|r| r.status == CellStatus::Failure),
        "the failing cell is named: {results:?}"
    );
    assert_eq!(
        raises.status.as_ref().unwrap().retry_count.unwrap_or(0),
        0,
        "a raising cell is not retried"
    );
    assert_eq!(s.events("raises", "ValidationFailed").await.len(), 1);

    let missing = s.ended("missing", RUN).await;
    assert_eq!(phase(&missing), Some(Phase::Failed));
    assert!(
        message(&missing).contains("absent.ipynb"),
        "{}",
        message(&missing)
    );

    let bad_ref = s.ended("bad-ref", RUN).await;
    assert_eq!(phase(&bad_ref), Some(Phase::Failed));
    assert!(
        message(&bad_ref).contains("no-such-branch"),
        "{}",
        message(&bad_ref)
    );

    let evicted = s.ended("evicted", RUN).await;
    assert_eq!(
        phase(&evicted),
        Some(Phase::Succeeded),
        "{:?}",
        evicted.status
    );
    let status = evicted.status.clone().unwrap();
    assert_eq!(status.retry_count, Some(1), "one retry after the eviction");
    assert_eq!(status.validation_pod_name.as_deref(), Some("evicted-g1-r1"));
    assert_eq!(s.events("evicted", "ValidationSucceeded").await.len(), 1);
    assert!(
        s.events("evicted", "ValidationFailed").await.is_empty(),
        "an eviction retried is no failure"
    );

    if let Some(requests) = s.report_requests("five notebooks, default mode") {
        // Pods are read from the watch cache: a GET only for a Pod just created (or
        // found to exist), which the cache does not hold yet.
        assert!(
            requests.count("get", "pods") <= requests.count("create", "pods"),
            "{requests}"
        );
    }
    drop(kubelet);
    s.clean_up().await;
}
