//! The end-to-end suite's harness: the cluster, nbv as a process, the stand-ins for
//! what the control plane lacks (a kubelet, a Git server), and nbv's requests read
//! from the audit log.

pub mod audit;
pub mod builds;
pub mod cluster;
pub mod container;
pub mod disruption;
pub mod git;
pub mod install;
pub mod kubelet;
pub mod model;
pub mod objects;
pub mod openshift;
pub mod operator;
pub mod process;
pub mod prometheus;
pub mod proxy;

use std::future::Future;
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use k8s_openapi::api::core::v1::Event;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use nbv_core::api::{NotebookValidationJob, Phase};
use serde_json::{Value, json};

pub use audit::{Mark, Requests};
pub use cluster::Cluster;
pub use operator::{Operator, OperatorOptions};

use objects::resource;

/// One test's view of the cluster: its own namespace, an administrator's client, and
/// where its requests start in the audit log.
pub struct Scenario {
    /// The cluster.
    pub cluster: Cluster,
    /// An administrator's client (setup, the stand-ins, assertions).
    pub client: kube::Client,
    /// The test's namespace.
    pub namespace: String,
    /// Where the test's requests start in the audit log.
    pub mark: Option<Mark>,
}

impl Scenario {
    /// Sets the cluster up (once) and creates the test's namespace, `prefix` and this
    /// test process's id (a namespace is never deleted, so a second run of the suite on
    /// the same cluster starts afresh). Panics, naming what to set up, when there is
    /// no cluster (see [`Cluster::from_env`]).
    pub async fn new(prefix: &str) -> Scenario {
        let namespace = &format!("{prefix}-{}", std::process::id());
        let cluster = Cluster::from_env();
        let client = cluster.admin().await;
        install::install(&client).await;
        install::ensure_namespace(&client, namespace, json!({})).await;
        let mark = cluster.audit().map(|a| a.mark());
        Scenario {
            cluster,
            client,
            namespace: namespace.to_owned(),
            mark,
        }
    }

    /// nbv's requests since the scenario began (on our control plane), leaving out
    /// those about other tests' namespaces (an operator of an earlier test may still be
    /// closing its watches).
    pub fn requests(&self) -> Option<Requests> {
        let Requests(all) = self.cluster.audit()?.since(self.mark?);
        let ours = |ns: &str| !ns.starts_with("e2e-") || ns.starts_with(&self.namespace);
        Some(Requests(
            all.into_iter().filter(|r| ours(r.namespace())).collect(),
        ))
    }

    /// Prints nbv's requests by verb and resource, and checks none was forbidden.
    /// `None` on another cluster than the suite's own control plane, which has no audit
    /// log: the test's other checks still run, and the output says which did not.
    pub fn report_requests(&self, what: &str) -> Option<Requests> {
        let Some(requests) = self.requests() else {
            eprintln!(
                "requests of nbv, {what}: not counted, and not checked against the role \
                 (no audit log: this is not the suite's own control plane)"
            );
            return None;
        };
        eprintln!("requests of nbv, {what}: {requests}");
        requests.assert_none_forbidden();
        Some(requests)
    }

    /// Starts `nbv run`.
    pub fn operator(&self, options: &OperatorOptions) -> Operator {
        Operator::start(&self.cluster, options)
    }

    /// The jobs of the test's namespace.
    pub fn jobs(&self) -> Api<NotebookValidationJob> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// Applies objects (YAML or JSON values) in the test's namespace.
    pub async fn apply(&self, object: Value) -> DynamicObject {
        objects::apply(&self.client, &object, Some(&self.namespace)).await
    }

    /// The job, as stored.
    pub async fn job(&self, name: &str) -> NotebookValidationJob {
        self.jobs().get(name).await.expect("the job")
    }

    /// The job `name` once it has ended (Succeeded or Failed), waiting at most
    /// `within`.
    pub async fn ended(&self, name: &str, within: Duration) -> NotebookValidationJob {
        eventually(&format!("job {name} to end"), within, || async {
            let job = self.job(name).await;
            matches!(phase(&job), Some(Phase::Succeeded | Phase::Failed)).then_some(job)
        })
        .await
    }

