//! Resource discovery: which kinds the in-memory cluster serves and under which URLs.

use std::fmt;

/// One resource type the cluster serves, like an entry of `kubectl api-resources`.
///
/// # Examples
///
/// ```
/// use nbv_testkit::cluster::ApiResourceSpec;
///
/// let spec = ApiResourceSpec::namespaced("example.com", "v1", "Widget", "widgets")
///     .with_status_subresource();
/// assert_eq!(spec.api_version(), "example.com/v1");
/// assert!(spec.namespaced && spec.status_subresource);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ApiResourceSpec {
    /// API group; empty for the core group (`/api/v1`).
    pub group: String,
    /// API version within the group, for example `v1`.
    pub version: String,
    /// Kind, for example `Pod`.
    pub kind: String,
    /// Plural resource name used in URLs, for example `pods`.
    pub plural: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the resource has a `/status` subresource. When it does, writes to the main
    /// resource ignore `.status`, writes to `/status` change only `.status`, and creation
    /// drops `.status`, as the real API server does.
    pub status_subresource: bool,
}

impl ApiResourceSpec {
    /// A namespaced resource without a status subresource.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::ApiResourceSpec;
    ///
    /// let spec = ApiResourceSpec::namespaced("", "v1", "ConfigMap", "configmaps");
    /// assert_eq!(spec.api_version(), "v1");
    /// assert!(spec.namespaced && !spec.status_subresource);
    /// ```
    pub fn namespaced(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            namespaced: true,
            status_subresource: false,
        }
    }

    /// A cluster-scoped resource without a status subresource.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::ApiResourceSpec;
    ///
    /// let spec = ApiResourceSpec::cluster_scoped("", "v1", "Namespace", "namespaces");
    /// assert!(!spec.namespaced);
    /// ```
    pub fn cluster_scoped(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            namespaced: false,
            ..Self::namespaced(group, version, kind, plural)
        }
    }

    /// The same resource with a `/status` subresource.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::ApiResourceSpec;
    ///
    /// let spec = ApiResourceSpec::namespaced("apps", "v1", "Deployment", "deployments")
    ///     .with_status_subresource();
    /// assert!(spec.status_subresource);
    /// ```
    #[must_use]
    pub fn with_status_subresource(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// The `apiVersion` objects of this resource carry (`v1`, `apps/v1`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::ApiResourceSpec;
    ///
    /// let spec = ApiResourceSpec::namespaced("apps", "v1", "Deployment", "deployments");
    /// assert_eq!(spec.api_version(), "apps/v1");
    /// ```
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The key identifying this resource in URLs and storage.
    pub(crate) fn key(&self) -> ResourceKey {
        ResourceKey {
            group: self.group.clone(),
            version: self.version.clone(),
            plural: self.plural.clone(),
        }
    }

    /// The resource types every [`FakeCluster`](super::FakeCluster) serves from the start.
    ///
    /// Core `v1` pods, events, namespaces, configmaps and secrets; `apps/v1` deployments,
    /// statefulsets and daemonsets; `events.k8s.io/v1` events; `coordination.k8s.io/v1`
    /// leases; `policy/v1beta1` PodDisruptionBudgets (pods have the `eviction`
    /// subresource); and the custom resources nbv works with: NotebookValidationJobs, Argo CD
    /// Applications (which, like the real CRD, have no status subresource) and KServe
    /// InferenceServices.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::cluster::ApiResourceSpec;
    ///
    /// let builtins = ApiResourceSpec::builtins();
    /// let app = builtins.iter().find(|s| s.kind == "Application").unwrap();
    /// assert_eq!(app.api_version(), "argoproj.io/v1alpha1");
    /// assert!(!app.status_subresource);
    /// ```
    pub fn builtins() -> Vec<Self> {
        let ns = Self::namespaced;
        vec![
            ns("", "v1", "Pod", "pods").with_status_subresource(),
            ns("", "v1", "Event", "events"),
            Self::cluster_scoped("", "v1", "Namespace", "namespaces").with_status_subresource(),
            ns("", "v1", "ConfigMap", "configmaps"),
            ns("", "v1", "Secret", "secrets"),
            ns("", "v1", "ServiceAccount", "serviceaccounts"),
            ns("apps", "v1", "Deployment", "deployments").with_status_subresource(),
            ns("apps", "v1", "StatefulSet", "statefulsets").with_status_subresource(),
            ns("apps", "v1", "DaemonSet", "daemonsets").with_status_subresource(),
            ns("apps", "v1", "ReplicaSet", "replicasets").with_status_subresource(),
            ns("events.k8s.io", "v1", "Event", "events"),
            ns("coordination.k8s.io", "v1", "Lease", "leases"),
            // As Kubernetes 1.20 serves it; pods' eviction subresource honours it.
            ns(
                "policy",
                "v1beta1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
            )
            .with_status_subresource(),
            ns(
                nbv_core::api::GROUP,
                nbv_core::api::VERSION,
                nbv_core::api::KIND,
                "notebookvalidationjobs",
            )
            .with_status_subresource(),
            ns("argoproj.io", "v1alpha1", "Application", "applications"),
            ns("argoproj.io", "v1alpha1", "AppProject", "appprojects"),
            ns(
                "serving.kserve.io",
                "v1beta1",
                "InferenceService",
                "inferenceservices",
            )
            .with_status_subresource(),
            // The build systems of OpenShift Pipelines and OpenShift Builds.
            ns("tekton.dev", "v1", "PipelineRun", "pipelineruns").with_status_subresource(),
            ns("shipwright.io", "v1beta1", "Build", "builds").with_status_subresource(),
            ns("shipwright.io", "v1beta1", "BuildRun", "buildruns").with_status_subresource(),
        ]
    }
}

