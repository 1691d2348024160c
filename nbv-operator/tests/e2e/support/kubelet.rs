//! The kubelet this control plane lacks, for nbv's validation Pods: it binds each Pod to
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
//! What it maps: every volume mount is a directory under a temporary root (emptyDir
//! empty, Secret and ConfigMap volumes holding their keys as files), and every
//! command-line argument, environment value or working directory that names a mounted
//! path, and the termination-message path, is rewritten to its directory. nbv's image's
//! `/nbv` is the binary under test; `python3` is the papermill virtualenv's
//! (`NBV_E2E_PYTHON`), first in `PATH`, and `git` and `ssh` this machine's.
//!
//! A test can make a Pod be evicted instead of run ([`Kubelet::evict`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::git::tempdir;

/// The node every Pod is bound to.
pub const NODE: &str = "e2e-node";

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

/// The virtualenv's `python3`, with papermill and ipykernel.
fn python() -> PathBuf {
    std::env::var_os("NBV_E2E_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/nbv/papermill/bin/python3"))
}

fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
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
    let config = watcher::Config::default().labels("app.kubernetes.io/managed-by=nbv");
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

/// One container's outcome.
struct Exit {
    code: i32,
    message: String,
    started: String,
    finished: String,
}

/// Why the Pod stopped early.
enum Stopped {
    Deleted,
    Deadline,
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
                code: 137, message: String::new(), started: start_time.clone(), finished: now()
            })).collect::<Vec<_>>(),
        }))
        .await;
        return;
    }

    let deadline = spec
        .active_deadline_seconds
        .map(|s| tokio::time::Instant::now() + Duration::from_secs(s.max(0) as u64));
    let volumes = match Volumes::prepare(&client, &pod, &dir).await {
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
        let outcome = volumes.run(container, &pod, deadline, &mut stopped).await;
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

/// The Pod's volumes as directories, and how container paths map to them.
struct Volumes {
    /// Mount path in the container → directory here, per volume name.
    dirs: BTreeMap<String, PathBuf>,
    secrets: BTreeMap<String, BTreeMap<String, String>>,
    config_maps: BTreeMap<String, BTreeMap<String, String>>,
    /// Volumes whose files are a Secret's or a ConfigMap's keys.
    files: Vec<(PathBuf, Source)>,
    root: PathBuf,
}

impl Volumes {
    async fn prepare(client: &kube::Client, pod: &Pod, root: &Path) -> Result<Volumes, String> {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let secrets_api: Api<Secret> = Api::namespaced(client.clone(), &namespace);
        let config_maps_api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
        let mut volumes = Volumes {
            dirs: BTreeMap::new(),
            secrets: BTreeMap::new(),
            config_maps: BTreeMap::new(),
            files: Vec::new(),
            root: root.to_owned(),
        };
        // Every Secret and ConfigMap the containers name, as text.
        let mut secret_names = BTreeSet::new();
        let mut config_map_names = BTreeSet::new();
        for container in spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
        {
            for var in container.env.iter().flatten() {
                if let Some(s) = var
                    .value_from
                    .as_ref()
                    .and_then(|v| v.secret_key_ref.as_ref())
                {
                    secret_names.insert(s.name.clone());
                }
                if let Some(c) = var
                    .value_from
                    .as_ref()
                    .and_then(|v| v.config_map_key_ref.as_ref())
                {
                    config_map_names.insert(c.name.clone());
                }
            }
            for from in container.env_from.iter().flatten() {
                if let Some(s) = &from.secret_ref {
                    secret_names.insert(s.name.clone());
                }
                if let Some(c) = &from.config_map_ref {
                    config_map_names.insert(c.name.clone());
                }
            }
        }
        for volume in spec.volumes.iter().flatten() {
            let dir = root.join("volumes").join(&volume.name);
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            if let Some(secret) = volume.secret.as_ref().and_then(|s| s.secret_name.clone()) {
                secret_names.insert(secret.clone());
                volumes.files.push((dir.clone(), Source::Secret(secret)));
            }
            if let Some(cm) = volume.config_map.as_ref().map(|c| c.name.clone()) {
                config_map_names.insert(cm.clone());
                volumes.files.push((dir.clone(), Source::ConfigMap(cm)));
            }
            volumes.dirs.insert(volume.name.clone(), dir);
        }
        for name in secret_names {
            if let Ok(secret) = secrets_api.get(&name).await {
                let data = secret
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k, String::from_utf8_lossy(&v.0).into_owned()))
                    .chain(secret.string_data.unwrap_or_default())
                    .collect();
                volumes.secrets.insert(name, data);
            }
        }
        for name in config_map_names {
            if let Ok(cm) = config_maps_api.get(&name).await {
                volumes
                    .config_maps
                    .insert(name, cm.data.unwrap_or_default().into_iter().collect());
            }
        }
        volumes.write_files()?;
        Ok(volumes)
    }

    fn write_files(&self) -> Result<(), String> {
        for (dir, source) in &self.files {
            let data = match source {
                Source::Secret(name) => self.secrets.get(name),
                Source::ConfigMap(name) => self.config_maps.get(name),
            };
            for (key, value) in data.into_iter().flatten() {
                std::fs::write(dir.join(key), value).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// The container's path mapping: mount path → directory here, longest first.
    fn mounts(&self, container: &Container, termination: &Path) -> Vec<(String, PathBuf)> {
        let mut mounts: Vec<(String, PathBuf)> = container
            .volume_mounts
            .iter()
            .flatten()
            .filter_map(|m| {
                Some((
                    m.mount_path.trim_end_matches('/').to_owned(),
                    self.dirs.get(&m.name)?.clone(),
                ))
            })
            .collect();
        let path = container
            .termination_message_path
            .clone()
            .unwrap_or_else(|| "/dev/termination-log".to_owned());
        mounts.push((path, termination.to_owned()));
        mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        mounts
    }

    fn map(mounts: &[(String, PathBuf)], value: &str) -> String {
        for (path, dir) in mounts {
            if value == path {
                return dir.display().to_string();
            }
            if let Some(rest) = value.strip_prefix(&format!("{path}/")) {
                return dir.join(rest).display().to_string();
            }
        }
        value.to_owned()
    }

    fn environment(
        &self,
        container: &Container,
        pod: &Pod,
        mounts: &[(String, PathBuf)],
    ) -> Vec<(String, String)> {
        let system_path = std::env::var("PATH").unwrap_or_default();
        let python_bin = python()
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mut vars: Vec<(String, String)> = vec![
            ("PATH".into(), format!("{python_bin}:{system_path}")),
            ("LANG".into(), "C.UTF-8".into()),
            (
                "HOSTNAME".into(),
                pod.metadata.name.clone().unwrap_or_default(),
            ),
        ];
        // Marks the container's processes (and the kernels they start) as the suite's,
        // so that `scripts/control-plane e2e` finds any left running.
        if let Ok(cluster) = std::env::var("NBV_E2E_CLUSTER") {
            vars.push(("NBV_E2E_CLUSTER".into(), cluster));
        }
        for from in container.env_from.iter().flatten() {
            let prefix = from.prefix.clone().unwrap_or_default();
            let data = from
                .secret_ref
                .as_ref()
                .and_then(|s| self.secrets.get(&s.name))
                .or_else(|| {
                    from.config_map_ref
                        .as_ref()
                        .and_then(|c| self.config_maps.get(&c.name))
                });
            for (k, v) in data.into_iter().flatten() {
                vars.push((format!("{prefix}{k}"), v.clone()));
            }
        }
        for var in container.env.iter().flatten() {
            let value = if let Some(value) = &var.value {
                Some(Self::map(mounts, value))
            } else if let Some(from) = &var.value_from {
                if let Some(s) = &from.secret_key_ref {
                    self.secrets
                        .get(&s.name)
                        .and_then(|d| d.get(&s.key))
                        .cloned()
                } else if let Some(c) = &from.config_map_key_ref {
                    self.config_maps
                        .get(&c.name)
                        .and_then(|d| d.get(&c.key))
                        .cloned()
                } else if let Some(f) = &from.field_ref {
                    match f.field_path.as_str() {
                        "metadata.name" => pod.metadata.name.clone(),
                        "metadata.namespace" => pod.metadata.namespace.clone(),
                        "spec.nodeName" => Some(NODE.to_owned()),
                        _ => None,
                    }
                } else {
                    None
                }
            } else {
                Some(String::new())
            };
            if let Some(value) = value {
                vars.retain(|(k, _)| k != &var.name);
                vars.push((var.name.clone(), value));
            }
        }
        vars
    }

    /// Runs `container` until it exits, the Pod's deadline passes, or the Pod is
    /// deleted.
    async fn run(
        &self,
        container: &Container,
        pod: &Pod,
        deadline: Option<tokio::time::Instant>,
        stopped: &mut watch::Receiver<bool>,
    ) -> Result<Exit, Stopped> {
        let termination = self
            .root
            .join(format!("{}.termination-log", container.name));
        let _ = std::fs::write(&termination, "");
        let mounts = self.mounts(container, &termination);
        let mut argv: Vec<String> = container.command.clone().unwrap_or_default();
        argv.extend(container.args.clone().unwrap_or_default());
        if argv.is_empty() {
            return Ok(Exit {
                code: 128,
                message: "the stand-in kubelet runs only containers with a command".into(),
                started: now(),
                finished: now(),
            });
        }
        // nbv's image has nbv at /nbv: here, the binary under test. Paths in the
        // command line are mapped like the environment's (`/nbv-tools/nbv` is the copy
        // `nbv pod install` made in the Pod's emptyDir).
        if argv[0] == "/nbv" {
            argv[0] = env!("CARGO_BIN_EXE_nbv").to_owned();
        }
        if argv[0] == "python3" || argv[0] == "python" {
            argv[0] = python().display().to_string();
        }
        for arg in &mut argv {
            *arg = Self::map(&mounts, arg);
        }
        let log = self.root.join(format!("{}.log", container.name));
        let out = std::fs::File::create(&log).map_err(|_| Stopped::Deleted)?;
        let workdir = container
            .working_dir
            .as_deref()
            .map(|w| PathBuf::from(Self::map(&mounts, w)))
            .unwrap_or_else(|| self.root.clone());
        let _ = std::fs::create_dir_all(&workdir);
        let mut command = tokio::process::Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .env_clear()
            .envs(self.environment(container, pod, &mounts))
            .current_dir(&workdir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().map_err(|_| Stopped::Deleted)?)
            .stderr(out)
            .kill_on_drop(true)
            .process_group(0);
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Ok(Exit {
                    code: 128,
                    message: format!("exec {}: {e}", argv[0]),
                    started: now(),
                    finished: now(),
                });
            }
        };
        let started = now();
        let sleep_until = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let status = tokio::select! {
            status = child.wait() => status,
            _ = async { let _ = stopped.wait_for(|s| *s).await; } => {
                kill_group(&child);
                let _ = child.wait().await;
                return Err(Stopped::Deleted);
            }
            _ = sleep_until => {
                kill_group(&child);
                let _ = child.wait().await;
                return Err(Stopped::Deadline);
            }
        };
        let code = status.ok().and_then(|s| s.code()).unwrap_or(137);
        let mut message = std::fs::read_to_string(&termination).unwrap_or_default();
        let fallback =
            container.termination_message_policy.as_deref() == Some("FallbackToLogsOnError");
        if message.is_empty() && code != 0 && fallback {
            message = log_tail(&std::fs::read_to_string(&log).unwrap_or_default());
        }
        // A kubelet keeps at most 4096 bytes of a termination message.
        message.truncate(floor_char_boundary(&message, 4096));
        Ok(Exit {
            code,
            message,
            started,
            finished: now(),
        })
    }
}

/// Where a volume's files come from.
enum Source {
    Secret(String),
    ConfigMap(String),
}

fn kill_group(child: &tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: signalling the process group this child leads.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
}

/// What a kubelet keeps of a log under `FallbackToLogsOnError`: the last 80 lines,
/// at most 2048 bytes.
fn log_tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    let mut tail = lines[lines.len().saturating_sub(80)..].join("\n");
    if tail.len() > 2048 {
        let mut cut = tail.len() - 2048;
        while !tail.is_char_boundary(cut) {
            cut += 1;
        }
        tail = tail[cut..].to_owned();
    }
    tail
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}
