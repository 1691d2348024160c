//! Which jobs an Application answers for: a job names its parent itself (a label or an
//! annotation anyone who creates the job writes), so naming is not enough to paint an
//! Application's notebook status.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::triggers::in_cluster_destination;

/// The namespaces whose jobs an Application answers for, read from the Application.
///
/// Argo CD itself only trusts what it manages. A job counts in its parent's status only
/// when its namespace is one of:
///
/// - the Application's own namespace (Applications in any namespace: the same tenant);
/// - the namespace the Application deploys into in this cluster
///   ([`in_cluster_destination`]);
/// - a namespace of a resource the Application manages (`status.resources`), for
///   Applications that deploy into several namespaces.
///
/// Anything else, a job in another team's namespace that names the Application, is left
/// out of the status, whatever its labels say.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::Custody;
/// use serde_json::json;
///
/// let app = json!({
///     "metadata": {"name": "fraud", "namespace": "argocd"},
///     "spec": {"destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"}},
///     "status": {"resources": [{"kind": "ConfigMap", "namespace": "features", "name": "f"}]}
/// });
/// let custody = Custody::of(&app);
/// assert!(custody.covers("ml"));
/// assert!(custody.covers("features"));
/// assert!(custody.covers("argocd"));
/// assert!(!custody.covers("team-b"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Custody {
    namespaces: BTreeSet<String>,
}

impl Custody {
    /// What `application` (an Argo CD Application object) answers for.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::Custody;
    /// use serde_json::json;
    ///
    /// // Another cluster's namespace `ml` is not this cluster's.
    /// let remote = json!({"metadata": {"namespace": "argocd"},
    ///     "spec": {"destination": {"server": "https://prod.example.com", "namespace": "ml"}}});
    /// assert!(!Custody::of(&remote).covers("ml"));
    /// ```
    pub fn of(application: &Value) -> Custody {
        let own = application["metadata"]["namespace"].as_str();
        let managed = application["status"]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|resource| resource["namespace"].as_str());
        let namespaces = own
            .into_iter()
            .chain(managed)
            .map(str::to_owned)
            .chain(in_cluster_destination(application))
            .filter(|namespace| !namespace.is_empty())
            .collect();
        Custody { namespaces }
    }

    /// Whether a job in `namespace` counts in the Application's status.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::Custody;
    ///
    /// assert!(!Custody::default().covers("ml"));
    /// ```
    pub fn covers(&self, namespace: &str) -> bool {
        self.namespaces.contains(namespace)
    }
}