/// Identifies a registered resource: group, version and plural.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ResourceKey {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
}

impl fmt::Display for ResourceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}", self.plural)
        } else {
            write!(f, "{}.{}", self.plural, self.group)
        }
    }
}

/// The set of resources the cluster serves.
#[derive(Clone, Debug)]
pub(crate) struct Registry {
    specs: Vec<ApiResourceSpec>,
}

impl Registry {
    pub(crate) fn with_builtins() -> Self {
        Self {
            specs: ApiResourceSpec::builtins(),
        }
    }

    /// Adds or replaces (same group, version and plural) a resource.
    pub(crate) fn register(&mut self, spec: ApiResourceSpec) {
        match self.specs.iter_mut().find(|s| s.key() == spec.key()) {
            Some(existing) => *existing = spec,
            None => self.specs.push(spec),
        }
    }

    pub(crate) fn all(&self) -> &[ApiResourceSpec] {
        &self.specs
    }

    pub(crate) fn by_plural(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&ApiResourceSpec> {
        self.specs
            .iter()
            .find(|s| s.group == group && s.version == version && s.plural == plural)
    }

    /// Finds the resource of an object from its `apiVersion` and `kind`.
    pub(crate) fn by_api_version_kind(
        &self,
        api_version: &str,
        kind: &str,
    ) -> Option<&ApiResourceSpec> {
        let (group, version) = split_api_version(api_version);
        self.specs
            .iter()
            .find(|s| s.group == group && s.version == version && s.kind == kind)
    }

    /// Resolves a name the way `kubectl get` does: a plural (`pods`) or kind (`Pod`,
    /// case-insensitive), optionally qualified with `.group` (`deployments.apps`,
    /// `Event.events.k8s.io`). When a bare name matches several groups (core and
    /// `events.k8s.io` both serve `events`) the core group wins, then registration order.
    pub(crate) fn resolve(&self, name: &str) -> Option<&ApiResourceSpec> {
        let matches_name =
            |s: &ApiResourceSpec, n: &str| s.plural == n || s.kind.eq_ignore_ascii_case(n);
        let bare = self
            .specs
            .iter()
            .filter(|s| matches_name(s, name))
            .min_by_key(|s| !s.group.is_empty());
        bare.or_else(|| {
            let (n, group) = name.split_once('.')?;
            self.specs
                .iter()
                .find(|s| s.group == group && matches_name(s, n))
        })
    }
}

/// Splits `apps/v1` into `("apps", "v1")` and `v1` into `("", "v1")`.
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_prefers_core_events_and_accepts_group_suffix() {
        let registry = Registry::with_builtins();
        assert_eq!(
            registry.resolve("events").map(|s| s.group.as_str()),
            Some("")
        );
        assert_eq!(
            registry
                .resolve("events.events.k8s.io")
                .map(|s| s.group.as_str()),
            Some("events.k8s.io")
        );
        assert_eq!(
            registry.resolve("deployment").map(|s| s.plural.as_str()),
            Some("deployments")
        );
        assert_eq!(
            registry
                .resolve("Deployment.apps")
                .map(|s| s.plural.as_str()),
            Some("deployments")
        );
        assert!(registry.resolve("widgets").is_none());
        assert!(registry.resolve("pods.apps").is_none());
    }

    #[test]
    fn register_replaces_same_key() {
        let mut registry = Registry::with_builtins();
        let before = registry.all().len();
        registry.register(ApiResourceSpec::namespaced("", "v1", "Pod", "pods"));
        assert_eq!(registry.all().len(), before);
        assert_eq!(
            registry.resolve("pods").map(|s| s.status_subresource),
            Some(false)
        );
    }
}
