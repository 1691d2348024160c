//! An in-memory Kubernetes API server that a real `kube::Client` (and kube-runtime's
//! watchers, reflectors and controllers) can talk to.
//!
//! [`FakeCluster`] stores objects of any registered resource as JSON and serves them over
//! the same URLs, verbs and error bodies as the real API server: GET, LIST (with label and
//! field selectors), WATCH (with resourceVersion resume, bookmarks and 410 Gone), POST,
//! PUT, PATCH (merge, JSON, server-side apply, strategic merge), DELETE (finalizers,
//! owner-reference cascade) and DELETE collection, plus the `/status` subresource. Its
//! timestamps come from a [`VirtualClock`], so under a paused Tokio clock everything,
//! including kube-runtime's timers, runs in virtual time.
//!
//! Tests also get direct access (setup and assertions that are not API requests), a log
//! of every request, a history of every change with before and after, and fault
//! injection. `docs/testing.md` describes what the server does not model.
//!
//! # Examples
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, Patch, PatchParams, PostParams};
//! use nbv_testkit::cluster::FakeCluster;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let cluster = FakeCluster::default();
//! let api: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await?;
//! let patch = serde_json::json!({"data": {"mode": "fast"}});
//! api.patch("settings", &PatchParams::default(), &Patch::Merge(&patch)).await?;
//!
//! let stored = cluster.get("configmaps", Some("default"), "settings")?.unwrap();
//! assert_eq!(stored["data"]["mode"], "fast");
//! assert_eq!(cluster.history().len(), 2);
//! # Ok(())
//! # }
//! ```

mod direct;
mod discovery;
mod error;
mod eviction;
mod faults;
mod handler;
mod log;
mod meta;
mod ops;
mod patch;
mod resource;
mod route;
mod selector;
mod service;
mod state;
mod store;
mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};

pub use error::{ApiError, ClusterError, Reason};
pub use faults::{Fault, FaultEffect, FaultMatch, Times};
pub use http::StatusCode;
pub use log::{Actor, Change, PatchType, RequestRecord, Verb, VerbKind};
pub use resource::ApiResourceSpec;
pub use service::{ApiServerService, ResponseBody};

use crate::clock::VirtualClock;
use state::Shared;

/// A handle on an in-memory Kubernetes API server. Clones share the same cluster.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_testkit::cluster::FakeCluster;
///
/// let cluster = FakeCluster::new(Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap());
/// let other = cluster.clone();
/// other.apply_object(serde_json::json!({
///     "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}
/// }))?;
/// assert!(cluster.get("namespaces", None, "ml")?.is_some());
/// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
/// ```
#[derive(Clone)]
pub struct FakeCluster {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeCluster")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl Default for FakeCluster {
    /// A cluster whose clock starts at 2026-01-01T00:00:00Z.
    fn default() -> Self {
        let epoch = Utc
            .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
            .single()
            .unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
        Self::new(epoch)
    }
}

impl FakeCluster {
    /// An empty cluster (with the [built-in resources](ApiResourceSpec::builtins)
    /// registered) whose clock reads `epoch` now and advances with Tokio's clock.
    ///
    /// Create it inside the Tokio runtime that will drive it, so that a paused runtime's
    /// clock is the one it follows.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let epoch = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    /// let cluster = FakeCluster::new(epoch);
    /// assert_eq!(cluster.resource_version(), 0);
    /// assert!(cluster.now() >= epoch);
    /// ```
    pub fn new(epoch: DateTime<Utc>) -> Self {
        Self {
            shared: Arc::new(Shared::new(VirtualClock::new(epoch))),
        }
    }

    /// The cluster's current (virtual) time.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let cluster = FakeCluster::default();
    /// let start = cluster.now();
    /// tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    /// assert_eq!((cluster.now() - start).num_seconds(), 60);
    /// # }
    /// ```
    pub fn now(&self) -> DateTime<Utc> {
        self.shared.clock.now()
    }

    /// The cluster's clock, for components that need the same virtual time.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// assert_eq!(cluster.clock().epoch().to_rfc3339(), "2026-01-01T00:00:00+00:00");
    /// assert!(cluster.clock().now() >= cluster.clock().epoch());
    /// ```
    pub fn clock(&self) -> VirtualClock {
        self.shared.clock
    }

