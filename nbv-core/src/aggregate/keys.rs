//! The identities the index and the parent lookup share: a job's, an Application's,
//! and where a job's Application was found.

use std::fmt;

use crate::api::NotebookValidationJob;

/// Longest Kubernetes object name (a DNS-1123 subdomain).
const MAX_NAME_LEN: usize = 253;
/// Longest namespace name (a DNS-1123 label).
const MAX_NAMESPACE_LEN: usize = 63;

/// A job's identity: its namespace and name.
///
/// [`Display`](fmt::Display) gives `namespace/name`, the form listed in `failedJobs`:
/// an Application may deploy jobs to several namespaces, so the bare name would be
/// ambiguous.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::JobKey;
///
/// let job = JobKey::new("ml", "train");
/// assert_eq!(job.to_string(), "ml/train");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobKey {
    namespace: String,
    name: String,
}

impl JobKey {
    /// The job `name` in `namespace`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::JobKey;
    ///
    /// assert_eq!(JobKey::new("ml", "train").name(), "train");
    /// ```
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        JobKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The key of `job`; `None` when it lacks a namespace or a name.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::JobKey;
    /// use nbv_core::api::{NotebookValidationJob, NotebookValidationJobSpec};
    ///
    /// let mut job = NotebookValidationJob::new("train", NotebookValidationJobSpec::default());
    /// assert_eq!(JobKey::of(&job), None);
    /// job.metadata.namespace = Some("ml".into());
    /// assert_eq!(JobKey::of(&job), Some(JobKey::new("ml", "train")));
    /// ```
    pub fn of(job: &NotebookValidationJob) -> Option<JobKey> {
        let metadata = &job.metadata;
        Some(JobKey::new(
            metadata.namespace.clone()?,
            metadata.name.clone()?,
        ))
    }

    /// The job's namespace.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::JobKey;
    ///
    /// assert_eq!(JobKey::new("ml", "train").namespace(), "ml");
    /// ```
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The job's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::JobKey;
    ///
    /// assert_eq!(JobKey::new("ml", "train").name(), "train");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for JobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// An Argo CD Application: its name and, when known, its namespace.
///
/// The namespace is `None` when the tracking value does not carry one. Argo CD then
/// means the Application lives in its control-plane namespace (`argocd` by default),
/// which only the shell knows. Two `AppId`s are the same Application exactly when both
/// parts are equal.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::AppId;
///
/// let app = AppId::from_instance_value("team-a_fraud")?;
/// assert_eq!(app.namespace(), Some("team-a"));
/// assert_eq!(app.name(), "fraud");
/// assert_eq!(app.to_string(), "team-a/fraud");
/// assert_eq!(AppId::from_instance_value("fraud")?.namespace(), None);
/// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AppId {
    namespace: Option<String>,
    name: String,
}

impl AppId {
    /// An Application with a valid name (a DNS-1123 subdomain) and, when given, a valid
    /// namespace (a DNS-1123 label).
    ///
    /// # Errors
    ///
    /// [`InvalidAppName`] naming the part that is not valid.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::AppId;
    ///
    /// assert!(AppId::new(Some("argocd"), "ml-platform").is_ok());
    /// assert!(AppId::new(None, "ML_Platform").is_err());
    /// ```
    pub fn new(namespace: Option<&str>, name: &str) -> Result<Self, InvalidAppName> {
        if let Some(namespace) = namespace {
            check_dns_name(namespace, MAX_NAMESPACE_LEN, false).map_err(|why| InvalidAppName {
                part: AppPart::Namespace,
                why,
            })?;
        }
        check_dns_name(name, MAX_NAME_LEN, true).map_err(|why| InvalidAppName {
            part: AppPart::Name,
            why,
        })?;
        Ok(AppId {
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        })
    }

