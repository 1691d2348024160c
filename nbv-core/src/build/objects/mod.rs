//! The objects that carry a [`BuildPlan`] out, one route per build system, and the
//! requests that cancel and expire them.
//!
//! | route | objects, in creation order | watched | who clones |
//! |---|---|---|---|
//! | [`Route::Tekton`] | PipelineRun (`clone`, `prepare`, buildah `build` steps) | PipelineRun | nbv |
//! | [`Route::Kaniko`] | Pod (`clone`, `prepare` init containers, `kaniko`) | Pod | nbv |
//! | [`Route::Shipwright`] | Build, BuildRun | BuildRun | Shipwright |
//! | [`Route::OpenShift`] | BuildConfig, Build `<name>-1` | Build | OpenShift |
//! | [`Route::ShipwrightS2i`] | Build (`source-to-image`), BuildRun | BuildRun | Shipwright |
//!
//! Where nbv clones, its `nbv build prepare` step searches the checkout and writes the
//! Dockerfile the build uses. Where the build system clones, nothing of nbv runs in
//! the build: only a Dockerfile or requirements file the job names is supported, the
//! builder reading the directory it is in (Source-to-Image installs a file named
//! `requirements.txt` from a Python builder, the job's `baseImage`). A named Dockerfile
//! is built by OpenShift's `dockerStrategy`, and on Shipwright by the plan's strategy
//! (`buildah` unless `strategyConfig` names one), Source-to-Image or not.
//!
//! The build objects carry the job's labels, `app.kubernetes.io/managed-by: nbv` and
//! `mlops.dev/job`, but no `mlops.dev/attempt`: a selector of validation Pods must
//! require that label, or it matches the kaniko route's build Pod too.

mod checkout;
mod context;
mod history;
mod kaniko;
mod meta;
mod openshift;
mod shipwright;
mod tekton;

use serde_json::{Value, json};

use super::{BuildDefaults, BuildPlan, PlanError, Strategy};
use crate::io::{ObjectRef, Request, Subresource};
use crate::pod::PodDefaults;

pub use history::{expired, history_selector};
pub use kaniko::KANIKO_CONTAINER;
pub use meta::{BUILD_KEY_LABEL, BUILD_STRATEGY_LABEL, IMAGE_ANNOTATION};

/// How a plan is built on a cluster: the strategy, and for `s2i` which API serves it.
///
/// # Examples
///
/// ```
/// use nbv_core::build::{Route, Strategy};
///
/// let route = Route::first(Strategy::S2i);
/// assert_eq!(route, Route::OpenShift);
/// assert_eq!(route.api(), "build.openshift.io/v1");
/// // Where build.openshift.io is not served, s2i runs on Shipwright.
/// assert_eq!(route.fallback(), Some(Route::ShipwrightS2i));
/// assert_eq!(Route::Tekton.fallback(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// A Tekton PipelineRun with a buildah step.
    Tekton,
    /// A Pod running the kaniko executor.
    Kaniko,
    /// A Shipwright Build and BuildRun with the plan's build strategy.
    Shipwright,
    /// OpenShift's Source-to-Image: a BuildConfig and its Build.
    OpenShift,
    /// Source-to-Image on Shipwright (its `source-to-image` ClusterBuildStrategy).
    ShipwrightS2i,
}

/// Shipwright's Source-to-Image ClusterBuildStrategy (the project's sample).
pub(crate) const S2I_STRATEGY: &str = "source-to-image";

impl Route {
    /// The route tried first for `strategy`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::{Route, Strategy};
    ///
    /// assert_eq!(Route::first(Strategy::Kaniko), Route::Kaniko);
    /// ```
    pub fn first(strategy: Strategy) -> Route {
        match strategy {
            Strategy::Tekton => Route::Tekton,
            Strategy::Kaniko => Route::Kaniko,
            Strategy::Shipwright => Route::Shipwright,
            Strategy::S2i => Route::OpenShift,
        }
    }

    /// The route to take when the cluster does not serve this one's [`api`](Self::api):
    /// `s2i` on Shipwright where `build.openshift.io` is not served.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::Route;
    ///
    /// assert_eq!(Route::OpenShift.fallback(), Some(Route::ShipwrightS2i));
    /// assert_eq!(Route::ShipwrightS2i.fallback(), None);
    /// ```
    pub fn fallback(self) -> Option<Route> {
        match self {
            Route::OpenShift => Some(Route::ShipwrightS2i),
            _ => None,
        }
    }

