//! Property: any sequence of creates, patches, replaces and deletes sent through a
//! `kube::Client` leaves the cluster equal to a plain map model, answers each request as
//! the model predicts, issues strictly increasing resourceVersions, and a watch opened at
//! the start replays to the same final state.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::{Client, ResourceExt};
use nbv_testkit::FakeCluster;
use proptest::prelude::*;
use serde_json::json;

const NAMESPACES: [&str; 2] = ["a", "b"];
const NAMES: [&str; 3] = ["x", "y", "z"];

/// (namespace, name) -> (label `k`, data `v`).
type Model = BTreeMap<(String, String), (String, String)>;

#[derive(Clone, Debug)]
enum Op {
    Create {
        ns: usize,
        name: usize,
        label: String,
        value: String,
    },
    MergePatch {
        ns: usize,
        name: usize,
        value: String,
    },
    ApplyLabel {
        ns: usize,
        name: usize,
        label: String,
    },
    /// Replace using the current object's resourceVersion (`stale: false`) or an outdated one.
    Replace {
        ns: usize,
        name: usize,
        value: String,
        stale: bool,
    },
    Delete {
        ns: usize,
        name: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let ns = 0..NAMESPACES.len();
    let name = 0..NAMES.len();
    let label = prop_oneof![Just("on".to_owned()), Just("off".to_owned())];
    let value = "[a-z]{0,3}";
    prop_oneof![
        (ns.clone(), name.clone(), label.clone(), value).prop_map(|(ns, name, label, value)| {
            Op::Create {
                ns,
                name,
                label,
                value,
            }
        }),
        (ns.clone(), name.clone(), value).prop_map(|(ns, name, value)| Op::MergePatch {
            ns,
            name,
            value
        }),
        (ns.clone(), name.clone(), label).prop_map(|(ns, name, label)| Op::ApplyLabel {
            ns,
            name,
            label
        }),
        (ns.clone(), name.clone(), value, any::<bool>()).prop_map(|(ns, name, value, stale)| {
            Op::Replace {
                ns,
                name,
                value,
                stale,
            }
        }),
        (ns, name).prop_map(|(ns, name)| Op::Delete { ns, name }),
    ]
}

fn code<T>(result: Result<T, kube::Error>) -> Result<u16, String> {
    match result {
        Ok(_) => Ok(200),
        Err(kube::Error::Api(status)) => Ok(status.code),
        Err(other) => Err(format!("transport error: {other}")),
    }
}

fn state_of(cm: &ConfigMap) -> (String, String) {
    let label = cm.labels().get("k").cloned().unwrap_or_default();
    let value = cm
        .data
        .as_ref()
        .and_then(|d| d.get("v"))
        .cloned()
        .unwrap_or_default();
    (label, value)
}

/// Runs one op against the cluster and the model; returns (expected, actual) status codes.
async fn run(client: &Client, model: &mut Model, op: &Op) -> Result<(u16, u16), String> {
    let (ns, name) = match op {
        Op::Create { ns, name, .. }
        | Op::MergePatch { ns, name, .. }
        | Op::ApplyLabel { ns, name, .. }
        | Op::Replace { ns, name, .. }
        | Op::Delete { ns, name } => (NAMESPACES[*ns], NAMES[*name]),
    };
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let key = (ns.to_owned(), name.to_owned());
    let exists = model.contains_key(&key);
    let expected = match op {
        Op::Create { .. } if exists => 409,
        Op::Replace { stale: true, .. } if exists => 409,
        Op::MergePatch { .. } | Op::Replace { .. } | Op::Delete { .. } if !exists => 404,
        _ => 200,
    };
    let actual = match op {
        Op::Create { label, value, .. } => {
            let cm: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": name, "labels": {"k": label}}, "data": {"v": value}
            }))
            .map_err(|e| e.to_string())?;
            if !exists {
                model.insert(key, (label.clone(), value.clone()));
            }
            code(api.create(&PostParams::default(), &cm).await)?
        }
        Op::MergePatch { value, .. } => {
            if let Some(entry) = model.get_mut(&key) {
                entry.1.clone_from(value);
            }
            let patch = Patch::Merge(json!({"data": {"v": value}}));
            code(api.patch(name, &PatchParams::default(), &patch).await)?
        }
        Op::ApplyLabel { label, .. } => {
            // Server-side apply creates the object when it is missing.
            model.entry(key).or_default().0.clone_from(label);
            let patch = Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "labels": {"k": label}}
            }));
            code(api.patch(name, &PatchParams::apply("model"), &patch).await)?
        }
        Op::Replace { value, stale, .. } => {
            let current = api.get_opt(name).await.map_err(|e| e.to_string())?;
            let mut cm = current.unwrap_or_else(|| {
                serde_json::from_value(json!({"metadata": {"name": name}})).unwrap_or_default()
            });
            cm.data = Some([("v".to_owned(), value.clone())].into());
            if *stale {
                // Any version older than the current one: resourceVersions only grow.
                let older = cm
                    .resource_version()
                    .and_then(|v| v.parse::<u64>().ok())
                    .map_or(0, |v| v.saturating_sub(1));
                cm.metadata.resource_version = Some(older.to_string());
            } else if let Some(entry) = model.get_mut(&key) {
                entry.1.clone_from(value);
            }
            code(api.replace(name, &PostParams::default(), &cm).await)?
        }
        Op::Delete { .. } => {
            model.remove(&key);
            code(api.delete(name, &DeleteParams::default()).await)?
        }
    };
    Ok((expected, actual))
}

