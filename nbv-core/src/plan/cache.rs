//! Reading a job's trigger annotation once per value instead of once per plan.
//!
//! A job is planned on every reconcile, and most reconciles of a run see the same
//! annotations: only the status changed (nbv's own writes, the Pod's progress).
//! Parsing and validating `mlops.dev/on-success-trigger` is most of what a plan costs
//! (about 10 µs per entry before this cache; see `docs/performance.md`), so
//! [`ParsedAnnotations`] keeps the result, and [`PlanCache`] keeps one per job.
//!
//! # What the cache is keyed on
//!
//! On the inputs of the parse themselves: the annotation's text and the two
//! namespaces an entry without one defaults to. Neither object version would be safe
//! or useful: `metadata.generation` does not change when annotations do (a cache keyed
//! on it would serve stale triggers), and `metadata.resourceVersion` changes with every
//! status write (a cache keyed on it would miss on nearly every reconcile). A hash of
//! the text would be smaller, but two texts with the same hash would share a parse; the
//! text itself is compared instead (a few hundred bytes, a few nanoseconds), so a
//! stale parse is impossible by construction: whatever differs, the parse is redone.

use std::collections::HashMap;
use std::sync::Arc;

use crate::annotations::{self, ON_SUCCESS_TRIGGER};
use crate::api::NotebookValidationJob;
use crate::triggers::{self, Trigger};

use super::{Diagnostic, PlanContext};

/// A job's trigger annotation, parsed and validated, with the inputs it was read from.
///
/// [`plan_with`](super::plan_with) uses it only when [`is_for`](Self::is_for) the job
/// it plans (the same annotation text and the same default namespaces) and parses
/// afresh otherwise, so a value kept from an older version of the job can never
/// change a plan.
///
/// # Examples
///
/// ```
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::plan::{ParsedAnnotations, PlanContext};
///
/// let mut job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml", "annotations": {
///         "mlops.dev/on-success-trigger":
///             "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "t.ipynb"}, "podConfig": {"containerImage": "img"}}
/// }))?;
/// let ctx = PlanContext::default();
/// let parsed = ParsedAnnotations::of(&job, &ctx);
/// assert_eq!(parsed.triggers().len(), 1);
/// assert!(parsed.is_for(&job, &ctx));
///
/// // Another trigger: the parse no longer describes the job.
/// job.metadata.annotations.as_mut().unwrap().insert(
///     "mlops.dev/on-success-trigger".into(),
///     "- {apiVersion: apps/v1, kind: Deployment, name: api, action: restart}".into(),
/// );
/// assert!(!parsed.is_for(&job, &ctx));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedAnnotations {
    /// The annotation's text (`None`: the job has no trigger annotation).
    source: Option<String>,
    /// The namespace of an entry without one.
    job_namespace: String,
    /// The namespace of an Application without one.
    argocd_namespace: String,
    /// The valid triggers (none when the annotation has an error).
    triggers: Vec<Trigger>,
    /// What is wrong with the annotation: warnings, or the one error that disables it.
    diagnostics: Vec<Diagnostic>,
}

impl ParsedAnnotations {
    /// Parses and validates `job`'s trigger annotation, with the defaults `ctx` gives.
    pub fn of(job: &NotebookValidationJob, ctx: &PlanContext) -> ParsedAnnotations {
        let source = trigger_text(job);
        let job_namespace = job_namespace(job);
        let defaults = triggers::NamespaceDefaults {
            job_namespace,
            argocd_namespace: &ctx.argocd_namespace,
        };
        let parsed = source.map(|text| triggers::parse_triggers(text, defaults));
        let mut diagnostics = Vec::new();
        let triggers = match parsed {
            None => Vec::new(),
            Some(Ok(set)) => {
                diagnostics.extend(set.warnings().iter().map(|warning| Diagnostic {
                    annotation: annotations::ON_SUCCESS_TRIGGER,
                    is_error: false,
                    message: warning.to_string(),
                }));
                set.triggers().to_vec()
            }
            Some(Err(errs)) => {
                diagnostics.push(Diagnostic {
                    annotation: annotations::ON_SUCCESS_TRIGGER,
                    is_error: true,
                    message: format!("no trigger fires until this is fixed:\n{errs}"),
                });
                Vec::new()
            }
        };
        ParsedAnnotations {
            source: source.map(str::to_owned),
            job_namespace: job_namespace.to_owned(),
            argocd_namespace: ctx.argocd_namespace.clone(),
            triggers,
            diagnostics,
        }
    }

