//! The kubelet this control plane lacks, for nbv's validation Pods (and the deletion of
//! any Pod on its node, an evicted model server's too): it binds each Pod to
//! a node, runs the Pod's own container commands on this machine (the clone script
//! against the suite's `git daemon`, the notebook script under a real papermill), and
//! writes the Pod's status as a kubelet does.
//!
//! What it does as a kubelet does:
//! - init containers first, in order; the Pod fails when one fails (`restartPolicy:
//!   Never`); then the containers;
//! - container states (`waiting: PodInitializing`, `running`, `terminated` with exit
//!   code, reason `Completed`/`Error` and times), the Pod's phase and `startTime`;
//! - the termination message: the file at `terminationMessagePath`, or under
//!   `FallbackToLogsOnError` and a failed container with no message, the tail of its
//!   log (at most 80 lines and 2048 bytes, the kubelet's limits);
//! - `activeDeadlineSeconds`, counted from `startTime`: the containers are killed and
//!   the Pod fails with reason `DeadlineExceeded`;
//! - a Pod being deleted: its processes are killed and the deletion is confirmed
//!   (a delete with grace period 0).
//!
//! It runs each container as `container.rs` does: volumes as directories, mounted
//! paths mapped, `/nbv` the binary under test, the kaniko executor's image a fake
//! (nbv's kaniko build Pods are Pods too, run like the validation Pods).
//!
//! A test can make a Pod be evicted instead of run ([`Kubelet::evict`]).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Container, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::container::{Exit, Sandbox, Stopped, now};
use super::git::tempdir;

pub use super::container::NODE;

/// What the kubelet does with a Pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    Run,
    Evict,
}

/// The stand-in kubelet of one namespace.
pub struct Kubelet {
    task: JoinHandle<()>,
    plans: Arc<Mutex<HashMap<String, Plan>>>,
    root: PathBuf,
}

impl Kubelet {
    /// Starts the kubelet for nbv's validation Pods in `namespace`.
    pub fn start(client: kube::Client, namespace: &str) -> Kubelet {
        let plans = Arc::new(Mutex::new(HashMap::new()));
        let root = tempdir("kubelet");
        let task = tokio::spawn(run(
            client,
            namespace.to_owned(),
            plans.clone(),
            root.clone(),
        ));
        Kubelet { task, plans, root }
    }

    /// The Pod named `pod` will be evicted (node pressure) instead of run.
    pub fn evict(&self, pod: &str) {
        self.plans
            .lock()
            .expect("plans")
            .insert(pod.to_owned(), Plan::Evict);
    }
}

