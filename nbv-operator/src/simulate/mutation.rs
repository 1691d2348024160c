//! The deliberate bugs: what the simulation wraps around the reconciles' I/O to prove
//! that its invariants catch them (`nbv-operator/tests/simulate.rs`). Production code
//! knows nothing of them: they are a layer of [`JobIo`] like any fault injection.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use nbv_core::aggregate::JobKey;
use nbv_core::io::{Request, Response, Subresource};
use nbv_core::job::Memory;
use serde_json::Value;

use crate::operator::controller::IoLayer;
use crate::operator::reconcile::JobIo;

/// Deliberate bugs that tests switch on to prove the simulation's invariants detect
/// them. Never set by any flag, and not part of the production binary (the
/// `simulate` feature).
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::Mutation;
///
/// assert!(Mutation::ForgetLedger.forgets_ledger());
/// assert!(Mutation::UpstreamOrder.forgets_ledger(), "the upstream operator keeps none");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// The shell never writes (nor remembers) the effect ledger `status.effects`, so
    /// every reconcile plans a run's effects again and only their own idempotency
    /// stands between a resync and a repeated trigger.
    ForgetLedger,
    /// The upstream operator's order: the GitOps effects of a terminal transition are
    /// carried out before the terminal status is written, and no ledger is kept. A
    /// status write that fails after the triggers fired (a conflict with the shell's
    /// own annotation patch, an API error) leaves a run that the next reconcile ends
    /// again, at another time, and fires again.
    UpstreamOrder,
}

impl Mutation {
    /// Whether the bug drops the effect ledger.
    pub fn forgets_ledger(self) -> bool {
        matches!(self, Mutation::ForgetLedger | Mutation::UpstreamOrder)
    }

    /// The layer that puts the bug around a reconcile's I/O.
    pub fn layer(self) -> IoLayer {
        Arc::new(move |inner| {
            Arc::new(Mutated {
                mutation: self,
                inner,
                held: Mutex::default(),
                written: Mutex::default(),
            }) as Arc<dyn JobIo>
        })
    }
}

/// A reconcile's I/O with a bug.
struct Mutated {
    mutation: Mutation,
    inner: Arc<dyn JobIo>,
    /// Status writes of the phase held back until the reconcile ends (the upstream
    /// order), by job.
    held: Mutex<HashMap<JobKey, (Request, Value)>>,
    /// The jobs whose reconcile has written (or held) its first status write.
    written: Mutex<HashSet<JobKey>>,
}

impl Mutated {
    /// The first status write of a reconcile (the phase machine's) is held back and
    /// answered as if written: the job as read now, with the patch applied.
    async fn hold(&self, job: &JobKey, request: Request) -> Response {
        let Request::Patch { object, patch, .. } = &request else {
            return self.inner.run(job, request).await;
        };
        let read = self.inner.run(job, Request::Get(object.clone())).await;
        let Response::Object(Some(mut stored)) = read else {
            return read;
        };
        let mut applied = patch.clone();
        if let Some(metadata) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("resourceVersion");
        }
        json_patch::merge(&mut stored, &applied);
        let answer = Response::Object(Some(stored.clone()));
        self.lock_held().insert(job.clone(), (request, stored));
        answer
    }

    fn lock_held(&self) -> std::sync::MutexGuard<'_, HashMap<JobKey, (Request, Value)>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl JobIo for Mutated {
    fn run<'a>(&'a self, job: &'a JobKey, mut request: Request) -> BoxFuture<'a, Response> {
        Box::pin(async move {
            let status_write = matches!(
                &request,
                Request::Patch {
                    subresource: Subresource::Status,
                    object,
                    ..
                } if object.kind == nbv_core::api::KIND
            );
            if status_write && self.mutation.forgets_ledger() {
                strip_ledger(&mut request);
            }
            let first = status_write
                && self
                    .written
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(job.clone());
            if first && self.mutation == Mutation::UpstreamOrder {
                return self.hold(job, request).await;
            }
            self.inner.run(job, request).await
        })
    }

    fn finished<'a>(&'a self, job: &'a JobKey) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.written
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(job);
            let held = self.lock_held().remove(job);
            if let Some((request, _)) = held {
                // Written last, as the upstream operator writes it; a conflict loses it.
                let _ = self.inner.run(job, request).await;
            }
            self.inner.finished(job).await;
        })
    }

    fn recall(&self, uid: &str) -> Memory {
        let memory = self.inner.recall(uid);
        if self.mutation.forgets_ledger() {
            return Memory {
                ledger: None,
                ..memory
            };
        }
        memory
    }

    fn keep(&self, uid: &str, memory: Memory) {
        let memory = if self.mutation.forgets_ledger() {
            Memory {
                ledger: None,
                ..memory
            }
        } else {
            memory
        };
        self.inner.keep(uid, memory);
    }
}

/// Takes `status.effects` out of a status write.
fn strip_ledger(request: &mut Request) {
    if let Request::Patch { patch, .. } = request
        && let Some(status) = patch.get_mut("status").and_then(Value::as_object_mut)
    {
        status.remove("effects");
    }
}
