//! What the timeline's steps do to the cluster: another controller writing phases,
//! users editing objects and restarting workloads, Argo CD starting a sync of its own.
//!
//! Like the stand-ins, these act through the in-memory cluster's direct access, so they
//! appear in the change history with `Actor::Direct` and never in the request log.

use nbv_core::annotations::KUBECTL_RESTARTED_AT;
use nbv_core::api::Phase;
use nbv_core::time::rfc3339;
use nbv_testkit::FakeCluster;
use nbv_testkit::scenario::{ObjectKey, ObjectRef, PhaseWrite};
use serde_json::{Map, Value, json};

const JOBS: &str = "notebookvalidationjobs";

/// Applies an RFC 7386 JSON merge patch.
pub(super) fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in patch {
            if value.is_null() {
                map.remove(key);
            } else {
                merge(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

fn get(
    cluster: &FakeCluster,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> Result<Value, String> {
    cluster
        .get(kind, namespace, name)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| match namespace {
            Some(ns) => format!("there is no {kind} {ns}/{name}"),
            None => format!("there is no {kind} {name}"),
        })
}

/// The message the upstream operator writes with each phase.
fn phase_message(phase: Phase) -> &'static str {
    match phase.migrated() {
        Phase::Initializing => "Validation job initialized",
        Phase::Building => "Building the notebook image",
        Phase::BuildComplete => "Image build complete",
        Phase::ValidationRunning => "Notebook validation is running",
        Phase::Succeeded => "Notebook validation completed successfully",
        _ => "Notebook validation failed: cell 7 raised KeyError: 'model_path'",
    }
}

/// Another controller writes a job's phase (see [`PhaseWrite`]). Returns the log text.
pub(super) fn write_phase(cluster: &FakeCluster, write: &PhaseWrite) -> Result<String, String> {
    let ObjectKey { namespace, name } = &write.job;
    let job = get(cluster, JOBS, Some(namespace), name)?;
    let now = rfc3339(cluster.now());
    let current = job
        .get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut status = if write.replace_status {
        // A controller that writes the status from its own copy of the object keeps
        // only the fields it knows: nbv's ledger and conditions are gone.
        current
            .into_iter()
            .filter(|(k, _)| {
                [
                    "startTime",
                    "completionTime",
                    "observedGeneration",
                    "retryCount",
                ]
                .contains(&k.as_str())
            })
            .collect()
    } else {
        current
    };
    let phase = write.phase;
    match phase.migrated() {
        Phase::Initializing => {
            status.insert("startTime".into(), json!(now));
            status.remove("completionTime");
            let generation = job
                .pointer("/metadata/generation")
                .cloned()
                .unwrap_or(json!(1));
            status.insert("observedGeneration".into(), generation);
        }
        p if p.is_terminal() => {
            status.entry("startTime").or_insert_with(|| json!(now));
            // Writing the same terminal phase again (a resync of the other controller)
            // keeps the run's completion time: the run ended once.
            let rewrite = job.pointer("/status/phase").and_then(Value::as_str)
                == Some(phase.as_str())
                && status.contains_key("completionTime");
            if !rewrite {
                status.insert("completionTime".into(), json!(now));
            }
        }
        _ => {
            status.entry("startTime").or_insert_with(|| json!(now));
            status.remove("completionTime");
        }
    }
    status.insert("phase".into(), json!(phase.as_str()));
    let message = write.message.as_deref().unwrap_or(phase_message(phase));
    status.insert("message".into(), json!(message));
    let completed = status
        .get("completionTime")
        .and_then(Value::as_str)
        .map(str::to_owned);
    cluster
        .set_status(JOBS, Some(namespace), name, Value::Object(status))
        .map_err(|e| e.to_string())?;
    let mut text = format!("job {}: phase {phase}", write.job);
    if let Some(completed) = completed.filter(|_| phase.is_terminal()) {
        text.push_str(&format!(" (completionTime {completed})"));
    }
    if write.replace_status {
        text.push_str(", whole status replaced (nbv's status.effects and conditions dropped)");
    }
    Ok(text)
}

/// A user's merge patch of an object.
pub(super) fn patch(
    cluster: &FakeCluster,
    object: &ObjectRef,
    patch: &Value,
) -> Result<String, String> {
    let mut current = get(
        cluster,
        &object.kind,
        object.namespace.as_deref(),
        &object.name,
    )?;
    merge(&mut current, patch);
    cluster.apply_object(current).map_err(|e| e.to_string())?;
    Ok(format!("edited {object}: {patch}"))
}

/// `kubectl rollout restart`: the template's `restartedAt` set to now.
pub(super) fn rollout_restart(cluster: &FakeCluster, object: &ObjectRef) -> Result<String, String> {
    let now = rfc3339(cluster.now());
    let change =
        json!({"spec": {"template": {"metadata": {"annotations": {KUBECTL_RESTARTED_AT: now}}}}});
    patch(cluster, object, &change)?;
    Ok(format!(
        "kubectl rollout restart {object} (restartedAt {now})"
    ))
}

/// Argo CD starts a sync of its own (auto-sync, or a user's), unless one is running.
pub(super) fn argo_sync(cluster: &FakeCluster, app: &ObjectKey) -> Result<String, String> {
    let mut object = get(cluster, "applications", Some(&app.namespace), &app.name)?;
    if !object["operation"].is_null() {
        return Ok(format!(
            "Application {app}: auto-sync skipped, an operation is running"
        ));
    }
    object["operation"] = json!({
        "sync": {"revision": "HEAD"},
        "initiatedBy": {"automated": true},
        "info": [{"name": "reason", "value": "auto-sync: new commit"}]
    });
    cluster.apply_object(object).map_err(|e| e.to_string())?;
    Ok(format!("Application {app}: auto-sync started"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_follows_rfc_7386() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge(&mut doc, &json!({"a": "z", "c": {"f": null}, "n": [1]}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}, "n": [1]}));
        let mut scalar = json!("x");
        merge(&mut scalar, &json!({"k": 1}));
        assert_eq!(scalar, json!({"k": 1}));
    }
}