    /// A `kube::Client` whose requests this cluster serves (default namespace `default`).
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime: `kube::Client::new` spawns its request buffer on the
    /// current runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kube::Api;
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let cluster = FakeCluster::default();
    /// let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    /// let err = pods.get("missing").await.unwrap_err();
    /// assert!(matches!(err, kube::Error::Api(s) if s.code == 404));
    /// # }
    /// ```
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.service(), "default")
    }

    /// The cluster as a `tower::Service`, to build a client with extra middleware.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let client = kube::Client::new(FakeCluster::default().service(), "ml");
    /// assert_eq!(client.default_namespace(), "ml");
    /// # }
    /// ```
    pub fn service(&self) -> ApiServerService {
        ApiServerService {
            shared: Arc::clone(&self.shared),
        }
    }

    /// Serves another resource type (or replaces one with the same group, version and
    /// plural). Requests for unregistered resources get 404, as without the CRD.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{ApiResourceSpec, FakeCluster};
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.register(ApiResourceSpec::namespaced("example.com", "v1", "Widget", "widgets"));
    /// assert!(cluster.list("widgets", None)?.is_empty());
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn register(&self, spec: ApiResourceSpec) {
        self.shared.lock().registry.register(spec);
    }

    /// The registered resource types.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let kinds: Vec<String> = FakeCluster::default().resources().into_iter().map(|s| s.kind).collect();
    /// assert!(kinds.contains(&"NotebookValidationJob".to_owned()));
    /// ```
    pub fn resources(&self) -> Vec<ApiResourceSpec> {
        self.shared.lock().registry.all().to_vec()
    }

    /// The latest resourceVersion (a global counter, bumped by every committed write).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.apply_object(serde_json::json!({
    ///     "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}
    /// }))?;
    /// assert_eq!(cluster.resource_version(), 1);
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.resource_version()
    }

    /// Every request served so far (up to the last 100 000), in arrival order.
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kube::Api;
    /// use nbv_testkit::cluster::{FakeCluster, Verb};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let cluster = FakeCluster::default();
    /// let pods: Api<Pod> = Api::all(cluster.client());
    /// pods.list(&Default::default()).await.unwrap();
    /// let log = cluster.requests();
    /// assert_eq!(log.len(), 1);
    /// assert_eq!((log[0].verb, log[0].resource.as_str(), log[0].status), (Verb::List, "pods", 200));
    /// # }
    /// ```
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.lock().requests()
    }

    /// Empties the request log.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.clear_requests();
    /// assert!(cluster.requests().is_empty());
    /// ```
    pub fn clear_requests(&self) {
        self.shared.lock().clear_requests();
    }

    /// How many logged requests used each verb.
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kube::Api;
    /// use nbv_testkit::cluster::{FakeCluster, VerbKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let cluster = FakeCluster::default();
    /// let pods: Api<Pod> = Api::default_namespaced(cluster.client());
    /// let _ = pods.get("a").await;
    /// let _ = pods.get("b").await;
    /// assert_eq!(cluster.request_counts().get(&VerbKind::Get), Some(&2));
    /// # }
    /// ```
    pub fn request_counts(&self) -> BTreeMap<VerbKind, usize> {
        let mut counts = BTreeMap::new();
        for record in self.shared.lock().requests() {
            *counts.entry(record.verb.kind()).or_insert(0) += 1;
        }
        counts
    }

    /// Every committed change (up to the last 100 000), oldest first, with the object
    /// before and after.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{Actor, FakeCluster};
    /// use serde_json::json;
    ///
    /// let cluster = FakeCluster::default();
    /// let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
    ///                 "metadata": {"name": "a", "namespace": "default"}});
    /// cluster.apply_object(cm.clone())?;
    /// cluster.apply_object(cm)?; // unchanged: not a change
    /// cluster.delete("configmaps", Some("default"), "a")?;
    /// let history = cluster.history();
    /// assert_eq!(history.len(), 2);
    /// assert!(history[1].after.is_none());
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn history(&self) -> Vec<Change> {
        self.shared.lock().store.history()
    }

    /// Injects a fault; see [`Fault`].
    ///
    /// # Examples
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kube::Api;
    /// use nbv_testkit::cluster::{FakeCluster, Fault, FaultMatch, Times, VerbKind};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let cluster = FakeCluster::default();
    /// cluster.inject(Fault::new(FaultMatch::verb(VerbKind::List), Fault::status(503), Times::Once));
    /// let pods: Api<Pod> = Api::all(cluster.client());
    /// let err = pods.list(&Default::default()).await.unwrap_err();
    /// assert!(matches!(err, kube::Error::Api(s) if s.code == 503));
    /// assert!(pods.list(&Default::default()).await.is_ok());
    /// # }
    /// ```
    pub fn inject(&self, fault: Fault) {
        self.shared.lock().faults.inject(fault);
    }

    /// Removes every injected fault.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{FakeCluster, Fault, FaultMatch, Times};
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.inject(Fault::new(FaultMatch::any(), Fault::status(500), Times::Always));
    /// cluster.clear_faults();
    /// assert_eq!(cluster.get("pods", Some("default"), "a")?, None);
    /// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
    /// ```
    pub fn clear_faults(&self) {
        self.shared.lock().faults.clear();
    }

    /// Ends every open watch stream, as a lost connection would; watchers must
    /// re-watch (kube-runtime does, from its last resourceVersion).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.drop_watches();
    /// assert_eq!(cluster.open_watches(), 0);
    /// ```
    pub fn drop_watches(&self) {
        self.shared.lock().store.drop_watches();
    }

    /// Forgets the change feed (as etcd compaction does): a watch resuming from any
    /// resourceVersion issued so far gets 410 Gone and must list again. Open watches
    /// keep streaming.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// let cluster = FakeCluster::default();
    /// cluster.compact();
    /// assert_eq!(cluster.resource_version(), 0);
    /// ```
    pub fn compact(&self) {
        self.shared.lock().store.compact();
    }

    /// How many watch streams are open.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::FakeCluster;
    ///
    /// assert_eq!(FakeCluster::default().open_watches(), 0);
    /// ```
    pub fn open_watches(&self) -> usize {
        self.shared.lock().store.open_watches()
    }
}
