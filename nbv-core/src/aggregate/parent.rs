//! Finding a job's parent Argo CD Application, the way Argo CD tracks resources.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::keys::{AppId, AppRef, InvalidAppName, JobKey, ParentSource};
use crate::annotations::{APP_INSTANCE, APP_PART_OF, ARGOCD_INSTALLATION_ID, ARGOCD_TRACKING_ID};

/// API group of `NotebookValidationJob`, as it appears in a tracking id.
const JOB_GROUP: &str = "mlops.mlops.dev";
/// Kind of `NotebookValidationJob`, as it appears in a tracking id.
const JOB_KIND: &str = "NotebookValidationJob";

/// How many characters of an offending value a problem keeps.
const MAX_SHOWN_CHARS: usize = 64;

/// How Argo CD tracks the resources it manages (`application.resourceTrackingMethod`
/// in `argocd-cm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TrackingMethod {
    /// `annotation`: the `argocd.argoproj.io/tracking-id` annotation only (Argo CD 3's
    /// default, used when the setting is empty).
    #[default]
    Annotation,
    /// `annotation+label`: the annotation tracks; the label is only informational.
    AnnotationAndLabel,
    /// `label`: the instance label only (Argo CD 2's default).
    Label,
}

impl TrackingMethod {
    /// The value as written in `argocd-cm`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TrackingMethod::Annotation => "annotation",
            TrackingMethod::AnnotationAndLabel => "annotation+label",
            TrackingMethod::Label => "label",
        }
    }
}

impl fmt::Display for TrackingMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tracking method Argo CD does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "resource tracking method {0:?} is not one of \"annotation\", \"annotation+label\" \
     or \"label\""
)]
pub struct InvalidTrackingMethod(String);

impl FromStr for TrackingMethod {
    type Err = InvalidTrackingMethod;

    /// Reads the `argocd-cm` value; empty means Argo CD's default, `annotation`.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "" | "annotation" => Ok(TrackingMethod::Annotation),
            "annotation+label" => Ok(TrackingMethod::AnnotationAndLabel),
            "label" => Ok(TrackingMethod::Label),
            other => Err(InvalidTrackingMethod(other.to_owned())),
        }
    }
}

/// The `argocd-cm` key of the tracking method.
pub(crate) const TRACKING_METHOD_KEY: &str = "application.resourceTrackingMethod";
/// The `argocd-cm` key of the instance label.
pub(crate) const INSTANCE_LABEL_KEY: &str = "application.instanceLabelKey";
/// The `argocd-cm` key of the installation id.
pub(crate) const INSTALLATION_ID_KEY: &str = "installationID";

/// How to find a job's parent Application: Argo CD's tracking settings, and whether
/// nbv's own `app.kubernetes.io/part-of` convention applies.
///
/// The default is Argo CD 3's default configuration with `part-of` on.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
///
/// let cm = BTreeMap::from([
///     ("application.resourceTrackingMethod".to_string(), "label".to_string()),
///     ("application.instanceLabelKey".to_string(), "argocd.argoproj.io/instance".to_string()),
/// ]);
/// let (settings, problems) = TrackingSettings::from_argocd_cm(&cm);
/// assert_eq!(settings.method, TrackingMethod::Label);
/// assert_eq!(settings.instance_label_key, "argocd.argoproj.io/instance");
/// assert!(problems.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrackingSettings {
    /// Argo CD's tracking method.
    pub method: TrackingMethod,
    /// Argo CD's instance label (`app.kubernetes.io/instance` by default).
    pub instance_label_key: String,
    /// Argo CD's `installationID` (empty: none).
    pub installation_id: String,
    /// Whether `app.kubernetes.io/part-of` names the parent when Argo CD's tracking
    /// does not (nbv's convention from the seed, not Argo CD tracking).
    pub part_of: bool,
}

impl Default for TrackingSettings {
    fn default() -> Self {
        TrackingSettings {
            method: TrackingMethod::default(),
            instance_label_key: APP_INSTANCE.to_owned(),
            installation_id: String::new(),
            part_of: true,
        }
    }
}

impl TrackingSettings {
    /// The settings Argo CD reads from the `data` of `argocd-cm` (missing keys take
    /// Argo CD's defaults), with a message for each value that is not valid (the
    /// default is then used).
    pub fn from_argocd_cm(data: &BTreeMap<String, String>) -> (TrackingSettings, Vec<String>) {
        let mut settings = TrackingSettings::default();
        let mut problems = Vec::new();
        if let Some(method) = data.get(TRACKING_METHOD_KEY) {
            match method.trim().parse() {
                Ok(method) => settings.method = method,
                Err(error) => problems.push(format!(
                    "argocd-cm {TRACKING_METHOD_KEY}: {error}; nbv uses \"annotation\""
                )),
            }
        }
        if let Some(key) = data
            .get(INSTANCE_LABEL_KEY)
            .map(|k| k.trim())
            .filter(|k| !k.is_empty())
        {
            settings.instance_label_key = key.to_owned();
        }
        if let Some(id) = data.get(INSTALLATION_ID_KEY) {
            settings.installation_id = id.trim().to_owned();
        }
        (settings, problems)
    }
}

