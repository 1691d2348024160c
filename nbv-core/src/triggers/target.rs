//! A validated trigger: which object, and what to do to it.

use std::fmt;

use serde::Serialize;

use super::action::Action;
use super::api_version::ApiVersion;
use super::names::{Kind, Namespace, ObjectName};

/// The API group of Argo CD's resources.
pub(crate) const ARGOCD_GROUP: &str = "argoproj.io";
/// The kind of an Argo CD Application.
pub(crate) const APPLICATION_KIND: &str = "Application";

/// The object a trigger acts on, with its namespace resolved.
///
/// Every part is already validated, so a `TargetRef` always names an object
/// that the API server could hold.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::TargetRef;
/// let target = TargetRef::new(
///     "serving.kserve.io/v1beta1".parse().unwrap(),
///     "InferenceService".parse().unwrap(),
///     "predictive-analytics".parse().unwrap(),
///     "ml-platform".parse().unwrap(),
/// );
/// assert_eq!(target.namespace().as_str(), "ml-platform");
/// assert_eq!(
///     target.to_string(),
///     "InferenceService ml-platform/predictive-analytics (serving.kserve.io/v1beta1)"
/// );
/// assert!(!target.is_argo_application());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetRef {
    api_version: ApiVersion,
    kind: Kind,
    name: ObjectName,
    namespace: Namespace,
}

impl TargetRef {
    /// Builds a target from validated parts.
    pub fn new(
        api_version: ApiVersion,
        kind: Kind,
        name: ObjectName,
        namespace: Namespace,
    ) -> Self {
        Self {
            api_version,
            kind,
            name,
            namespace,
        }
    }

    /// The target's `apiVersion`.
    pub fn api_version(&self) -> &ApiVersion {
        &self.api_version
    }

    /// The target's kind.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The target's name.
    pub fn name(&self) -> &ObjectName {
        &self.name
    }

    /// The target's namespace: the one written in the entry, or the job's.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// Whether the target is an Argo CD Application (group `argoproj.io`,
    /// kind `Application`, any version).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::TargetRef;
    /// let app = TargetRef::new(
    ///     "argoproj.io/v1alpha1".parse().unwrap(),
    ///     "Application".parse().unwrap(),
    ///     "models".parse().unwrap(),
    ///     "argocd".parse().unwrap(),
    /// );
    /// assert!(app.is_argo_application());
    /// ```
    pub fn is_argo_application(&self) -> bool {
        self.api_version.group() == ARGOCD_GROUP && self.kind.as_str() == APPLICATION_KIND
    }
}

impl fmt::Display for TargetRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}/{} ({})",
            self.kind, self.namespace, self.name, self.api_version
        )
    }
}

/// One validated post-success trigger: an action on a target.
///
/// The action always fits the target: `sync` only for Argo CD Applications,
/// `restart` never for them (see [`ActionNotSupported`]).
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{Action, TargetRef, Trigger};
/// let target = TargetRef::new(
///     "serving.kserve.io/v1beta1".parse().unwrap(),
///     "InferenceService".parse().unwrap(),
///     "predictive-analytics".parse().unwrap(),
///     "ml-platform".parse().unwrap(),
/// );
/// let trigger = Trigger::new(target.clone(), Action::Restart).unwrap();
/// assert_eq!(
///     trigger.key(),
///     "restart:serving.kserve.io/InferenceService:ml-platform/predictive-analytics"
/// );
/// assert!(Trigger::new(target, Action::Sync).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Trigger {
    target: TargetRef,
    action: Action,
}

impl Trigger {
    /// Pairs an action with a target.
    ///
    /// # Errors
    ///
    /// [`ActionNotSupported`] for `sync` on anything but an Argo CD
    /// Application (only Applications can be synced), and for `restart` on an
    /// Application (it owns no pods; use `sync` or `refresh`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::{Action, TargetRef, Trigger};
    /// let app = TargetRef::new(
    ///     "argoproj.io/v1alpha1".parse().unwrap(),
    ///     "Application".parse().unwrap(),
    ///     "models".parse().unwrap(),
    ///     "argocd".parse().unwrap(),
    /// );
    /// assert!(Trigger::new(app.clone(), Action::Sync).is_ok());
    /// assert!(Trigger::new(app.clone(), Action::Refresh).is_ok());
    /// assert!(Trigger::new(app, Action::Restart).is_err());
    /// ```
    pub fn new(target: TargetRef, action: Action) -> Result<Self, ActionNotSupported> {
        let application = target.is_argo_application();
        match (action, application) {
            (Action::Sync, false) | (Action::Restart, true) => Err(ActionNotSupported {
                action,
                kind: target.kind,
            }),
            _ => Ok(Self { target, action }),
        }
    }

