//! Publishing the notebook status of each Argo CD Application (feature 4).
//!
//! Every decision is the core's [`Board`]: what each Application should show (O(1)
//! per job change, no LIST of a namespace per event, unlike the upstream operator),
//! and when to publish it (at most one patch per Application per minute, the final
//! state always published, a resync every 5 minutes, a failed patch retried). This
//! task only carries them out: it feeds the board the jobs' watch events, its only
//! source (the reconciler does not know about it), and when an Application is due it
//! reads its current annotations from the Application cache and patches it through
//! the executor, only when the published content would change. An Application shows
//! only the jobs it answers for ([`Custody`]): a job that names an Application of
//! another team is left out.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use kube::runtime::watcher::Event;
use nbv_core::aggregate::{
    AppId, Board, Custody, JobEntry, Publication, PublishOutcome, TrackingSettings,
};
use nbv_core::api::NotebookValidationJob;
use tokio::sync::mpsc;

use crate::operator::applications::Applications;
use crate::operator::effects::Executor;
use crate::operator::metrics::Metrics;
use crate::operator::projection::{CachedApplication, board_view};
use crate::runtime::clock::Clock;

/// How often to look again while the Application cache has not been filled yet (the
/// sweep after a relist needs it).
const CACHE_POLL: TimeDelta = TimeDelta::seconds(5);

/// The annotations of an Application without any.
static NO_ANNOTATIONS: BTreeMap<String, String> = BTreeMap::new();

/// The namespace and name of an Application object, as an [`AppId`].
fn located(object: &CachedApplication) -> Option<AppId> {
    AppId::new(
        Some(object.metadata.namespace.as_deref()?),
        object.metadata.name.as_deref()?,
    )
    .ok()
}

/// The jobs' watch, as the publisher consumes it: hand it every event.
#[derive(Clone)]
pub struct JobFeed(mpsc::UnboundedSender<Event<NotebookValidationJob>>);

impl JobFeed {
    /// Passes one event of the jobs' watch on to the publisher, each job reduced to what
    /// the board reads ([`board_view`]), so that events waiting in the channel do not
    /// copy the jobs' cache.
    pub fn observe(&self, event: &Event<NotebookValidationJob>) {
        let event = match event {
            Event::Apply(job) => Event::Apply(board_view(job)),
            Event::Delete(job) => Event::Delete(board_view(job)),
            Event::Init => Event::Init,
            Event::InitApply(job) => Event::InitApply(board_view(job)),
            Event::InitDone => Event::InitDone,
        };
        // The publisher only stops at shutdown; events after that have nowhere to go.
        let _ = self.0.send(event);
    }
}

/// The Application status publisher: a task that owns the [`Board`].
pub struct Publisher {
    board: Board,
    events: mpsc::UnboundedReceiver<Event<NotebookValidationJob>>,
    /// What the board keeps of the jobs of a listing in progress (between `Init` and
    /// `InitDone`): their entries, not the jobs, so that a listing of 10,000 jobs
    /// holds about 1 MiB here instead of a second copy of every job.
    listing: Vec<JobEntry>,
    clock: Arc<dyn Clock>,
    executor: Executor,
    metrics: Arc<Metrics>,
    applications: Applications,
}

impl Publisher {
    /// A publisher that finds each job's Application with `tracking` (the reconciler
    /// must use the same settings), reads Applications from `applications` and patches
    /// them through `executor`; and the feed its job events come through.
    pub fn new(
        clock: Arc<dyn Clock>,
        executor: Executor,
        metrics: Arc<Metrics>,
        applications: Applications,
        tracking: TrackingSettings,
    ) -> (Self, JobFeed) {
        let (sender, events) = mpsc::unbounded_channel();
        let publisher = Publisher {
            board: Board::new(tracking),
            events,
            listing: Vec::new(),
            clock,
            executor,
            metrics,
            applications,
        };
        (publisher, JobFeed(sender))
    }