/// A tracking annotation or label that was skipped, and why.
///
/// A shell should report these (as a warning Event or log line): the job is then
/// attributed through the next source, or to no Application at all.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::{parent_application, JobKey, ParentProblem, TrackingSettings};
///
/// let job = JobKey::new("ml", "train");
/// let annotations = BTreeMap::from([(
///     "argocd.argoproj.io/tracking-id".to_string(),
///     "ml-platform".to_string(),
/// )]);
/// let lookup = parent_application(&job, &annotations, &BTreeMap::new(), &TrackingSettings::default());
/// assert!(lookup.parent.is_none());
/// assert!(matches!(lookup.problems[0], ParentProblem::MalformedTrackingId { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum ParentProblem {
    /// The tracking id is not `<app>:<group>/<kind>:<namespace>/<name>`.
    #[error(
        "annotation {ARGOCD_TRACKING_ID} has value {value}, which is not of the form \
         <application>:<group>/<kind>:<namespace>/<name>; it is ignored"
    )]
    MalformedTrackingId {
        /// The value, quoted and cut to its first 64 characters.
        value: String,
    },
    /// The tracking id is well formed but identifies another resource, as happens when
    /// a manifest is copied. Argo CD ignores such an id too.
    #[error(
        "annotation {ARGOCD_TRACKING_ID} has value {value}, which tracks a resource other \
         than this {JOB_KIND} (was it copied from another manifest?); it is ignored"
    )]
    ForeignTrackingId {
        /// The value, quoted and cut to its first 64 characters.
        value: String,
    },
    /// The tracking id is from another Argo CD installation: its
    /// `argocd.argoproj.io/installation-id` is not this installation's. Argo CD ignores
    /// such an id too.
    #[error(
        "annotation {ARGOCD_TRACKING_ID} belongs to another Argo CD installation \
         ({ARGOCD_INSTALLATION_ID} is {found}, this installation's is {expected}); it is \
         ignored"
    )]
    OtherInstallation {
        /// The job's installation id, quoted (`""` when absent).
        found: String,
        /// This installation's, quoted (`""` when none is configured).
        expected: String,
    },
    /// The instance label is present but Argo CD tracks by annotation, so it does not
    /// make the job part of that Application.
    #[error(
        "label {key} is ignored: Argo CD tracks resources with the {ARGOCD_TRACKING_ID} \
         annotation (application.resourceTrackingMethod is {method}); Argo CD writes that \
         annotation when it applies the job, or set --tracking-method=label if your Argo \
         CD uses label tracking"
    )]
    LabelIgnored {
        /// The label key.
        key: String,
        /// The tracking method in force.
        method: TrackingMethod,
    },
    /// The annotation or label does not name a valid Application.
    #[error(
        "{} {key} has value {value}, which does not name an Argo CD Application \
         (<name> or <namespace>_<name>): {reason}; it is ignored",
        if key == ARGOCD_TRACKING_ID { "annotation" } else { "label" }
    )]
    InvalidApplication {
        /// The annotation or label key.
        key: String,
        /// The value, quoted and cut to its first 64 characters.
        value: String,
        /// What is wrong with it.
        reason: InvalidAppName,
    },
}

/// The outcome of [`parent_application`]: the parent, if any, and what was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParentLookup {
    /// The parent Application, or `None` when no source names a valid one.
    pub parent: Option<AppRef>,
    /// Sources that were present but unusable, in the order they were tried.
    pub problems: Vec<ParentProblem>,
}

fn shown(value: &str) -> String {
    crate::text::quoted_head(value, MAX_SHOWN_CHARS)
}

/// Splits `a/b` into exactly two parts, as Argo CD's `strings.Split(s, "/")` with a
/// length check of 2 does.
fn two_parts(value: &str) -> Option<(&str, &str)> {
    let mut parts = value.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(a), Some(b), None) => Some((a, b)),
        _ => None,
    }
}

/// Reads a tracking id as Argo CD's `ParseAppInstanceValue` does: split at the first two
/// `:`; the middle part must be exactly `<group>/<kind>` and the last `<namespace>/<name>`
/// (the group is empty for core kinds). Returns the application part and
/// `[group, kind, namespace, name]`.
fn parse_tracking_id(value: &str) -> Option<(&str, [&str; 4])> {
    let mut parts = value.splitn(3, ':');
    let (app, group_kind, namespace_name) = (parts.next()?, parts.next()?, parts.next()?);
    let (group, kind) = two_parts(group_kind)?;
    let (namespace, name) = two_parts(namespace_name)?;
    Some((app, [group, kind, namespace, name]))
}

