//! Publishing the notebook status of each Argo CD Application (feature 4).
//!
//! Jobs feed an incremental [`AggregateIndex`] (O(1) per job change: no LIST of the
//! namespace per event, unlike the upstream operator). A single task publishes each
//! Application that changed, following the core's policy ([`decide_publish`]): at most
//! one patch per Application per minute, the final state always published (a trailing
//! update after the quiet period), a resync every 5 minutes. The Application's current
//! annotations come from the watch cache, so publishing costs one PATCH and only when
//! the published content would change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use futures::FutureExt;
use kube::api::DynamicObject;
use kube::runtime::reflector::{ObjectRef, Store};
use nbv_core::aggregate::{
    AggregateIndex, AppId, AppRef, JobEntry, JobKey, JobPhase, PublishDecision, StatusLimit,
    TrackingSettings, decide_publish,
};
use nbv_core::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use nbv_core::api::NotebookValidationJob;
use tokio::sync::Notify;

use crate::clock::Clock;
use crate::effects::Executor;
use crate::metrics::Metrics;

/// Publication state of one Application.
#[derive(Clone, Debug, Default)]
struct AppState {
    last_publish: Option<DateTime<Utc>>,
    last_change: Option<DateTime<Utc>>,
    pending: bool,
    /// A failed patch is retried no sooner than this.
    retry_at: Option<DateTime<Utc>>,
}

#[derive(Default)]
struct State {
    index: AggregateIndex,
    apps: HashMap<AppId, AppState>,
    /// Namespaces of the jobs seen for each Application: where an Application without
    /// an explicit namespace may live besides the configured namespaces.
    homes: HashMap<AppId, BTreeSet<String>>,
    /// The jobs were listed: Applications that show a status but have no job left
    /// are to be found and published.
    sweep_due: bool,
}

impl State {
    /// Records a job's facts; returns the Applications whose aggregate changed.
    fn upsert(&mut self, job: JobKey, parent: Option<AppRef>, phase: JobPhase) -> Vec<AppId> {
        if let Some(parent) = &parent {
            self.homes
                .entry(parent.app.clone())
                .or_default()
                .insert(job.namespace().to_owned());
        }
        self.index.upsert(job, parent, phase)
    }

    /// Marks `apps` as changed at `now`: each is published when the policy allows.
    fn mark_pending(&mut self, apps: &[AppId], now: DateTime<Utc>) {
        for app in apps {
            let entry = self.apps.entry(app.clone()).or_default();
            entry.pending = true;
            entry.last_change = Some(now);
        }
    }