    /// Whether this parse was made from the same inputs as `job`'s would be under
    /// `ctx`: the same annotation text and the same default namespaces.
    pub fn is_for(&self, job: &NotebookValidationJob, ctx: &PlanContext) -> bool {
        self.source.as_deref() == trigger_text(job)
            && self.job_namespace == job_namespace(job)
            && self.argocd_namespace == ctx.argocd_namespace
    }

    /// The valid triggers, in annotation order, duplicates removed.
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// The annotation's problems, as the plan reports them.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
}

fn trigger_text(job: &NotebookValidationJob) -> Option<&str> {
    job.metadata
        .annotations
        .as_ref()?
        .get(ON_SUCCESS_TRIGGER)
        .map(String::as_str)
}

/// The namespace `plan` reads the job in (`default` when the object names none).
fn job_namespace(job: &NotebookValidationJob) -> &str {
    job.metadata.namespace.as_deref().unwrap_or("default")
}

/// The parsed trigger annotations of many jobs, by job uid: what a shell keeps so that
/// re-planning a job whose annotations did not change costs no parse.
///
/// Only jobs that carry a trigger annotation take an entry (for the others there is
/// nothing to parse). An entry is replaced when its job's annotation changes, removed
/// by [`forget`](Self::forget) when the job is deleted, and the number of entries is
/// bounded by the capacity: when full, an arbitrary entry makes room (it is parsed
/// again at its next plan, nothing else happens). Entries are shared (`Arc`), so a
/// shell can hold one outside a lock while it plans.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::plan::{plan, PlanCache, PlanContext};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml", "uid": "a1", "annotations": {
///         "mlops.dev/on-success-trigger":
///             "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "t.ipynb"}, "podConfig": {"containerImage": "img"}},
///     "status": {"phase": "Succeeded", "completionTime": "2026-01-24T22:30:00Z"}
/// }))?;
/// let (ctx, now) = (PlanContext::default(), Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap());
/// let mut cache = PlanCache::default();
/// let first = cache.plan(&job, &ctx, now);
/// assert_eq!(first, plan(&job, &ctx, now));
/// assert_eq!(cache.len(), 1);
/// // Planned again from the entry: the same plan, no parse.
/// assert_eq!(cache.plan(&job, &ctx, now), first);
/// cache.forget("a1");
/// assert!(cache.is_empty());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct PlanCache {
    entries: HashMap<String, Arc<ParsedAnnotations>>,
    capacity: usize,
}

impl Default for PlanCache {
    /// Room for [`PlanCache::DEFAULT_CAPACITY`] jobs.
    fn default() -> Self {
        PlanCache::with_capacity(PlanCache::DEFAULT_CAPACITY)
    }
}

impl PlanCache {
    /// The default bound on entries: more jobs with triggers than one operator is
    /// expected to watch (entries beyond it are parsed on every plan, as without a
    /// cache).
    pub const DEFAULT_CAPACITY: usize = 100_000;

