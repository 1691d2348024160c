//! What a job may put in its validation Pod: the cluster admin's policy, which nbv
//! enforces before it builds an image or creates a Pod for a job.
//!
//! nbv creates the Pod with its own service account, so without a policy anyone who
//! may create a `NotebookValidationJob` in a namespace may run a Pod there with any
//! image, service account, Secret, volume and placement the spec can express. A
//! [`PodPolicy`] narrows that; [`PodPolicy::check`] decides, purely, and a refusal
//! ([`PolicyRefusal`]) names the field and the rule, so that the job fails at once
//! with a message its author can act on.
//!
//! The default policy allows everything the spec can express (every existing job
//! keeps working); what the restricted Pod Security profile forbids (`hostPath` and
//! the other volume sources outside it) is refused whatever the policy says.

mod check;
mod image;
mod names;
mod token;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// Volume sources the restricted Pod Security profile allows (field names of
/// `Volume`).
pub(super) const RESTRICTED_VOLUME_SOURCES: [&str; 8] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

pub(in crate::pod) use check::volume_sources;
pub use image::{ImagePattern, normalized_repository};
pub use names::ObjectRule;
pub use token::{InvalidTokenAnnotation, SERVICE_ACCOUNT_TOKEN_ANNOTATION, api_token_requested};

/// The cluster admin's rules for what jobs may put in their validation Pods (the
/// flags of `nbv run`: `--allowed-images`, `--allowed-service-accounts`,
/// `--allowed-secrets`, `--deny-secrets`, `--deny-job-placement`,
/// `--allowed-volume-sources`, `--deny-api-token`). `None` or empty sets allow
/// everything of their kind; [`PodPolicy::default`] allows everything.
///
/// # Examples
///
/// ```
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::pod::{PodPolicy, PolicyRule};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml"},
///     "spec": {
///         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
///         "podConfig": {"containerImage": "docker.io/someone/papermill:1"}
///     }
/// }))?;
/// assert!(PodPolicy::default().check(&job).is_ok());
///
/// let policy = PodPolicy { images: Some(vec!["quay.io/ml".parse()?]), ..PodPolicy::default() };
/// let refusal = policy.check(&job).unwrap_err();
/// assert_eq!(refusal.field, "spec.podConfig.containerImage");
/// assert_eq!(refusal.rule, PolicyRule::Images);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodPolicy {
    /// Images jobs may run or build from (`--allowed-images`); `None`: any.
    pub images: Option<Vec<ImagePattern>>,
    /// Service accounts jobs may name besides `default`, which is always allowed
    /// (`--allowed-service-accounts`); `None`: any.
    pub service_accounts: Option<BTreeSet<ObjectRule>>,
    /// Secrets jobs may reference by name (`--allowed-secrets`; `--deny-secrets` is
    /// the empty set); `None`: any.
    pub secrets: Option<BTreeSet<ObjectRule>>,
    /// Placement fields of `podConfig` jobs may not set (`--deny-job-placement`); the
    /// admin's own placement (the Pod defaults) applies all the same.
    pub denied_placement: BTreeSet<PlacementField>,
    /// Volume sources jobs may use (`--allowed-volume-sources`), among those of the
    /// restricted Pod Security profile; `None`: all of those.
    pub volume_sources: Option<BTreeSet<String>>,
    /// Whether jobs may not ask for a service account token (`--deny-api-token`):
    /// neither by [`SERVICE_ACCOUNT_TOKEN_ANNOTATION`] nor by a projected
    /// `serviceAccountToken` volume.
    pub deny_api_token: bool,
}

/// A placement field of `podConfig` a policy can deny.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::PlacementField;
///
/// let field: PlacementField = "nodeSelector".parse()?;
/// assert_eq!(field, PlacementField::NodeSelector);
/// assert_eq!(field.as_str(), "nodeSelector");
/// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PlacementField {
    /// `podConfig.nodeSelector`.
    NodeSelector,
    /// `podConfig.tolerations`.
    Tolerations,
    /// `podConfig.affinity`.
    Affinity,
}

impl PlacementField {
    /// Every field, in the CRD's order.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::PlacementField;
    ///
    /// let names: Vec<&str> = PlacementField::ALL.iter().map(|f| f.as_str()).collect();
    /// assert_eq!(names, ["nodeSelector", "tolerations", "affinity"]);
    /// ```
    pub const ALL: [PlacementField; 3] = [
        PlacementField::NodeSelector,
        PlacementField::Tolerations,
        PlacementField::Affinity,
    ];

    /// The field's name in `podConfig`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::PlacementField;
    ///
    /// assert_eq!(PlacementField::Tolerations.as_str(), "tolerations");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            PlacementField::NodeSelector => "nodeSelector",
            PlacementField::Tolerations => "tolerations",
            PlacementField::Affinity => "affinity",
        }
    }
}

impl fmt::Display for PlacementField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PlacementField {
    type Err = InvalidPodPolicy;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        PlacementField::ALL
            .into_iter()
            .find(|field| field.as_str() == text.trim())
            .ok_or_else(|| InvalidPodPolicy {
                setting: "--deny-job-placement",
                entry: text.to_owned(),
                problem: "not a placement field; use nodeSelector, tolerations or affinity"
                    .to_owned(),
            })
    }
}

