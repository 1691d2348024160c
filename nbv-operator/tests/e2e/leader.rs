//! Leader election with two `nbv run` processes: one acts, and the other takes over
//! when it dies.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use serde_json::json;

use crate::support::{Operator, OperatorOptions, Scenario, eventually};

const LEASE: &str = "nbv-operator-leader";

pub(crate) async fn holder(s: &Scenario) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(s.client.clone(), "nbv-system");
    leases.get(LEASE).await.ok()?.spec?.holder_identity
}

pub(crate) fn replica(s: &Scenario, name: &str) -> OperatorOptions {
    OperatorOptions {
        leader_election: true,
        identity: format!("{}-{name}", s.namespace),
        ..OperatorOptions::gitops_only(&s.namespace)
    }
}

/// A job that another controller ends with success, and the instance that reported
/// its notification.
async fn notified_by(s: &Scenario, name: &str) -> String {
    s.succeeds_elsewhere(name, json!({})).await;
    let events = eventually(
        &format!("the notification of {name}"),
        Duration::from_secs(60),
        || async {
            let e = s.events(name, "ValidationSucceeded").await;
            (!e.is_empty()).then_some(e)
        },
    )
    .await;
    assert_eq!(events.len(), 1, "one notification, from one replica");
    events[0].reporting_instance.clone().unwrap_or_default()
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn one_replica_acts_and_the_other_takes_over_when_it_dies() {
    let s = Scenario::new("e2e-leader").await;
    let mut a = Operator::start(&s.cluster, &replica(&s, "a"));
    let a_name = a.identity.clone();
    // A Lease left by an earlier run expires within its duration (15 s).
    eventually("replica a to lead", Duration::from_secs(60), || async {
        (holder(&s).await.as_deref() == Some(a_name.as_str())).then_some(())
    })
    .await;
    let b = Operator::start(&s.cluster, &replica(&s, "b"));
    b.metrics().await;

    assert_eq!(notified_by(&s, "first").await, a_name, "the leader acts");
    assert_eq!(b.reconciles().await, 0.0, "the standby reconciles nothing");
    assert!(a.reconciles().await > 0.0);

    a.kill();
    let killed = Instant::now();
    let b_name = b.identity.clone();
    eventually(
        "replica b to take over",
        Duration::from_secs(60),
        || async { (holder(&s).await.as_deref() == Some(b_name.as_str())).then_some(()) },
    )
    .await;
    eprintln!(
        "replica b took the Lease {:.1} s after replica a was killed",
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(
        notified_by(&s, "second").await,
        b_name,
        "the new leader acts"
    );
    assert_eq!(
        s.events("first", "ValidationSucceeded").await.len(),
        1,
        "nothing repeated"
    );
    s.report_requests("leader election, two replicas and a failover");
    s.clean_up().await;
}