    /// Writes the job's status as another controller would (`--gitops-only`).
    pub async fn set_job_status(&self, name: &str, status: Value) {
        self.jobs()
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": status})),
            )
            .await
            .expect("write the job's status");
    }

    /// Another controller runs job `name` (a job of [`job`] with `annotations`) and
    /// ends it with `Succeeded`, as in `--gitops-only`.
    pub async fn succeeds_elsewhere(&self, name: &str, annotations: Value) {
        let job = job(
            name,
            "https://git.example.com/ml/models.git",
            "main",
            "train.ipynb",
            annotations,
        );
        self.apply(job).await;
        self.set_job_status(
            name,
            json!({"phase": "ValidationRunning", "observedGeneration": 1,
                                         "startTime": rfc3339(Utc::now())}),
        )
        .await;
        self.set_job_status(
            name,
            ended("Succeeded", "Validation completed successfully"),
        )
        .await;
    }

    /// Events about `name` in the test's namespace, with `reason`.
    pub async fn events(&self, name: &str, reason: &str) -> Vec<Event> {
        let events: Api<Event> = Api::namespaced(self.client.clone(), &self.namespace);
        events
            .list(&ListParams::default())
            .await
            .expect("list Events")
            .items
            .into_iter()
            .filter(|e| e.involved_object.name.as_deref() == Some(name))
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect()
    }

    /// Argo CD Applications in `namespace`.
    pub fn applications(&self, namespace: &str) -> Api<DynamicObject> {
        Api::namespaced_with(
            self.client.clone(),
            namespace,
            &resource("argoproj.io", "v1alpha1", "Application", "applications"),
        )
    }

    /// Deletes the test's jobs, so that later tests' operators do not see them.
    pub async fn clean_up(&self) {
        let _ = self
            .jobs()
            .delete_collection(&Default::default(), &ListParams::default())
            .await;
    }
}

/// The condition of `type_` on a job, as `(status, reason, message)`.
pub fn condition(
    job: &nbv_core::api::NotebookValidationJob,
    type_: &str,
) -> Option<(String, String, String)> {
    job.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

/// An annotation of an object, or `None`.
pub fn annotation<'a>(meta: &'a kube::api::ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.as_ref()?.get(key).map(String::as_str)
}

/// RFC 3339, seconds, UTC.
pub fn rfc3339(at: chrono::DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Waits until `check` returns `Some`, for at most `timeout`.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The status another controller writes when a run ends: started 40 s ago, ended now.
pub fn ended(phase: &str, message: &str) -> Value {
    let now = Utc::now();
    json!({"phase": phase, "observedGeneration": 1, "message": message,
           "startTime": rfc3339(now - chrono::Duration::seconds(40)),
           "completionTime": rfc3339(now)})
}

/// How long a job of the notebook scenarios takes at most: its Pod starts, clones once
/// or twice and runs papermill within seconds.
pub const RUN: Duration = Duration::from_secs(150);

/// The job's phase, if it has one.
pub fn phase(job: &NotebookValidationJob) -> Option<Phase> {
    job.status.as_ref()?.phase
}

/// The job's `status.message` (empty without one).
pub fn message(job: &NotebookValidationJob) -> String {
    job.status
        .as_ref()
        .and_then(|s| s.message.clone())
        .unwrap_or_default()
}

/// A job for the test's repository: `notebook` at `git_url`/`git_ref`, with
/// `annotations`.
pub fn job(name: &str, git_url: &str, git_ref: &str, notebook: &str, annotations: Value) -> Value {
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "notebook": {"git": {"url": git_url, "ref": git_ref}, "path": notebook},
            "podConfig": {"containerImage": "quay.io/jupyter/minimal-notebook:2026-01-05"},
            "timeout": "5m"
        }
    })
}
