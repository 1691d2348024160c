//! `apiVersion` strings, parsed the way Kubernetes does (`v1` for the core
//! group, `group/version` otherwise), but strictly.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use super::names::{NameError, NameKind};
use super::text::Quoted;

/// A parsed `apiVersion`: an API group (empty for the core group) and a version.
///
/// Parsing follows Kubernetes `schema.ParseGroupVersion` (no `/` means the
/// core group, one `/` separates group and version, more is an error) and
/// adds the checks the API server would make later: the group must be a
/// DNS-1123 subdomain, the version a DNS-1035 label, and a core-group version
/// must look like a Kubernetes version (`v1`, `v2beta1`), so that a bare group
/// such as `apps` is caught instead of being read as "core group, version apps".
/// [`Display`](fmt::Display) gives back the exact string parsed.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::ApiVersion;
/// let v: ApiVersion = "serving.kserve.io/v1beta1".parse().unwrap();
/// assert_eq!((v.group(), v.version()), ("serving.kserve.io", "v1beta1"));
/// assert_eq!(v.to_string(), "serving.kserve.io/v1beta1");
///
/// let core: ApiVersion = "v1".parse().unwrap();
/// assert!(core.is_core());
/// assert_eq!(core.to_string(), "v1");
///
/// assert!("apps/v1/extra".parse::<ApiVersion>().is_err());
/// assert!("/v1".parse::<ApiVersion>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApiVersion {
    /// Empty for the core group, otherwise a valid DNS-1123 subdomain.
    group: String,
    /// A valid DNS-1035 label.
    version: String,
}

impl ApiVersion {
    /// Builds an `ApiVersion` from its parts; an empty `group` is the core group.
    ///
    /// # Errors
    ///
    /// The same [`InvalidApiVersion`] that parsing `group/version` (or `version`
    /// alone for the core group) would give.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::ApiVersion;
    /// let apps = ApiVersion::new("apps", "v1").unwrap();
    /// assert_eq!(apps.to_string(), "apps/v1");
    /// assert_eq!(ApiVersion::new("", "v1").unwrap().to_string(), "v1");
    /// assert!(ApiVersion::new("apps", "").is_err());
    /// ```
    pub fn new(group: &str, version: &str) -> Result<Self, InvalidApiVersion> {
        // Checked first so that a '/' in `version` cannot shift a group into it.
        NameKind::Version
            .validate(version)
            .map_err(InvalidApiVersion::Version)?;
        if group.is_empty() {
            version.parse()
        } else {
            format!("{group}/{version}").parse()
        }
    }

    /// The API group; empty for the core group.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::ApiVersion;
    /// assert_eq!("argoproj.io/v1alpha1".parse::<ApiVersion>().unwrap().group(), "argoproj.io");
    /// assert_eq!("v1".parse::<ApiVersion>().unwrap().group(), "");
    /// ```
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The version within the group.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::ApiVersion;
    /// assert_eq!("apps/v1".parse::<ApiVersion>().unwrap().version(), "v1");
    /// ```
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Whether this is the core (legacy, unnamed) group, written `v1`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::triggers::ApiVersion;
    /// assert!("v1".parse::<ApiVersion>().unwrap().is_core());
    /// assert!(!"apps/v1".parse::<ApiVersion>().unwrap().is_core());
    /// ```
    pub fn is_core(&self) -> bool {
        self.group.is_empty()
    }
}

/// Whether `version` has the shape of a Kubernetes API version:
/// `v<N>`, optionally followed by `alpha<N>` or `beta<N>`, with `N` a positive
/// integer without leading zeros.
fn is_kubernetes_version(version: &str) -> bool {
    fn positive_number(s: &str) -> Option<&str> {
        let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        (digits > 0 && !s.starts_with('0')).then(|| &s[digits..])
    }
    let Some(rest) = version.strip_prefix('v').and_then(positive_number) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    rest.strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"))
        .and_then(positive_number)
        .is_some_and(str::is_empty)
}

impl FromStr for ApiVersion {
    type Err = InvalidApiVersion;

    fn from_str(value: &str) -> Result<Self, InvalidApiVersion> {
        let owned = || value.to_owned();
        if value.is_empty() {
            return Err(InvalidApiVersion::Empty);
        }
        let mut parts = value.split('/');
        let (group, version) = match (parts.next(), parts.next(), parts.next()) {
            (Some(version), None, None) => ("", version),
            (Some(group), Some(version), None) => (group, version),
            _ => return Err(InvalidApiVersion::TooManySlashes { value: owned() }),
        };
        if value.contains('/') {
            if group.is_empty() {
                return Err(InvalidApiVersion::EmptyGroup { value: owned() });
            }
            if version.is_empty() {
                return Err(InvalidApiVersion::EmptyVersion { value: owned() });
            }
            if group == "core" {
                // There is no API group named "core" (CRD groups must contain
                // a dot); this is the core group spelled out, a common mistake.
                return Err(InvalidApiVersion::CoreGroupSpelledOut { value: owned() });
            }
            NameKind::ApiGroup
                .validate(group)
                .map_err(InvalidApiVersion::Group)?;
        } else if !is_kubernetes_version(version) {
            return Err(InvalidApiVersion::NotACoreVersion { value: owned() });
        }
        NameKind::Version
            .validate(version)
            .map_err(InvalidApiVersion::Version)?;
        Ok(Self {
            group: group.to_owned(),
            version: version.to_owned(),
        })
    }
}

