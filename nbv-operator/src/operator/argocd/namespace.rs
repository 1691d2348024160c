//! Where Argo CD runs, when `--argocd-namespace` does not say: the first of
//! [`CANDIDATES`] whose `argocd-cm` nbv can read.
//!
//! Plain Argo CD installs into `argocd`; OpenShift GitOps runs its default instance
//! (the `ArgoCD` resource `openshift-gitops`) in `openshift-gitops`. At start, in
//! order, one GET of each Namespace (nbv's ClusterRole may read Namespaces), and of
//! `argocd-cm` only in a namespace that exists: nbv is never refused for asking about a
//! namespace that is not there (it has no Role in it). A 404 means "not there"; a 403
//! in an existing namespace means Argo CD probably runs there without nbv's Role (under
//! OLM, until the second install step); other errors are retried briefly. When the
//! Namespaces cannot be read, `argocd-cm` is asked for directly. [`choose`] decides
//! from the answers; a flag is never second-guessed.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::Api;
use nbv_core::reconcile::{ARGOCD_ROLE, ARGOCD_ROLE_FILE};
use nbv_core::triggers::DEFAULT_ARGOCD_NAMESPACE;

use crate::runtime::api_error::{ApiErrorClass, classify};

/// The ConfigMap Argo CD keeps its settings in.
pub const ARGOCD_CM: &str = "argocd-cm";

/// The namespaces tried, in order: upstream Argo CD's, then OpenShift GitOps'.
pub const CANDIDATES: [&str; 2] = [DEFAULT_ARGOCD_NAMESPACE, OPENSHIFT_GITOPS];

/// The namespace of OpenShift GitOps' default Argo CD instance.
pub const OPENSHIFT_GITOPS: &str = "openshift-gitops";

/// Attempts of a GET that fails otherwise than 403 or 404, one [`RETRY_DELAY`] apart.
const ATTEMPTS: u32 = 3;
const RETRY_DELAY: Duration = Duration::from_secs(2);

/// What the GET of `argocd-cm` in one namespace answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// The ConfigMap is there.
    Found,
    /// 404: no `argocd-cm` (or no such namespace).
    NotFound,
    /// 403: nbv may not read it there (no Role of `config/rbac/argocd_role.yaml`), and
    /// the namespace does not exist or cannot be read.
    Forbidden,
    /// 403 in a namespace that exists: Argo CD is probably there, without nbv's Role.
    Unreadable,
    /// Another error, after the retries.
    Failed(String),
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Probe::Found => f.write_str("found"),
            Probe::NotFound => f.write_str("not found"),
            Probe::Forbidden => f.write_str("forbidden"),
            Probe::Unreadable => f.write_str("forbidden, and the namespace exists"),
            Probe::Failed(error) => write!(f, "failed: {error}"),
        }
    }
}

/// Argo CD's namespace, and a warning to log when the choice is a guess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The namespace.
    pub namespace: String,
    /// Why the choice may be wrong, and what to do; `None` when `argocd-cm` was found
    /// and no namespace before it failed.
    pub warning: Option<String>,
}

