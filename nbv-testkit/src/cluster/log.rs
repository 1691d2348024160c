//! What happened: the request log and the change history.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// The body format of a PATCH request, from its `Content-Type`.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::PatchType;
///
/// assert_eq!(PatchType::from_content_type("application/merge-patch+json"), Some(PatchType::Merge));
/// assert_eq!(PatchType::Apply.content_type(), "application/apply-patch+yaml");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PatchType {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
    /// `application/strategic-merge-patch+json`.
    Strategic,
}

impl PatchType {
    /// Reads the patch type from a `Content-Type` header value (parameters ignored).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::PatchType;
    ///
    /// assert_eq!(
    ///     PatchType::from_content_type("application/json-patch+json; charset=utf-8"),
    ///     Some(PatchType::Json)
    /// );
    /// assert_eq!(PatchType::from_content_type("text/plain"), None);
    /// ```
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        [Self::Merge, Self::Json, Self::Apply, Self::Strategic]
            .into_iter()
            .find(|t| t.content_type().eq_ignore_ascii_case(media))
    }

    /// The `Content-Type` this patch type is sent with.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::PatchType;
    ///
    /// assert_eq!(PatchType::Strategic.content_type(), "application/strategic-merge-patch+json");
    /// ```
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Merge => "application/merge-patch+json",
            Self::Json => "application/json-patch+json",
            Self::Apply => "application/apply-patch+yaml",
            Self::Strategic => "application/strategic-merge-patch+json",
        }
    }
}

/// A request's verb, with the patch type for patches.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::{PatchType, Verb, VerbKind};
///
/// let verb = Verb::Patch { patch_type: PatchType::Merge };
/// assert_eq!(verb.kind(), VerbKind::Patch);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch {
        /// The patch format.
        patch_type: PatchType,
    },
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

impl Verb {
    /// The verb without its patch type.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::{Verb, VerbKind};
    ///
    /// assert_eq!(Verb::DeleteCollection.kind(), VerbKind::DeleteCollection);
    /// ```
    pub fn kind(self) -> VerbKind {
        match self {
            Verb::Get => VerbKind::Get,
            Verb::List => VerbKind::List,
            Verb::Watch => VerbKind::Watch,
            Verb::Create => VerbKind::Create,
            Verb::Update => VerbKind::Update,
            Verb::Patch { .. } => VerbKind::Patch,
            Verb::Delete => VerbKind::Delete,
            Verb::DeleteCollection => VerbKind::DeleteCollection,
        }
    }
}

/// A verb without details, for matching faults and counting requests.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::VerbKind;
///
/// assert!(VerbKind::Patch.is_write());
/// assert!(!VerbKind::Watch.is_write());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VerbKind {
    /// GET of one object.
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`.
    Watch,
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
}

impl VerbKind {
    /// Whether the verb changes state.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::VerbKind;
    ///
    /// assert!(VerbKind::Create.is_write());
    /// assert!(!VerbKind::Get.is_write());
    /// ```
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Self::Create | Self::Update | Self::Patch | Self::Delete | Self::DeleteCollection
        )
    }
}

/// One HTTP request the cluster served, in arrival order.
///
/// Discovery requests (`/api`, `/apis/{group}/{version}`, `/version`) are logged as
/// [`Verb::Get`] with an empty `resource`. Requests that name no Kubernetes verb (a method
/// other than GET, POST, PUT, PATCH and DELETE, or a PATCH with an unsupported
/// `Content-Type`) are rejected and not logged.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, PostParams};
/// use nbv_testkit::cluster::{FakeCluster, Verb};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kube::Error> {
/// let cluster = FakeCluster::default();
/// let api: Api<ConfigMap> = Api::namespaced(cluster.client(), "default");
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// api.create(&PostParams::default(), &cm).await?;
/// let record = &cluster.requests()[0];
/// assert_eq!(record.verb, Verb::Create);
/// assert_eq!(record.resource, "configmaps");
/// assert_eq!(record.status, 201);
/// assert!(record.bytes_in > 0 && record.bytes_out > 0);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RequestRecord {
    /// Sequence number of the request, from 1, never reused.
    pub id: u64,
    /// The verb.
    pub verb: Verb,
    /// HTTP method as sent.
    pub method: String,
    /// Request path as sent.
    pub path: String,
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name (empty for discovery requests).
    pub resource: String,
    /// Subresource, such as `status`.
    pub subresource: Option<String>,
    /// Namespace from the URL.
    pub namespace: Option<String>,
    /// Object name from the URL.
    pub name: Option<String>,
    /// Decoded query parameters.
    pub query: BTreeMap<String, String>,
    /// The request body, when it was JSON.
    pub body: Option<Value>,
    /// Request body size in bytes.
    pub bytes_in: usize,
    /// Response body size in bytes; for a watch, what has been streamed so far.
    pub bytes_out: usize,
    /// HTTP status code of the response.
    pub status: u16,
    /// Virtual time the request arrived.
    pub at: DateTime<Utc>,
}

/// Who made a change.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::Actor;
///
/// assert_ne!(Actor::Client, Actor::Direct);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Actor {
    /// A request through the HTTP interface (a `kube::Client`).
    Client,
    /// A direct-access call on [`FakeCluster`](super::FakeCluster), such as test setup.
    Direct,
    /// The garbage collector deleting dependents of a deleted owner.
    GarbageCollector,
}

/// One committed change to one object, for invariant checks that diff before and after.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::{Actor, FakeCluster};
/// use serde_json::json;
///
/// let cluster = FakeCluster::default();
/// cluster.apply_object(json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "a", "namespace": "default"}
/// }))?;
/// let change = &cluster.history()[0];
/// assert_eq!(change.actor, Actor::Direct);
/// assert!(change.before.is_none() && change.after.is_some());
/// # Ok::<(), nbv_testkit::cluster::ClusterError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Virtual time of the change.
    pub at: DateTime<Utc>,
    /// The cluster's resourceVersion after the change.
    pub resource_version: u64,
    /// The verb that caused the change. A deletion completed by removing the last
    /// finalizer carries the verb of that update or patch.
    pub verb: Verb,
    /// `apiVersion` of the object.
    pub api_version: String,
    /// Kind of the object.
    pub kind: String,
    /// Namespace (`None` for cluster-scoped objects).
    pub namespace: Option<String>,
    /// Object name.
    pub name: String,
    /// The object before (`None` when created).
    pub before: Option<Value>,
    /// The object after (`None` when deleted).
    pub after: Option<Value>,
    /// Who made the change.
    pub actor: Actor,
}
