//! A minimal operator that embeds nbv-core without nbv-operator: the GitOps side of
//! NotebookValidationJobs that another controller runs (the upstream operator writes
//! their status; this one coordinates Argo CD sync waves, fires the on-success
//! triggers and notifies). `docs/embedding.md` walks through it.
//!
//! It drives the same machine as the `nbv` operator ([`nbv_core::job::Reconcile`]):
//! the reconcile is a loop that carries out each request the machine asks for with
//! one API call (`nbv_kube::KubeIo`, which the operator uses too) and answers it. Every decision (what is owed, in which order, what an
//! answer means, when to look again) is the machine's.
//!
//! `cargo run -p nbv-core --example embed` runs it against the cluster of the current
//! kubeconfig (or the in-cluster service account); `nbv-core/tests/embed.rs` runs it
//! against nbv-testkit's in-memory API server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::StreamExt;
use kube::api::Api;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use nbv_core::carry::CarryFacts;
use nbv_core::io::Step;
use nbv_core::job::{Facts, Memory, Reconcile, Settings};
use nbv_core::plan::{ParsedAnnotations, PlanContext};
use nbv_core::prelude::NotebookValidationJob;
use nbv_kube::KubeIo;

/// Runs the operator until the job watch ends.
#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    let client = kube::Client::try_default().await?;
    run(Context::new(client)).await;
    Ok(())
}

/// The name this operator gives itself: field manager, and the source of its Events.
pub const COMPONENT: &str = "nbv-embed-example";

/// What a reconcile needs: the client, the machine's settings, what this process
/// remembers of its writes (by job uid), and the clock.
pub struct Context {
    client: Client,
    io: KubeIo,
    settings: Arc<Settings>,
    memory: Mutex<HashMap<String, Memory>>,
    now: Box<dyn Fn() -> DateTime<Utc> + Send + Sync>,
}

impl Context {
    /// A context for jobs whose notebooks another controller runs, on the system clock.
    pub fn new(client: Client) -> Self {
        let settings = Settings {
            gitops_only: true,
            ..Settings::default()
        };
        Context {
            io: KubeIo::new(client.clone(), COMPONENT),
            client,
            settings: Arc::new(settings),
            memory: Mutex::default(),
            now: Box::new(Utc::now),
        }
    }

    /// The same context reading time from `now` (a test's virtual clock).
    #[must_use]
    pub fn with_clock(mut self, now: impl Fn() -> DateTime<Utc> + Send + Sync + 'static) -> Self {
        self.now = Box::new(now);
        self
    }

    /// What the machine is told besides the job: how to carry effects out, the parsed
    /// trigger annotation (an operator with many jobs keeps a `PlanCache`), and what
    /// this process remembers of the job.
    fn facts(&self, job: &NotebookValidationJob) -> Facts {
        let carry = CarryFacts {
            field_manager: COMPONENT.to_owned(),
            reporting_instance: COMPONENT.to_owned(),
            ..CarryFacts::default()
        };
        let plan = PlanContext {
            argocd_namespace: self.settings.argocd_namespace.clone(),
            ..PlanContext::default()
        };
        let memory = self
            .memory
            .lock()
            .unwrap()
            .remove(&job.uid().unwrap_or_default());
        Facts {
            carry,
            parsed: Arc::new(ParsedAnnotations::of(job, &plan)),
            memory: memory.unwrap_or_default(),
        }
    }
}

/// Watches every NotebookValidationJob and reconciles each change until the watch
/// stream ends.
pub async fn run(ctx: Context) {
    let jobs: Api<NotebookValidationJob> = Api::all(ctx.client.clone());
    Controller::new(jobs, watcher::Config::default())
        .run(
            reconcile,
            |_, _, _| Action::requeue(Duration::from_secs(10)),
            Arc::new(ctx),
        )
        .for_each(|_| async {})
        .await;
}

/// One reconcile: the machine asks, the cluster answers, until it is done.
///
/// # Errors
///
/// What stopped the reconcile (a failed request); it is tried again.
pub async fn reconcile(
    job: Arc<NotebookValidationJob>,
    ctx: Arc<Context>,
) -> Result<Action, nbv_core::job::Failure> {
    let now = (ctx.now)();
    let mut machine = Reconcile::start(&job, Arc::clone(&ctx.settings), ctx.facts(&job), now);
    let done = loop {
        match machine.next() {
            // One API call per request (this operator keeps no watch cache but the jobs').
            Step::Io(request) => machine.answer(ctx.io.run(request).await),
            Step::Done(done) => break done,
        }
    };
    if !done.memory.is_empty() {
        let uid = job.uid().unwrap_or_default();
        ctx.memory.lock().unwrap().insert(uid, done.memory);
    }
    done.result?;
    Ok(done
        .requeue
        .map_or_else(Action::await_change, Action::requeue))
}
