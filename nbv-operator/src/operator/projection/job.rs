//! A job as the jobs' cache keeps it: packed, and unpacked when a reconcile reads it.
//!
//! A decoded [`NotebookValidationJob`] costs about 5 KiB of heap for 2 KiB of JSON:
//! the struct alone is over 2 KiB inline (every optional part of the spec and the
//! status has its room whether it is set or not), and every string, map and condition
//! is an allocation of its own. The cache holds every job for the life of the process
//! but reads one only when it is reconciled, so [`CachedJob`] keeps each job as its
//! JSON text deflated against a dictionary of what jobs share (field names, nbv's
//! condition reasons and messages, see `job_dictionary.json`): a few hundred bytes.
//! A reconcile unpacks its job in microseconds, next to the milliseconds of the API
//! requests it makes.
//!
//! What must be read without unpacking is kept beside the packed text: the name and
//! namespace the cache files the job under (taken out of the packed text so they are
//! kept once) and the [`JobFacts`] the cluster gauges count at every scrape. The uid
//! and the resourceVersion stay in the packed text: kube-runtime copies the metadata's
//! uid and resourceVersion into every reference it keeps to an object (the store's key,
//! each scheduled reconcile), where nothing reads them, so metadata without them saves
//! four strings per job.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use kube::Resource;
use kube::api::ObjectMeta;
use kube::core::NamespaceResourceScope;
use nbv_core::aggregate::{AppId, JobEntry, JobPhase, TrackingSettings};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::phase::ConditionType;
use nbv_core::pod::timeout_seconds;
use serde::{Deserialize, Deserializer};

use super::metadata::trim_metadata;
use super::packed::Packed;

/// What jobs have in common, primed into the compressor's window: a job's text is
/// stored as its differences from this one. Only the compressed size depends on it;
/// what is unpacked is always the job that was packed.
const DICTIONARY: &[u8] = include_bytes!("job_dictionary.json");

/// What the cluster gauges read of a job ([`Census`](crate::operator::metrics::Census)), taken
/// when the job is packed so that a scrape unpacks nothing.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::TrackingSettings;
/// use nbv_core::api::{NotebookValidationJob, Phase};
/// use nbv_operator::operator::projection::JobFacts;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml", "annotations": {
///         "argocd.argoproj.io/tracking-id": "platform:mlops.mlops.dev/NotebookValidationJob:ml/train"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"},
///              "timeout": "10m"},
///     "status": {"phase": "ValidationRunning", "startTime": "2026-01-01T00:00:00Z"}
/// }))?;
/// let facts = JobFacts::of(&job, &TrackingSettings::default());
/// assert_eq!(facts.phase, Some(Phase::ValidationRunning));
/// assert_eq!(facts.parent.expect("a parent").name(), "platform");
/// assert_eq!(facts.timeout_seconds, Some(600));
/// assert!(!facts.effects_abandoned);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFacts {
    /// `status.phase`.
    pub phase: Option<Phase>,
    /// The parent Application, found as the Application status finds it; the jobs'
    /// cache shares one copy among the jobs of an Application ([`Parents`]).
    pub parent: Option<Arc<AppId>>,
    /// When the current attempt started: `status.lastRetryTime` or `status.startTime`,
    /// the later of the two.
    pub attempt_started: Option<DateTime<Utc>>,
    /// `spec.timeout` in seconds; `None` when it is not valid (nbv fails such a job by
    /// name, and it is never past it).
    pub timeout_seconds: Option<i64>,
    /// Whether the `EffectsApplied` condition is `False`: nbv gave up on one of the
    /// run's effects.
    pub effects_abandoned: bool,
}

impl JobFacts {
    /// The facts of `job`, its parent found with `tracking`.
    pub fn of(job: &NotebookValidationJob, tracking: &TrackingSettings) -> JobFacts {
        let status = job.status.as_ref();
        let effects_abandoned = status
            .and_then(|s| s.conditions.as_deref())
            .and_then(|c| nbv_core::phase::find_condition(c, &ConditionType::EFFECTS_APPLIED))
            .is_some_and(|c| c.status == "False");
        JobFacts {
            phase: status.and_then(|s| s.phase),
            parent: JobEntry::of(job, tracking)
                .and_then(|entry| entry.lookup.parent)
                .map(|parent| Arc::new(parent.app)),
            attempt_started: status.and_then(|s| {
                [s.start_time, s.last_retry_time]
                    .into_iter()
                    .flatten()
                    .max()
            }),
            timeout_seconds: timeout_seconds(job.spec.timeout.as_deref()).ok(),
            effects_abandoned,
        }
    }

