//! The simulated clusters the API cost is measured on: N jobs of one namespace, some of
//! which complete at once, with 0, 1 or 3 on-success triggers each.

use serde_json::{Value, json};

/// The namespace of the jobs and their targets.
pub const NAMESPACE: &str = "ml";

/// The Application that tracks every job (its status is what the publisher patches).
pub const PLATFORM: &str = "platform";

/// When the other controller writes the terminal phases, after the operator's start.
pub const COMPLETE_AT: &str = "1m";

/// How long the simulation runs: four minutes after the completions, under the
/// five-minute resync, so that every request counted is one the completions caused
/// or one of the first start.
pub const SETTLE: &str = "5m";

/// The on-success triggers of each completing job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Triggers {
    /// None: the wave annotations and the notification only.
    None,
    /// A rolling restart of a Deployment.
    One,
    /// A restart of an InferenceService (deleting its `pods` pods), a rolling restart
    /// of a Deployment and a sync of an Argo CD Application.
    Three,
}

impl Triggers {
    /// How many triggers that is.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_benches::requests::Triggers;
    /// assert_eq!(Triggers::Three.count(), 3);
    /// ```
    pub fn count(self) -> usize {
        match self {
            Triggers::None => 0,
            Triggers::One => 1,
            Triggers::Three => 3,
        }
    }
}

/// One measured situation.
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::{Case, Triggers};
///
/// let case = Case { jobs: 100, completing: 10, triggers: Triggers::Three, pods: 2 };
/// assert_eq!(case.label(), "3 triggers, k=2");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Case {
    /// Jobs in the namespace (N).
    pub jobs: usize,
    /// How many of them complete at once.
    pub completing: usize,
    /// The triggers of each completing job.
    pub triggers: Triggers,
    /// Pods of each InferenceService restarted (k), with [`Triggers::Three`].
    pub pods: usize,
}

impl Case {
    /// The scenario column of a table.
    pub fn label(&self) -> String {
        match self.triggers {
            Triggers::None => "0 triggers".to_owned(),
            Triggers::One => "1 trigger (rolling restart)".to_owned(),
            Triggers::Three => format!("3 triggers, k={}", self.pods),
        }
    }
}

/// The name of job `i`.
pub fn job_name(i: usize) -> String {
    format!("notebook-{i:05}")
}

/// The scenario of `case`, as the YAML (JSON is YAML) `nbv simulate` reads:
/// gitops-only (another controller writes the phases), every job `ValidationRunning`
/// when the operator starts, and, when `complete`, the first `case.completing` jobs
/// written `Succeeded` at [`COMPLETE_AT`] all at once. Without `complete` it measures
/// the first start alone.
///
/// # Examples
///
/// ```
/// use nbv_benches::requests::scenario::scenario;
/// use nbv_benches::requests::{Case, Triggers};
///
/// let case = Case { jobs: 3, completing: 2, triggers: Triggers::Three, pods: 2 };
/// let scenario = nbv_testkit::scenario::Scenario::from_yaml(&scenario(&case, true)).unwrap();
/// assert_eq!(scenario.timeline.len(), 2);
/// // Namespaces, Applications, jobs, and per completing job a Deployment, an
/// // InferenceService with its 2 pods and an Application.
/// assert_eq!(scenario.objects.len(), 2 + 1 + 3 + 2 * 5);
/// ```
pub fn scenario(case: &Case, complete: bool) -> String {
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
        application(PLATFORM),
    ];
    for i in 0..case.jobs {
        let triggered = i < case.completing;
        objects.push(job(i, triggered.then_some(case.triggers)));
        if triggered && case.triggers != Triggers::None {
            objects.extend(targets(i, case));
        }
    }
    let timeline: Vec<Value> = (0..case.completing)
        .filter(|_| complete)
        .map(|i| {
            json!({"at": COMPLETE_AT, "phase": {
                "job": format!("{NAMESPACE}/{}", job_name(i)), "phase": "Succeeded"
            }})
        })
        .collect();
    json!({
        "name": format!("api-cost-{}-jobs", case.jobs),
        "description": "API requests per completion",
        "mode": "gitops-only",
        "epoch": "2026-03-02T09:00:00Z",
        "settle": SETTLE,
        "objects": objects,
        "timeline": timeline,
    })
    .to_string()
}

fn application(name: &str) -> Value {
    json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {"repoURL": "https://github.com/example/ml-platform", "targetRevision": "main", "path": name},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": NAMESPACE}
        },
        "status": {"operationState": {"phase": "Succeeded", "startedAt": "2026-03-02T08:00:00Z",
                                      "operation": {"sync": {"revision": "main"}}}}
    })
}

fn trigger_annotation(i: usize, triggers: Triggers) -> Option<String> {
    let restart = format!(
        "- {{apiVersion: apps/v1, kind: Deployment, name: model-{i:05}, action: restart}}\n"
    );
    match triggers {
        Triggers::None => None,
        Triggers::One => Some(restart),
        Triggers::Three => Some(format!(
            "- {{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: isvc-{i:05}, action: restart}}\n\
             {restart}\
             - {{apiVersion: argoproj.io/v1alpha1, kind: Application, name: app-{i:05}, namespace: argocd, action: sync}}\n"
        )),
    }
}

fn job(i: usize, triggers: Option<Triggers>) -> Value {
    let name = job_name(i);
    let mut annotations = json!({
        "argocd.argoproj.io/tracking-id":
            format!("{PLATFORM}:mlops.mlops.dev/NotebookValidationJob:{NAMESPACE}/{name}"),
        "argocd.argoproj.io/sync-wave": "1",
    });
    if let Some(value) = triggers.and_then(|t| trigger_annotation(i, t)) {
        annotations["mlops.dev/on-success-trigger"] = json!(value);
    }
    json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": name, "namespace": NAMESPACE, "annotations": annotations},
        "spec": {
            "notebook": {"git": {"url": "https://github.com/example/models", "ref": "main"},
                         "path": format!("notebooks/{name}.ipynb")},
            "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:2026-01-05"}
        },
        "status": {"phase": "ValidationRunning", "observedGeneration": 1,
                   "startTime": "2026-03-02T08:59:00Z",
                   "message": "the notebook runs"}
    })
}

fn targets(i: usize, case: &Case) -> Vec<Value> {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": format!("model-{i:05}"), "namespace": NAMESPACE},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": format!("model-{i:05}")}},
            "template": {"metadata": {"labels": {"app": format!("model-{i:05}")}},
                         "spec": {"containers": [{"name": "server", "image": "example/model-server:1"}]}}
        }
    });
    let mut objects = vec![deployment];
    if case.triggers == Triggers::Three {
        let isvc = format!("isvc-{i:05}");
        objects.push(json!({
            "apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
            "metadata": {"name": isvc, "namespace": NAMESPACE},
            "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"},
                                             "storageUri": "pvc://models/model"}}}
        }));
        for p in 0..case.pods {
            objects.push(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("{isvc}-predictor-{p:05}"), "namespace": NAMESPACE,
                             "labels": {"serving.kserve.io/inferenceservice": isvc, "component": "predictor"}},
                "spec": {"containers": [{"name": "kserve-container", "image": "kserve/sklearnserver:v0.15.0"}]},
                "status": {"phase": "Running"}
            }));
        }
        objects.push(application(&format!("app-{i:05}")));
    }
    objects
}