    /// Namespaces of the jobs seen for `app`.
    fn homes_of(&self, app: &AppId) -> Vec<String> {
        self.homes
            .get(app)
            .map(|h| h.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// The Application status publisher. Cheap to share (`Arc`).
pub struct Publisher {
    state: Mutex<State>,
    wake: Notify,
    clock: Arc<dyn Clock>,
    executor: Executor,
    metrics: Arc<Metrics>,
    applications: Option<Store<DynamicObject>>,
    namespaces: Vec<String>,
    /// The jobs' watch cache: a job it no longer holds is counted nowhere.
    jobs: Option<Store<NotebookValidationJob>>,
    /// How a listed job's parent is found.
    tracking: TrackingSettings,
}

impl Publisher {
    /// A publisher that patches through `executor` and reads Applications from
    /// `applications` (the watch cache), looking for an Application without a
    /// namespace in `namespaces`, in order, then in the job's own namespace.
    pub fn new(
        clock: Arc<dyn Clock>,
        executor: Executor,
        metrics: Arc<Metrics>,
        applications: Option<Store<DynamicObject>>,
        namespaces: Vec<String>,
    ) -> Self {
        Publisher {
            state: Mutex::new(State::default()),
            wake: Notify::new(),
            clock,
            executor,
            metrics,
            applications,
            namespaces,
            jobs: None,
            tracking: TrackingSettings::default(),
        }
    }

    /// Finds the parents of listed jobs with `tracking` (the reconciler must use the
    /// same settings).
    #[must_use]
    pub fn with_tracking(mut self, tracking: TrackingSettings) -> Self {
        self.tracking = tracking;
        self
    }

    /// The parent Application `app` of a job in `job_namespace`, from the watch cache.
    pub fn application(&self, app: &AppId, job_namespace: &str) -> Option<Arc<DynamicObject>> {
        let mut homes = self.state().homes_of(app);
        homes.push(job_namespace.to_owned());
        self.find_application(app, &homes)
    }

    /// Counts only the jobs `jobs` (the controller's watch cache of jobs) holds: a
    /// reconcile that finishes after its job was deleted does not count it again,
    /// and [`jobs_relisted`](Self::jobs_relisted) drops the jobs deleted while the
    /// watch was down.
    #[must_use]
    pub fn with_jobs(mut self, jobs: Store<NotebookValidationJob>) -> Self {
        self.jobs = Some(jobs);
        self
    }

    /// Whether `job` exists, as far as the jobs' watch cache knows (always true
    /// without one).
    fn exists(&self, job: &JobKey) -> bool {
        self.jobs.as_ref().is_none_or(|store| {
            store
                .get(&ObjectRef::new(job.name()).within(job.namespace()))
                .is_some()
        })
    }

    /// Marks `changed` Applications for publication and wakes the publishing task.
    fn mark_changed(&self, state: &mut State, changed: &[AppId], now: DateTime<Utc>) {
        state.mark_pending(changed, now);
        if !changed.is_empty() {
            self.wake.notify_one();
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the index half-updated in a way
        // that matters more than stopping publication: recover the data.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records the current phase and parent of a job. A job the jobs' watch cache
    /// no longer holds was deleted while it was being reconciled: it is forgotten
    /// instead.
    pub fn job_changed(&self, job: JobKey, parent: Option<AppRef>, phase: JobPhase) {
        let now = self.clock.now();
        let mut state = self.state();
        // Checked under the lock: a deletion (store first, then `job_removed`) is
        // either seen here or applied after this update.
        if !self.exists(&job) {
            let changed = state.index.remove(&job);
            self.mark_changed(&mut state, &changed, now);
            return;
        }
        let changed = state.upsert(job, parent, phase);
        self.mark_changed(&mut state, &changed, now);
    }

    /// Forgets a deleted job.
    pub fn job_removed(&self, job: &JobKey) {
        let now = self.clock.now();
        let mut state = self.state();
        let changed = state.index.remove(job);
        self.mark_changed(&mut state, &changed, now);
    }

    /// The jobs' watch listed every job (at start, or again after the watch was
    /// lost): the index takes every listed job's facts, forgets the jobs the listing
    /// no longer holds (deleted while the watch was not looking), and the next
    /// publication looks for Applications that show a status but have no job left.
    pub fn jobs_relisted(&self) {
        let Some(jobs) = &self.jobs else { return };
        let now = self.clock.now();
        let mut state = self.state();
        let mut changed = state.index.retain(|job| self.exists(job));
        for entry in jobs
            .state()
            .iter()
            .filter_map(|job| JobEntry::of(job, &self.tracking))
        {
            changed.extend(state.upsert(entry.key, entry.lookup.parent, entry.phase));
        }
        changed.sort_unstable();
        changed.dedup();
        state.mark_pending(&changed, now);
        state.sweep_due = true;
        // Also without changes: the sweep is due.
        self.wake.notify_one();
    }

    /// Marks for publication every Application in the watch cache that shows a
    /// notebook status but that no known job belongs to (its jobs were all deleted
    /// while nbv was not running), so that it shows that no job is left. Returns
    /// false while the Application cache has not been filled yet.
    fn sweep(&self, state: &mut State, now: DateTime<Utc>) -> bool {
        let Some(store) = &self.applications else {
            return true;
        };
        if store.wait_until_ready().now_or_never().is_none() {
            return false;
        }
        let known: BTreeSet<(Option<String>, Option<String>)> = state
            .apps
            .keys()
            .chain(state.index.applications())
            .filter_map(|app| self.find_application(app, &state.homes_of(app)))
            .map(|object| {
                (
                    object.metadata.namespace.clone(),
                    object.metadata.name.clone(),
                )
            })
            .collect();
        let orphans: Vec<AppId> = store
            .state()
            .iter()
            .filter(|object| {
                object.metadata.annotations.as_ref().is_some_and(|a| {
                    a.contains_key(NOTEBOOK_STATUS) || a.contains_key(NOTEBOOK_SUMMARY)
                })
            })
            .filter_map(|object| {
                let key = (
                    object.metadata.namespace.clone(),
                    object.metadata.name.clone(),
                );
                if known.contains(&key) {
                    return None;
                }
                let (Some(namespace), Some(name)) = key else {
                    return None;
                };
                AppId::new(Some(&namespace), &name).ok()
            })
            .collect();
        state.mark_pending(&orphans, now);
        true
    }

    /// The Application object an [`AppId`] names, from the watch cache.
    fn find_application(
        &self,
        app: &AppId,
        job_namespaces: &[String],
    ) -> Option<Arc<DynamicObject>> {
        let store = self.applications.as_ref()?;
        let candidates: Vec<&str> = match app.namespace() {
            Some(ns) => vec![ns],
            None => self
                .namespaces
                .iter()
                .map(String::as_str)
                .chain(job_namespaces.iter().map(String::as_str))
                .collect(),
        };
        candidates.into_iter().find_map(|ns| {
            store.get(
                &kube::runtime::reflector::ObjectRef::new_with(
                    app.name(),
                    crate::controller::application_resource(),
                )
                .within(ns),
            )
        })
    }

    /// Publishes what is due and returns when to look again.
    pub async fn publish_due(&self) -> Option<DateTime<Utc>> {
        let now = self.clock.now();
        let mut next: Option<DateTime<Utc>> = None;
        let mut due = Vec::new();
        {
            let mut state = self.state();
            if state.sweep_due {
                if self.sweep(&mut state, now) {
                    state.sweep_due = false;
                } else {
                    next = earliest(next, Some(now + chrono::Duration::seconds(5)));
                }
            }
            for (app, st) in &state.apps {
                if st.retry_at.is_some_and(|r| r > now) {
                    next = earliest(next, st.retry_at);
                    continue;
                }
                match decide_publish(st.last_publish, st.last_change, now, st.pending) {
                    PublishDecision::Now => due.push(app.clone()),
                    PublishDecision::At(at) => next = earliest(next, Some(at)),
                    PublishDecision::Idle { resync_at } => next = earliest(next, Some(resync_at)),
                }
            }
        }
        for app in due {
            let (status, namespaces) = {
                let state = self.state();
                let aggregate = state.index.aggregate(&app);
                (
                    aggregate.status(now, StatusLimit::DEFAULT),
                    state.homes_of(&app),
                )
            };
            let outcome = match self.find_application(&app, &namespaces) {
                None => Err((format!("Application {app} not found"), false)),
                Some(object) => {
                    let current: BTreeMap<String, String> =
                        object.metadata.annotations.clone().unwrap_or_default();
                    match status.application_patch(&current) {
                        None => Ok("unchanged"),
                        Some(patch) => {
                            let ns = object.metadata.namespace.clone().unwrap_or_default();
                            match self
                                .executor
                                .publish_application_status(&ns, app.name(), &patch)
                                .await
                            {
                                Ok(()) => Ok("patched"),
                                Err(e) => Err((e.to_string(), true)),
                            }
                        }
                    }
                }
            };
            let mut state = self.state();
            let remaining = state.index.aggregate(&app).total() > 0;
            let entry = state.apps.entry(app.clone()).or_default();
            match outcome {
                Ok(result) => {
                    self.metrics.application_published(result);
                    entry.pending = false;
                    entry.retry_at = None;
                    // An unchanged Application costs no API call and does not count
                    // against the once-a-minute limit.
                    if result == "patched" {
                        entry.last_publish = Some(now);
                    } else {
                        entry.last_publish = entry.last_publish.or(Some(now));
                    }
                    if !remaining && !entry.pending {
                        // Every job of the Application is gone and that is published.
                        state.apps.remove(&app);
                        state.homes.remove(&app);
                    }
                }
                Err((error, sent)) => {
                    self.metrics.application_published("error");
                    tracing::warn!(application = %app, %error, "publishing the notebook status failed");
                    if sent {
                        // The API server may have carried the patch out before the
                        // answer was lost: it counts against the once-a-minute limit.
                        entry.last_publish = Some(now);
                    }
                    entry.retry_at = Some(now + chrono::Duration::seconds(30));
                    next = earliest(next, entry.retry_at);
                }
            }
        }
        next
    }

    /// Publishes until `shutdown` resolves, sleeping in between (in virtual time under
    /// a paused tokio clock).
    pub async fn run(self: Arc<Self>, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let next = self.publish_due().await;
            let sleep = match next {
                Some(at) => (at - self.clock.now()).to_std().unwrap_or_default(),
                None => std::time::Duration::from_secs(300),
            };
            tokio::select! {
                _ = &mut shutdown => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(sleep) => {}
            }
        }
    }
}

fn earliest(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