    /// Feeds one watch event to the board.
    fn take(&mut self, event: Event<NotebookValidationJob>) {
        match event {
            Event::Apply(job) => {
                self.board.apply(&job);
            }
            Event::Delete(job) => {
                self.board.delete(&job);
            }
            Event::Init => self.listing.clear(),
            Event::InitApply(job) => self.listing.extend(self.board.entry(&job)),
            Event::InitDone => {
                let listing = std::mem::take(&mut self.listing);
                self.board.reset_entries(listing);
            }
        }
    }

    /// After a relist, has the board find the Applications that show a status but
    /// have no job left. Returns when to look again if the Application cache is not
    /// ready yet.
    fn sweep(&mut self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if !self.board.sweep_due() {
            return None;
        }
        if !self.applications.ready() {
            return Some(now + CACHE_POLL);
        }
        let all = self.applications.all();
        let shown = all.iter().filter_map(|object| {
            let annotations = object.metadata.annotations.as_ref();
            Some((located(object)?, annotations.unwrap_or(&NO_ANNOTATIONS)))
        });
        let applications = &self.applications;
        self.board.sweep(shown, |app, homes| {
            located(&*applications.find(app, homes.iter().copied())?)
        });
        None
    }

    /// Publishes one Application's status; with the outcome, when the patch was sent
    /// (or, without a patch, when the Application was read): the once-a-minute limit
    /// holds between the patches as they reach the API server, however long reading
    /// the Application took.
    async fn publish(&self, publication: &Publication) -> (PublishOutcome, DateTime<Utc>) {
        let app = &publication.app;
        let homes: Vec<&str> = self.board.homes(app).collect();
        let Some(object) = self.applications.find_read(app, homes).await else {
            tracing::warn!(application = %app, error = %format!("Application {app} not found"), "publishing the notebook status failed");
            return (PublishOutcome::NotFound, self.clock.now());
        };
        let current = object
            .metadata
            .annotations
            .as_ref()
            .unwrap_or(&NO_ANNOTATIONS);
        let custody = Custody::of(&object.to_json());
        let now = self.clock.now();
        let Some(patch) = self.board.patch(publication, &custody, current, now) else {
            return (PublishOutcome::Unchanged, now);
        };
        let namespace = object.metadata.namespace.as_deref().unwrap_or_default();
        let outcome = match self
            .executor
            .publish_application_status(namespace, app.name(), &patch)
            .await
        {
            Ok(()) => PublishOutcome::Patched,
            Err(error) => {
                tracing::warn!(application = %app, %error, "publishing the notebook status failed");
                PublishOutcome::Failed
            }
        };
        (outcome, now)
    }

    /// Feeds the board and publishes what is due until `shutdown` resolves (or the
    /// jobs' watch is gone), sleeping in between (in virtual time under a paused tokio
    /// clock).
    pub async fn run(mut self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            while let Ok(event) = self.events.try_recv() {
                self.take(event);
            }
            let now = self.clock.now();
            let poll = self.sweep(now);
            let due = self.board.due(now);
            if !due.publish.is_empty() {
                for publication in &due.publish {
                    let (outcome, at) = self.publish(publication).await;
                    self.metrics.application_published(match outcome {
                        PublishOutcome::Patched => "patched",
                        PublishOutcome::Unchanged => "unchanged",
                        PublishOutcome::NotFound | PublishOutcome::Failed => "error",
                    });
                    self.board.published(publication, at, outcome);
                }
                // The board has scheduled them anew: ask it again.
                continue;
            }
            let next = match (poll, due.next) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let sleep = match next {
                Some(at) => (at - self.clock.now()).to_std().unwrap_or_default(),
                None => std::time::Duration::from_secs(300),
            };
            tokio::select! {
                _ = &mut shutdown => return,
                event = self.events.recv() => match event {
                    Some(event) => self.take(event),
                    None => return,
                },
                _ = tokio::time::sleep(sleep) => {}
            }
        }
    }
}
