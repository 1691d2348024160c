//! Which Argo CD Applications the Applications' cache keeps: those nbv acts on.
//!
//! nbv watches every Application of the namespaces it serves, since it cannot know
//! which one a job will name next, but most of them are Applications it never acts
//! on. Keeping each of them cost 2.5 KiB of resident memory, so an installation with
//! many Applications paid for every one. The cache now keeps an Application only
//! when nbv has a reason to read it:
//!
//! - a job names it: as its parent (found as the Application status finds it) or as
//!   the target of an Application trigger (`sync`, `refresh`);
//! - it shows nbv's status annotations, which the publisher clears once none of its
//!   jobs is left.
//!
//! Every other Application's events are decoded and dropped. A name, once named,
//! stays named: it costs a few dozen bytes, where forgetting it when its last job goes
//! would need a record per job.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use kube::ResourceExt;
use nbv_core::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use nbv_core::triggers::{NamespaceDefaults, parse_triggers};

use super::application::CachedApplication;
use super::job::JobFacts;

/// The Applications nbv's jobs name, shared by the jobs' watch (which names them) and
/// the Applications' watch (which keeps only those and the ones showing nbv's
/// status).
///
/// # Examples
///
/// ```
/// use nbv_operator::operator::projection::{AppInterest, CachedApplication};
///
/// let app = |namespace: &str, name: &str| -> CachedApplication {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": name, "namespace": namespace}})).unwrap()
/// };
/// let interest = AppInterest::default();
/// assert!(!interest.keeps(&app("argocd", "models")));
///
/// assert!(interest.name(Some("argocd"), "models"), "named for the first time");
/// assert!(!interest.name(Some("argocd"), "models"));
/// assert!(interest.keeps(&app("argocd", "models")));
/// assert!(!interest.keeps(&app("team-a", "models")));
///
/// // A parent named without a namespace is found in any namespace the cache watches.
/// interest.name(None, "platform");
/// assert!(interest.keeps(&app("team-a", "platform")));
/// ```
#[derive(Clone, Debug, Default)]
pub struct AppInterest(Arc<Mutex<Named>>);

#[derive(Debug, Default)]
struct Named {
    /// `namespace/name` of the Applications named with their namespace.
    placed: HashSet<Box<str>>,
    /// The names of the Applications named without one.
    anywhere: HashSet<Box<str>>,
}

impl AppInterest {
    /// Names the Application `name` in `namespace` (`None`: in whichever namespace the
    /// lookup finds it). Returns whether it was not named before.
    pub fn name(&self, namespace: Option<&str>, name: &str) -> bool {
        let mut named = self.lock();
        match namespace {
            Some(namespace) => named.placed.insert(format!("{namespace}/{name}").into()),
            None => named.anywhere.insert(name.into()),
        }
    }

    /// Whether the cache keeps `app`: a job names it, or it shows nbv's status.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::projection::{AppInterest, CachedApplication};
    ///
    /// // No job names it, but it shows a status nbv published: the publisher must
    /// // see it to clear the status once its jobs are gone.
    /// let shown: CachedApplication = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "old", "namespace": "argocd",
    ///                  "annotations": {"mlops.dev/notebook-summary": "1/1 succeeded"}}
    /// })).unwrap();
    /// assert!(AppInterest::default().keeps(&shown));
    /// ```
    pub fn keeps(&self, app: &CachedApplication) -> bool {
        let annotations = app.annotations();
        if annotations.contains_key(NOTEBOOK_STATUS) || annotations.contains_key(NOTEBOOK_SUMMARY) {
            return true;
        }
        let name = app.name_any();
        let named = self.lock();
        named.anywhere.contains(name.as_str())
            || app.namespace().is_some_and(|namespace| {
                named
                    .placed
                    .contains(format!("{namespace}/{name}").as_str())
            })
    }

    fn lock(&self) -> MutexGuard<'_, Named> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The Applications a job names: its parent (from its `facts`) and the targets of
/// the Application triggers of its `trigger_annotation`, each with its namespace when
/// it has one (`job_namespace` and `argocd_namespace` are the defaults of a trigger).
/// An annotation that does not parse names none (the job is told so when it is
/// reconciled).
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::TrackingSettings;
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_operator::operator::projection::{JobFacts, named_applications};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml", "annotations": {
///         "argocd.argoproj.io/tracking-id": "platform:mlops.mlops.dev/NotebookValidationJob:ml/train"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
/// }))?;
/// let facts = JobFacts::of(&job, &TrackingSettings::default());
/// let triggers = "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, action: sync}\n\
///                 - {apiVersion: apps/v1, kind: Deployment, name: api, action: restart}";
/// assert_eq!(
///     named_applications(&facts, Some(triggers), "ml", "argocd"),
///     [(None, "platform".to_owned()), (Some("argocd".to_owned()), "serving".to_owned())]
/// );
/// assert_eq!(named_applications(&facts, Some("- [not, a, trigger"), "ml", "argocd").len(), 1);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn named_applications(
    facts: &JobFacts,
    trigger_annotation: Option<&str>,
    job_namespace: &str,
    argocd_namespace: &str,
) -> Vec<(Option<String>, String)> {
    let parent = facts
        .parent
        .as_ref()
        .map(|app| (app.namespace().map(str::to_owned), app.name().to_owned()));
    let mut named: Vec<_> = parent.into_iter().collect();
    let defaults = NamespaceDefaults {
        job_namespace,
        argocd_namespace,
    };
    if let Some(Ok(set)) = trigger_annotation.map(|text| parse_triggers(text, defaults)) {
        let targets = set.triggers().iter().filter(|t| t.is_argo_application());
        named.extend(targets.map(|trigger| {
            let target = trigger.target();
            (
                Some(target.namespace().as_str().to_owned()),
                target.name().as_str().to_owned(),
            )
        }));
    }
    named
}