    /// How the phase counts in an Application's status.
    pub fn outcome(&self) -> JobPhase {
        JobPhase::of(self.phase)
    }

    /// Whether the current attempt has run longer than the job's timeout at `now`
    /// without ending.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::Phase;
    /// use nbv_operator::operator::projection::JobFacts;
    ///
    /// let started = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    /// let facts = JobFacts {
    ///     phase: Some(Phase::ValidationRunning),
    ///     parent: None,
    ///     attempt_started: Some(started),
    ///     timeout_seconds: Some(600),
    ///     effects_abandoned: false,
    /// };
    /// assert!(!facts.past_timeout(started + chrono::TimeDelta::minutes(10)));
    /// assert!(facts.past_timeout(started + chrono::TimeDelta::minutes(11)));
    /// ```
    pub fn past_timeout(&self, now: DateTime<Utc>) -> bool {
        if self.outcome() != JobPhase::Running {
            return false;
        }
        match (self.attempt_started, self.timeout_seconds) {
            (Some(started), Some(timeout)) => (now - started).num_seconds() > timeout,
            _ => false,
        }
    }
}

/// The parent Applications of the cached jobs, each kept once: an Application's name
/// is then stored once for all its jobs rather than once per job.
///
/// Applications no cached job names any more are forgotten as the set grows (each time
/// it doubles), so it holds at most about twice the Applications in use.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::TrackingSettings;
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_operator::operator::projection::{CachedJob, Parents};
///
/// let job = |name: &str| -> NotebookValidationJob {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": name, "namespace": "ml", "annotations": {
///             "argocd.argoproj.io/tracking-id":
///                 format!("platform:mlops.mlops.dev/NotebookValidationJob:ml/{name}")}},
///         "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                               "path": "t.ipynb"},
///                  "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
///     })).unwrap()
/// };
/// let tracking = TrackingSettings::default();
/// let mut parents = Parents::default();
/// let first = CachedJob::pack_sharing(job("train"), &tracking, &mut parents);
/// let second = CachedJob::pack_sharing(job("score"), &tracking, &mut parents);
/// let (a, b) = (first.facts().parent.as_ref(), second.facts().parent.as_ref());
/// assert_eq!(a.expect("a parent").name(), "platform");
/// assert!(std::sync::Arc::ptr_eq(a.unwrap(), b.unwrap()));
/// ```
#[derive(Debug, Default)]
pub struct Parents {
    kept: HashSet<Arc<AppId>>,
    /// How many were kept after the last pruning: the next one comes at twice as many.
    pruned_at: usize,
}

impl Parents {
    /// The fewest kept before the first pruning.
    const FIRST_PRUNING: usize = 64;

    /// `facts` with their parent replaced by the copy kept here.
    fn share(&mut self, facts: &mut JobFacts) {
        let Some(parent) = facts.parent.take() else {
            return;
        };
        let kept = match self.kept.get(&parent) {
            Some(kept) => Arc::clone(kept),
            None => {
                self.prune();
                self.kept.insert(Arc::clone(&parent));
                parent
            }
        };
        facts.parent = Some(kept);
    }

    /// Forgets the Applications only this set still holds, once it has doubled.
    fn prune(&mut self) {
        if self.kept.len() < (2 * self.pruned_at).max(Self::FIRST_PRUNING) {
            return;
        }
        self.kept.retain(|app| Arc::strong_count(app) > 1);
        self.pruned_at = self.kept.len();
    }
}

/// A job the cache holds that could not be unpacked. Packing and unpacking are
/// inverses, so this is a defect of nbv: the reconcile fails and is retried, and the
/// job's next change packs it anew.
#[derive(Debug, thiserror::Error)]
#[error(
    "the cached copy of NotebookValidationJob {job} could not be read back ({reason}); it is read again at its next change"
)]
pub struct UnpackError {
    /// `namespace/name` of the job.
    pub job: String,
    /// What went wrong.
    pub reason: String,
}

