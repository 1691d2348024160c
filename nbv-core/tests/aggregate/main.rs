//! Parent Applications, the incremental index, the status annotations and the publish
//! policy.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use nbv_core::aggregate::{
    Aggregate, AggregateIndex, AppId, AppPart, AppRef, JobKey, JobPhase, MIN_INTERVAL,
    NotebookStatus, ParentProblem, ParentSource, PublishDecision, RESYNC_INTERVAL, StatusLimit,
    TrackingMethod, TrackingSettings, decide_publish, parent_application,
};
use nbv_core::annotations::{
    APP_INSTANCE, APP_PART_OF, ARGOCD_INSTALLATION_ID, ARGOCD_TRACKING_ID, NOTEBOOK_STATUS,
    NOTEBOOK_SUMMARY,
};
use proptest::prelude::*;
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, h, m, s).unwrap()
}

fn app(name: &str) -> AppId {
    AppId::new(None, name).unwrap()
}

fn parent(app: &AppId) -> Option<AppRef> {
    Some(AppRef {
        app: app.clone(),
        source: ParentSource::InstanceLabel,
    })
}

/// Applies a JSON merge patch (RFC 7386) of `metadata.annotations` to an annotation map.
fn apply(annotations: &mut BTreeMap<String, String>, patch: &Value) {
    let changes = patch["metadata"]["annotations"]
        .as_object()
        .expect("annotations object");
    assert_eq!(patch.as_object().map(|o| o.len()), Some(1), "{patch}");
    assert!(!changes.is_empty(), "a patch is never empty");
    for (key, value) in changes {
        match value {
            Value::Null => {
                annotations.remove(key);
            }
            Value::String(s) => {
                annotations.insert(key.clone(), s.clone());
            }
            other => panic!("annotation {key} patched with a non-string {other}"),
        }
    }
}

/// Builds an Application's aggregate through the index.
fn aggregate_of(jobs: &[(&str, &str, JobPhase)]) -> Aggregate {
    let target = app("ml-platform");
    let mut index = AggregateIndex::new();
    for (namespace, name, phase) in jobs {
        index.upsert(JobKey::new(*namespace, *name), parent(&target), *phase);
    }
    index.aggregate(&target).clone()
}

fn seed_aggregate() -> Aggregate {
    let mut jobs: Vec<(String, JobPhase)> = (0..30)
        .map(|i| (format!("notebook-{i:02}"), JobPhase::Succeeded))
        .collect();
    jobs.push((
        "predictive-analytics-kserve-validation".into(),
        JobPhase::Failed,
    ));
    jobs.push(("multi-cluster-healing-validation".into(), JobPhase::Failed));
    let borrowed: Vec<(&str, &str, JobPhase)> = jobs
        .iter()
        .map(|(n, p)| ("self-healing-platform", n.as_str(), *p))
        .collect();
    aggregate_of(&borrowed)
}

mod index;
mod parent;
mod publish;
mod status;
