//! Where a job's triggers may act: the rule that keeps nbv from being a confused deputy.
//!
//! nbv carries triggers out with the operator's service account, which may restart,
//! annotate and sync objects in many namespaces. The author of a job usually may not.
//! Without a rule, anyone allowed to create a `NotebookValidationJob` could make nbv
//! act anywhere the operator can (the upstream operator does exactly that). So a
//! trigger acts in its job's own namespace, and elsewhere only where an administrator
//! said so:
//!
//! - the operator flag `--trigger-namespaces` ([`TriggerAccess::allowed_namespaces`])
//!   lists namespaces any job may act in (`*`: every namespace);
//! - the owners of a namespace opt in by annotating the `Namespace` object with
//!   [`ACCEPT_TRIGGERS_FROM`]: a comma-separated list of namespaces whose jobs may act
//!   in it, or `*` for every namespace.
//!
//! Argo CD Applications live in Argo CD's namespace, not in the namespace they deploy
//! to, so they get one more rule: a job may `sync` or `refresh` an Application that
//! deploys into the job's own namespace (`spec.destination.namespace`), because that
//! Application manages the job's namespace. Any other Application needs its own
//! namespace to be allowed through the flag or the annotation; being in the job's
//! namespace is not enough, since an Application may deploy anywhere its project
//! allows.
//!
//! The decision is pure: the shell gathers the [`AccessFacts`] (the annotation of the
//! target's `Namespace`, the Application's destination) and calls
//! [`TriggerAccess::authorize`]. Facts only ever widen access (a property test checks
//! it), so a shell may first decide without facts and fetch them only when refused.
//!
//! # Examples
//!
//! ```
//! use nbv_core::triggers::{parse_triggers, AccessFacts, Grant, TriggerAccess};
//!
//! let set = parse_triggers(
//!     "- {apiVersion: apps/v1, kind: Deployment, name: web, namespace: serving, action: restart}",
//!     "ml",
//! )
//! .unwrap();
//! let trigger = &set.triggers()[0];
//! let access = TriggerAccess::default();
//!
//! let refusal = access.authorize(trigger, "ml", &AccessFacts::default()).unwrap_err();
//! assert!(refusal.to_string().contains("annotate namespace serving with mlops.dev/accept-triggers-from: ml"));
//!
//! let opted_in = AccessFacts { target_namespace_accepts: Some("ml, research".into()), ..Default::default() };
//! assert_eq!(access.authorize(trigger, "ml", &opted_in), Ok(Grant::NamespaceOptIn));
//! ```

use std::collections::BTreeSet;
use std::fmt;

use super::target::Trigger;

/// Annotation on a `Namespace` object: the namespaces whose jobs' triggers may act in
/// it, comma-separated (`ml, research`), or `*` for every namespace.
pub const ACCEPT_TRIGGERS_FROM: &str = "mlops.dev/accept-triggers-from";

/// The entry that stands for every namespace, in the flag and in the annotation.
pub(crate) const ANY_NAMESPACE: &str = "*";

/// The operator's configuration of where triggers may act beyond their job's namespace.
///
/// The default allows nothing beyond the job's own namespace.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::TriggerAccess;
///
/// let access = TriggerAccess::from_list("serving, models");
/// assert!(access.allows_namespace("serving"));
/// assert!(!access.allows_namespace("kube-system"));
/// assert!(TriggerAccess::from_list("*").allows_namespace("kube-system"));
/// assert!(!TriggerAccess::default().allows_namespace("serving"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TriggerAccess {
    /// Namespaces in which any job's triggers may act (the operator flag
    /// `--trigger-namespaces`); `*` allows every namespace.
    pub allowed_namespaces: BTreeSet<String>,
}

/// The facts about a trigger's target that the decision may need, as the shell
/// observed them. `None` means "not fetched" or "absent": both mean no extra access.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::AccessFacts;
///
/// let facts = AccessFacts { application_destination: Some("ml".into()), ..Default::default() };
/// assert!(facts.target_namespace_accepts.is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccessFacts {
    /// The value of [`ACCEPT_TRIGGERS_FROM`] on the target's `Namespace` object.
    pub target_namespace_accepts: Option<String>,
    /// `spec.destination.namespace` of the target, when it is an Argo CD Application
    /// that deploys into this cluster ([`in_cluster_destination`]).
    pub application_destination: Option<String>,
}

/// Argo CD's address of the cluster it runs in.
const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
/// Argo CD's name of the cluster it runs in.
const IN_CLUSTER_NAME: &str = "in-cluster";