    /// A cache of at most `capacity` entries (at least one).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nbv_core::plan::PlanCache::with_capacity(0).capacity(), 1);
    /// ```
    pub fn with_capacity(capacity: usize) -> PlanCache {
        PlanCache {
            entries: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// The most entries this cache holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The number of jobs with an entry.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no job has an entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The parsed annotations of `job` under `ctx`: its entry when that still
    /// [`is_for`](ParsedAnnotations::is_for) the job, otherwise a fresh parse, which
    /// becomes the job's entry ([`insert`](Self::insert)).
    pub fn parsed(
        &mut self,
        job: &NotebookValidationJob,
        ctx: &PlanContext,
    ) -> Arc<ParsedAnnotations> {
        if let Some(entry) = self.get(job, ctx) {
            return entry;
        }
        let parsed = Arc::new(ParsedAnnotations::of(job, ctx));
        self.insert(job, Arc::clone(&parsed));
        parsed
    }

    /// `job`'s entry, if it still [`is_for`](ParsedAnnotations::is_for) the job under
    /// `ctx`. A shell that plans from several threads looks up and
    /// [`insert`](Self::insert)s under its lock and parses outside it.
    pub fn get(
        &self,
        job: &NotebookValidationJob,
        ctx: &PlanContext,
    ) -> Option<Arc<ParsedAnnotations>> {
        let entry = self.entries.get(job.metadata.uid.as_deref()?)?;
        entry.is_for(job, ctx).then(|| Arc::clone(entry))
    }

    /// Makes `parsed` (a parse of `job`'s annotations) the job's entry. A job without
    /// a uid takes no entry, nor does one without a trigger annotation (there is
    /// nothing to parse; its old entry, if any, goes).
    pub fn insert(&mut self, job: &NotebookValidationJob, parsed: Arc<ParsedAnnotations>) {
        let Some(uid) = job.metadata.uid.as_deref() else {
            return;
        };
        if parsed.source.is_none() {
            self.entries.remove(uid);
            return;
        }
        if self.entries.len() >= self.capacity && !self.entries.contains_key(uid) {
            // Any entry will do: the one evicted is parsed again when next planned.
            if let Some(victim) = self.entries.keys().next().cloned() {
                self.entries.remove(&victim);
            }
        }
        self.entries.insert(uid.to_owned(), parsed);
    }

    /// [`plan_with`](super::plan_with) from `job`'s entry.
    pub fn plan(
        &mut self,
        job: &NotebookValidationJob,
        ctx: &PlanContext,
        now: chrono::DateTime<chrono::Utc>,
    ) -> super::Plan {
        let parsed = self.parsed(job, ctx);
        super::plan_with(job, ctx, now, &parsed)
    }

    /// Forgets the entry of the job with this uid (the job was deleted).
    pub fn forget(&mut self, uid: &str) {
        self.entries.remove(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(uid: &str, trigger: Option<&str>) -> NotebookValidationJob {
        let mut annotations = serde_json::Map::new();
        if let Some(trigger) = trigger {
            annotations.insert(ON_SUCCESS_TRIGGER.into(), trigger.into());
        }
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": uid, "namespace": "ml", "uid": uid, "annotations": annotations},
            "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                     "path": "t.ipynb"}, "podConfig": {"containerImage": "img"}}
        }))
        .unwrap()
    }

    const WEB: &str = "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}";

    #[test]
    fn capacity_bounds_the_entries() {
        let mut cache = PlanCache::with_capacity(2);
        for uid in ["a", "b", "c", "d"] {
            cache.parsed(&job(uid, Some(WEB)), &PlanContext::default());
        }
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn jobs_without_the_annotation_take_no_entry() {
        let mut cache = PlanCache::default();
        let ctx = PlanContext::default();
        cache.parsed(&job("a", Some(WEB)), &ctx);
        assert_eq!(cache.len(), 1);
        // The annotation was removed: the entry goes too.
        assert!(cache.parsed(&job("a", None), &ctx).triggers().is_empty());
        assert!(cache.is_empty());
    }

    #[test]
    fn another_argocd_namespace_is_parsed_again() {
        let app = "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: s, action: sync}";
        let mut cache = PlanCache::default();
        let job = job("a", Some(app));
        let default = cache.parsed(&job, &PlanContext::default());
        let gitops = PlanContext {
            argocd_namespace: "gitops".into(),
            ..PlanContext::default()
        };
        let moved = cache.parsed(&job, &gitops);
        assert_eq!(
            default.triggers()[0].target().namespace().as_str(),
            "argocd"
        );
        assert_eq!(moved.triggers()[0].target().namespace().as_str(), "gitops");
    }
}
