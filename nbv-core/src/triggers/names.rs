//! Kubernetes naming rules for the parts of a trigger target: object names,
//! namespaces, API groups and versions (DNS-style names), and kinds.
//!
//! The API server would reject an invalid name anyway, but only when the
//! trigger fires, after the notebook has run. Checking here turns that late
//! failure into an error the user sees when the job is created or linted.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::text::Quoted;

/// What a DNS-style name names, which decides the Kubernetes rule it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NameKind {
    /// An object name: a DNS-1123 subdomain of at most 253 characters
    /// (Kubernetes `IsDNS1123Subdomain`, the rule for most resource names).
    ObjectName,
    /// A namespace: a DNS-1123 label of at most 63 characters.
    Namespace,
    /// An API group such as `apps` or `serving.kserve.io`: a DNS-1123
    /// subdomain of at most 253 characters.
    ApiGroup,
    /// The version part of an `apiVersion`, such as `v1beta1`: a DNS-1035
    /// label (starts with a letter) of at most 63 characters, the rule
    /// Kubernetes applies to CustomResourceDefinition version names.
    Version,
}

impl NameKind {
    /// The longest valid name of this kind, in characters.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::NameKind;
    /// assert_eq!(NameKind::ObjectName.max_len(), 253);
    /// assert_eq!(NameKind::Namespace.max_len(), 63);
    /// ```
    pub const fn max_len(self) -> usize {
        match self {
            Self::ObjectName | Self::ApiGroup => 253,
            Self::Namespace | Self::Version => 63,
        }
    }

    /// Checks `value` against the rule of this kind.
    ///
    /// # Errors
    ///
    /// A [`NameError`] that says which character or part breaks the rule and,
    /// when a simple fix (lowercasing, `_` to `-`) makes it valid, suggests it.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::NameKind;
    /// assert!(NameKind::ObjectName.validate("model.v2").is_ok());
    /// let err = NameKind::Namespace.validate("ml.platform").unwrap_err();
    /// assert!(err.to_string().contains("'.' is not allowed"));
    /// let err = NameKind::ObjectName.validate("Foo_Bar").unwrap_err();
    /// assert_eq!(err.suggestion(), Some("foo-bar"));
    /// ```
    pub fn validate(self, value: &str) -> Result<(), NameError> {
        match self.problem(value) {
            None => Ok(()),
            Some(problem) => Err(NameError {
                kind: self,
                value: value.to_owned(),
                suggestion: self.suggest(value, &problem),
                problem,
            }),
        }
    }

    const fn allows_dots(self) -> bool {
        matches!(self, Self::ObjectName | Self::ApiGroup)
    }