    /// The API version of the route's objects: a cluster that does not serve it cannot
    /// build this way.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::Route;
    ///
    /// assert_eq!(Route::Tekton.api(), "tekton.dev/v1");
    /// assert_eq!(Route::Kaniko.api(), "v1");
    /// ```
    pub fn api(self) -> &'static str {
        match self {
            Route::Tekton => "tekton.dev/v1",
            Route::Kaniko => "v1",
            Route::Shipwright | Route::ShipwrightS2i => "shipwright.io/v1beta1",
            Route::OpenShift => "build.openshift.io/v1",
        }
    }

    /// The route's name: the value of [`BUILD_STRATEGY_LABEL`] on its objects.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::Route;
    ///
    /// assert_eq!(Route::ShipwrightS2i.as_str(), "shipwright-s2i");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Tekton => "tekton",
            Route::Kaniko => "kaniko",
            Route::Shipwright => "shipwright",
            Route::OpenShift => "openshift",
            Route::ShipwrightS2i => "shipwright-s2i",
        }
    }

    /// The kind of the object whose status tells the build's outcome.
    pub(crate) fn watched_kind(self) -> &'static str {
        match self {
            Route::Tekton => "PipelineRun",
            Route::Kaniko => "Pod",
            Route::Shipwright | Route::ShipwrightS2i => "BuildRun",
            Route::OpenShift => "Build",
        }
    }

    /// The object of `plan` whose status tells the outcome (see [`observe`](super::observe)).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::{BuildDefaults, BuildPlan, Route};
    ///
    /// # let job = serde_json::from_value(serde_json::json!({
    /// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
    /// #     "spec": {"notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
    /// #              "podConfig": {"containerImage": "img", "buildConfig": {"enabled": true, "strategy": "s2i"}}}
    /// # }))?;
    /// let plan = BuildPlan::resolve(&job, &BuildDefaults::default())?.unwrap();
    /// let build = Route::OpenShift.watched(&plan);
    /// assert_eq!(build.kind, "Build");
    /// assert_eq!(build.name, format!("{}-1", plan.name));
    /// assert_eq!(Route::Tekton.watched(&plan).name, plan.name);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watched(self, plan: &BuildPlan) -> ObjectRef {
        let name = match self {
            Route::OpenShift => openshift::build_name(plan),
            _ => plan.name.clone(),
        };
        ObjectRef::namespaced(
            self.api(),
            self.watched_kind(),
            plan.namespace.clone(),
            name,
        )
    }
}

impl std::fmt::Display for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The objects that build `plan` by `route`, in creation order, the watched object
/// ([`Route::watched`]) last. Every one is named after the plan, labelled with its key
/// and route and owned by the job; Secrets are referenced by name, and the job's values
/// reach scripts as environment variables only.
///
/// # Errors
///
/// [`PlanError::Field`] naming the field the route cannot carry out: a URL with
/// credentials in it (`spec.notebook.git.url`), a URL or ref nbv does not clone, and,
/// where the build system clones (Shipwright, OpenShift), a job that names neither a
/// Dockerfile nor a requirements file.
///
/// # Examples
///
/// ```
/// use nbv_core::build::{build_objects, BuildDefaults, BuildPlan, Route};
/// use nbv_core::pod::PodDefaults;
///
/// # let job = serde_json::from_value(serde_json::json!({
/// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
/// #              "podConfig": {"containerImage": "img", "buildConfig": {"enabled": true, "strategy": "tekton"}}}
/// # }))?;
/// let defaults = BuildDefaults::default();
/// let plan = BuildPlan::resolve(&job, &defaults)?.unwrap();
/// let objects = build_objects(&plan, Route::Tekton, &PodDefaults::default(), &defaults)?;
/// let (watched, run) = objects.last().unwrap();
/// assert_eq!(watched, &Route::Tekton.watched(&plan));
/// assert_eq!(run["metadata"]["labels"]["mlops.dev/build-strategy"], "tekton");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn build_objects(
    plan: &BuildPlan,
    route: Route,
    pods: &PodDefaults,
    defaults: &BuildDefaults,
) -> Result<Vec<(ObjectRef, Value)>, PlanError> {
    checkout::refuse_credentials_in_url(plan)?;
    if !matches!(route, Route::Tekton | Route::Kaniko) {
        checkout::check_source(plan, pods)?;
    }
    let objects = match route {
        Route::Tekton => vec![tekton::pipeline_run(plan, pods, defaults)?],
        Route::Kaniko => vec![kaniko::pod(plan, pods, defaults)?],
        Route::Shipwright | Route::ShipwrightS2i => shipwright::objects(plan, route)?,
        Route::OpenShift => openshift::objects(plan)?,
    };
    Ok(objects
        .into_iter()
        .map(|body| (object_ref(&body, &plan.namespace), body))
        .collect())
}

/// The address of an object the routes made.
fn object_ref(body: &Value, namespace: &str) -> ObjectRef {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    ObjectRef::namespaced(
        text(&body["apiVersion"]),
        text(&body["kind"]),
        namespace,
        text(&body["metadata"]["name"]),
    )
}

/// The request that stops the build of `plan` by `route`: the build system's own
/// cancellation where it has one (which keeps the object, its status saying
/// cancelled), else the Pod's deletion.
///
/// # Examples
///
/// ```
/// use nbv_core::build::{cancel, BuildDefaults, BuildPlan, Route};
/// use nbv_core::io::Request;
///
/// # let job = serde_json::from_value(serde_json::json!({
/// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
/// #              "podConfig": {"containerImage": "img", "buildConfig": {"enabled": true, "strategy": "tekton"}}}
/// # }))?;
/// let plan = BuildPlan::resolve(&job, &BuildDefaults::default())?.unwrap();
/// let Request::Patch { patch, .. } = cancel(Route::Tekton, &plan) else { unreachable!() };
/// assert_eq!(patch["spec"]["status"], "Cancelled");
/// assert!(matches!(cancel(Route::Kaniko, &plan), Request::Delete { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cancel(route: Route, plan: &BuildPlan) -> Request {
    let object = route.watched(plan);
    let patch = match route {
        Route::Kaniko => return Request::Delete { object, uid: None },
        Route::Tekton => json!({"spec": {"status": "Cancelled"}}),
        Route::Shipwright | Route::ShipwrightS2i => {
            json!({"spec": {"state": "BuildRunCanceled"}})
        }
        // What `oc cancel-build` does: the build controller stops a Build whose
        // status says cancelled.
        Route::OpenShift => json!({"status": {"cancelled": true}}),
    };
    Request::Patch {
        object,
        subresource: Subresource::Object,
        patch,
    }
}