impl fmt::Display for ApiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_core() {
            f.write_str(&self.version)
        } else {
            write!(f, "{}/{}", self.group, self.version)
        }
    }
}

impl Serialize for ApiVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a string is not a valid `apiVersion`.
///
/// # Examples
///
/// ```
/// use nbv_core::triggers::{ApiVersion, InvalidApiVersion};
/// let err = "apps/v1/extra".parse::<ApiVersion>().unwrap_err();
/// assert!(matches!(err, InvalidApiVersion::TooManySlashes { .. }));
/// assert!(err.to_string().contains("more than one '/'"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidApiVersion {
    /// The string is empty.
    #[error(
        "it is empty; write \"v1\" for the core group or \"group/version\", for example \"apps/v1\""
    )]
    Empty,
    /// The string has two or more `/`.
    #[error(
        "{} has more than one '/'; write \"group/version\", for example \"apps/v1\"",
        Quoted(value)
    )]
    TooManySlashes {
        /// The rejected string.
        value: String,
    },
    /// Nothing before the `/`.
    #[error(
        "{} has an empty group before '/'; write \"v1\" for the core group or \"group/version\"",
        Quoted(value)
    )]
    EmptyGroup {
        /// The rejected string.
        value: String,
    },
    /// Nothing after the `/`.
    #[error(
        "{} has no version after '/'; write \"group/version\", for example \"apps/v1\"",
        Quoted(value)
    )]
    EmptyVersion {
        /// The rejected string.
        value: String,
    },
    /// `core/<version>`: the core group has no name in an `apiVersion`.
    #[error(
        "{} names the core group, which is written without a group: use just the version, \
         for example \"v1\"",
        Quoted(value)
    )]
    CoreGroupSpelledOut {
        /// The rejected string.
        value: String,
    },
    /// No `/`, and not a Kubernetes version either (for example `apps`).
    #[error(
        "{} has no '/' and is not a core-group version like \"v1\"; write \"group/version\", \
         for example \"apps/v1\"",
        Quoted(value)
    )]
    NotACoreVersion {
        /// The rejected string.
        value: String,
    },
    /// The group is not a DNS-1123 subdomain.
    #[error(transparent)]
    Group(NameError),
    /// The version is not a DNS-1035 label.
    #[error(transparent)]
    Version(NameError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_version_shapes() {
        for ok in ["v1", "v2", "v10", "v1beta1", "v2alpha3", "v1beta10"] {
            assert!(is_kubernetes_version(ok), "{ok}");
        }
        for bad in [
            "v", "v0", "v01", "1", "apps", "v1beta", "v1gamma1", "v1beta0", "V1", "v1-",
        ] {
            assert!(!is_kubernetes_version(bad), "{bad}");
        }
    }

    #[test]
    fn parses_core_and_grouped_versions() {
        let v: ApiVersion = "apps/v1".parse().unwrap();
        assert_eq!((v.group(), v.version()), ("apps", "v1"));
        let v: ApiVersion = "example.com/my-version".parse().unwrap();
        assert_eq!(v.version(), "my-version");
        let v: ApiVersion = "v2beta1".parse().unwrap();
        assert!(v.is_core());
    }

    #[test]
    fn rejections() {
        let err = |s: &str| s.parse::<ApiVersion>().unwrap_err();
        assert_eq!(err(""), InvalidApiVersion::Empty);
        assert!(matches!(err("/"), InvalidApiVersion::EmptyGroup { .. }));
        assert!(matches!(err("/v1"), InvalidApiVersion::EmptyGroup { .. }));
        assert!(matches!(
            err("apps/"),
            InvalidApiVersion::EmptyVersion { .. }
        ));
        assert!(matches!(
            err("a/b/c"),
            InvalidApiVersion::TooManySlashes { .. }
        ));
        assert!(matches!(
            err("//"),
            InvalidApiVersion::TooManySlashes { .. }
        ));
        assert!(matches!(
            err("apps"),
            InvalidApiVersion::NotACoreVersion { .. }
        ));
        assert!(matches!(
            err("core/v1"),
            InvalidApiVersion::CoreGroupSpelledOut { .. }
        ));
        assert!(matches!(err("Apps/v1"), InvalidApiVersion::Group(_)));
        assert!(matches!(err("apps/V1"), InvalidApiVersion::Version(_)));
        assert!(matches!(err("apps/1"), InvalidApiVersion::Version(_)));
    }

    #[test]
    fn new_matches_parse() {
        assert_eq!(
            ApiVersion::new("argoproj.io", "v1alpha1").unwrap(),
            "argoproj.io/v1alpha1".parse().unwrap()
        );
        // A group containing '/' cannot sneak in through `new`.
        assert!(ApiVersion::new("a/b", "v1").is_err());
        assert!(ApiVersion::new("", "apps/v1").is_err());
    }
}
