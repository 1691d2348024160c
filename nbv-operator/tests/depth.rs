//! Answers nested too deep for the decoder: one object may never fail the listing of
//! the others.

use kube::api::{Api, ListParams};
use nbv_operator::operator::projection::CachedApplication;
use nbv_operator::runtime::depth::{DepthLimit, DepthLimitLayer};
use nbv_testkit::cluster::FakeCluster;
use nbv_testkit::depth::cut;
use nbv_testkit::fixtures::application;
use proptest::prelude::*;
use serde_json::{Value, json};
use tower::Layer;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        // Strings with the characters that look like structure.
        "[\\[\\]{}\"\\\\a ,:]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(8, 64, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\\[\\]\"{}]{0,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The rewrite of `text` fed in pieces cut at `cuts`.
fn rewritten(text: &[u8], max: usize, cuts: &[usize]) -> Vec<u8> {
    let mut limit = DepthLimit::new(max);
    let mut out = Vec::new();
    let mut start = 0;
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
    points.sort_unstable();
    for point in points.into_iter().chain([text.len()]) {
        if point >= start {
            limit.feed(&text[start..point], &mut out);
            start = point;
        }
    }
    out
}

proptest! {
    #[test]
    fn values_deeper_than_the_limit_become_null_and_the_rest_stays(
        value in json_value(),
        max in 0usize..8,
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let text = serde_json::to_vec(&value).unwrap();
        let out = rewritten(&text, max, &cuts);
        let read: Value = serde_json::from_slice(&out).expect("the rewrite is JSON");
        prop_assert_eq!(read, cut(&value, max));
    }

    #[test]
    fn text_within_the_limit_passes_byte_for_byte(
        value in json_value(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let text = serde_json::to_vec_pretty(&value).unwrap();
        prop_assert_eq!(rewritten(&text, 64, &cuts), text);
    }
}

/// `[[[…"x"…]]]`, `depth` lists deep.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!("x"), |inner, _| json!([inner]))
}

#[tokio::test]
async fn one_application_nested_too_deep_does_not_fail_the_listing_of_the_others() {
    let cluster = FakeCluster::default();
    // An operation's source keeps Helm values as they are written
    // (x-kubernetes-preserve-unknown-fields), and nbv reads the operation.
    let mut deep = application("argocd", "deep", "ml");
    deep["operation"] = json!({"sync": {"source": {"repoURL": "https://example.com/r.git",
        "helm": {"valuesObject": nested(1_000)}}}});
    cluster.apply_object(deep).expect("the deep Application");
    cluster
        .apply_object(application("argocd", "good", "ml"))
        .expect("the good Application");
    let resource = nbv_operator::operator::resources::application_resource();

    let plain: Api<CachedApplication> = Api::namespaced_with(cluster.client(), "argocd", &resource);
    let refused = plain.list(&ListParams::default()).await;
    assert!(refused.is_err(), "serde_json alone refuses the listing");

    let client = kube::Client::new(DepthLimitLayer.layer(cluster.service()), "default");
    let bounded: Api<CachedApplication> = Api::namespaced_with(client, "argocd", &resource);
    let listed = bounded
        .list(&ListParams::default())
        .await
        .expect("the listing, with the deep value cut");
    let names: Vec<_> = listed
        .items
        .iter()
        .filter_map(|a| a.metadata.name.clone())
        .collect();
    assert_eq!(names, ["deep", "good"]);
    assert_eq!(
        listed.items[1].to_json()["spec"]["destination"]["namespace"],
        "ml"
    );
}