/// The namespace an Application deploys into, when that namespace is in this cluster:
/// its `spec.destination` names the cluster Argo CD runs in, by `server`
/// (`https://kubernetes.default.svc`) or by `name` (`in-cluster`), not both, as Argo CD
/// requires. A job's namespace `ml` here says nothing about namespace `ml` of another
/// cluster.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::in_cluster_destination;
/// use serde_json::json;
///
/// let here = json!({"spec": {"destination": {"server": "https://kubernetes.default.svc", "namespace": "ml"}}});
/// assert_eq!(in_cluster_destination(&here).as_deref(), Some("ml"));
/// let by_name = json!({"spec": {"destination": {"name": "in-cluster", "namespace": "ml"}}});
/// assert_eq!(in_cluster_destination(&by_name).as_deref(), Some("ml"));
/// let elsewhere = json!({"spec": {"destination": {"server": "https://prod.example.com", "namespace": "ml"}}});
/// assert_eq!(in_cluster_destination(&elsewhere), None);
/// ```
pub fn in_cluster_destination(application: &serde_json::Value) -> Option<String> {
    let destination = &application["spec"]["destination"];
    let text = |key: &str| destination[key].as_str().filter(|v| !v.is_empty());
    let here = match (text("server"), text("name")) {
        (Some(server), None) => server.trim_end_matches('/') == IN_CLUSTER_SERVER,
        (None, Some(name)) => name == IN_CLUSTER_NAME,
        _ => false,
    };
    here.then(|| text("namespace").map(str::to_owned)).flatten()
}

/// Why a trigger may act on its target.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::Grant;
/// assert_eq!(Grant::SameNamespace.to_string(), "the target is in the job's namespace");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grant {
    /// The target is in the job's namespace (never for an Application).
    SameNamespace,
    /// The target is an Argo CD Application that deploys into the job's namespace.
    ApplicationDestination,
    /// The operator flag `--trigger-namespaces` allows the target's namespace.
    OperatorFlag,
    /// The target's namespace accepts triggers from the job's namespace
    /// (annotation [`ACCEPT_TRIGGERS_FROM`]).
    NamespaceOptIn,
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Grant::SameNamespace => "the target is in the job's namespace",
            Grant::ApplicationDestination => {
                "the Application deploys into the job's namespace (spec.destination.namespace)"
            }
            Grant::OperatorFlag => "the operator flag --trigger-namespaces allows the namespace",
            Grant::NamespaceOptIn => {
                "the target's namespace accepts triggers from the job's namespace"
            }
        })
    }
}

impl TriggerAccess {
    /// Reads a comma-separated list of namespaces (the form of the operator flag).
    /// Spaces around entries and empty entries are ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::TriggerAccess;
    /// let access = TriggerAccess::from_list(" serving,,models ");
    /// assert_eq!(access.allowed_namespaces.len(), 2);
    /// ```
    pub fn from_list(value: &str) -> TriggerAccess {
        TriggerAccess {
            allowed_namespaces: entries(value).map(str::to_owned).collect(),
        }
    }

    /// Whether the operator flag lets every job act in `namespace`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::TriggerAccess;
    /// assert!(TriggerAccess::from_list("serving").allows_namespace("serving"));
    /// ```
    pub fn allows_namespace(&self, namespace: &str) -> bool {
        self.allowed_namespaces.contains(ANY_NAMESPACE)
            || self.allowed_namespaces.contains(namespace)
    }

    /// Whether a job in `job_namespace` may act on an object in `target_namespace`
    /// that is not an Argo CD Application: rules 1, 3 and 4 of
    /// [`authorize`](Self::authorize). `accepts` is the [`ACCEPT_TRIGGERS_FROM`] value
    /// of the target's `Namespace`, when known. Model validation reads its models by
    /// the same rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::{Grant, TriggerAccess};
    ///
    /// let access = TriggerAccess::default();
    /// assert_eq!(access.grant_in("ml", "ml", None), Some(Grant::SameNamespace));
    /// assert_eq!(access.grant_in("serving", "ml", Some("ml")), Some(Grant::NamespaceOptIn));
    /// assert_eq!(access.grant_in("serving", "ml", None), None);
    /// ```
    pub fn grant_in(
        &self,
        target_namespace: &str,
        job_namespace: &str,
        accepts: Option<&str>,
    ) -> Option<Grant> {
        if target_namespace == job_namespace {
            return Some(Grant::SameNamespace);
        }
        self.grant_beyond(target_namespace, job_namespace, accepts)
    }

    /// The grants that reach beyond the job's namespace: the operator flag, then the
    /// target namespace's opt-in.
    fn grant_beyond(
        &self,
        target_namespace: &str,
        job_namespace: &str,
        accepts: Option<&str>,
    ) -> Option<Grant> {
        if self.allows_namespace(target_namespace) {
            return Some(Grant::OperatorFlag);
        }
        accepts
            .is_some_and(|value| accepts_from(value, job_namespace))
            .then_some(Grant::NamespaceOptIn)
    }

