//! The rest of the cluster, played by the simulator as time passes: a kubelet running
//! validation Pods, KServe keeping InferenceServices' pods up, Argo CD carrying out
//! sync operations.
//!
//! Stand-ins act through the in-memory cluster's direct access, not through the API:
//! their writes appear in the change history with `Actor::Direct` and never in the
//! request log, so every API request and every client change is nbv's.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use nbv_core::annotations::{ARGOCD_REFRESH, KSERVE_INFERENCESERVICE};
use nbv_core::build::BUILD_STRATEGY_LABEL;
use nbv_core::checks::CheckReport;
use nbv_core::compare::ReportedComparison;
use nbv_core::phase::Attempt;
use nbv_core::pod::{
    ATTEMPT_LABEL, CellOutcome, MANAGED_BY, MANAGED_BY_LABEL, NOTEBOOK_CONTAINER, ReportedCell,
    RunError, RunErrorKind, RunReport,
};
use nbv_core::time::rfc3339;
use nbv_testkit::FakeCluster;
use nbv_testkit::scenario::{Mode, ObjectKey, PodOutcome, PodResult};
use serde_json::{Map, Value, json};

use super::builds::Builders;
use super::timeline::{Log, Who};

/// What the kubelet has in store for a validation Pod.
#[derive(Clone, Debug)]
struct PodPlan {
    result: PodResult,
    /// The notebook container's image.
    image: String,
    running_at: DateTime<Utc>,
    ends_at: DateTime<Utc>,
    /// `spec.activeDeadlineSeconds`.
    deadline: Option<chrono::TimeDelta>,
    /// `status.startTime`: when the kubelet took the Pod up.
    started: Option<DateTime<Utc>>,
    cells: u32,
    /// The strategy of the comparison with a golden notebook the Pod makes, if any.
    comparison: Option<String>,
    /// Whether the Pod runs the checks of `spec.validationConfig`.
    checks: bool,
    stage: Stage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Pending,
    Running,
    /// Waiting on an image it cannot pull.
    Stuck,
    Ended,
}

impl PodPlan {
    /// When the kubelet stops the Pod for its `activeDeadlineSeconds`, counted from
    /// `status.startTime` as Kubernetes counts it.
    fn deadline_at(&self) -> Option<DateTime<Utc>> {
        Some(self.started? + self.deadline?)
    }

    /// When the Pod ends if nothing stops it earlier, and whether that end is its
    /// deadline: a running Pod whose run would outlast its deadline, or a Pod that
    /// waits on its image, ends at the deadline.
    fn end(&self) -> Option<(DateTime<Utc>, bool)> {
        let deadline = self.deadline_at();
        match self.stage {
            Stage::Running => Some(match deadline {
                Some(at) if at < self.ends_at => (at, true),
                _ => (self.ends_at, false),
            }),
            Stage::Stuck => deadline.map(|at| (at, true)),
            Stage::Pending | Stage::Ended => None,
        }
    }
}

/// How long Argo CD takes to carry out a sync operation.
const SYNC_TAKES: chrono::TimeDelta = chrono::TimeDelta::seconds(5);
/// How long Argo CD takes to notice and clear a refresh request.
const REFRESH_TAKES: chrono::TimeDelta = chrono::TimeDelta::seconds(2);

/// The kubelet, KServe and Argo CD.
pub(super) struct StandIns {
    mode: Mode,
    outcomes: Vec<PodOutcome>,
    pods: BTreeMap<(String, String), PodPlan>,
    next_pod: u64,
    /// When each Application's current operation, or refresh request, was first seen.
    operations: BTreeMap<(String, String), DateTime<Utc>>,
    refreshes: BTreeMap<(String, String), DateTime<Utc>>,
    /// Nothing to do before this, unless the cluster changed.
    idle_until: Option<(u64, DateTime<Utc>)>,
    /// The build systems.
    builders: Builders,
}

fn labels(object: &Value) -> Map<String, Value> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn key(object: &Value) -> (String, String) {
    let text = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (text("/metadata/namespace"), text("/metadata/name"))
}

impl StandIns {
    pub fn new(mode: Mode, outcomes: Vec<PodOutcome>) -> StandIns {
        StandIns {
            mode,
            outcomes,
            pods: BTreeMap::new(),
            next_pod: 0,
            operations: BTreeMap::new(),
            refreshes: BTreeMap::new(),
            idle_until: None,
            builders: Builders::default(),
        }
    }