    /// The object acted on.
    pub fn target(&self) -> &TargetRef {
        &self.target
    }

    /// What is done to it.
    pub fn action(&self) -> Action {
        self.action
    }

    /// Whether the target is an Argo CD Application.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = nbv_core::triggers::parse_triggers(
    ///     "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: sync}",
    ///     "ml",
    /// ).unwrap();
    /// assert!(set.triggers()[0].is_argo_application());
    /// ```
    pub fn is_argo_application(&self) -> bool {
        self.target.is_argo_application()
    }

    /// A stable identity of this trigger, of the form
    /// `action:group/Kind:namespace/name` (the group is empty for the core
    /// group, as in Argo CD's tracking ids), for example
    /// `restart:serving.kserve.io/InferenceService:ml-platform/predictive-analytics`.
    ///
    /// The version is left out on purpose: `apps/v1` and `apps/v1beta2` name the
    /// same Deployment, so they are the same trigger.
    ///
    /// The key is injective on (action, group, kind, namespace, name): none of
    /// the parts can contain the separator that follows it (an action is a
    /// fixed lowercase word, a group a DNS subdomain without `/` or `:`, a kind
    /// ASCII letters and digits, a namespace a DNS label without `/`), so the
    /// string splits back into its parts in exactly one way. Two different
    /// triggers therefore never share a key, which makes it safe to build
    /// idempotency keys from it.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = nbv_core::triggers::parse_triggers(
    ///     "- {apiVersion: v1, kind: ConfigMap, name: model-config, action: refresh}",
    ///     "ml",
    /// ).unwrap();
    /// assert_eq!(set.triggers()[0].key(), "refresh:/ConfigMap:ml/model-config");
    /// ```
    pub fn key(&self) -> String {
        let target = &self.target;
        format!(
            "{}:{}/{}:{}/{}",
            self.action,
            target.api_version.group(),
            target.kind,
            target.namespace,
            target.name
        )
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.action, self.target)
    }
}

/// The annotation form of a trigger, with the namespace always written out.
impl Serialize for Trigger {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Entry<'a> {
            api_version: &'a ApiVersion,
            kind: &'a Kind,
            name: &'a ObjectName,
            namespace: &'a Namespace,
            action: Action,
        }
        Entry {
            api_version: &self.target.api_version,
            kind: &self.target.kind,
            name: &self.target.name,
            namespace: &self.target.namespace,
            action: self.action,
        }
        .serialize(serializer)
    }
}

/// An action that does not apply to the target's kind.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{Action, TargetRef, Trigger};
/// let deployment = TargetRef::new(
///     "apps/v1".parse().unwrap(),
///     "Deployment".parse().unwrap(),
///     "model-server".parse().unwrap(),
///     "ml".parse().unwrap(),
/// );
/// let err = Trigger::new(deployment, Action::Sync).unwrap_err();
/// assert_eq!(err.action(), Action::Sync);
/// assert!(err.to_string().starts_with("\"sync\" applies only to Argo CD Applications"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct ActionNotSupported {
    action: Action,
    kind: Kind,
}

impl ActionNotSupported {
    /// The rejected action.
    pub fn action(&self) -> Action {
        self.action
    }

    /// The kind of the target it was asked for.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    fn message(&self) -> String {
        match self.action {
            Action::Sync => format!(
                "\"sync\" applies only to Argo CD Applications (apiVersion {ARGOCD_GROUP}/v1alpha1, \
                 kind {APPLICATION_KIND}); for a {} use \"restart\" or \"refresh\"",
                self.kind
            ),
            _ => format!(
                "\"{}\" does not apply to an Argo CD Application; use \"sync\" to sync it or \
                 \"refresh\" to refresh it",
                self.action
            ),
        }
    }
}