fn from_tracking_id(job: &JobKey, value: &str) -> Result<AppId, ParentProblem> {
    let (app, resource) =
        parse_tracking_id(value).ok_or_else(|| ParentProblem::MalformedTrackingId {
            value: shown(value),
        })?;
    // Argo CD's isSelfReferencedObj: the id must name this very object.
    if resource != [JOB_GROUP, JOB_KIND, job.namespace(), job.name()] {
        return Err(ParentProblem::ForeignTrackingId {
            value: shown(value),
        });
    }
    AppId::from_instance_value(app).map_err(|reason| ParentProblem::InvalidApplication {
        key: ARGOCD_TRACKING_ID.to_owned(),
        value: shown(value),
        reason,
    })
}

/// Finds the Argo CD Application a job belongs to, the way Argo CD tracks resources
/// with `settings`.
///
/// Sources, in order; the first usable one wins:
///
/// 1. Under annotation tracking (`annotation`, Argo CD 3's default, or
///    `annotation+label`): annotation `argocd.argoproj.io/tracking-id`,
///    `<app>:<group>/<kind>:<ns>/<name>`. As in Argo CD, it counts only when it names
///    this job (`mlops.mlops.dev/NotebookValidationJob:<job namespace>/<job name>`) and
///    when the job's `argocd.argoproj.io/installation-id` (absent: empty) equals
///    Argo CD's `installationID` (none: empty). The instance label is ignored, as
///    Argo CD ignores it.
/// 2. Under label tracking: Argo CD's instance label
///    ([`TrackingSettings::instance_label_key`]); the annotation is ignored.
/// 3. When [`TrackingSettings::part_of`] is on: label `app.kubernetes.io/part-of`.
///    This is nbv's own convention (the seed asks for it), not Argo CD tracking.
///
/// The application part of every source is read with [`AppId::from_instance_value`]
/// (`<name>` or `<namespace>_<name>`). A source that is present but unusable (malformed,
/// copied from another resource, from another installation, ignored under this tracking
/// method, or not a valid Kubernetes name) is reported in [`ParentLookup::problems`]
/// and the next source is tried, because a typo in one tracking mechanism should not
/// hide a job from its Application's status.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::{parent_application, JobKey, ParentSource, TrackingSettings};
///
/// let job = JobKey::new("ml", "train");
/// let annotations = BTreeMap::from([(
///     "argocd.argoproj.io/tracking-id".to_string(),
///     "apps_fraud:mlops.mlops.dev/NotebookValidationJob:ml/train".to_string(),
/// )]);
/// let labels = BTreeMap::from([("app.kubernetes.io/part-of".to_string(), "other".to_string())]);
/// let lookup = parent_application(&job, &annotations, &labels, &TrackingSettings::default());
/// let parent = lookup.parent.unwrap();
/// assert_eq!(parent.app.to_string(), "apps/fraud");
/// assert_eq!(parent.source, ParentSource::TrackingId);
/// assert!(lookup.problems.is_empty());
/// ```
pub fn parent_application(
    job: &JobKey,
    annotations: &BTreeMap<String, String>,
    labels: &BTreeMap<String, String>,
    settings: &TrackingSettings,
) -> ParentLookup {
    let mut lookup = ParentLookup::default();
    let found = |app, source| Some(AppRef { app, source });
    if settings.method == TrackingMethod::Label {
        let key = settings.instance_label_key.as_str();
        if let Some(value) = labels.get(key) {
            match AppId::from_instance_value(value) {
                Ok(app) => {
                    lookup.parent = found(app, ParentSource::InstanceLabel);
                    return lookup;
                }
                Err(reason) => lookup.problems.push(ParentProblem::InvalidApplication {
                    key: key.to_owned(),
                    value: shown(value),
                    reason,
                }),
            }
        }
    } else {
        if let Some(value) = annotations.get(ARGOCD_TRACKING_ID) {
            let installation = annotations
                .get(ARGOCD_INSTALLATION_ID)
                .map(String::as_str)
                .unwrap_or_default();
            if installation != settings.installation_id {
                lookup.problems.push(ParentProblem::OtherInstallation {
                    found: shown(installation),
                    expected: shown(&settings.installation_id),
                });
            } else {
                match from_tracking_id(job, value) {
                    Ok(app) => {
                        lookup.parent = found(app, ParentSource::TrackingId);
                        return lookup;
                    }
                    Err(problem) => lookup.problems.push(problem),
                }
            }
        }
        if labels.contains_key(&settings.instance_label_key) {
            lookup.problems.push(ParentProblem::LabelIgnored {
                key: settings.instance_label_key.clone(),
                method: settings.method,
            });
        }
    }
    if settings.part_of
        && let Some(value) = labels.get(APP_PART_OF)
    {
        match AppId::from_instance_value(value) {
            Ok(app) => lookup.parent = found(app, ParentSource::PartOfLabel),
            Err(reason) => lookup.problems.push(ParentProblem::InvalidApplication {
                key: APP_PART_OF.to_owned(),
                value: shown(value),
                reason,
            }),
        }
    }
    lookup
}
