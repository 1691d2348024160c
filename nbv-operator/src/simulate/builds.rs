//! The build systems of the simulated cluster: Tekton's and Shipwright's controllers
//! and a kaniko Pod's kubelet. A build takes [`BUILD_TAKES`], then succeeds with a
//! digest made from its key, as a registry answers a push; one whose own timeout is
//! shorter fails as its build system reports a timeout, and one nbv cancels ends
//! cancelled.
//!
//! Like the other stand-ins, they write through the in-memory cluster's direct access.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};
use nbv_core::build::{BUILD_KEY_LABEL, BUILD_STRATEGY_LABEL};
use nbv_core::duration::parse_go;
use nbv_core::pod::{MANAGED_BY, MANAGED_BY_LABEL};
use nbv_core::time::rfc3339;
use nbv_testkit::FakeCluster;
use serde_json::{Value, json};

use super::timeline::{Log, Who};

/// How long a simulated build runs.
const BUILD_TAKES: TimeDelta = TimeDelta::seconds(90);

/// How a build ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Built,
    TimedOut,
    Cancelled,
}

/// A build object: its resource, namespace and name.
type BuildKey = (&'static str, String, String);

/// The builds seen: when each started and whether it ended.
#[derive(Debug, Default)]
pub struct Builders {
    builds: BTreeMap<BuildKey, (DateTime<Utc>, Option<End>)>,
}

impl Builders {
    /// Does whatever is due; `next` learns when something is due next.
    pub fn tick(
        &mut self,
        cluster: &FakeCluster,
        log: &mut Log,
        now: DateTime<Utc>,
        next: &mut Option<DateTime<Utc>>,
    ) -> Result<(), String> {
        for resource in ["pipelineruns", "buildruns", "pods"] {
            let objects = cluster.list(resource, None).map_err(|e| e.to_string())?;
            for object in objects {
                let labels = &object["metadata"]["labels"];
                if labels[MANAGED_BY_LABEL].as_str() != Some(MANAGED_BY)
                    || labels[BUILD_STRATEGY_LABEL].is_null()
                {
                    continue;
                }
                self.build(cluster, log, resource, &object, now, next)?;
            }
        }
        Ok(())
    }

    fn build(
        &mut self,
        cluster: &FakeCluster,
        log: &mut Log,
        resource: &'static str,
        object: &Value,
        now: DateTime<Utc>,
        next: &mut Option<DateTime<Utc>>,
    ) -> Result<(), String> {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        let namespace = text("/metadata/namespace").unwrap_or_default().to_owned();
        let name = text("/metadata/name").unwrap_or_default().to_owned();
        let what = format!(
            "{} {namespace}/{name}",
            object["kind"].as_str().unwrap_or(resource)
        );
        let key = (resource, namespace.clone(), name.clone());
        let (started, ended) = match self.builds.get(&key) {
            Some(seen) => *seen,
            None => {
                cluster
                    .set_status(resource, Some(&namespace), &name, running(resource, now))
                    .map_err(|e| e.to_string())?;
                log.push(cluster, Who::Builder, format!("{what} started"));
                self.builds.insert(key.clone(), (now, None));
                (now, None)
            }
        };
        if ended.is_some() {
            return Ok(());
        }
        let timeout = match resource {
            "pipelineruns" => text("/spec/timeouts/pipeline")
                .and_then(|t| parse_go(t).ok())
                .filter(|t| *t > TimeDelta::zero()),
            "pods" => object["spec"]["activeDeadlineSeconds"]
                .as_i64()
                .and_then(TimeDelta::try_seconds),
            _ => None,
        };
        let cancelled = text("/spec/status") == Some("Cancelled")
            || text("/spec/state") == Some("BuildRunCanceled");
        let (end, at) = match timeout {
            _ if cancelled => (End::Cancelled, now),
            Some(limit) if limit < BUILD_TAKES => (End::TimedOut, started + limit),
            _ => (End::Built, started + BUILD_TAKES),
        };
        if now < at {
            *next = [*next, Some(at)].into_iter().flatten().min();
            return Ok(());
        }
        let build_key = object["metadata"]["annotations"][BUILD_KEY_LABEL].as_str();
        let digest = format!("sha256:{}", build_key.unwrap_or_default());
        cluster
            .set_status(
                resource,
                Some(&namespace),
                &name,
                ended_status(resource, end, &digest, started, now),
            )
            .map_err(|e| e.to_string())?;
        log.push(cluster, Who::Builder, format!("{what} ended: {end:?}"));
        self.builds.insert(key, (started, Some(end)));
        Ok(())
    }
}

fn running(resource: &str, now: DateTime<Utc>) -> Value {
    match resource {
        "pods" => json!({"phase": "Running", "startTime": rfc3339(now)}),
        _ => json!({
            "startTime": rfc3339(now),
            "conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running",
                            "lastTransitionTime": rfc3339(now)}],
        }),
    }
}

fn ended_status(
    resource: &str,
    end: End,
    digest: &str,
    started: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Value {
    let (status, reason, message) = match (resource, end) {
        (_, End::Built) => ("True", "Succeeded", "the image was built and pushed"),
        ("pipelineruns", End::TimedOut) => (
            "False",
            "PipelineRunTimeout",
            "PipelineRun failed to finish within its timeout",
        ),
        (_, End::TimedOut) => ("False", "BuildRunTimeout", "the build ran out of time"),
        ("pipelineruns", End::Cancelled) => ("False", "Cancelled", "PipelineRun was cancelled"),
        (_, End::Cancelled) => ("False", "BuildRunCanceled", "the BuildRun was cancelled"),
    };
    match resource {
        "pods" => {
            let (phase, terminated) = match end {
                End::Built => (
                    "Succeeded",
                    json!({"exitCode": 0, "reason": "Completed", "message": digest}),
                ),
                _ => (
                    "Failed",
                    json!({"exitCode": 137, "reason": "Error", "message": message}),
                ),
            };
            let reason = (end == End::TimedOut).then_some("DeadlineExceeded");
            json!({
                "phase": phase, "reason": reason, "startTime": rfc3339(started),
                "containerStatuses": [{"name": "kaniko", "ready": false, "restartCount": 0,
                    "image": "kaniko", "imageID": "",
                    "state": {"terminated": terminated}}],
            })
        }
        "pipelineruns" => {
            let results = if end == End::Built {
                json!([{"name": "IMAGE_DIGEST", "value": digest}])
            } else {
                json!([])
            };
            json!({
                "startTime": rfc3339(started), "completionTime": rfc3339(now),
                "conditions": [{"type": "Succeeded", "status": status, "reason": reason,
                                "message": message, "lastTransitionTime": rfc3339(now)}],
                "results": results,
            })
        }
        _ => {
            let mut status = json!({
                "startTime": rfc3339(started), "completionTime": rfc3339(now),
                "conditions": [{"type": "Succeeded", "status": status, "reason": reason,
                                "message": message, "lastTransitionTime": rfc3339(now)}],
            });
            if end == End::Built {
                status["output"] = json!({"digest": digest});
            } else {
                status["failureDetails"] = json!({"reason": reason, "message": message});
            }
            status
        }
    }
}