    /// Decides whether `trigger`, declared by a job in `job_namespace`, may act.
    ///
    /// Rules, in order:
    /// 1. a target that is not an Argo CD Application, in the job's namespace: allowed;
    /// 2. an Application whose `spec.destination.namespace` is the job's namespace:
    ///    allowed;
    /// 3. a target whose namespace the operator flag allows: allowed;
    /// 4. a target whose `Namespace` carries [`ACCEPT_TRIGGERS_FROM`] naming the job's
    ///    namespace or `*`: allowed;
    /// 5. anything else: refused.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] whose message says how an administrator can allow the trigger.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::{parse_triggers, AccessFacts, Grant, TriggerAccess};
    ///
    /// let set = parse_triggers(
    ///     "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: sync}",
    ///     "ml",
    /// )
    /// .unwrap();
    /// let sync = &set.triggers()[0];
    /// let access = TriggerAccess::default();
    ///
    /// let into_ml = AccessFacts { application_destination: Some("ml".into()), ..Default::default() };
    /// assert_eq!(access.authorize(sync, "ml", &into_ml), Ok(Grant::ApplicationDestination));
    ///
    /// let into_prod = AccessFacts { application_destination: Some("prod".into()), ..Default::default() };
    /// let refusal = access.authorize(sync, "ml", &into_prod).unwrap_err();
    /// assert_eq!(refusal.target_namespace(), "argocd");
    /// // Where the Application deploys is not the job's author's business.
    /// assert!(!refusal.to_string().contains("prod"));
    /// ```
    pub fn authorize(
        &self,
        trigger: &Trigger,
        job_namespace: &str,
        facts: &AccessFacts,
    ) -> Result<Grant, Refusal> {
        let target_namespace = trigger.target().namespace().as_str();
        let application = trigger.is_argo_application();
        let accepts = facts.target_namespace_accepts.as_deref();
        let grant = if application {
            if facts.application_destination.as_deref() == Some(job_namespace) {
                return Ok(Grant::ApplicationDestination);
            }
            self.grant_beyond(target_namespace, job_namespace, accepts)
        } else {
            self.grant_in(target_namespace, job_namespace, accepts)
        };
        if let Some(grant) = grant {
            return Ok(grant);
        }
        Err(Refusal {
            trigger: trigger.to_string(),
            job_namespace: job_namespace.to_owned(),
            target_namespace: target_namespace.to_owned(),
            application,
        })
    }
}

/// Whether an [`ACCEPT_TRIGGERS_FROM`] value admits jobs of `job_namespace`.
fn accepts_from(value: &str, job_namespace: &str) -> bool {
    entries(value).any(|entry| entry == ANY_NAMESPACE || entry == job_namespace)
}

/// The non-empty, trimmed entries of a comma-separated list.
fn entries(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|e| !e.is_empty())
}

/// A trigger that may not act where it points, and what would allow it.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{parse_triggers, AccessFacts, TriggerAccess};
///
/// let set = parse_triggers(
///     "- {apiVersion: v1, kind: ConfigMap, name: cfg, namespace: shared, action: refresh}",
///     "ml",
/// )
/// .unwrap();
/// let refusal = TriggerAccess::default()
///     .authorize(&set.triggers()[0], "ml", &AccessFacts::default())
///     .unwrap_err();
/// assert_eq!(refusal.job_namespace(), "ml");
/// assert!(refusal.to_string().ends_with(
///     "add namespace shared to --trigger-namespaces or annotate namespace shared with \
///      mlops.dev/accept-triggers-from: ml"
/// ));
/// ```
///
/// A refusal says what the job's author could have known and what would allow the
/// trigger, nothing about the target: not where an Application deploys, not which
/// namespaces the target's namespace accepts triggers from. Events and the job's status
/// are read by whoever can read the job's namespace.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    trigger: String,
    job_namespace: String,
    target_namespace: String,
    /// Whether the target is an Argo CD Application.
    application: bool,
}

impl Refusal {
    /// Namespace of the job that declared the trigger.
    pub fn job_namespace(&self) -> &str {
        &self.job_namespace
    }

    /// Namespace of the target, which would have to allow the trigger.
    pub fn target_namespace(&self) -> &str {
        &self.target_namespace
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (job, target) = (&self.job_namespace, &self.target_namespace);
        write!(f, "trigger \"{}\" refused: ", self.trigger)?;
        if self.application {
            write!(
                f,
                "the Application does not deploy into the job's namespace \"{job}\" of this \
                 cluster (spec.destination), and "
            )?;
        } else {
            write!(
                f,
                "a job in namespace \"{job}\" acts only in its own namespace unless allowed, and "
            )?;
        }
        write!(
            f,
            "namespace \"{target}\" does not accept triggers from \"{job}\""
        )?;
        write!(
            f,
            "; add namespace {target} to --trigger-namespaces or annotate namespace {target} \
             with {ACCEPT_TRIGGERS_FROM}: {job}"
        )
    }
}
