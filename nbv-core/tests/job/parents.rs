//! The Application a job names is trusted only when it answers for the job's namespace:
//! then the job's notification is labelled with it; otherwise the job says why not.

use nbv_core::job::Memory;
use nbv_testkit::fixtures::application;
use serde_json::Value;

use super::cluster::Cluster;
use super::{cluster_with, job_of, reconcile, succeeded, t0};

/// The succeeded `ml/train`, naming `fraud` as its Application, in a cluster where
/// Argo CD's `fraud` deploys into `destination` (none: no such Application).
fn naming_fraud(destination: Option<&str>) -> Cluster {
    let mut job = succeeded();
    job["metadata"]["labels"]["app.kubernetes.io/part-of"] = "fraud".into();
    let mut cluster = cluster_with(job);
    if let Some(namespace) = destination {
        cluster.put(application("argocd", "fraud", namespace));
    }
    cluster
}

fn notification(cluster: &Cluster) -> Value {
    cluster
        .all("Event")
        .into_iter()
        .find(|e| e["reason"] == "ValidationSucceeded")
        .cloned()
        .expect("the notification")
}

/// The notification's `app.kubernetes.io/part-of` label.
fn part_of(event: &Value) -> Option<&str> {
    event["metadata"]["labels"]["app.kubernetes.io/part-of"].as_str()
}

fn application_status(cluster: &Cluster) -> (String, String, String) {
    let status = job_of(cluster).status.expect("a status");
    let condition = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .find(|c| c.type_ == "ApplicationStatus")
        .expect("an ApplicationStatus condition");
    (condition.status, condition.reason, condition.message)
}

#[test]
fn an_application_that_deploys_into_the_namespace_labels_the_notification() {
    let mut cluster = naming_fraud(Some("ml"));
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.result.is_ok(), "{:?}", done.result);
    let event = notification(&cluster);
    assert_eq!(
        event["metadata"]["labels"]["app.kubernetes.io/part-of"],
        "fraud"
    );
    let (status, reason, _) = application_status(&cluster);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "ApplicationStatusKept")
    );
}

#[test]
fn an_application_of_another_namespace_is_refused_and_labels_nothing() {
    let mut cluster = naming_fraud(Some("team-b"));
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(part_of(&notification(&cluster)), None);
    let (status, reason, message) = application_status(&cluster);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "ParentRefused")
    );
    assert!(
        message.contains("argocd/fraud") && message.contains(" ml"),
        "{message}"
    );
    // What the Application deploys into is not the job's to know.
    assert!(!message.contains("team-b"), "{message}");
    let refusals: Vec<_> = cluster
        .all("Event")
        .into_iter()
        .filter(|e| e["reason"] == "ParentRefused")
        .collect();
    assert_eq!(refusals.len(), 1, "one ParentRefused Event");
    assert_eq!(refusals[0]["type"], "Warning");
}

#[test]
fn a_part_of_label_without_an_application_labels_nothing() {
    let mut cluster = naming_fraud(None);
    let done = reconcile(&mut cluster, Memory::default(), t0());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(part_of(&notification(&cluster)), None);
}
