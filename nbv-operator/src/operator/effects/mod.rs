//! Carrying out nbv-core's effects on a cluster: the operator's driver of the
//! machines of [`nbv_core::carry`].
//!
//! nbv-core decides which effects a job owes ([`nbv_core::plan()`]) and, for each, every
//! request it takes and what each answer means ([`nbv_core::carry`], whose module
//! documentation lists the requests of every effect). An [`Executor`] only carries
//! the requests out, one kube call each (or one read of a watch cache), and answers
//! them as the core reads answers ([`crate::runtime::api_error::answer`]): it decides nothing.
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
//! use nbv_operator::operator::effects::{Executor, ExecutorConfig, FIELD_MANAGER};
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

mod calls;
mod io;

use std::sync::Arc;

use kube::Client;
use kube::api::DynamicObject;
use kube::runtime::reflector::Store;
use nbv_core::carry::CarryFacts;
use nbv_core::reconcile::ArgocdAccess;
use nbv_core::triggers::{DEFAULT_ARGOCD_NAMESPACE, TriggerAccess};

use crate::operator::argocd::AccessWatch;
use crate::operator::projection::CachedApplication;
use crate::runtime::clock::{Clock, SystemClock};

pub use crate::operator::resources::appproject_resource;
pub use nbv_core::actions::{SyncReport, TriggerOutcome};
pub use nbv_core::carry::Delivery;
/// An effect that did not take effect: nbv-core's [`Failure`](nbv_core::carry::Failure),
/// the one classification of what the API server answered.
pub use nbv_core::carry::Failure as EffectError;
pub use nbv_core::events::ReportReason;

/// The name nbv writes under: field manager of its patches, `source.component` and
/// `reportingComponent` of its Events, initiator of the syncs it starts.
/// How long a read waits for the Application cache's first listing before it sends a
/// GET instead (at the operator's start, or while Argo CD's CRDs are missing).
pub(crate) const CACHE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

pub const FIELD_MANAGER: &str = "nbv-operator";

/// How an [`Executor`] acts.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::TriggerAccess;
/// use nbv_operator::operator::effects::ExecutorConfig;
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
/// use nbv_operator::operator::effects::{Executor, ExecutorConfig};
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
    /// Carries the uncached requests out, one call each.
    kube: nbv_kube::KubeIo,
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
    /// Evictions through `client` (when given) rather than the executor's own client
    /// ([`nbv_kube::KubeIo::with_eviction_client`]).
    pub fn with_eviction_client(mut self, client: Option<Client>) -> Executor {
        if let Some(client) = client {
            self.kube = self.kube.with_eviction_client(client);
        }
        self
    }

    /// An executor that acts through `client`, reads every object with a GET and
    /// takes the time from the system clock.
    pub fn new(client: Client, config: ExecutorConfig) -> Executor {
        Executor {
            kube: nbv_kube::KubeIo::new(client, config.field_manager.clone()),
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

    /// What the machines of [`nbv_core::carry`] need to know, as of now.
    pub fn carry_facts(&self) -> CarryFacts {
        CarryFacts {
            trigger_access: self.config.trigger_access.clone(),
            argocd_namespace: self.config.argocd_namespace.clone(),
            field_manager: self.config.field_manager.clone(),
            reporting_instance: self.config.reporting_instance.clone(),
            argocd_access: self.argocd_access(),
            projects_cached: self.caches.projects.is_some(),
        }
    }
}