/// A job in the jobs' cache: its name and namespace, its [`JobFacts`], and the rest packed.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::TrackingSettings;
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_operator::operator::projection::CachedJob;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train", "namespace": "ml", "resourceVersion": "42",
///                  "managedFields": [{"manager": "argocd-controller", "operation": "Update"}]},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                           "path": "t.ipynb"},
///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
///     "status": {"phase": "Succeeded"}
/// }))?;
/// let cached = CachedJob::pack(job.clone(), &TrackingSettings::default());
/// assert_eq!((cached.namespace(), cached.name()), ("ml", "train"));
///
/// let read = cached.job().expect("unpacked");
/// // Everything but what every cache drops (managedFields).
/// assert!(read.metadata.managed_fields.is_none());
/// assert_eq!(read.metadata.resource_version.as_deref(), Some("42"));
/// assert_eq!(read.spec, job.spec);
/// assert_eq!(read.status, job.status);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct CachedJob {
    /// Name and namespace; the rest of the metadata is packed.
    metadata: ObjectMeta,
    facts: JobFacts,
    packed: Packed,
}

impl CachedJob {
    /// Packs `job`, trimmed as every cache trims its objects
    /// ([`trim_metadata`](super::trim_metadata)), its facts taken with `tracking`.
    pub fn pack(job: NotebookValidationJob, tracking: &TrackingSettings) -> CachedJob {
        CachedJob::pack_sharing(job, tracking, &mut Parents::default())
    }

    /// Packs `job` as [`CachedJob::pack`] does, its parent Application shared with the
    /// other jobs packed with `parents`: what the jobs' watch does.
    pub fn pack_sharing(
        job: NotebookValidationJob,
        tracking: &TrackingSettings,
        parents: &mut Parents,
    ) -> CachedJob {
        let facts = JobFacts::of(&job, tracking);
        CachedJob::pack_with_facts(job, facts, parents)
    }

    /// Packs `job` as [`CachedJob::pack_sharing`] does, with the `facts` the caller
    /// took of it already ([`JobFacts::of`], which reads nothing that packing trims).
    pub fn pack_with_facts(
        mut job: NotebookValidationJob,
        mut facts: JobFacts,
        parents: &mut Parents,
    ) -> CachedJob {
        trim_metadata(&mut job.metadata);
        parents.share(&mut facts);
        let source = &mut job.metadata;
        let metadata = ObjectMeta {
            name: source.name.take(),
            namespace: source.namespace.take(),
            ..ObjectMeta::default()
        };
        CachedJob {
            metadata,
            facts,
            packed: Packed::of(&job, DICTIONARY),
        }
    }

    /// The job, as it was packed.
    ///
    /// # Errors
    ///
    /// [`UnpackError`] if the packed text cannot be read back (a defect of nbv).
    pub fn job(&self) -> Result<NotebookValidationJob, UnpackError> {
        let failed = |reason: String| UnpackError {
            job: format!("{}/{}", self.namespace(), self.name()),
            reason,
        };
        let text = self
            .packed
            .text(DICTIONARY)
            .map_err(|r| failed(r.to_owned()))?;
        let mut job: NotebookValidationJob =
            serde_json::from_slice(&text).map_err(|e| failed(e.to_string()))?;
        job.metadata.name = self.metadata.name.clone();
        job.metadata.namespace = self.metadata.namespace.clone();
        Ok(job)
    }

    /// The job's name (empty if it has none, which no job from the API server lacks).
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The job's namespace (empty if it has none).
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }

    /// What the cluster gauges read of the job.
    pub fn facts(&self) -> &JobFacts {
        &self.facts
    }

    /// The bytes the packed text takes.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::TrackingSettings;
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_operator::operator::projection::CachedJob;
    ///
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///                           "path": "t.ipynb"},
    ///              "podConfig": {"containerImage": "quay.io/example/papermill:1"}}
    /// }))?;
    /// let text = serde_json::to_vec(&job)?.len();
    /// let cached = CachedJob::pack(job, &TrackingSettings::default());
    /// assert!(cached.packed_size() < text / 2);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn packed_size(&self) -> usize {
        self.packed.size()
    }
}

impl fmt::Debug for CachedJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedJob")
            .field("namespace", &self.namespace())
            .field("name", &self.name())
            .field("facts", &self.facts)
            .field("packed_size", &self.packed_size())
            .finish()
    }
}

