//! A minimal operator that embeds nbv-core without nbv-operator: the GitOps side of
//! NotebookValidationJobs that another controller runs (the upstream operator writes
//! their status; this one coordinates Argo CD sync waves, fires the on-success
//! triggers and notifies). `docs/embedding.md` walks through it.
//!
//! It drives the same machine as the `nbv` operator ([`nbv_core::job::Reconcile`]):
//! the reconcile is a loop that carries out each request the machine asks for with
//! one API call and answers it. Every decision (what is owed, in which order, what an
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
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, Preconditions,
};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};
use nbv_core::carry::CarryFacts;
use nbv_core::io::{ApiAnswer, ObjectRef, Request, Response, Step, Subresource};
use nbv_core::job::{Facts, Memory, Reconcile, Settings};
use nbv_core::plan::{ParsedAnnotations, PlanContext};
use nbv_core::prelude::NotebookValidationJob;

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
            Step::Io(request) => machine.answer(carry_out(&ctx.client, request).await),
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

/// Carries `request` out with one API call.
async fn carry_out(client: &Client, request: Request) -> Response {
    let api = |object: &ObjectRef| {
        let gvk = GroupVersionKind::gvk(object.group(), object.version(), &object.kind);
        let resource = ApiResource::from_gvk(&gvk);
        match &object.namespace {
            Some(ns) => Api::<DynamicObject>::namespaced_with(client.clone(), ns, &resource),
            None => Api::<DynamicObject>::all_with(client.clone(), &resource),
        }
    };
    let json = |object: DynamicObject| serde_json::to_value(object).unwrap_or_default();
    let patch = PatchParams {
        field_manager: Some(COMPONENT.to_owned()),
        ..PatchParams::default()
    };
    let object = |o: DynamicObject| Response::Object(Some(json(o)));
    let result = match request {
        // This operator keeps no watch cache but the jobs'.
        Request::Cached(_) => return Response::NotCached,
        Request::Get(o) => api(&o)
            .get_opt(&o.name)
            .await
            .map(|o| Response::Object(o.map(json))),
        Request::List {
            kind,
            label_selector: s,
        } => {
            let list = api(&kind).list(&ListParams::default().labels(&s)).await;
            list.map(|l| Response::Objects(l.items.into_iter().map(json).collect()))
        }
        Request::Create { object: o, body } => match serde_json::from_value(body) {
            Ok(body) => api(&o)
                .create(&PostParams::default(), &body)
                .await
                .map(object),
            Err(e) => return Response::Failed(ApiAnswer::no_answer(e.to_string())),
        },
        Request::Patch {
            object: o,
            subresource,
            patch: body,
        } => match subresource {
            Subresource::Object => api(&o).patch(&o.name, &patch, &Patch::Merge(&body)).await,
            Subresource::Status => {
                api(&o)
                    .patch_status(&o.name, &patch, &Patch::Merge(&body))
                    .await
            }
        }
        .map(object),
        Request::Delete { object: o, uid } => {
            let precondition = Preconditions {
                uid,
                resource_version: None,
            };
            let params = DeleteParams::default().preconditions(precondition);
            api(&o)
                .delete(&o.name, &params)
                .await
                .map(|_| Response::Deleted)
        }
        Request::DeleteAll {
            kind,
            label_selector: s,
        } => {
            let (params, list) = (DeleteParams::background(), ListParams::default().labels(&s));
            let deleted = api(&kind).delete_collection(&params, &list).await;
            deleted.map(|d| {
                Response::Objects(
                    d.left()
                        .into_iter()
                        .flat_map(|l| l.items)
                        .map(json)
                        .collect(),
                )
            })
        }
    };
    result.unwrap_or_else(|error| {
        Response::Failed(match error {
            kube::Error::Api(s) => ApiAnswer::status(s.code, s.reason.clone(), s.message.clone()),
            other => ApiAnswer::no_answer(other.to_string()),
        })
    })
}