    const fn noun(self) -> &'static str {
        match self {
            Self::ObjectName => "object name",
            Self::Namespace => "namespace",
            Self::ApiGroup => "API group",
            Self::Version => "API version",
        }
    }

    const fn rule(self) -> &'static str {
        match self {
            Self::ObjectName | Self::ApiGroup => {
                "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, \
                 at most 253 characters"
            }
            Self::Namespace => {
                "lowercase letters, digits and '-', starting and ending with a letter or digit, \
                 at most 63 characters"
            }
            Self::Version => {
                "lowercase letters, digits and '-', starting with a letter and ending with a letter \
                 or digit, at most 63 characters"
            }
        }
    }

    /// The first rule that `value` breaks, in the order a user would fix them.
    fn problem(self, value: &str) -> Option<NameProblem> {
        let Some(first) = value.chars().next() else {
            return Some(NameProblem::Empty);
        };
        let len = value.chars().count();
        if len > self.max_len() {
            return Some(NameProblem::TooLong { len });
        }
        let allowed = |c: char| {
            c.is_ascii_lowercase()
                || c.is_ascii_digit()
                || c == '-'
                || (c == '.' && self.allows_dots())
        };
        if let Some(ch) = value.chars().find(|c| !allowed(*c)) {
            return Some(if ch.is_ascii_uppercase() {
                NameProblem::Uppercase { ch }
            } else {
                NameProblem::NotAllowed { ch }
            });
        }
        let starts_ok = match self {
            Self::Version => first.is_ascii_lowercase(),
            _ => first.is_ascii_alphanumeric(),
        };
        if !starts_ok {
            return Some(NameProblem::BadStart { ch: first });
        }
        if let Some(last) = value.chars().last().filter(|c| !c.is_ascii_alphanumeric()) {
            return Some(NameProblem::BadEnd { ch: last });
        }
        // Only subdomains get here with dots; each dot-separated part is a label.
        value
            .split('.')
            .find(|part| {
                !(part.starts_with(|c: char| c.is_ascii_alphanumeric())
                    && part.ends_with(|c: char| c.is_ascii_alphanumeric()))
            })
            .map(|part| NameProblem::BadPart {
                part: part.to_owned(),
            })
    }

    /// A valid name that is most likely what the user meant, if simple
    /// normalisation finds one: lowercase, other characters to `-`, ends trimmed.
    fn suggest(self, value: &str, problem: &NameProblem) -> Option<String> {
        if matches!(problem, NameProblem::Empty | NameProblem::TooLong { .. }) {
            return None;
        }
        let normalized: String = value
            .trim()
            .chars()
            .map(|c| {
                let c = c.to_ascii_lowercase();
                if c.is_ascii_lowercase() || c.is_ascii_digit() || (c == '.' && self.allows_dots())
                {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let trimmed = normalized.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        (trimmed != value && self.problem(trimmed).is_none()).then(|| trimmed.to_owned())
    }
}

/// The specific rule a DNS-style name breaks.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{NameKind, NameProblem};
/// let err = NameKind::ObjectName.validate("web-").unwrap_err();
/// assert_eq!(err.problem(), &NameProblem::BadEnd { ch: '-' });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameProblem {
    /// The name is the empty string.
    Empty,
    /// The name is longer than [`NameKind::max_len`].
    TooLong {
        /// Its length in characters.
        len: usize,
    },
    /// The name contains an uppercase ASCII letter.
    Uppercase {
        /// The first such letter.
        ch: char,
    },
    /// The name contains a character the rule does not allow at all.
    NotAllowed {
        /// The first such character.
        ch: char,
    },
    /// The name starts with a character that is allowed only later.
    BadStart {
        /// The first character.
        ch: char,
    },
    /// The name ends with a character that is allowed only earlier.
    BadEnd {
        /// The last character.
        ch: char,
    },
    /// A dot-separated part is empty or starts or ends with `-`.
    BadPart {
        /// The offending part.
        part: String,
    },
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("it is empty"),
            Self::TooLong { len } => write!(f, "it is {len} characters long"),
            Self::Uppercase { ch } => write!(f, "uppercase {ch:?} is not allowed"),
            Self::NotAllowed { ch } => write!(f, "{ch:?} is not allowed"),
            Self::BadStart { ch } => write!(f, "it must not start with {ch:?}"),
            Self::BadEnd { ch } => write!(f, "it must not end with {ch:?}"),
            Self::BadPart { part } if part.is_empty() => {
                f.write_str("it has an empty part between dots")
            }
            Self::BadPart { part } => write!(
                f,
                "its part {} must start and end with a letter or digit",
                Quoted(part)
            ),
        }
    }
}

/// A string that is not a valid Kubernetes name of some [`NameKind`].
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{NameKind, NameProblem};
/// let err = NameKind::ObjectName.validate("model_v2").unwrap_err();
/// assert_eq!(err.problem(), &NameProblem::NotAllowed { ch: '_' });
/// assert_eq!(
///     err.to_string(),
///     "\"model_v2\" is not a valid object name: '_' is not allowed; use lowercase letters, \
///      digits, '-' and '.', starting and ending with a letter or digit, at most 253 \
///      characters (did you mean \"model-v2\"?)"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} is not a valid {}: {problem}; use {}{}",
    Quoted(value),
    kind.noun(),
    kind.rule(),
    DidYouMean(suggestion.as_deref())
)]
pub struct NameError {
    kind: NameKind,
    value: String,
    problem: NameProblem,
    suggestion: Option<String>,
}

