//! What `config/manager` ships beside the Deployment, as the API server validates it:
//! the NetworkPolicy and the PodDisruptionBudget are created with `dryRun=All` in the
//! test's namespace (nothing is stored, nothing is enforced: the control plane has no
//! network plugin and no disruption controller of its own). The offline checks of
//! their selectors and ports are in `tests/config/disruption_and_ingress.rs`.

use kube::api::{Api, DynamicObject, PostParams};
use serde_json::Value;

use crate::support::Scenario;
use crate::support::objects::{api_for, repository, yaml_documents};

/// The one document of `file`, moved to `namespace`.
fn shipped(file: &str, namespace: &str) -> Value {
    let mut docs = yaml_documents(&repository().join(file));
    assert_eq!(docs.len(), 1, "{file} holds one object");
    let mut object = docs.remove(0);
    object["metadata"]["namespace"] = Value::from(namespace);
    object
}

/// Creates `object` with `dryRun=All` and returns it as the server would store it.
async fn dry_run(s: &Scenario, object: &Value) -> DynamicObject {
    let api_version = object["apiVersion"].as_str().expect("apiVersion");
    let kind = object["kind"].as_str().expect("kind");
    let api: Api<DynamicObject> = api_for(&s.client, api_version, kind, Some(&s.namespace)).await;
    let body: DynamicObject = serde_json::from_value(object.clone()).expect("an object");
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    api.create(&params, &body)
        .await
        .unwrap_or_else(|e| panic!("the API server refuses the shipped {api_version} {kind}: {e}"))
}

#[tokio::test]
#[ignore = "needs a Kubernetes API server: `scripts/control-plane e2e` runs it (docs/testing.md)"]
async fn the_manager_s_network_policy_and_disruption_budget_are_valid_objects() {
    let s = Scenario::new("e2e-manager-objects").await;

    // networking.k8s.io/v1, served since Kubernetes 1.7: as shipped, named port and all.
    let policy = shipped("config/manager/networkpolicy.yaml", &s.namespace);
    let stored = dry_run(&s, &policy).await;
    assert_eq!(
        stored.data["spec"], policy["spec"],
        "the server kept the spec"
    );

    // policy/v1 from Kubernetes 1.21. The suite's own API server is 1.20, which serves
    // policy/v1beta1 only (docs/install.md: on 1.20 the budget is left out); there the
    // same spec is validated as policy/v1beta1, whose rules for `maxUnavailable` and a
    // `matchLabels` selector are v1's.
    let mut budget = shipped("config/manager/pdb.yaml", &s.namespace);
    assert_eq!(budget["apiVersion"], "policy/v1");
    if s.client
        .list_api_group_resources("policy/v1")
        .await
        .is_err()
    {
        eprintln!(
            "policy/v1 is not served (Kubernetes 1.20): the PodDisruptionBudget's spec is \
             checked as policy/v1beta1"
        );
        budget["apiVersion"] = Value::from("policy/v1beta1");
    }
    let stored = dry_run(&s, &budget).await;
    assert_eq!(
        stored.data["spec"], budget["spec"],
        "the server kept the spec"
    );
}
