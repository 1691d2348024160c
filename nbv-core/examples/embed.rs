//! A minimal operator that embeds nbv-core without nbv-operator: the GitOps side of
//! NotebookValidationJobs that another controller runs (the upstream operator writes
//! their status; this one coordinates Argo CD sync waves and notifies).
//!
//! One reconcile is the whole of nbv's exactly-once model in a few lines
//! (`docs/embedding.md` walks through it):
//!
//! 1. **decide**: [`nbv_core::plan()`] from the job as persisted;
//! 2. **carry out** each effect with the smallest API call: the wave annotations as a
//!    merge patch of the job, the notification as a core/v1 Event whose name is unique
//!    per run (so creating it twice is harmless);
//! 3. **record** each outcome with [`nbv_core::record`] and write the ledger to
//!    `status.effects`, so a re-reconcile or a restart owes nothing that was done.
//!
//! On-success triggers (restart, sync, refresh) are left to a full operator: this one
//! records them as given up, with the reason, so the plan stops owing them and the
//! ledger says why they did not happen.
//!
//! `cargo run -p nbv-core --example embed` runs it against the cluster of the current
//! kubeconfig (or the in-cluster service account); `nbv-core/tests/embed.rs` runs it
//! against nbv-testkit's in-memory API server.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use nbv_core::api::{API_VERSION, EffectLedger, KIND};
use nbv_core::events::EventType;
use nbv_core::prelude::*;
use serde_json::json;

/// Runs the operator until the job watch ends.
#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = kube::Client::try_default().await?;
    run(Context::new(client)).await;
    Ok(())
}

/// The name this operator gives itself in Events.
pub const COMPONENT: &str = "nbv-embed-example";

/// Why given-up triggers did not happen.
pub const TRIGGERS_NOT_SUPPORTED: &str =
    "this operator does not carry out on-success triggers; run nbv for them";

/// What a reconcile needs: the client, the plan's settings and the clock.
#[derive(Clone)]
pub struct Context {
    client: Client,
    plan: PlanContext,
    now: Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>,
}

impl Context {
    /// A context with the default plan settings and the system clock.
    pub fn new(client: Client) -> Self {
        Context {
            client,
            plan: PlanContext::default(),
            now: Arc::new(Utc::now),
        }
    }

    /// The same context reading time from `now` (a test's virtual clock).
    #[must_use]
    pub fn with_clock(mut self, now: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        self.now = Arc::new(now);
        self
    }
}

/// What went wrong in a reconcile; the controller retries after [`RETRY_AFTER`].
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// An API request failed (other than the Event that already exists).
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),
    /// The job has no namespace: NotebookValidationJobs are namespaced.
    #[error("job {0} has no namespace")]
    NoNamespace(String),
}

/// How long the controller waits before retrying a failed reconcile.
pub const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Watches every NotebookValidationJob and reconciles each change until the watch
/// stream ends.
pub async fn run(ctx: Context) {
    let jobs: Api<NotebookValidationJob> = Api::all(ctx.client.clone());
    Controller::new(jobs, watcher::Config::default())
        .run(
            reconcile,
            |_, _, _| Action::requeue(RETRY_AFTER),
            Arc::new(ctx),
        )
        .for_each(|_| async {})
        .await;
}

/// One reconcile: plan, carry out, record, persist.
///
/// # Errors
///
/// The first API request that failed; the effects before it are recorded by the next
/// reconcile's plan, since each is idempotent.
pub async fn reconcile(
    job: Arc<NotebookValidationJob>,
    ctx: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let now = (ctx.now)();
    let name = job.name_any();
    let namespace = job
        .namespace()
        .ok_or_else(|| ReconcileError::NoNamespace(name.clone()))?;
    let jobs: Api<NotebookValidationJob> = Api::namespaced(ctx.client.clone(), &namespace);

    let owed = plan(&job, &ctx.plan, now);
    if owed.effects.is_empty() {
        return Ok(requeue(owed.retry_at, now));
    }
    let mut ledger = owed.ledger();
    for planned in &owed.effects {
        let outcome = match &planned.effect {
            Effect::PatchJob { patch } => {
                jobs.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await?;
                Outcome::Done
            }
            Effect::Notify { event } => {
                create_event(&ctx.client, &job, event).await?;
                Outcome::Done
            }
            Effect::Trigger { .. } | Effect::SyncResult { .. } => {
                Outcome::GiveUp(TRIGGERS_NOT_SUPPORTED.to_owned())
            }
            // The report of a given-up effect: the ledger keeps its error; a full
            // operator would also create a Warning Event.
            Effect::ReportGaveUp { .. } => Outcome::Done,
        };
        ledger = record(ledger, &planned.key, outcome, now, &ctx.plan.retry).ledger;
    }
    jobs.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(ledger_patch(&ledger)),
    )
    .await?;
    Ok(requeue(plan_after(&job, ledger, &ctx.plan, now), now))
}

/// The merge patch that replaces `status.effects` with `ledger`. `failed` is written
/// even when empty: a merge patch keeps what it does not mention.
fn ledger_patch(ledger: &EffectLedger) -> serde_json::Value {
    let mut effects = serde_json::to_value(ledger).unwrap_or_default();
    effects["failed"] = json!(ledger.failed);
    json!({"status": {"effects": effects}})
}

/// When the plan, with `ledger` persisted, next owes a retry.
fn plan_after(
    job: &NotebookValidationJob,
    ledger: EffectLedger,
    ctx: &PlanContext,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let mut persisted = job.clone();
    persisted
        .status
        .get_or_insert_with(Default::default)
        .effects = Some(ledger);
    plan(&persisted, ctx, now).retry_at
}

/// Requeue at the plan's retry time; otherwise wait for the next change of the job.
fn requeue(retry_at: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Action {
    match retry_at.map(|at| (at - now).to_std().unwrap_or_default()) {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    }
}

/// Creates the notification Event; one that already exists was created by an earlier
/// attempt of the same run (its name is unique per run and outcome).
async fn create_event(
    client: &Client,
    job: &NotebookValidationJob,
    event: &NotificationEvent,
) -> Result<(), kube::Error> {
    // A time the API server stored has a four-digit year, which jiff holds; should it
    // not, the Event goes without timestamps rather than not at all.
    let at = Timestamp::new(
        event.completed_at.timestamp(),
        i32::try_from(event.completed_at.timestamp_subsec_nanos()).unwrap_or(0),
    )
    .ok()
    .map(Time);
    let object = Event {
        metadata: ObjectMeta {
            name: Some(event.name.clone()),
            namespace: Some(event.namespace.clone()),
            labels: Some(event.labels.clone()),
            ..ObjectMeta::default()
        },
        involved_object: ObjectReference {
            api_version: Some(API_VERSION.to_owned()),
            kind: Some(KIND.to_owned()),
            name: Some(event.job_name.clone()),
            namespace: Some(event.namespace.clone()),
            uid: event.job_uid.clone().or_else(|| job.uid()),
            ..ObjectReference::default()
        },
        type_: Some(
            match event.event_type {
                EventType::Normal => "Normal",
                EventType::Warning => "Warning",
            }
            .to_owned(),
        ),
        reason: Some(event.reason.to_owned()),
        message: Some(event.message.clone()),
        source: Some(EventSource {
            component: Some(COMPONENT.to_owned()),
            ..EventSource::default()
        }),
        first_timestamp: at.clone(),
        last_timestamp: at,
        count: Some(1),
        ..Event::default()
    };
    let events: Api<Event> = Api::namespaced(client.clone(), &event.namespace);
    match events.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(error) => Err(error),
    }
}
