//! One reconcile of a NotebookValidationJob: nbv-core's job machine
//! ([`nbv_core::job::Reconcile`]), driven. The machine asks for one request at a time
//! and decides everything; this loop carries each request out through [`JobIo`] and
//! answers it, then keeps what the machine says to remember, counts and logs what it
//! noted, and requeues when it says.

pub mod context;
mod error;
mod io;
mod notes;
mod parsed;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::runtime::controller::Action;
use nbv_core::aggregate::JobKey;
use nbv_core::api::NotebookValidationJob;
use nbv_core::io::Step;
use nbv_core::job::{Facts, Reconcile};

use crate::operator::metrics::ReconcileOutcome;
use crate::operator::projection::CachedJob;
use context::Context;

pub use error::Error;
pub use io::{Cluster, JobIo, Memories};
pub use parsed::ParsedTriggers;

/// Reconciles one job, unpacked from the cache. Used as the controller's reconcile
/// function.
pub async fn reconcile(cached: Arc<CachedJob>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = match cached.job() {
        Ok(job) => reconcile_job(&job, &ctx).await,
        Err(error) => Err(Error::Cache(error)),
    };
    let outcome = match &result {
        Ok(_) => ReconcileOutcome::Ok,
        Err(e) => {
            ctx.metrics.reconcile_error(e.kind());
            ReconcileOutcome::Error
        }
    };
    ctx.metrics.reconciled(outcome, started.elapsed());
    // An error is retried at a time of its own (`error_policy`, which tells the queue).
    let requeue = match &result {
        Ok(requeue) => *requeue,
        Err(error) => Some(error.retry_after(&ctx.settings.requeue)),
    };
    if result.is_ok() {
        ctx.metrics
            .queue()
            .requeued(cached.namespace(), cached.name(), requeue);
    }
    ctx.reconciles
        .ended(cached.namespace(), cached.name(), requeue.is_some());
    result.map(|requeue| requeue.map_or_else(Action::await_change, Action::requeue))
}

/// The controller's error policy: log, and retry when the machine said.
pub fn error_policy(job: Arc<CachedJob>, error: &Error, ctx: Arc<Context>) -> Action {
    tracing::warn!(job = job.name(), %error, "reconcile failed; retrying");
    let retry = error.retry_after(&ctx.settings.requeue);
    ctx.metrics
        .queue()
        .requeued(job.namespace(), job.name(), Some(retry));
    Action::requeue(retry)
}

/// Reconciles `job`; `Ok` says when to reconcile it again if nothing changes before
/// (`None`: only when something changes).
async fn reconcile_job(
    job: &NotebookValidationJob,
    ctx: &Context,
) -> Result<Option<Duration>, Error> {
    let key = JobKey::of(job).ok_or(Error::Identity)?;
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let facts = Facts {
        carry: ctx.executor.carry_facts(),
        parsed: ctx.parsed_triggers.parsed(job, &ctx.plan_context()),
        memory: ctx.io.recall(&uid),
    };
    let mut machine = Reconcile::start(job, Arc::clone(&ctx.settings), facts, ctx.clock.now());
    let done = loop {
        match machine.next() {
            Step::Io(request) => machine.answer(ctx.io.run(&key, request).await),
            Step::Done(done) => break done,
        }
    };
    ctx.io.finished(&key).await;
    if done.deleted {
        ctx.job_deleted(job);
        return Ok(None);
    }
    ctx.io.keep(&uid, done.memory);
    ctx.models.waits(&key, &done.waits_for);
    notes::record(ctx, &key, done.notes);
    match done.result {
        Ok(()) => Ok(done.requeue),
        Err(failure) => Err(Error::Job {
            job: key.to_string(),
            failure,
            retry: done.requeue.unwrap_or_default(),
        }),
    }
}
