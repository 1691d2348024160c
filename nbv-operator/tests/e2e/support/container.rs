//! One container's command run on this machine, as the stand-ins run them: the kubelet
//! for Pods (`kubelet.rs`), Tekton's controller for a PipelineRun's steps
//! (`builds/tekton.rs`).
//!
//! Every volume is a directory under a temporary root (emptyDir empty, Secret and
//! ConfigMap volumes holding their keys as files), and every command-line argument
//! (`--flag=PATH` too), environment value or working directory that names a mounted
//! path, and the termination-message path, is rewritten to its directory. Images'
//! programs map to this machine's: nbv's image's `/nbv` is the binary under test;
//! `python3` is the papermill virtualenv's (`NBV_E2E_PYTHON`), first in `PATH`; the
//! kaniko executor's image, whose entrypoint is `/kaniko/executor`, runs
//! `kaniko-executor.sh` beside this file, a fake that "pushes" by writing a digest
//! (see [`image_digest`]); `git` and `ssh` are this machine's.
//!
//! One difference from a node: a node gives each Pod its own network namespace, and
//! here every container shares this machine's. A Jupyter kernel's ports are chosen
//! before the kernel binds them, so two kernels starting together can pick the same
//! port and one dies (`Kernel died before replying to kernel_info`, papermill#511).
//! Containers that run a notebook (`nbv pod run`) therefore take turns
//! ([`KERNEL_SLOT`]); a Pod waiting for its turn is running, as on a busy node.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use chrono::{SecondsFormat, Utc};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Secret, Volume};
use kube::api::{Api, ObjectMeta};
use tokio::sync::watch;

/// The node every Pod is bound to.
pub const NODE: &str = "e2e-node";

/// The kaniko executor's entrypoint in its image.
const KANIKO_EXECUTOR: &str = "/kaniko/executor";
/// The kaniko executor's image, whatever its tag.
const KANIKO_IMAGE: &str = "gcr.io/kaniko-project/executor";

/// One notebook container at a time: its kernel's ports are this machine's.
static KERNEL_SLOT: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// Whether `argv` runs a notebook, i.e. starts a Jupyter kernel: `…/nbv pod run`.
fn starts_a_kernel(argv: &[String]) -> bool {
    argv.len() >= 3 && argv[0].ends_with("/nbv") && argv[1] == "pod" && argv[2] == "run"
}

/// The virtualenv's `python3`, with papermill and ipykernel. Panics, saying how to make
/// it, when it is missing: the notebooks would fail for a reason that is not nbv's.
pub fn python() -> PathBuf {
    let python = std::env::var_os("NBV_E2E_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/nbv/papermill/bin/python3"));
    assert!(
        python.is_file(),
        "the stand-in kubelet runs notebooks under NBV_E2E_PYTHON (else \
         /var/cache/nbv/papermill/bin/python3), and {} is not a file: run \
         `scripts/control-plane install`",
        python.display()
    );
    python
}