impl Resource for CachedJob {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(dt: &()) -> Cow<'_, str> {
        NotebookValidationJob::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        NotebookValidationJob::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        NotebookValidationJob::version(dt)
    }

    fn api_version(dt: &()) -> Cow<'_, str> {
        NotebookValidationJob::api_version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        NotebookValidationJob::plural(dt)
    }

    /// The name and namespace only: the uid, the resourceVersion and the rest are in
    /// the packed text ([`CachedJob::job`]).
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    /// The name and namespace only; the unpacked job takes them from here.
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// kube-runtime's controller asks its object type to be decodable, but never decodes
/// one: the jobs' watch decodes `NotebookValidationJob`s and packs them
/// ([`CachedJob::pack`]), which needs the tracking settings a decoder has no way to be
/// given. Decoding therefore refuses, with a message that says so, instead of packing
/// with settings that may not be the operator's.
impl<'de> Deserialize<'de> for CachedJob {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(serde::de::Error::custom(
            "a CachedJob is not decoded: decode a NotebookValidationJob and CachedJob::pack it with the tracking settings",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(value: serde_json::Value) -> NotebookValidationJob {
        serde_json::from_value(value).expect("a job")
    }

    fn typical() -> NotebookValidationJob {
        job(serde_json::json!({
            "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
            "metadata": {"name": "churn-features", "namespace": "retail-ml",
                         "uid": "0b6f3c1e-8a47-4d0e-9f55-2f1c9d3a7e61", "resourceVersion": "918273",
                         "generation": 3, "creationTimestamp": "2026-11-20T08:15:00Z",
                         "labels": {"app.kubernetes.io/instance": "retail"},
                         "annotations": {"argocd.argoproj.io/tracking-id":
                             "retail:mlops.mlops.dev/NotebookValidationJob:retail-ml/churn-features",
                             "argocd.argoproj.io/sync-wave": "2"}},
            "spec": {"notebook": {"git": {"url": "https://github.com/acme/churn.git", "ref": "v1.4.0"},
                                  "path": "notebooks/features.ipynb"},
                     "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:2026-10-01",
                                   "serviceAccountName": "notebooks"},
                     "timeout": "45m"},
            "status": {"phase": "Succeeded", "message": "Notebook validation succeeded",
                       "startTime": "2026-11-20T08:16:02Z", "completionTime": "2026-11-20T08:31:40Z",
                       "observedGeneration": 3, "retryCount": 0,
                       "effects": {"run": "g3@2026-11-20T08:16:02Z", "done": ["notify", "wave"], "failed": []},
                       "conditions": [
                           {"type": "Ready", "status": "True", "reason": "ValidationSucceeded",
                            "message": "Notebook validation succeeded", "observedGeneration": 3,
                            "lastTransitionTime": "2026-11-20T08:31:40Z"},
                           {"type": "EffectsApplied", "status": "True", "reason": "EffectsApplied",
                            "message": "2 effect(s) of run g3@2026-11-20T08:16:02Z took effect",
                            "observedGeneration": 3, "lastTransitionTime": "2026-11-20T08:31:41Z"}]}
        }))
    }

    #[test]
    fn a_typical_job_packs_to_a_fraction_of_its_text() {
        let job = typical();
        let text = serde_json::to_vec(&job).expect("text").len();
        let cached = CachedJob::pack(job, &TrackingSettings::default());
        assert!(matches!(cached.packed, Packed::Deflated { .. }));
        // Measured: 1,358 bytes of text pack to 222; a third leaves room for
        // jobs unlike this one, and fails if the dictionary stops matching.
        assert!(
            cached.packed_size() * 3 < text,
            "{} bytes packed from {text}",
            cached.packed_size()
        );
    }

    #[test]
    fn unpacking_gives_back_the_trimmed_job() {
        let mut expected = typical();
        expected.metadata.managed_fields = Some(vec![Default::default()]);
        let cached = CachedJob::pack(expected.clone(), &TrackingSettings::default());
        trim_metadata(&mut expected.metadata);
        assert_eq!(cached.job().expect("unpacked"), expected);
    }

    #[test]
    fn the_references_kube_runtime_keeps_carry_neither_uid_nor_version() {
        let cached = CachedJob::pack(typical(), &TrackingSettings::default());
        let reference = kube::runtime::reflector::ObjectRef::from_obj(&cached);
        assert_eq!(
            (reference.namespace.as_deref(), reference.name.as_str()),
            (Some("retail-ml"), "churn-features")
        );
        assert_eq!(reference.extra.uid, None);
        assert_eq!(reference.extra.resource_version, None);
        let read = cached.job().expect("unpacked").metadata;
        assert_eq!(
            read.uid.as_deref(),
            Some("0b6f3c1e-8a47-4d0e-9f55-2f1c9d3a7e61")
        );
        assert_eq!(read.resource_version.as_deref(), Some("918273"));
    }

    /// A job of the Application `app-{app}`.
    fn job_of(app: usize) -> NotebookValidationJob {
        let mut job = typical();
        let annotations = job.metadata.annotations.get_or_insert_default();
        annotations.insert(
            "argocd.argoproj.io/tracking-id".to_owned(),
            format!("app-{app}:mlops.mlops.dev/NotebookValidationJob:retail-ml/churn-features"),
        );
        job
    }

    fn pack(app: usize, parents: &mut Parents) -> CachedJob {
        CachedJob::pack_sharing(job_of(app), &TrackingSettings::default(), parents)
    }

    #[test]
    fn the_jobs_of_an_application_share_its_name() {
        let mut parents = Parents::default();
        let (first, second) = (pack(1, &mut parents), pack(1, &mut parents));
        let (Some(a), Some(b)) = (&first.facts().parent, &second.facts().parent) else {
            panic!("both have a parent");
        };
        assert_eq!(a.name(), "app-1");
        assert!(Arc::ptr_eq(a, b));
        assert_eq!(parents.kept.len(), 1);
    }

    #[test]
    fn applications_no_cached_job_names_are_forgotten_as_the_set_grows() {
        let mut parents = Parents::default();
        for app in 0..1_000 {
            drop(pack(app, &mut parents));
        }
        assert!(
            parents.kept.len() <= Parents::FIRST_PRUNING,
            "{}",
            parents.kept.len()
        );

        let held: Vec<CachedJob> = (0..100).map(|app| pack(app, &mut parents)).collect();
        for app in 100..1_000 {
            drop(pack(app, &mut parents));
        }
        // The 100 in use are kept, and the set stays within about twice them.
        assert!(
            (100..=200).contains(&parents.kept.len()),
            "{}",
            parents.kept.len()
        );
        let again = pack(7, &mut parents);
        let parent = |job: &CachedJob| job.facts().parent.clone().expect("a parent");
        assert!(Arc::ptr_eq(&parent(&again), &parent(&held[7])));
    }

    #[test]
    fn a_text_kept_plain_is_read_back_too() {
        let mut cached = CachedJob::pack(typical(), &TrackingSettings::default());
        let text = cached.packed.text(DICTIONARY).expect("text").into_owned();
        cached.packed = Packed::Plain(text.into_boxed_slice());
        assert_eq!(cached.job().expect("unpacked").spec, typical().spec);
    }

    #[test]
    fn a_damaged_text_is_an_error_naming_the_job() {
        let mut cached = CachedJob::pack(typical(), &TrackingSettings::default());
        cached.packed = Packed::Deflated {
            bytes: vec![0xff; 8].into_boxed_slice(),
            len: 100,
        };
        let error = cached.job().expect_err("damaged");
        assert!(
            error.to_string().contains("retail-ml/churn-features"),
            "{error}"
        );
    }

    #[test]
    fn decoding_refuses_and_says_how_a_cached_job_is_made() {
        let error = serde_json::from_value::<CachedJob>(serde_json::json!({"metadata": {}}))
            .expect_err("refused");
        assert!(error.to_string().contains("CachedJob::pack"), "{error}");
    }

    #[test]
    fn facts_of_a_job_past_its_timeout_with_an_abandoned_effect() {
        let job = job(serde_json::json!({
            "metadata": {"name": "train", "namespace": "ml"},
            "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                                  "path": "t.ipynb"},
                     "podConfig": {"containerImage": "quay.io/example/papermill:1"},
                     "timeout": "bogus"},
            "status": {"phase": "ValidationRunning",
                       "startTime": "2026-01-01T00:00:00Z", "lastRetryTime": "2026-01-01T01:00:00Z",
                       "conditions": [{"type": "EffectsApplied", "status": "False",
                                       "reason": "EffectsAbandoned", "message": "gave up",
                                       "lastTransitionTime": "2026-01-01T01:05:00Z"}]}
        }));
        let facts = JobFacts::of(&job, &TrackingSettings::default());
        assert_eq!(
            facts.attempt_started,
            "2026-01-01T01:00:00Z".parse::<DateTime<Utc>>().ok()
        );
        assert_eq!(facts.timeout_seconds, None);
        assert!(facts.effects_abandoned);
        assert!(!facts.past_timeout(Utc::now()));
    }
}