impl NameError {
    /// What the rejected string was meant to name.
    pub fn kind(&self) -> NameKind {
        self.kind
    }

    /// The rejected string, unabridged.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The first rule the string breaks.
    pub fn problem(&self) -> &NameProblem {
        &self.problem
    }

    /// A valid name the user probably meant, if one is obvious.
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }
}

/// Renders ` (did you mean "x"?)`, or nothing.
pub(crate) struct DidYouMean<'a>(pub(crate) Option<&'a str>);

impl fmt::Display for DidYouMean<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(suggestion) => write!(f, " (did you mean {}?)", Quoted(suggestion)),
            None => Ok(()),
        }
    }
}

/// Defines a validated string newtype for one [`NameKind`].
macro_rules! dns_name {
    ($(#[$meta:meta])* $name:ident, $kind:expr) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The name as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = NameError;

            fn from_str(value: &str) -> Result<Self, NameError> {
                $kind.validate(value)?;
                Ok(Self(value.to_owned()))
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;

            fn try_from(value: String) -> Result<Self, NameError> {
                $kind.validate(&value)?;
                Ok(Self(value))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }
    };
}

dns_name!(
    /// A valid Kubernetes object name (DNS-1123 subdomain, at most 253 characters).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::ObjectName;
    /// let name: ObjectName = "predictive-analytics".parse().unwrap();
    /// assert_eq!(name.as_str(), "predictive-analytics");
    /// assert!("Predictive_Analytics".parse::<ObjectName>().is_err());
    /// ```
    ObjectName,
    NameKind::ObjectName
);

dns_name!(
    /// A valid Kubernetes namespace name (DNS-1123 label, at most 63 characters).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::Namespace;
    /// let ns: Namespace = "self-healing-platform".parse().unwrap();
    /// assert_eq!(ns.to_string(), "self-healing-platform");
    /// assert!("ml.platform".parse::<Namespace>().is_err());
    /// ```
    Namespace,
    NameKind::Namespace
);

/// The longest kind accepted, in characters (the DNS label limit that
/// Kubernetes applies to the lowercased kind of a CustomResourceDefinition).
pub(crate) const MAX_KIND_LEN: usize = 63;

/// Kinds that triggers commonly target: the right spelling is suggested when a kind is
/// written in the wrong case, and is the only one accepted for them.
const WELL_KNOWN_KINDS: &[&str] = &[
    "AppProject",
    "Application",
    "ConfigMap",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "InferenceService",
    "Job",
    "Pod",
    "ReplicaSet",
    "Secret",
    "Service",
    "ServingRuntime",
    "StatefulSet",
];

/// A valid Kubernetes kind: an UpperCamelCase identifier of ASCII letters and
/// digits, starting with an uppercase letter, at most 63 characters.
///
/// This is stricter than the API server, which accepts any kind whose
/// lowercase form is a DNS-1035 label: every real kind is UpperCamelCase, and
/// a lowercase `deployment` in a manifest is a mistake that the API server
/// only reports (as "no matches for kind") when the trigger fires.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::Kind;
/// let kind: Kind = "InferenceService".parse().unwrap();
/// assert_eq!(kind.as_str(), "InferenceService");
/// let err = "deployment".parse::<Kind>().unwrap_err();
/// assert_eq!(err.suggestion(), Some("Deployment"));
/// // A kind nbv knows has one spelling.
/// let err = "APPLICATION".parse::<Kind>().unwrap_err();
/// assert_eq!(err.suggestion(), Some("Application"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Kind(String);

impl Kind {
    /// The kind as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn problem(value: &str) -> Option<KindProblem> {
        // `APPLICATION` reaches Applications through the API (resources are found by
        // lowercased kind) but would miss every rule nbv keeps for `Application`: one
        // spelling of each kind nbv knows, everywhere.
        if let Some(canonical) = WELL_KNOWN_KINDS
            .iter()
            .find(|known| known.eq_ignore_ascii_case(value) && **known != value)
        {
            return Some(KindProblem::Case {
                canonical: (*canonical).to_owned(),
            });
        }
        let first = value.chars().next()?;
        let len = value.chars().count();
        if len > MAX_KIND_LEN {
            Some(KindProblem::TooLong { len })
        } else if first.is_ascii_lowercase() {
            Some(KindProblem::LowercaseStart)
        } else if !first.is_ascii_uppercase() {
            Some(KindProblem::BadStart { ch: first })
        } else {
            value
                .chars()
                .find(|c| !c.is_ascii_alphanumeric())
                .map(|ch| KindProblem::NotAllowed { ch })
        }
    }
}

impl FromStr for Kind {
    type Err = KindError;

    fn from_str(value: &str) -> Result<Self, KindError> {
        let problem = if value.is_empty() {
            Some(KindProblem::Empty)
        } else {
            Self::problem(value)
        };
        match problem {
            None => Ok(Self(value.to_owned())),
            Some(problem) => Err(KindError {
                value: value.to_owned(),
                suggestion: super::text::closest(value, WELL_KNOWN_KINDS)
                    .filter(|known| known.eq_ignore_ascii_case(value.trim()))
                    .map(str::to_owned),
                problem,
            }),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Kind {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// The specific rule a kind breaks.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{Kind, KindProblem};
/// let err = "2Pods".parse::<Kind>().unwrap_err();
/// assert_eq!(err.problem(), &KindProblem::BadStart { ch: '2' });
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KindProblem {
    /// The kind is the empty string.
    Empty,
    /// The kind is longer than 63 characters.
    TooLong {
        /// Its length in characters.
        len: usize,
    },
    /// The kind starts with a lowercase letter.
    LowercaseStart,
    /// The kind starts with something other than a letter.
    BadStart {
        /// The first character.
        ch: char,
    },
    /// The kind contains something other than an ASCII letter or digit.
    NotAllowed {
        /// The first such character.
        ch: char,
    },
    /// The kind is a kind nbv knows, spelled in another case (`DEPLOYMENT`).
    Case {
        /// The kind's spelling.
        canonical: String,
    },
}

impl fmt::Display for KindProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("it is empty"),
            Self::TooLong { len } => write!(f, "it is {len} characters long"),
            Self::LowercaseStart => f.write_str("it must start with an uppercase letter"),
            Self::BadStart { ch } => write!(f, "it must not start with {ch:?}"),
            Self::NotAllowed { ch } => write!(f, "{ch:?} is not allowed"),
            Self::Case { canonical } => write!(f, "the kind is spelled {canonical:?}"),
        }
    }
}

/// A string that is not a valid [`Kind`].
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{Kind, KindProblem};
/// let err = "Inference-Service".parse::<Kind>().unwrap_err();
/// assert_eq!(err.problem(), &KindProblem::NotAllowed { ch: '-' });
/// assert!(err.to_string().starts_with("\"Inference-Service\" is not a valid kind: '-' is not allowed"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} is not a valid kind: {problem}; a kind is an UpperCamelCase name of ASCII letters and \
     digits, starting with an uppercase letter, at most {MAX_KIND_LEN} characters{}",
    Quoted(value),
    DidYouMean(suggestion.as_deref())
)]
pub struct KindError {
    value: String,
    problem: KindProblem,
    suggestion: Option<String>,
}