/// Now, RFC 3339 in seconds, as the API's times are written.
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The digest the build stand-ins "push" an image with: the SHA-256 of the prepared
/// Dockerfile followed by the `requirements.txt` beside it, if there is one. The fake
/// kaniko executor (`kaniko-executor.sh`) computes the same with `sha256sum`.
pub fn image_digest(dockerfile: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(std::fs::read(dockerfile)?);
    let requirements = dockerfile.with_file_name("requirements.txt");
    if requirements.is_file() {
        hash.update(std::fs::read(requirements)?);
    }
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// One container's outcome.
pub struct Exit {
    /// Its exit code (137 when killed).
    pub code: i32,
    /// Its termination message.
    pub message: String,
    /// The tail of its output (stdout and stderr).
    pub log: String,
    /// When it started.
    pub started: String,
    /// When it ended.
    pub finished: String,
}

/// Why a container stopped before it exited.
#[derive(Debug)]
pub enum Stopped {
    /// Its Pod was deleted (or its run cancelled).
    Deleted,
    /// Its deadline passed.
    Deadline,
}

/// Where a volume's files come from.
enum Source {
    Secret(String),
    ConfigMap(String),
}

/// A Pod's (or a task's) volumes as directories, and how container paths map to them.
pub struct Sandbox {
    /// Directory here, per volume name.
    dirs: BTreeMap<String, PathBuf>,
    /// Mount path → directory, in every container (Tekton's workspaces and results).
    everywhere: Vec<(String, PathBuf)>,
    secrets: BTreeMap<String, BTreeMap<String, String>>,
    config_maps: BTreeMap<String, BTreeMap<String, String>>,
    /// Volumes whose files are a Secret's or a ConfigMap's keys.
    files: Vec<(PathBuf, Source)>,
    root: PathBuf,
}

impl Sandbox {
    /// The directories of `volumes` under `root`, with the Secrets and ConfigMaps of
    /// `namespace` that they and `containers` name.
    pub async fn prepare(
        client: &kube::Client,
        namespace: &str,
        volumes: &[Volume],
        containers: &[Container],
        root: &Path,
    ) -> Result<Sandbox, String> {
        let secrets_api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let config_maps_api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
        let mut sandbox = Sandbox {
            dirs: BTreeMap::new(),
            everywhere: Vec::new(),
            secrets: BTreeMap::new(),
            config_maps: BTreeMap::new(),
            files: Vec::new(),
            root: root.to_owned(),
        };
        // Every Secret and ConfigMap the containers name, as text.
        let mut secret_names = BTreeSet::new();
        let mut config_map_names = BTreeSet::new();
        for container in containers {
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
        for volume in volumes {
            let dir = root.join("volumes").join(&volume.name);
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            if let Some(secret) = volume.secret.as_ref().and_then(|s| s.secret_name.clone()) {
                secret_names.insert(secret.clone());
                sandbox.files.push((dir.clone(), Source::Secret(secret)));
            }
            if let Some(cm) = volume.config_map.as_ref().map(|c| c.name.clone()) {
                config_map_names.insert(cm.clone());
                sandbox.files.push((dir.clone(), Source::ConfigMap(cm)));
            }
            sandbox.dirs.insert(volume.name.clone(), dir);
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
                sandbox.secrets.insert(name, data);
            }
        }
        for name in config_map_names {
            if let Ok(cm) = config_maps_api.get(&name).await {
                sandbox
                    .config_maps
                    .insert(name, cm.data.unwrap_or_default().into_iter().collect());
            }
        }
        sandbox.write_files()?;
        Ok(sandbox)
    }

    /// Mounts the directory `dir` at `path` in every container.
    pub fn mount_everywhere(&mut self, path: &str, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        self.everywhere
            .push((path.trim_end_matches('/').to_owned(), dir.to_owned()));
        Ok(())
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
            .chain(self.everywhere.iter().cloned())
            .collect();
        let path = container
            .termination_message_path
            .clone()
            .unwrap_or_else(|| "/dev/termination-log".to_owned());
        mounts.push((path, termination.to_owned()));
        mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        mounts
    }

    /// Where the container's path `value` is on this machine (itself when it names no
    /// mounted path).
    pub fn path_in(&self, container: &Container, value: &str) -> String {
        let termination = self.termination_of(container);
        Self::map(&self.mounts(container, &termination), value)
    }

    fn termination_of(&self, container: &Container) -> PathBuf {
        self.root
            .join(format!("{}.termination-log", container.name))
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

    /// An argument: a path, or `--flag=PATH` (kaniko's `--context=dir://PATH` too).
    fn map_arg(mounts: &[(String, PathBuf)], arg: &str) -> String {
        if let Some((flag, value)) = arg.split_once('=').filter(|(f, _)| f.starts_with("--")) {
            let (scheme, path) = match value.strip_prefix("dir://") {
                Some(path) => ("dir://", path),
                None => ("", value),
            };
            return format!("{flag}={scheme}{}", Self::map(mounts, path));
        }
        Self::map(mounts, arg)
    }

    fn environment(
        &self,
        container: &Container,
        meta: &ObjectMeta,
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
            ("HOSTNAME".into(), meta.name.clone().unwrap_or_default()),
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
                        "metadata.name" => meta.name.clone(),
                        "metadata.namespace" => meta.namespace.clone(),
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

    /// The container's command line: its command and arguments, or its image's
    /// entrypoint and arguments; programs of images mapped to this machine's.
    fn argv(container: &Container) -> Vec<String> {
        let image = container.image.as_deref().unwrap_or_default();
        let mut argv: Vec<String> = match &container.command {
            Some(command) if !command.is_empty() => command.clone(),
            _ if image.starts_with(KANIKO_IMAGE) => vec![KANIKO_EXECUTOR.to_owned()],
            _ => Vec::new(),
        };
        argv.extend(container.args.clone().unwrap_or_default());
        let Some(program) = argv.first().cloned() else {
            return argv;
        };
        match program.as_str() {
            // nbv's image has nbv at /nbv: here, the binary under test.
            "/nbv" => argv[0] = env!("CARGO_BIN_EXE_nbv").to_owned(),
            "python3" | "python" => argv[0] = python().display().to_string(),
            KANIKO_EXECUTOR => {
                let fake = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/e2e/support/kaniko-executor.sh");
                argv.splice(0..1, ["/bin/sh".to_owned(), fake.display().to_string()]);
            }
            _ => {}
        }
        argv
    }

    /// Runs `container` (of the object `meta`) until it exits, `deadline` passes, or
    /// `stopped` turns true.
    pub async fn run(
        &self,
        container: &Container,
        meta: &ObjectMeta,
        deadline: Option<tokio::time::Instant>,
        stopped: &mut watch::Receiver<bool>,
    ) -> Result<Exit, Stopped> {
        let termination = self.termination_of(container);
        let _ = std::fs::write(&termination, "");
        let mounts = self.mounts(container, &termination);
        let mut argv = Self::argv(container);
        if argv.is_empty() {
            let message = "the stand-ins run only containers with a command".to_owned();
            return Ok(Exit {
                code: 128,
                log: message.clone(),
                message,
                started: now(),
                finished: now(),
            });
        }
        // Paths in the command line are mapped like the environment's (`/nbv-tools/nbv`
        // is the copy `nbv pod install` made in the Pod's emptyDir).
        for arg in &mut argv {
            *arg = Self::map_arg(&mounts, arg);
        }
        let log = self.root.join(format!("{}.log", container.name));
        let out = std::fs::File::create(&log).map_err(|_| Stopped::Deleted)?;
        let workdir = container
            .working_dir
            .as_deref()
            .map(|w| PathBuf::from(Self::map(&mounts, w)))
            .unwrap_or_else(|| self.root.clone());
        let _ = std::fs::create_dir_all(&workdir);
        let sleep_until = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(sleep_until);
        let _turn = if starts_a_kernel(&argv) {
            tokio::select! {
                permit = KERNEL_SLOT.acquire() => Some(permit.expect("the slot is never closed")),
                _ = async { let _ = stopped.wait_for(|s| *s).await; } => return Err(Stopped::Deleted),
                _ = &mut sleep_until => return Err(Stopped::Deadline),
            }
        } else {
            None
        };
        let mut command = tokio::process::Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .env_clear()
            .envs(self.environment(container, meta, &mounts))
            .current_dir(&workdir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().map_err(|_| Stopped::Deleted)?)
            .stderr(out)
            .kill_on_drop(true)
            .process_group(0);
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                let message = format!("exec {}: {e}", argv[0]);
                return Ok(Exit {
                    code: 128,
                    log: message.clone(),
                    message,
                    started: now(),
                    finished: now(),
                });
            }
        };
        let started = now();
        let status = tokio::select! {
            status = child.wait() => status,
            _ = async { let _ = stopped.wait_for(|s| *s).await; } => {
                kill_group(&child);
                let _ = child.wait().await;
                return Err(Stopped::Deleted);
            }
            _ = &mut sleep_until => {
                kill_group(&child);
                let _ = child.wait().await;
                return Err(Stopped::Deadline);
            }
        };
        let code = status.ok().and_then(|s| s.code()).unwrap_or(137);
        let mut message = std::fs::read_to_string(&termination).unwrap_or_default();
        let tail = log_tail(&std::fs::read_to_string(&log).unwrap_or_default());
        let fallback =
            container.termination_message_policy.as_deref() == Some("FallbackToLogsOnError");
        if message.is_empty() && code != 0 && fallback {
            message = tail.clone();
        }
        // A kubelet keeps at most 4096 bytes of a termination message.
        message.truncate(floor_char_boundary(&message, 4096));
        Ok(Exit {
            code,
            message,
            log: tail,
            started,
            finished: now(),
        })
    }
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