async fn check(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let cluster = FakeCluster::default();
    let client = cluster.client();
    let all: Api<ConfigMap> = Api::all(client.clone());
    let mut watch = all
        .watch(&WatchParams::default(), "0")
        .await
        .map_err(|e| TestCaseError::fail(e.to_string()))?
        .boxed();

    let mut model = Model::new();
    for op in &ops {
        let (expected, actual) = run(&client, &mut model, op)
            .await
            .map_err(TestCaseError::fail)?;
        prop_assert_eq!(expected, actual, "{:?}", op);
    }

    // The cluster holds exactly the model.
    let listed = all
        .list(&ListParams::default())
        .await
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let stored: Model = listed
        .items
        .iter()
        .map(|cm| {
            (
                (cm.namespace().unwrap_or_default(), cm.name_any()),
                state_of(cm),
            )
        })
        .collect();
    prop_assert_eq!(&stored, &model);
    let rv = cluster.resource_version();
    prop_assert_eq!(listed.metadata.resource_version, Some(rv.to_string()));

    // Label selectors agree with the model.
    let on = all
        .list(&ListParams::default().labels("k=on"))
        .await
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let on_model = model.values().filter(|(label, _)| label == "on").count();
    prop_assert_eq!(on.items.len(), on_model);

    // Every change has a strictly larger resourceVersion, ending at the cluster's.
    let history = cluster.history();
    prop_assert!(
        history
            .windows(2)
            .all(|w| w[0].resource_version < w[1].resource_version)
    );
    prop_assert_eq!(history.last().map_or(0, |c| c.resource_version), rv);
    let mut uids: Vec<String> = listed.items.iter().filter_map(|c| c.uid()).collect();
    uids.sort();
    uids.dedup();
    prop_assert_eq!(uids.len(), listed.items.len());

    // A watch from the start replays to the same state.
    let mut replayed = Model::new();
    let mut seen_rv = 0;
    while seen_rv < rv {
        let event = tokio::time::timeout(Duration::from_secs(5), watch.next())
            .await
            .map_err(|_| TestCaseError::fail("watch stalled"))?
            .ok_or_else(|| TestCaseError::fail("watch ended"))?
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (cm, deleted) = match event {
            WatchEvent::Added(cm) | WatchEvent::Modified(cm) => (cm, false),
            WatchEvent::Deleted(cm) => (cm, true),
            other => return Err(TestCaseError::fail(format!("unexpected {other:?}"))),
        };
        let event_rv: u64 = cm
            .resource_version()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        prop_assert!(event_rv > seen_rv, "watch resourceVersions increase");
        seen_rv = event_rv;
        let key = (cm.namespace().unwrap_or_default(), cm.name_any());
        if deleted {
            replayed.remove(&key);
        } else {
            replayed.insert(key, state_of(&cm));
        }
    }
    prop_assert_eq!(replayed, model);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn client_operations_match_a_map_model(ops in proptest::collection::vec(op(), 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        runtime.block_on(check(ops))?;
    }
}