impl Drop for Kubelet {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A Pod the kubelet runs: a signal that stops it.
struct Running {
    stop: watch::Sender<bool>,
    done: JoinHandle<()>,
}

async fn run(
    client: kube::Client,
    namespace: String,
    plans: Arc<Mutex<HashMap<String, Plan>>>,
    root: PathBuf,
) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    // Every pod of the namespace: like a real kubelet, it confirms the deletion of each
    // pod on its node (an evicted model server's too), and runs only nbv's.
    let config = watcher::Config::default();
    let mut events = watcher(pods.clone(), config).default_backoff().boxed();
    let mut running: HashMap<String, Running> = HashMap::new();
    let mut finished: HashSet<String> = HashSet::new();
    while let Some(event) = events.next().await {
        let pod = match event {
            Ok(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) => pod,
            Ok(watcher::Event::Delete(pod)) => {
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                if let Some(r) = running.remove(&uid) {
                    let _ = r.stop.send(true);
                }
                continue;
            }
            _ => continue,
        };
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let managed = pod
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app.kubernetes.io/managed-by"))
            .is_some_and(|v| v == "nbv");
        let leaving_node =
            spec.node_name.as_deref() == Some(NODE) && pod.metadata.deletion_timestamp.is_some();
        if !(managed || leaving_node) {
            continue;
        }
        if pod.metadata.deletion_timestamp.is_some() {
            // Stop the containers, then confirm the deletion as a kubelet does.
            if let Some(r) = running.remove(&uid) {
                let _ = r.stop.send(true);
                let _ = r.done.await;
            }
            let params = DeleteParams {
                grace_period_seconds: Some(0),
                preconditions: Some(Preconditions {
                    uid: Some(uid.clone()),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            let _ = pods.delete(&name, &params).await;
            continue;
        }
        if spec.node_name.is_none() {
            let binding = json!({"apiVersion": "v1", "kind": "Binding",
                                 "metadata": {"name": name},
                                 "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}});
            let bound: Result<Value, _> = pods
                .create_subresource("binding", &name, &PostParams::default(), &binding)
                .await;
            if let Err(e) = bound {
                eprintln!("kubelet: binding {name} failed: {e}");
            }
            continue;
        }
        if running.contains_key(&uid) || finished.contains(&uid) {
            continue;
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.clone());
        if matches!(phase.as_deref(), Some("Succeeded" | "Failed")) {
            finished.insert(uid);
            continue;
        }
        let plan = plans
            .lock()
            .expect("plans")
            .get(&name)
            .copied()
            .unwrap_or(Plan::Run);
        let (stop, stopped) = watch::channel(false);
        let dir = root.join(&uid);
        let done = tokio::spawn(run_pod(client.clone(), pod, plan, dir, stopped));
        finished.insert(uid.clone());
        running.insert(uid, Running { stop, done });
    }
}

async fn run_pod(
    client: kube::Client,
    pod: Pod,
    plan: Plan,
    dir: PathBuf,
    mut stopped: watch::Receiver<bool>,
) {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let spec = pod.spec.clone().unwrap_or_default();
    let inits = spec.init_containers.clone().unwrap_or_default();
    let mains = spec.containers.clone();
    let start_time = now();
    let write = |status: Value| {
        let pods = pods.clone();
        let name = name.clone();
        async move {
            // A kubelet retries until the API server takes the status (it may be
            // restarting).
            let patch = json!({"status": status});
            for _ in 0..240 {
                match pods
                    .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => return,
                    Err(kube::Error::Api(e)) if e.code == 404 => return,
                    Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
                }
            }
            eprintln!("kubelet: the status of {name} could not be written for two minutes");
        }
    };
    let waiting = |c: &Container, reason: &str| {
        json!({"name": c.name, "image": c.image, "imageID": "", "ready": false,
               "restartCount": 0, "started": false, "state": {"waiting": {"reason": reason}}})
    };
    let scheduled =
        json!([{"type": "PodScheduled", "status": "True", "lastTransitionTime": start_time}]);
    write(json!({
        "phase": "Pending", "startTime": start_time, "hostIP": "127.0.0.1",
        "conditions": scheduled,
        "initContainerStatuses": inits.iter().map(|c| waiting(c, "PodInitializing")).collect::<Vec<_>>(),
        "containerStatuses": mains.iter().map(|c| waiting(c, "PodInitializing")).collect::<Vec<_>>(),
    }))
    .await;

    if plan == Plan::Evict {
        tokio::time::sleep(Duration::from_millis(500)).await;
        write(json!({
            "phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi.",
            "containerStatuses": mains.iter().map(|c| terminated(c, &Exit {
                code: 137, message: String::new(), log: String::new(), started: start_time.clone(), finished: now()
            })).collect::<Vec<_>>(),
        }))
        .await;
        return;
    }

    let deadline = spec
        .active_deadline_seconds
        .map(|s| tokio::time::Instant::now() + Duration::from_secs(s.max(0) as u64));
    let volumes = spec.volumes.clone().unwrap_or_default();
    let containers: Vec<Container> = inits.iter().chain(&mains).cloned().collect();
    let volumes = match Sandbox::prepare(&client, &namespace, &volumes, &containers, &dir).await {
        Ok(v) => v,
        Err(e) => {
            eprintln!("kubelet: preparing the volumes of {name}: {e}");
            return;
        }
    };
    let mut init_statuses: Vec<Value> = inits
        .iter()
        .map(|c| waiting(c, "PodInitializing"))
        .collect();
    let mut main_statuses: Vec<Value> = mains
        .iter()
        .map(|c| waiting(c, "PodInitializing"))
        .collect();

    let all: Vec<(bool, usize, &Container)> = inits
        .iter()
        .enumerate()
        .map(|(i, c)| (true, i, c))
        .chain(mains.iter().enumerate().map(|(i, c)| (false, i, c)))
        .collect();
    let mut failed = false;
    for (is_init, index, container) in all {
        let started = now();
        let running = json!({"name": container.name, "image": container.image, "imageID": "",
                             "ready": !is_init, "restartCount": 0, "started": true,
                             "state": {"running": {"startedAt": started}}});
        let phase = if is_init { "Pending" } else { "Running" };
        if is_init {
            init_statuses[index] = running;
        } else {
            main_statuses[index] = running;
        }
        write(
            json!({"phase": phase, "initContainerStatuses": init_statuses,
                     "containerStatuses": main_statuses}),
        )
        .await;
        let outcome = volumes
            .run(container, &pod.metadata, deadline, &mut stopped)
            .await;
        let exit = match outcome {
            Ok(exit) => exit,
            Err(Stopped::Deleted) => return,
            Err(Stopped::Deadline) => {
                let state = |c: &Container, s: &Value| {
                    if s.pointer("/state/running").is_some() {
                        terminated(
                            c,
                            &Exit {
                                code: 137,
                                message: String::new(),
                                log: String::new(),
                                started: started.clone(),
                                finished: now(),
                            },
                        )
                    } else {
                        s.clone()
                    }
                };
                let inits: Vec<Value> = inits
                    .iter()
                    .zip(&init_statuses)
                    .map(|(c, s)| state(c, s))
                    .collect();
                let mains: Vec<Value> = mains
                    .iter()
                    .zip(&main_statuses)
                    .map(|(c, s)| state(c, s))
                    .collect();
                write(json!({"phase": "Failed", "reason": "DeadlineExceeded",
                             "message": "Pod was active on the node longer than the specified deadline",
                             "initContainerStatuses": inits, "containerStatuses": mains}))
                .await;
                return;
            }
        };
        let done = terminated(container, &Exit { started, ..exit });
        let code = done["state"]["terminated"]["exitCode"]
            .as_i64()
            .unwrap_or(1);
        if is_init {
            init_statuses[index] = done;
        } else {
            main_statuses[index] = done;
        }
        if code != 0 {
            failed = true;
            if is_init {
                break;
            }
        }
    }
    let phase = if failed { "Failed" } else { "Succeeded" };
    write(
        json!({"phase": phase, "initContainerStatuses": init_statuses,
                 "containerStatuses": main_statuses}),
    )
    .await;
}

fn terminated(container: &Container, exit: &Exit) -> Value {
    let reason = if exit.code == 0 { "Completed" } else { "Error" };
    let mut state = json!({"exitCode": exit.code, "reason": reason,
                           "startedAt": exit.started, "finishedAt": exit.finished});
    if !exit.message.is_empty() {
        state["message"] = json!(exit.message);
    }
    json!({"name": container.name, "image": container.image, "imageID": "", "ready": false,
           "restartCount": 0, "started": false, "state": {"terminated": state}})
}