    /// Reads an Argo CD application instance value: `<name>`, or `<namespace>_<name>`
    /// for an Application outside Argo CD's control-plane namespace (Argo CD's
    /// "applications in any namespace").
    ///
    /// This is how Argo CD itself splits the value (`ParseInstanceName`: at the first
    /// `_`). Kubernetes names cannot contain `_`, so the split is never ambiguous.
    ///
    /// # Errors
    ///
    /// [`InvalidAppName`] when either part is not a valid Kubernetes name.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::AppId;
    ///
    /// assert_eq!(AppId::from_instance_value("ml-platform")?.name(), "ml-platform");
    /// assert!(AppId::from_instance_value("_ml-platform").is_err());
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn from_instance_value(value: &str) -> Result<Self, InvalidAppName> {
        match value.split_once('_') {
            Some((namespace, name)) => AppId::new(Some(namespace), name),
            None => AppId::new(None, value),
        }
    }

    /// The Application's namespace, when the tracking value names one.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::AppId;
    ///
    /// assert_eq!(AppId::new(Some("argocd"), "ml")?.namespace(), Some("argocd"));
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The Application's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::AppId;
    ///
    /// assert_eq!(AppId::new(None, "ml")?.name(), "ml");
    /// # Ok::<(), nbv_core::aggregate::InvalidAppName>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// Which part of an Application reference is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppPart {
    /// The Application's namespace.
    Namespace,
    /// The Application's name.
    Name,
}

impl fmt::Display for AppPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AppPart::Namespace => "namespace",
            AppPart::Name => "name",
        })
    }
}

/// An Application name or namespace that Kubernetes would not accept.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::{AppId, AppPart};
///
/// let err = AppId::new(Some("Argo"), "ml").unwrap_err();
/// assert_eq!(err.part(), AppPart::Namespace);
/// assert!(err.to_string().contains("lowercase"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[error("the Application {part} {why}")]
pub struct InvalidAppName {
    part: AppPart,
    why: &'static str,
}

impl InvalidAppName {
    /// Which part is invalid.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{AppId, AppPart};
    ///
    /// assert_eq!(AppId::new(None, "").unwrap_err().part(), AppPart::Name);
    /// ```
    pub fn part(&self) -> AppPart {
        self.part
    }
}

/// Checks a DNS-1123 label, or with `dots` a DNS-1123 subdomain (labels joined by `.`),
/// and says what is wrong in words a user can act on.
fn check_dns_name(value: &str, max_len: usize, dots: bool) -> Result<(), &'static str> {
    if value.is_empty() {
        return Err("is empty");
    }
    if value.len() > max_len {
        return Err(if dots {
            "is longer than 253 characters"
        } else {
            "is longer than 63 characters"
        });
    }
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let check = |label: &str| {
        let bytes = label.as_bytes();
        if !bytes.iter().all(|b| alnum(b) || *b == b'-') {
            return Err(if dots {
                "may contain only lowercase letters, digits, '-' and '.'"
            } else {
                "may contain only lowercase letters, digits and '-'"
            });
        }
        if !bytes.first().is_some_and(alnum) || !bytes.last().is_some_and(alnum) {
            return Err(if dots {
                "must start and end with a lowercase letter or digit, and so must each \
                 '.'-separated part"
            } else {
                "must start and end with a lowercase letter or digit"
            });
        }
        Ok(())
    };
    if dots {
        value.split('.').try_for_each(check)
    } else {
        check(value)
    }
}

/// Where a job's parent Application was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParentSource {
    /// The `argocd.argoproj.io/tracking-id` annotation (Argo CD's annotation tracking,
    /// the default since Argo CD 3).
    TrackingId,
    /// Argo CD's instance label (`app.kubernetes.io/instance` unless
    /// `application.instanceLabelKey` says otherwise), under label tracking.
    InstanceLabel,
    /// The `app.kubernetes.io/part-of` label.
    PartOfLabel,
}

/// A job's parent Application and where it was found.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::{parent_application, JobKey, ParentSource, TrackingSettings};
///
/// let job = JobKey::new("ml", "train");
/// let labels = BTreeMap::from([("app.kubernetes.io/part-of".to_string(), "ml-platform".to_string())]);
/// let parent = parent_application(&job, &BTreeMap::new(), &labels, &TrackingSettings::default()).parent.unwrap();
/// assert_eq!(parent.app.name(), "ml-platform");
/// assert_eq!(parent.source, ParentSource::PartOfLabel);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AppRef {
    /// The Application.
    pub app: AppId,
    /// Where it was found.
    pub source: ParentSource,
}
