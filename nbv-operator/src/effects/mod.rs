//! Carrying out nbv-core's effects on a cluster, each with the smallest API call.
//!
//! nbv-core decides which effects a job owes ([`nbv_core::plan()`]) and what each trigger
//! action writes on its target ([`nbv_core::actions`]); an [`Executor`] makes them
//! happen: it reads, calls the core's decision, writes what it says and classifies
//! the API server's errors ([`crate::api_error`]). Every write is a JSON merge patch of the fields nbv owns, a create, or a
//! delete guarded by the object's uid; nothing here ever replaces (`PUT`) an object.
//!
//! | effect | calls |
//! |---|---|
//! | wave annotations | `PATCH` (merge) the job |
//! | `restart` Deployment, StatefulSet, DaemonSet | `GET` it; `PATCH` (merge) `spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]` with the resourceVersion read, unless it already restarted at the run's time or later |
//! | `restart` InferenceService | `GET` it, `LIST` its pods by label, `DELETE` those created before the run ended |
//! | `restart` any other kind | `GET` it, `LIST` pods by its `spec.selector`, `GET` intermediate owners, `DELETE` the pods it owns that predate the run |
//! | `sync` Application | read it (watch cache), its AppProject's sync windows (watch cache); `PATCH` (merge) `operation` and `status.operationState: null` with the resourceVersion read, unless [`nbv_core::actions::sync::decide`] defers or skips it, or nbv may not read the AppProjects ([`nbv_core::reconcile::without_windows`]: it waits) |
//! | sync result | read the Application (watch cache); a `core/v1` Event once Argo CD finished the operation |
//! | `refresh` | read it (an Application from the watch cache, anything else with `GET`); `PATCH` (merge) annotations with the resourceVersion read, unless its timestamp is the run's time or later |
//! | notification, report | `POST` a `core/v1` Event |
//! | Application status | `PATCH` (merge) two annotations of the Application |
//!
//! Before a trigger acts outside its job's namespace, [`nbv_core::triggers::TriggerAccess`]
//! must allow it; the executor reads the target `Namespace` (and, for an Application, the
//! Application) only when the decision needs it, and a refused trigger writes nothing.
//!
//! Every effect is idempotent for its run, which covers the window between carrying an
//! effect out and recording it: a rolling restart or a refresh writes the run's completion
//! time only over an older one (so a retry never moves it backwards past a newer run), pod
//! deletion spares pods created after it, a sync is skipped when the Application already
//! carries the run's marker, and a notification Event has a name derived from the run.
//!
//! Kinds that nbv does not know are addressed through [`kube::api::DynamicObject`] with the
//! resource name guessed from the kind by [`kube::core::ApiResource::from_gvk`]: lowercased
//! and pluralised by English rules (`Widget` → `widgets`, `Policy` → `policies`,
//! `Mesh` → `meshes`). A custom resource whose plural does not follow these rules cannot
//! be a trigger target; the API server answers 404 and the trigger reports the target
//! as not found.
//!
//! # Examples
//!
//! ```
//! use nbv_operator::effects::{Executor, ExecutorConfig, FIELD_MANAGER};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! # let (mock, _server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
//! # let client = kube::Client::new(mock, "default");
//! let executor = Executor::new(client, ExecutorConfig::default());
//! assert_eq!(executor.config().field_manager, FIELD_MANAGER);
//! assert!(executor.config().trigger_access.allowed_namespaces.is_empty());
//! # }
//! ```

mod access;
mod application;
mod error;
mod notify;
mod refresh;
mod restart;
mod sync;
mod target;
mod trigger;
mod wave;

use std::sync::Arc;

use kube::Client;
use kube::api::{DynamicObject, PatchParams};
use kube::runtime::reflector::Store;
use nbv_core::triggers::{DEFAULT_ARGOCD_NAMESPACE, TriggerAccess};

use nbv_core::reconcile::ArgocdAccess;

use crate::argocd::AccessWatch;
use crate::clock::{Clock, SystemClock};
use crate::projection::CachedApplication;

pub use crate::resources::appproject_resource;
pub(crate) use access::CACHE_PATIENCE;
pub use error::EffectError;
pub use nbv_core::actions::{SyncReport, TriggerOutcome};
pub use nbv_core::events::ReportReason;
pub use notify::Delivery;

/// The name nbv writes under: field manager of its patches, `source.component` and
/// `reportingComponent` of its Events, initiator of the syncs it starts.
pub const FIELD_MANAGER: &str = "nbv-operator";

