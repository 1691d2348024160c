//! The build systems' controllers this control plane lacks, for nbv's image builds, as
//! `kubelet.rs` plays the kubelet: Tekton's for PipelineRuns (`tekton.rs`), Shipwright's
//! for BuildRuns (`shipwright.rs`), OpenShift's for Builds (`openshift.rs`). They watch nbv's build objects (labelled
//! `app.kubernetes.io/managed-by: nbv`) in one namespace and write their status as the
//! real controllers do. Kaniko builds are Pods: the kubelet runs them.
//!
//! A test can make the build of a job (by its `mlops.dev/job` label) stall (its build
//! step never ends, the build's own timeout still counts), hold (the build runs
//! forever, whatever its timeout, until cancelled) or, on Shipwright and OpenShift,
//! fail.

mod duration;
mod openshift;
mod registry;
mod runs;
mod shipwright;
mod status;
mod tekton;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use super::git::tempdir;

pub use duration::go_duration;
pub use shipwright::digest_of;

/// What a stand-in does with a job's build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hook {
    /// The build step never ends; the build's own timeout still applies.
    Stall,
    /// The build runs until it is cancelled, past any timeout of its own.
    Hold,
    /// The build fails with this reason and message (Shipwright; on OpenShift, the
    /// message is the build log's last lines).
    Fail(String, String),
}

/// Hooks by job name, shared with the controllers.
#[derive(Clone, Default)]
pub struct Hooks(Arc<Mutex<HashMap<String, Hook>>>);

impl Hooks {
    /// The hook of the build whose object carries `labels`.
    fn of(&self, labels: Option<&std::collections::BTreeMap<String, String>>) -> Option<Hook> {
        let job = labels?.get("mlops.dev/job")?;
        self.0.lock().expect("hooks").get(job).cloned()
    }
}

/// The build systems' stand-in controllers for one namespace.
pub struct Builds {
    tasks: Vec<JoinHandle<()>>,
    hooks: Hooks,
    root: PathBuf,
}

impl Builds {
    /// Starts the controllers in `namespace`.
    pub fn start(client: kube::Client, namespace: &str) -> Builds {
        let hooks = Hooks::default();
        let root = tempdir("builds");
        let tasks = vec![
            tokio::spawn(tekton::run(
                client.clone(),
                namespace.to_owned(),
                hooks.clone(),
                root.clone(),
            )),
            tokio::spawn(shipwright::run(
                client.clone(),
                namespace.to_owned(),
                hooks.clone(),
            )),
            tokio::spawn(openshift::run(client, namespace.to_owned(), hooks.clone())),
        ];
        Builds { tasks, hooks, root }
    }

    /// The build of job `job` gets `hook`.
    pub fn hook(&self, job: &str, hook: Hook) {
        self.hooks
            .0
            .lock()
            .expect("hooks")
            .insert(job.to_owned(), hook);
    }
}

impl Drop for Builds {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
