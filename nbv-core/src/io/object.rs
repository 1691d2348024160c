//! How a request names an object of the cluster.

use std::fmt;

/// An object of the cluster by `apiVersion`, kind, namespace and name (or, in
/// [`Request::List`](super::Request::List), every object of a kind).
///
/// # Examples
///
/// ```
/// use nbv_core::io::ObjectRef;
///
/// let pod = ObjectRef::namespaced("v1", "Pod", "ml", "train-g1-r0");
/// assert_eq!(pod.to_string(), "Pod ml/train-g1-r0");
/// assert_eq!(pod.group(), "");
/// let namespace = ObjectRef::cluster("v1", "Namespace", "serving");
/// assert_eq!(namespace.to_string(), "Namespace serving");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// `apiVersion`: `v1`, `apps/v1`, `argoproj.io/v1alpha1`.
    pub api_version: String,
    /// The kind: `Pod`, `Deployment`, `Application`.
    pub kind: String,
    /// The namespace; `None` for a cluster-scoped object.
    pub namespace: Option<String>,
    /// The name; empty in a list.
    pub name: String,
}

impl ObjectRef {
    /// A namespaced object.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::ObjectRef;
    ///
    /// let app = ObjectRef::namespaced("argoproj.io/v1alpha1", "Application", "argocd", "models");
    /// assert_eq!(app.namespace.as_deref(), Some("argocd"));
    /// ```
    pub fn namespaced(
        api_version: impl Into<String>,
        kind: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }

    /// A cluster-scoped object.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::ObjectRef;
    ///
    /// assert_eq!(ObjectRef::cluster("v1", "Namespace", "ml").namespace, None);
    /// ```
    pub fn cluster(
        api_version: impl Into<String>,
        kind: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjectRef {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: None,
            name: name.into(),
        }
    }

    /// The API group: what precedes the `/` of `apiVersion` (empty for the core group).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::ObjectRef;
    ///
    /// assert_eq!(ObjectRef::cluster("apps/v1", "Deployment", "w").group(), "apps");
    /// ```
    pub fn group(&self) -> &str {
        self.api_version
            .split_once('/')
            .map_or("", |(group, _)| group)
    }

    /// The version: what follows the `/` of `apiVersion` (all of it in the core group).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::io::ObjectRef;
    ///
    /// assert_eq!(ObjectRef::cluster("apps/v1", "Deployment", "w").version(), "v1");
    /// assert_eq!(ObjectRef::cluster("v1", "Pod", "p").version(), "v1");
    /// ```
    pub fn version(&self) -> &str {
        self.api_version
            .split_once('/')
            .map_or(self.api_version.as_str(), |(_, version)| version)
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}