/// How an [`Executor`] acts.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::TriggerAccess;
/// use nbv_operator::effects::ExecutorConfig;
///
/// let config = ExecutorConfig {
///     trigger_access: TriggerAccess::from_list("serving"),
///     reporting_instance: "nbv-operator-7d9f-x2x4q".into(),
///     ..ExecutorConfig::default()
/// };
/// assert!(config.trigger_access.allows_namespace("serving"));
/// assert_eq!(config.field_manager, "nbv-operator");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutorConfig {
    /// Where triggers may act beyond their job's namespace (`--trigger-namespaces`).
    pub trigger_access: TriggerAccess,
    /// Field manager of every patch, and the name in Events and sync operations.
    pub field_manager: String,
    /// `reportingInstance` of Events: the operator's pod name (at most 128 bytes).
    pub reporting_instance: String,
    /// Argo CD's control-plane namespace, where its AppProjects are.
    pub argocd_namespace: String,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            trigger_access: TriggerAccess::default(),
            field_manager: FIELD_MANAGER.to_owned(),
            reporting_instance: FIELD_MANAGER.to_owned(),
            argocd_namespace: DEFAULT_ARGOCD_NAMESPACE.to_owned(),
        }
    }
}

/// Carries out effects with a Kubernetes client. Cheap to clone.
///
/// # Examples
///
/// ```
/// use nbv_operator::effects::{Executor, ExecutorConfig};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let (mock, _server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
/// # let client = kube::Client::new(mock, "default");
/// let executor = Executor::new(client, ExecutorConfig::default());
/// let copy = executor.clone();
/// assert_eq!(copy.config(), executor.config());
/// # }
/// ```
#[derive(Clone)]
pub struct Executor {
    client: Client,
    config: Arc<ExecutorConfig>,
    caches: Caches,
    clock: Arc<dyn Clock>,
}

/// The watch caches an executor reads instead of sending a GET.
#[derive(Clone, Default)]
struct Caches {
    /// Applications, and the namespaces the cache watches.
    applications: Option<(Store<CachedApplication>, Vec<String>)>,
    /// AppProjects of Argo CD's namespace (only their sync windows).
    projects: Option<Store<DynamicObject>>,
    /// Whether nbv may read the AppProjects at all.
    access: Option<AccessWatch>,
}

impl Executor {
    /// An executor that acts through `client`, reads every object with a GET and
    /// takes the time from the system clock.
    pub fn new(client: Client, config: ExecutorConfig) -> Executor {
        Executor {
            client,
            config: Arc::new(config),
            caches: Caches::default(),
            clock: Arc::new(SystemClock),
        }
    }

    /// Reads Applications in `namespaces` from `store` (a watch cache of them) instead
    /// of with a GET; Applications elsewhere are still read with a GET.
    #[must_use]
    pub fn with_applications(
        mut self,
        store: Store<CachedApplication>,
        namespaces: Vec<String>,
    ) -> Self {
        self.caches.applications = Some((store, namespaces));
        self
    }

    /// Reads the sync windows of AppProjects from `store` (a watch cache of the
    /// AppProjects in [`ExecutorConfig::argocd_namespace`]). Without it, no sync
    /// window is applied.
    #[must_use]
    pub fn with_projects(mut self, store: Store<DynamicObject>) -> Self {
        self.caches.projects = Some(store);
        self
    }

    /// Learns from `access` whether nbv may read the AppProjects: while it may not, a
    /// sync waits instead of being written without its sync windows.
    #[must_use]
    pub fn with_argocd_access(mut self, access: AccessWatch) -> Self {
        self.caches.access = Some(access);
        self
    }

    /// What nbv may read in Argo CD's namespace, as last observed.
    pub fn argocd_access(&self) -> ArgocdAccess {
        self.caches
            .access
            .as_ref()
            .map_or(ArgocdAccess::Unknown, AccessWatch::current)
    }

    /// Takes the time (of sync windows, of refresh requests) from `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The configuration it acts with.
    pub fn config(&self) -> &ExecutorConfig {
        &self.config
    }

    /// Parameters of every patch: nbv's field manager, so that `managedFields` show
    /// which fields nbv wrote.
    fn patch_params(&self) -> PatchParams {
        PatchParams {
            field_manager: Some(self.config.field_manager.clone()),
            ..PatchParams::default()
        }
    }
}