/// Argo CD's namespace from the answers `probes` (in the order of [`CANDIDATES`]): the
/// first that holds `argocd-cm`; else the first existing namespace where reading it was
/// forbidden, with a warning that nbv's Role is missing there; else `argocd` with a
/// warning that says what was tried.
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::argocd::namespace::{Probe, choose};
///
/// let gitops = choose(&[("argocd", Probe::Forbidden), ("openshift-gitops", Probe::Found)]);
/// assert_eq!((gitops.namespace.as_str(), gitops.warning), ("openshift-gitops", None));
///
/// // Under OLM before the Role is applied.
/// let olm = choose(&[("argocd", Probe::NotFound), ("openshift-gitops", Probe::Unreadable)]);
/// assert_eq!(olm.namespace, "openshift-gitops");
/// assert!(olm.warning.unwrap().contains("nbv-operator-argocd"));
///
/// let nowhere = choose(&[("argocd", Probe::NotFound), ("openshift-gitops", Probe::Forbidden)]);
/// assert_eq!(nowhere.namespace, "argocd");
/// assert!(nowhere.warning.unwrap().contains("openshift-gitops (forbidden)"));
/// ```
pub fn choose(probes: &[(&str, Probe)]) -> Choice {
    let tried = || {
        probes
            .iter()
            .map(|(ns, probe)| format!("{ns} ({probe})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let first = |wanted: &Probe| probes.iter().position(|(_, probe)| probe == wanted);
    let failed_before = |end: usize| {
        probes[..end]
            .iter()
            .any(|(_, probe)| matches!(probe, Probe::Failed(_)))
    };
    if let Some(at) = first(&Probe::Found) {
        return Choice {
            namespace: probes[at].0.to_owned(),
            warning: failed_before(at).then(|| {
                format!(
                    "Argo CD's namespace: using {} where argocd-cm was found, but an earlier \
                     candidate could not be checked (tried {}); set --argocd-namespace if \
                     Argo CD runs there",
                    probes[at].0,
                    tried()
                )
            }),
        };
    }
    let role = format!("the Role and RoleBinding {ARGOCD_ROLE} of {ARGOCD_ROLE_FILE}");
    if let Some(at) = first(&Probe::Unreadable) {
        let namespace = probes[at].0;
        return Choice {
            namespace: namespace.to_owned(),
            warning: Some(format!(
                "Argo CD's namespace: using {namespace}, which exists but where nbv may not \
                 read argocd-cm (tried {}): apply {role} there, or set --argocd-namespace \
                 to where Argo CD runs",
                tried()
            )),
        };
    }
    let forbidden = probes.iter().any(|(_, probe)| *probe == Probe::Forbidden);
    Choice {
        namespace: DEFAULT_ARGOCD_NAMESPACE.to_owned(),
        warning: Some(format!(
            "Argo CD's namespace: no argocd-cm nbv may read was found (tried {}); using \
             {DEFAULT_ARGOCD_NAMESPACE}. Set --argocd-namespace to where Argo CD runs{}",
            tried(),
            if forbidden {
                format!(", and apply {role} there")
            } else {
                String::new()
            }
        )),
    }
}

/// Argo CD's namespace as [`discover`] found it, with the data of its `argocd-cm` when
/// that was read on the way (so it is not read twice).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Discovered {
    /// The namespace.
    pub namespace: String,
    /// `argocd-cm`'s data, when the discovery read it.
    pub argocd_cm: Option<BTreeMap<String, String>>,
    /// Whether reading `argocd-cm` there was refused (403).
    pub forbidden: bool,
}

/// Argo CD's namespace: `given` (the flag) when set, else the first of [`CANDIDATES`]
/// holding `argocd-cm` ([`choose`]): a GET of each candidate's Namespace and, where it
/// exists, of its `argocd-cm` (with a few retries of one that fails otherwise than 403
/// or 404). The warning, if any, is logged.
pub async fn discover(client: &kube::Client, given: Option<&str>) -> Discovered {
    if let Some(namespace) = given {
        return Discovered {
            namespace: namespace.to_owned(),
            ..Discovered::default()
        };
    }
    let mut probes = Vec::new();
    let mut argocd_cm = None;
    for namespace in CANDIDATES {
        let (probe, data) = probe(client, namespace).await;
        let found = probe == Probe::Found;
        probes.push((namespace, probe));
        if found {
            argocd_cm = data;
            break;
        }
    }
    let choice = choose(&probes);
    match &choice.warning {
        Some(warning) => tracing::warn!("{warning}"),
        None => tracing::info!(
            namespace = %choice.namespace,
            "Argo CD's namespace: argocd-cm found there"
        ),
    }
    let forbidden = probes.iter().any(|(ns, probe)| {
        *ns == choice.namespace && matches!(probe, Probe::Forbidden | Probe::Unreadable)
    });
    Discovered {
        namespace: choice.namespace,
        argocd_cm,
        forbidden,
    }
}

async fn probe(
    client: &kube::Client,
    namespace: &str,
) -> (Probe, Option<BTreeMap<String, String>>) {
    let exists = namespace_exists(client, namespace).await;
    if exists == Some(false) {
        return (Probe::NotFound, None);
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let mut attempt = 1;
    loop {
        let error = match api.get_opt(ARGOCD_CM).await {
            Ok(Some(cm)) => return (Probe::Found, Some(cm.data.unwrap_or_default())),
            Ok(None) => return (Probe::NotFound, None),
            Err(error) => error,
        };
        let probe = match classify(&error) {
            ApiErrorClass::NotFound => Probe::NotFound,
            ApiErrorClass::Forbidden if exists == Some(true) => Probe::Unreadable,
            ApiErrorClass::Forbidden => Probe::Forbidden,
            _ if attempt >= ATTEMPTS => Probe::Failed(error.to_string()),
            _ => {
                tracing::debug!(namespace, %error, attempt, "reading {ARGOCD_CM} failed; retrying");
                attempt += 1;
                tokio::time::sleep(RETRY_DELAY).await;
                continue;
            }
        };
        return (probe, None);
    }
}

/// Whether the Namespace `name` exists; `None` when it cannot be read.
async fn namespace_exists(client: &kube::Client, name: &str) -> Option<bool> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    match namespaces.get_opt(name).await {
        Ok(found) => Some(found.is_some()),
        Err(error) => {
            tracing::debug!(namespace = name, %error, "reading the Namespace failed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn probe_strategy() -> impl Strategy<Value = Probe> {
        prop_oneof![
            Just(Probe::Found),
            Just(Probe::NotFound),
            Just(Probe::Forbidden),
            Just(Probe::Unreadable),
            Just(Probe::Failed("503".into())),
        ]
    }

    #[test]
    fn argocd_first_then_openshift_gitops() {
        let both = choose(&[("argocd", Probe::Found)]);
        assert_eq!(both.namespace, "argocd");
        assert_eq!(both.warning, None);
        let gitops = choose(&[
            ("argocd", Probe::NotFound),
            ("openshift-gitops", Probe::Found),
        ]);
        assert_eq!(gitops.namespace, "openshift-gitops");
        assert_eq!(gitops.warning, None);
    }

    #[test]
    fn nothing_found_falls_back_to_argocd_and_says_what_was_tried() {
        let choice = choose(&[
            ("argocd", Probe::Forbidden),
            ("openshift-gitops", Probe::Failed("connection reset".into())),
        ]);
        assert_eq!(choice.namespace, "argocd");
        let warning = choice.warning.unwrap_or_default();
        assert!(
            warning
                .contains("tried argocd (forbidden), openshift-gitops (failed: connection reset)"),
            "{warning}"
        );
        assert!(warning.contains("--argocd-namespace"), "{warning}");
        assert!(warning.contains("nbv-operator-argocd"), "{warning}");
        let none = choose(&[
            ("argocd", Probe::NotFound),
            ("openshift-gitops", Probe::NotFound),
        ]);
        assert!(!none.warning.unwrap_or_default().contains("Role"));
    }

    #[test]
    fn an_existing_namespace_without_the_role_is_chosen_with_a_warning() {
        let choice = choose(&[
            ("argocd", Probe::Forbidden),
            ("openshift-gitops", Probe::Unreadable),
        ]);
        assert_eq!(choice.namespace, "openshift-gitops");
        let warning = choice.warning.unwrap_or_default();
        assert!(
            warning.contains("apply the Role and RoleBinding nbv-operator-argocd"),
            "{warning}"
        );
        assert!(
            warning.contains("openshift-gitops (forbidden, and the namespace exists)"),
            "{warning}"
        );
        let argocd = choose(&[
            ("argocd", Probe::Unreadable),
            ("openshift-gitops", Probe::Unreadable),
        ]);
        assert_eq!(argocd.namespace, "argocd");
    }

    #[test]
    fn a_failed_check_before_the_one_found_is_a_warning() {
        let choice = choose(&[
            ("argocd", Probe::Failed("503".into())),
            ("openshift-gitops", Probe::Found),
        ]);
        assert_eq!(choice.namespace, "openshift-gitops");
        assert!(choice.warning.is_some());
    }

    proptest! {
        /// The choice is the first namespace found, else the first that exists where
        /// argocd-cm was forbidden, else `argocd`; there is no warning exactly when one
        /// was found with no failed check before it.
        #[test]
        fn the_first_found_wins(first in probe_strategy(), second in probe_strategy()) {
            let probes = [("argocd", first.clone()), ("openshift-gitops", second.clone())];
            let choice = choose(&probes);
            let gitops = second == Probe::Found
                || (first != Probe::Found && first != Probe::Unreadable && second == Probe::Unreadable);
            let expected = if first == Probe::Found || !gitops { "argocd" } else { "openshift-gitops" };
            prop_assert_eq!(choice.namespace.as_str(), expected);
            let clean = first == Probe::Found
                || (second == Probe::Found && !matches!(first, Probe::Failed(_)));
            prop_assert_eq!(choice.warning.is_none(), clean);
        }
    }
}