impl KindError {
    /// The rejected string, unabridged.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The rule the string breaks.
    pub fn problem(&self) -> &KindProblem {
        &self.problem
    }

    /// The well-known kind the user probably meant (same letters, other case).
    pub fn suggestion(&self) -> Option<&str> {
        self.suggestion.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(kind: NameKind, value: &str) -> Option<NameProblem> {
        kind.validate(value).err().map(|e| e.problem().clone())
    }

    #[test]
    fn object_names_follow_dns_subdomain_rules() {
        for ok in ["a", "0", "a-b", "a.b", "a1.b2-c3", &"a".repeat(253)] {
            assert_eq!(problem(NameKind::ObjectName, ok), None, "{ok}");
        }
        assert_eq!(problem(NameKind::ObjectName, ""), Some(NameProblem::Empty));
        assert_eq!(
            problem(NameKind::ObjectName, &"a".repeat(254)),
            Some(NameProblem::TooLong { len: 254 })
        );
        assert_eq!(
            problem(NameKind::ObjectName, "-a"),
            Some(NameProblem::BadStart { ch: '-' })
        );
        assert_eq!(
            problem(NameKind::ObjectName, "a."),
            Some(NameProblem::BadEnd { ch: '.' })
        );
        assert_eq!(
            problem(NameKind::ObjectName, "a..b"),
            Some(NameProblem::BadPart {
                part: String::new()
            })
        );
        assert_eq!(
            problem(NameKind::ObjectName, "a.-b"),
            Some(NameProblem::BadPart { part: "-b".into() })
        );
        assert_eq!(
            problem(NameKind::ObjectName, "aé"),
            Some(NameProblem::NotAllowed { ch: 'é' })
        );
    }

    #[test]
    fn namespaces_are_labels_without_dots() {
        assert_eq!(problem(NameKind::Namespace, &"a".repeat(63)), None);
        assert_eq!(
            problem(NameKind::Namespace, &"a".repeat(64)),
            Some(NameProblem::TooLong { len: 64 })
        );
        assert_eq!(
            problem(NameKind::Namespace, "a.b"),
            Some(NameProblem::NotAllowed { ch: '.' })
        );
    }

    #[test]
    fn versions_start_with_a_letter() {
        assert_eq!(problem(NameKind::Version, "v1beta1"), None);
        assert_eq!(
            problem(NameKind::Version, "1v"),
            Some(NameProblem::BadStart { ch: '1' })
        );
    }

    #[test]
    fn suggestions_are_valid_and_different() {
        let err = NameKind::ObjectName.validate(" My_Model ").unwrap_err();
        assert_eq!(err.suggestion(), Some("my-model"));
        // Nothing obvious to suggest for a name made only of symbols.
        let err = NameKind::ObjectName.validate("__").unwrap_err();
        assert_eq!(err.suggestion(), None);
    }

    #[test]
    fn kinds() {
        assert!("Deployment".parse::<Kind>().is_ok());
        assert!("V1Thing2".parse::<Kind>().is_ok());
        let err = "inferenceservice".parse::<Kind>().unwrap_err();
        assert_eq!(
            err.problem(),
            &KindProblem::Case {
                canonical: "InferenceService".into()
            }
        );
        assert_eq!(err.suggestion(), Some("InferenceService"));
        let err = "DEPLOYMENT".parse::<Kind>().unwrap_err();
        assert_eq!(err.suggestion(), Some("Deployment"));
        let err = "widget".parse::<Kind>().unwrap_err();
        assert_eq!(err.problem(), &KindProblem::LowercaseStart);
        assert_eq!(err.suggestion(), None);
        assert_eq!(
            "1Pod".parse::<Kind>().unwrap_err().problem(),
            &KindProblem::BadStart { ch: '1' }
        );
        assert_eq!(
            "".parse::<Kind>().unwrap_err().problem(),
            &KindProblem::Empty
        );
        assert!("A".repeat(63).parse::<Kind>().is_ok());
        assert_eq!(
            "A".repeat(64).parse::<Kind>().unwrap_err().problem(),
            &KindProblem::TooLong { len: 64 }
        );
    }
}