/// An entry of a policy flag nbv cannot use; `nbv run` stops, naming it.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::parse_volume_source;
///
/// let error = parse_volume_source("hostPath").unwrap_err();
/// assert!(error.to_string().starts_with("--allowed-volume-sources: \"hostPath\":"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{setting}: {entry:?}: {problem}")]
pub struct InvalidPodPolicy {
    /// The flag.
    pub setting: &'static str,
    /// The entry as given.
    pub entry: String,
    /// What is wrong and what to write instead.
    pub problem: String,
}

/// An entry of `--allowed-volume-sources`: a volume source field of a Pod's volume
/// that the restricted Pod Security profile allows (`configMap`, `csi`,
/// `downwardAPI`, `emptyDir`, `ephemeral`, `persistentVolumeClaim`, `projected`,
/// `secret`).
///
/// # Errors
///
/// [`InvalidPodPolicy`] for any other: `hostPath` and the rest are never allowed,
/// since the validation Pod meets the restricted profile.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::parse_volume_source;
///
/// assert_eq!(parse_volume_source(" configMap ")?, "configMap");
/// assert!(parse_volume_source("configmap").is_err());
/// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
/// ```
pub fn parse_volume_source(text: &str) -> Result<String, InvalidPodPolicy> {
    let source = text.trim();
    if RESTRICTED_VOLUME_SOURCES.contains(&source) {
        return Ok(source.to_owned());
    }
    Err(InvalidPodPolicy {
        setting: "--allowed-volume-sources",
        entry: text.to_owned(),
        problem: format!(
            "not a volume source the validation Pod may use: it meets the restricted Pod \
             Security profile, which allows {} (hostPath and the others are never allowed)",
            RESTRICTED_VOLUME_SOURCES.join(", ")
        ),
    })
}

/// An entry of `--allowed-service-accounts`: `name` or `namespace/name`.
///
/// # Errors
///
/// [`InvalidPodPolicy`] naming the flag when the entry is not one.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::parse_service_account_rule;
///
/// assert_eq!(parse_service_account_rule("ml/runner")?.to_string(), "ml/runner");
/// assert!(parse_service_account_rule("Runner").is_err());
/// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
/// ```
pub fn parse_service_account_rule(text: &str) -> Result<ObjectRule, InvalidPodPolicy> {
    ObjectRule::parse("--allowed-service-accounts", text)
}

/// An entry of `--allowed-secrets`: `name` or `namespace/name`.
///
/// # Errors
///
/// [`InvalidPodPolicy`] naming the flag when the entry is not one.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::parse_secret_rule;
///
/// assert_eq!(parse_secret_rule("git-credentials")?.name, "git-credentials");
/// assert!(parse_secret_rule("a/b/c").is_err());
/// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
/// ```
pub fn parse_secret_rule(text: &str) -> Result<ObjectRule, InvalidPodPolicy> {
    ObjectRule::parse("--allowed-secrets", text)
}

/// The rule of a [`PodPolicy`] that refused a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyRule {
    /// [`PodPolicy::images`].
    Images,
    /// [`PodPolicy::service_accounts`].
    ServiceAccounts,
    /// [`PodPolicy::secrets`].
    Secrets,
    /// [`PodPolicy::denied_placement`].
    Placement,
    /// [`PodPolicy::volume_sources`].
    VolumeSources,
    /// [`PodPolicy::deny_api_token`].
    ApiToken,
}

impl PolicyRule {
    /// The flag of `nbv run` that sets the rule.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::PolicyRule;
    ///
    /// assert_eq!(PolicyRule::Images.flag(), "--allowed-images");
    /// ```
    pub const fn flag(self) -> &'static str {
        match self {
            PolicyRule::Images => "--allowed-images",
            PolicyRule::ServiceAccounts => "--allowed-service-accounts",
            PolicyRule::Secrets => "--allowed-secrets",
            PolicyRule::Placement => "--deny-job-placement",
            PolicyRule::VolumeSources => "--allowed-volume-sources",
            PolicyRule::ApiToken => "--deny-api-token",
        }
    }
}

/// Why a [`PodPolicy`] refuses a job: the field, the rule, and what to do.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeSet;
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::pod::{PodPolicy, PolicyRule};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml"},
///     "spec": {
///         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
///         "podConfig": {"containerImage": "quay.io/ml/nb:1", "serviceAccountName": "admin"}
///     }
/// }))?;
/// let policy = PodPolicy { service_accounts: Some(BTreeSet::new()), ..PodPolicy::default() };
/// let refusal = policy.check(&job).unwrap_err();
/// assert_eq!(refusal.rule, PolicyRule::ServiceAccounts);
/// assert!(refusal.to_string().starts_with("spec.podConfig.serviceAccountName: service account \"admin\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct PolicyRefusal {
    /// The field at fault, as a path in the job.
    pub field: String,
    /// The rule that refused it.
    pub rule: PolicyRule,
    /// What is not allowed, by which flag, and what to do.
    pub problem: String,
}