    /// Does whatever is due.
    pub fn tick(&mut self, cluster: &FakeCluster, log: &mut Log) -> Result<(), String> {
        let now = cluster.now();
        let version = cluster.resource_version();
        if self
            .idle_until
            .is_some_and(|(seen, until)| seen == version && now < until)
        {
            return Ok(());
        }
        let mut next: Option<DateTime<Utc>> = None;
        if self.mode == Mode::Default {
            self.kubelet(cluster, log, now, &mut next)?;
        }
        if self.mode == Mode::Default {
            self.builders.tick(cluster, log, now, &mut next)?;
        }
        self.kserve(cluster, log)?;
        self.argo_cd(cluster, log, now, &mut next)?;
        self.idle_until = Some((
            cluster.resource_version(),
            next.unwrap_or(DateTime::<Utc>::MAX_UTC),
        ));
        Ok(())
    }

    fn outcome_for(&self, job: &ObjectKey, retry: Option<u32>) -> Option<&PodOutcome> {
        let of_job = || self.outcomes.iter().filter(move |o| &o.job == job);
        of_job()
            .find(|o| o.attempt.is_some() && o.attempt == retry)
            .or_else(|| of_job().find(|o| o.attempt.is_none()))
    }

    fn kubelet(
        &mut self,
        cluster: &FakeCluster,
        log: &mut Log,
        now: DateTime<Utc>,
        next: &mut Option<DateTime<Utc>>,
    ) -> Result<(), String> {
        let pods = cluster.list("pods", None).map_err(|e| e.to_string())?;
        for pod in pods {
            let labels = labels(&pod);
            // A kaniko build's Pod is the build system's (the builders play it).
            if labels.get(MANAGED_BY_LABEL).and_then(Value::as_str) != Some(MANAGED_BY)
                || labels.contains_key(BUILD_STRATEGY_LABEL)
            {
                continue;
            }
            let (namespace, name) = key(&pod);
            let pod_key = (namespace.clone(), name.clone());
            if !self.pods.contains_key(&pod_key) {
                let job = pod
                    .pointer("/metadata/ownerReferences")
                    .and_then(Value::as_array)
                    .and_then(|owners| owners.iter().find(|o| o["kind"] == nbv_core::api::KIND))
                    .and_then(|o| o["name"].as_str())
                    .map(|job| ObjectKey::new(namespace.clone(), job));
                let retry = labels
                    .get(ATTEMPT_LABEL)
                    .and_then(Value::as_str)
                    .and_then(|a| a.parse::<Attempt>().ok())
                    .map(|a| a.retry);
                let plan = job.as_ref().and_then(|j| self.outcome_for(j, retry));
                let (result, start_after, run_for, cells) = plan.map_or(
                    (
                        PodResult::Succeeded,
                        std::time::Duration::from_secs(5),
                        std::time::Duration::from_secs(120),
                        3,
                    ),
                    |o| (o.outcome, o.start_after, o.run_for, o.cells),
                );
                let delta =
                    |d: std::time::Duration| chrono::TimeDelta::from_std(d).unwrap_or_default();
                let running_at = now + delta(start_after);
                let deadline = pod
                    .pointer("/spec/activeDeadlineSeconds")
                    .and_then(Value::as_i64)
                    .and_then(chrono::TimeDelta::try_seconds);
                self.pods.insert(
                    pod_key.clone(),
                    PodPlan {
                        result,
                        image: notebook_image(&pod),
                        running_at,
                        ends_at: running_at + delta(run_for),
                        deadline,
                        started: None,
                        cells,
                        comparison: golden_comparison(&pod),
                        checks: runs_checks(&pod),
                        stage: Stage::Pending,
                    },
                );
                log.push(
                    cluster,
                    Who::Kubelet,
                    format!("scheduled Pod {namespace}/{name}"),
                );
            }
            let Some(plan) = self.pods.get_mut(&pod_key) else {
                continue;
            };
            if plan.stage == Stage::Pending && now >= plan.running_at {
                plan.started = Some(now);
                let (stage, status, what) = if plan.result == PodResult::ImagePullBackOff {
                    (
                        Stage::Stuck,
                        pending_status(plan),
                        "cannot pull the image (ImagePullBackOff)",
                    )
                } else {
                    (Stage::Running, running_status(plan, now), "running")
                };
                plan.stage = stage;
                cluster
                    .set_status("pods", Some(&namespace), &name, status)
                    .map_err(|e| e.to_string())?;
                log.push(
                    cluster,
                    Who::Kubelet,
                    format!("Pod {namespace}/{name} {what}"),
                );
            }
            if let Some((at, deadline)) = plan.end()
                && now >= at
            {
                plan.stage = Stage::Ended;
                let (status, what) = if deadline {
                    let seconds = plan.deadline.map_or(0, |d| d.num_seconds());
                    (
                        deadline_status(plan, now),
                        format!(
                            "DeadlineExceeded (activeDeadlineSeconds {seconds} passed since it started)"
                        ),
                    )
                } else {
                    (ended_status(plan, now), format!("{:?}", plan.result))
                };
                cluster
                    .set_status("pods", Some(&namespace), &name, status)
                    .map_err(|e| e.to_string())?;
                log.push(
                    cluster,
                    Who::Kubelet,
                    format!("Pod {namespace}/{name} ended: {what}"),
                );
            }
            let due = match plan.stage {
                Stage::Pending => Some(plan.running_at),
                Stage::Running | Stage::Stuck => plan.end().map(|(at, _)| at),
                Stage::Ended => None,
            };
            *next = [*next, due].into_iter().flatten().min();
        }
        Ok(())
    }

