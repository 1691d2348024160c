//! What every build controller does with its objects: watch nbv's, run each once, pass on a
//! cancellation to the run under way, and stop a run whose object is deleted.

use std::collections::{HashMap, HashSet};

use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A run under way: the signal that cancels it, and its task.
struct Running {
    cancel: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Watches the objects of `api` labelled as nbv's and runs each once with `start`,
/// which spawns the run and gets a signal that turns `true` once `cancelled` says the
/// object asks for it (now or later). A finished object is not run again; a deleted
/// one's run is stopped.
pub async fn run_each<F>(
    api: Api<DynamicObject>,
    cancelled: impl Fn(&DynamicObject) -> bool,
    mut start: F,
) where
    F: FnMut(DynamicObject, watch::Receiver<bool>) -> JoinHandle<()>,
{
    let config = watcher::Config::default().labels("app.kubernetes.io/managed-by=nbv");
    let mut events = watcher(api, config).default_backoff().boxed();
    let mut running: HashMap<String, Running> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(event) = events.next().await {
        let object = match event {
            Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) => o,
            Ok(watcher::Event::Delete(o)) => {
                if let Some(r) = running.remove(&o.metadata.uid.clone().unwrap_or_default()) {
                    r.task.abort();
                }
                continue;
            }
            _ => continue,
        };
        let uid = object.metadata.uid.clone().unwrap_or_default();
        let cancel_now = cancelled(&object);
        if let Some(r) = running.get(&uid) {
            if cancel_now {
                let _ = r.cancel.send(true);
            }
            continue;
        }
        let status = &object.data["status"];
        // Tekton's and Shipwright's `completionTime`, OpenShift's `completionTimestamp`.
        let finished =
            status["completionTime"].is_string() || status["completionTimestamp"].is_string();
        if !seen.insert(uid.clone()) || finished {
            continue;
        }
        let (cancel, cancelled_rx) = watch::channel(cancel_now);
        let task = start(object, cancelled_rx);
        running.insert(uid, Running { cancel, task });
        running.retain(|_, r| !r.task.is_finished());
    }
}
