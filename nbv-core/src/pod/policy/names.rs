//! Objects of a job's namespace a policy names: `name` in every namespace, or
//! `namespace/name` in one.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::kube_names::{is_dns_label, is_dns_subdomain};

/// An entry of `--allowed-service-accounts` or `--allowed-secrets`: the object `name`
/// in any job's namespace, or `namespace/name` in that namespace only. A job can only
/// name objects of its own namespace, so there is nothing else to allow.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::ObjectRule;
///
/// let anywhere: ObjectRule = "git-credentials".parse()?;
/// let in_ml: ObjectRule = "ml/notebook-runner".parse()?;
/// assert!(anywhere.allows("team-a", "git-credentials"));
/// assert!(in_ml.allows("ml", "notebook-runner"));
/// assert!(!in_ml.allows("team-a", "notebook-runner"));
/// # Ok::<(), nbv_core::pod::InvalidPodPolicy>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRule {
    /// The namespace it applies in; `None` for every namespace.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
}

impl ObjectRule {
    /// Whether this entry allows the object `name` of a job in `namespace`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::ObjectRule;
    ///
    /// let rule = ObjectRule { namespace: None, name: "git".into() };
    /// assert!(rule.allows("any", "git"));
    /// assert!(!rule.allows("any", "git-admin"));
    /// ```
    pub fn allows(&self, namespace: &str, name: &str) -> bool {
        self.name == name && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// Whether this entry applies in `namespace`.
    fn applies_in(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// Parses an entry of `setting` (the flag, for the error).
    pub(super) fn parse(
        setting: &'static str,
        text: &str,
    ) -> Result<ObjectRule, super::InvalidPodPolicy> {
        let invalid = |problem: &str| super::InvalidPodPolicy {
            setting,
            entry: text.to_owned(),
            problem: problem.to_owned(),
        };
        let text = text.trim();
        let (namespace, name) = match text.split_once('/') {
            Some((namespace, name)) => (Some(namespace), name),
            None => (None, text),
        };
        if let Some(namespace) = namespace
            && !is_dns_label(namespace)
        {
            return Err(invalid(
                "the namespace is not a namespace name (a DNS label: lowercase letters, \
                 digits and `-`)",
            ));
        }
        if !is_dns_subdomain(name) {
            return Err(invalid(
                "not an object name (a DNS subdomain: lowercase letters, digits, `-` and `.`); \
                 write name or namespace/name",
            ));
        }
        Ok(ObjectRule {
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        })
    }
}

impl FromStr for ObjectRule {
    type Err = super::InvalidPodPolicy;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ObjectRule::parse("an object rule", text)
    }
}

impl fmt::Display for ObjectRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// The names `rules` allow in `namespace`, for a refusal: only what applies to the
/// job's own namespace, so that a refusal tells nothing of other namespaces.
pub(super) fn names_in(rules: &BTreeSet<ObjectRule>, namespace: &str) -> Vec<String> {
    let names: BTreeSet<&str> = rules
        .iter()
        .filter(|rule| rule.applies_in(namespace))
        .map(|rule| rule.name.as_str())
        .collect();
    names.into_iter().map(str::to_owned).collect()
}