    /// KServe's predictor, as its ReplicaSet keeps it: the ReplicaSet wants as many pods
    /// as the InferenceService had when first seen (it adopts those), controls them,
    /// and replaces each pod deleted with one that loads the current model.
    fn kserve(&mut self, cluster: &FakeCluster, log: &mut Log) -> Result<(), String> {
        let services = cluster
            .list("inferenceservices", None)
            .map_err(|e| e.to_string())?;
        if services.is_empty() {
            return Ok(());
        }
        let pods = cluster.list("pods", None).map_err(|e| e.to_string())?;
        for service in services {
            let (namespace, name) = key(&service);
            let of_service: Vec<&Value> = pods
                .iter()
                .filter(|p| {
                    key(p).0 == namespace
                        && labels(p)
                            .get(KSERVE_INFERENCESERVICE)
                            .and_then(Value::as_str)
                            == Some(name.as_str())
                        && p.pointer("/metadata/deletionTimestamp").is_none()
                })
                .collect();
            let replica_set = self.replica_set(cluster, &namespace, &name, of_service.len())?;
            let controller = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": replica_set["metadata"]["name"], "uid": replica_set["metadata"]["uid"],
                "controller": true}]);
            for orphan in of_service
                .iter()
                .filter(|p| p.pointer("/metadata/ownerReferences").is_none())
            {
                let mut adopted = (*orphan).clone();
                adopted["metadata"]["ownerReferences"] = controller.clone();
                cluster.apply_object(adopted).map_err(|e| e.to_string())?;
            }
            let wanted = replica_set["spec"]["replicas"].as_u64().unwrap_or(0) as usize;
            for _ in of_service.len()..wanted {
                let pod = self.free_pod_name(&pods, &namespace, &name);
                cluster
                    .apply_object(json!({
                        "apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": pod, "namespace": namespace,
                                     "labels": {KSERVE_INFERENCESERVICE: name, "component": "predictor"},
                                     "ownerReferences": controller},
                        "spec": {"containers": [{"name": "kserve-container", "image": "kserve/sklearnserver:v0.15.0"}]},
                        // Ready at once: a restart by eviction evicts the next pod only
                        // once the replacement serves.
                        "status": {"phase": "Running",
                                   "conditions": [{"type": "Ready", "status": "True"}]}
                    }))
                    .map_err(|e| e.to_string())?;
                log.push(
                    cluster,
                    Who::Kserve,
                    format!("started Pod {namespace}/{pod} for InferenceService {name} (loads the current model)"),
                );
            }
        }
        Ok(())
    }

    /// The next name of a predictor pod of InferenceService `name` that no pod of
    /// `namespace` has: a replacement never takes the place of a pod that still runs.
    fn free_pod_name(&mut self, pods: &[Value], namespace: &str, name: &str) -> String {
        loop {
            self.next_pod += 1;
            let pod = format!("{name}-predictor-{:05}", self.next_pod);
            if !pods
                .iter()
                .any(|p| key(p) == (namespace.to_owned(), pod.clone()))
            {
                return pod;
            }
        }
    }

    /// The ReplicaSet behind the InferenceService `name`, created the first time with
    /// as many replicas as it has `live` pods.
    fn replica_set(
        &mut self,
        cluster: &FakeCluster,
        namespace: &str,
        name: &str,
        live: usize,
    ) -> Result<Value, String> {
        let rs_name = format!("{name}-predictor");
        if let Some(found) = cluster
            .get("replicasets.apps", Some(namespace), &rs_name)
            .map_err(|e| e.to_string())?
        {
            return Ok(found);
        }
        cluster
            .apply_object(json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": rs_name, "namespace": namespace},
                "spec": {"replicas": live,
                         "selector": {"matchLabels": {KSERVE_INFERENCESERVICE: name}}}
            }))
            .map_err(|e| e.to_string())
    }

    fn argo_cd(
        &mut self,
        cluster: &FakeCluster,
        log: &mut Log,
        now: DateTime<Utc>,
        next: &mut Option<DateTime<Utc>>,
    ) -> Result<(), String> {
        let applications = cluster
            .list("applications", None)
            .map_err(|e| e.to_string())?;
        for mut app in applications {
            let app_key = key(&app);
            let mut changed = false;
            if app["operation"].is_null() {
                self.operations.remove(&app_key);
            } else {
                let seen = *self.operations.entry(app_key.clone()).or_insert(now);
                let done_at = seen + SYNC_TAKES;
                if now >= done_at {
                    let operation = app["operation"].clone();
                    app["status"]["operationState"] = json!({
                        "operation": operation,
                        "phase": "Succeeded",
                        "message": "successfully synced (all tasks run)",
                        "startedAt": rfc3339(seen),
                        "finishedAt": rfc3339(now),
                    });
                    app["status"]["sync"]["status"] = json!("Synced");
                    if let Some(map) = app.as_object_mut() {
                        map.remove("operation");
                    }
                    self.operations.remove(&app_key);
                    changed = true;
                    log.push(
                        cluster,
                        Who::ArgoCd,
                        format!(
                            "Application {}/{}: sync operation succeeded",
                            app_key.0, app_key.1
                        ),
                    );
                } else {
                    *next = [*next, Some(done_at)].into_iter().flatten().min();
                }
            }
            let refresh = app
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(ARGOCD_REFRESH))
                .is_some();
            if refresh {
                let seen = *self.refreshes.entry(app_key.clone()).or_insert(now);
                if now >= seen + REFRESH_TAKES {
                    if let Some(annotations) = app
                        .pointer_mut("/metadata/annotations")
                        .and_then(Value::as_object_mut)
                    {
                        annotations.remove(ARGOCD_REFRESH);
                    }
                    self.refreshes.remove(&app_key);
                    changed = true;
                    log.push(
                        cluster,
                        Who::ArgoCd,
                        format!("Application {}/{}: refreshed", app_key.0, app_key.1),
                    );
                } else {
                    *next = [*next, Some(seen + REFRESH_TAKES)]
                        .into_iter()
                        .flatten()
                        .min();
                }
            } else {
                self.refreshes.remove(&app_key);
            }
            if changed {
                cluster.apply_object(app).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

/// The strategy of the comparison the Pod's notebook container makes (its
/// `NBV_COMPARISON` settings), when it compares with a golden notebook.
fn golden_comparison(pod: &Value) -> Option<String> {
    let container = pod
        .pointer("/spec/containers")?
        .as_array()?
        .iter()
        .find(|c| c["name"] == NOTEBOOK_CONTAINER)?;
    let settings = container["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == "NBV_COMPARISON")?["value"]
        .as_str()?;
    let settings: Value = serde_json::from_str(settings).ok()?;
    Some(
        settings["strategy"]
            .as_str()
            .unwrap_or("normalized")
            .to_owned(),
    )
}

/// Whether the Pod's notebook container runs the checks of `spec.validationConfig`
/// (it has their policy in `NBV_CHECKS`).
fn runs_checks(pod: &Value) -> bool {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .and_then(|containers| containers.iter().find(|c| c["name"] == NOTEBOOK_CONTAINER))
        .and_then(|c| c["env"].as_array())
        .is_some_and(|env| env.iter().any(|e| e["name"] == "NBV_CHECKS"))
}

/// The image of a Pod's notebook container.
fn notebook_image(pod: &Value) -> String {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .and_then(|containers| containers.iter().find(|c| c["name"] == NOTEBOOK_CONTAINER))
        .and_then(|c| c["image"].as_str())
        .unwrap_or("quay.io/jupyter/scipy-notebook:2026-01-05")
        .to_owned()
}

fn container(plan: &PodPlan, state: Value) -> Value {
    json!({
        "name": NOTEBOOK_CONTAINER, "image": plan.image,
        "imageID": "", "ready": false, "restartCount": 0, "state": state
    })
}

/// `status.startTime`, once the kubelet has taken the Pod up.
fn start_time(plan: &PodPlan) -> Value {
    plan.started.map_or(Value::Null, |t| json!(rfc3339(t)))
}

fn running_status(plan: &PodPlan, now: DateTime<Utc>) -> Value {
    json!({
        "phase": "Running", "startTime": start_time(plan),
        "containerStatuses": [container(plan, json!({"running": {"startedAt": rfc3339(now)}}))]
    })
}

fn pending_status(plan: &PodPlan) -> Value {
    json!({
        "phase": "Pending", "startTime": start_time(plan),
        "containerStatuses": [container(plan, json!({"waiting": {
            "reason": "ImagePullBackOff",
            "message": format!("Back-off pulling image {:?}", plan.image)
        }}))]
    })
}

/// What the kubelet writes when a Pod outlives its `activeDeadlineSeconds`: the Pod
/// fails with reason `DeadlineExceeded`, and a container that ran is killed.
fn deadline_status(plan: &PodPlan, now: DateTime<Utc>) -> Value {
    let state = if plan.result == PodResult::ImagePullBackOff {
        json!({"waiting": {
            "reason": "ImagePullBackOff",
            "message": format!("Back-off pulling image {:?}", plan.image)
        }})
    } else {
        json!({"terminated": {
            "exitCode": 137, "reason": "Error",
            "startedAt": start_time(plan), "finishedAt": rfc3339(now)
        }})
    };
    json!({
        "phase": "Failed", "reason": "DeadlineExceeded",
        "message": "Pod was active on the node longer than the specified deadline",
        "startTime": start_time(plan),
        "containerStatuses": [container(plan, state)]
    })
}

fn ended_status(plan: &PodPlan, now: DateTime<Utc>) -> Value {
    let cell = |i: u32, outcome| ReportedCell {
        index: u64::from(i),
        outcome,
        seconds: Some(1.5),
        error: None,
    };
    match plan.result {
        PodResult::Evicted => json!({
            "phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory.",
            "startTime": start_time(plan)
        }),
        PodResult::Succeeded | PodResult::Failed | PodResult::ImagePullBackOff => {
            let failed = plan.result == PodResult::Failed;
            let last = plan.cells.max(1) - 1;
            let cells = (0..plan.cells.max(1))
                .map(|i| {
                    if failed && i == last {
                        ReportedCell {
                            error: Some("KeyError: 'model_path'".to_owned()),
                            ..cell(i, CellOutcome::Failed)
                        }
                    } else {
                        cell(i, CellOutcome::Succeeded)
                    }
                })
                .collect();
            let error = failed.then(|| RunError {
                kind: RunErrorKind::Cell,
                cell: Some(u64::from(last)),
                ename: "KeyError".to_owned(),
                evalue: "'model_path'".to_owned(),
            });
            // A notebook that runs through produces its golden notebook's outputs.
            let total = u64::from(plan.cells.max(1));
            let cmp =
                plan.comparison
                    .clone()
                    .filter(|_| !failed)
                    .map(|strategy| ReportedComparison {
                        result: "matched".to_owned(),
                        strategy,
                        total,
                        matched: total,
                        mismatched: 0,
                        diffs: Vec::new(),
                        more: 0,
                    });
            let message = RunReport {
                cells,
                error,
                cmp,
                // A notebook that runs through passes its checks, findings none.
                chk: (plan.checks && !failed).then(CheckReport::default),
                mdl: None,
                dropped: 0,
            }
            .encode();
            json!({
                "phase": if failed { "Failed" } else { "Succeeded" },
                "startTime": start_time(plan),
                "containerStatuses": [container(plan, json!({"terminated": {
                    "exitCode": i32::from(failed), "reason": if failed { "Error" } else { "Completed" },
                    "message": message, "startedAt": start_time(plan), "finishedAt": rfc3339(now)
                }}))]
            })
        }
    }
}
