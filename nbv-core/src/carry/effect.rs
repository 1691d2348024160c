//! The front door: one machine for any planned effect.

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::Value;

use crate::actions::TriggerOutcome;
use crate::api::NotebookValidationJob;
use crate::io::{Response, Step};
use crate::plan::{Effect, Outcome, PlannedEffect};
use crate::reconcile::{ArgocdAccess, Carried, abandonment};
use crate::triggers::{DEFAULT_ARGOCD_NAMESPACE, Grant, TriggerAccess};

use super::{Delivery, Failure, Fire, JobPatch, Machine, Notify, Report, SyncResult};

/// What the shell knows that carrying effects out depends on: its configuration, and
/// what it has observed of Argo CD.
///
/// # Examples
///
/// ```
/// use nbv_core::carry::CarryFacts;
/// use nbv_core::triggers::TriggerAccess;
///
/// let facts = CarryFacts {
///     trigger_access: TriggerAccess::from_list("serving"),
///     reporting_instance: "nbv-operator-7d9f-x2x4q".into(),
///     ..CarryFacts::default()
/// };
/// assert_eq!(facts.field_manager, "nbv-operator");
/// assert!(!facts.projects_cached);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CarryFacts {
    /// Where triggers may act beyond their job's namespace (`--trigger-namespaces`).
    pub trigger_access: TriggerAccess,
    /// Argo CD's control-plane namespace, where its AppProjects are.
    pub argocd_namespace: String,
    /// Field manager of every patch, and the name in Events and sync operations.
    pub field_manager: String,
    /// `reportingInstance` of Events: the operator's pod name (cut to 128 bytes).
    pub reporting_instance: String,
    /// What nbv may read in Argo CD's namespace, as last observed: while the
    /// AppProjects may not be read, a sync waits instead of being written without its
    /// sync windows.
    pub argocd_access: ArgocdAccess,
    /// Whether the shell keeps a watch cache of the AppProjects. Without one no sync
    /// window applies (none is asked for); with one, a
    /// [`NotCached`](crate::io::Response::NotCached) answer means it has not listed
    /// them yet, and the sync waits for it.
    pub projects_cached: bool,
}

impl Default for CarryFacts {
    fn default() -> Self {
        CarryFacts {
            trigger_access: TriggerAccess::default(),
            argocd_namespace: DEFAULT_ARGOCD_NAMESPACE.to_owned(),
            field_manager: "nbv-operator".to_owned(),
            reporting_instance: "nbv-operator".to_owned(),
            argocd_access: ArgocdAccess::Unknown,
            projects_cached: false,
        }
    }
}

/// How a trigger went, as the shell counts it: a label derived from the trigger's
/// result ([`TriggerStatus::of`]), never state of its own; the result itself is a
/// [`TriggerOutcome`] or a [`Failure`], and the ledger's record of it an
/// [`Outcome`].
///
/// # Examples
///
/// ```
/// use nbv_core::carry::TriggerStatus;
///
/// assert_eq!(TriggerStatus::Refused.as_str(), "refused");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TriggerStatus {
    /// It took effect, or its effect was in place.
    Succeeded,
    /// It waits (an operation runs, a sync window is closed).
    Deferred,
    /// The confused-deputy rule refused it.
    Refused,
    /// A request failed, or the target cannot be acted on.
    Failed,
}

impl TriggerStatus {
    /// How a trigger with this result went: deferred, taken effect (or found in
    /// place), refused by the confused-deputy rule, or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::TriggerOutcome;
    /// use nbv_core::carry::{Failure, TriggerStatus};
    ///
    /// let busy = TriggerOutcome::Deferred { reason: "an operation is running".into(), until: None };
    /// assert_eq!(TriggerStatus::of(&Ok(busy)), TriggerStatus::Deferred);
    /// let missing = Failure::NotFound { object: "Deployment ml/web".into() };
    /// assert_eq!(TriggerStatus::of(&Err(missing)), TriggerStatus::Failed);
    /// ```
    pub fn of(fired: &Result<TriggerOutcome, Failure>) -> TriggerStatus {
        match fired {
            Ok(TriggerOutcome::Deferred { .. }) => TriggerStatus::Deferred,
            Ok(TriggerOutcome::Done { .. } | TriggerOutcome::AlreadyDone { .. }) => {
                TriggerStatus::Succeeded
            }
            Err(Failure::Refused(_)) => TriggerStatus::Refused,
            Err(_) => TriggerStatus::Failed,
        }
    }

    /// The status in lower case, as metrics label it.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerStatus::Succeeded => "succeeded",
            TriggerStatus::Deferred => "deferred",
            TriggerStatus::Refused => "refused",
            TriggerStatus::Failed => "failed",
        }
    }
}

/// Carrying out one planned effect; the example of [`crate::carry`] drives one.
///
/// Starting is cheap (no request is made before [`Machine::next`] is asked), and the
/// machine is self-contained: a parent machine may hold it as a child.
#[derive(Clone, Debug)]
pub struct Carry {
    state: State,
    /// A trigger's result, once done: what [`Carry::trigger_status`] reads.
    fired: Option<Result<TriggerOutcome, Failure>>,
    /// A notification's delivery, once done: what [`Carry::notified`] reads.
    delivery: Option<Delivery>,
}

#[derive(Clone, Debug)]
enum State {
    PatchJob(JobPatch),
    Trigger(Box<Fire>),
    SyncResult(Box<SyncResult>),
    Notify(Notify),
    Report(Report),
    /// Nothing to do (a report of an effect that is not abandoned).
    Nothing,
}

impl Carry {
    /// Carries `planned` out for `job` at `now`.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::carry::{Carry, CarryFacts, Machine};
    /// use nbv_core::io::Step;
    /// use nbv_core::plan::{Effect, EffectKey, PlannedEffect};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// }))?;
    /// let now = chrono::Utc::now();
    /// let report = PlannedEffect {
    ///     key: EffectKey::notify(),
    ///     effect: Effect::ReportGaveUp { effect: EffectKey::notify(), error: "503".into(), attempts: 5 },
    /// };
    /// let mut carry = Carry::start(&job, &report, &CarryFacts::default(), now);
    /// assert_eq!(carry.next().request().map(ToString::to_string).as_deref(), Some("POST Event ml/"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn start(
        job: &NotebookValidationJob,
        planned: &PlannedEffect,
        facts: &CarryFacts,
        now: DateTime<Utc>,
    ) -> Carry {
        let state = match &planned.effect {
            Effect::PatchJob { patch } => State::PatchJob(JobPatch::start(
                job.metadata.namespace.as_deref().unwrap_or_default(),
                job.metadata.name.as_deref().unwrap_or_default(),
                patch,
            )),
            Effect::Trigger {
                trigger,
                completed_at,
            } => State::Trigger(Box::new(Fire::start(
                job,
                trigger,
                *completed_at,
                facts,
                now,
            ))),
            Effect::SyncResult {
                trigger,
                completed_at,
            } => State::SyncResult(Box::new(SyncResult::start(
                job,
                trigger.target(),
                *completed_at,
            ))),
            Effect::Notify { event } => State::Notify(Notify::start(job, event, facts)),
            effect @ Effect::ReportGaveUp { .. } => match abandonment(effect) {
                Some(report) => State::Report(Report::start(
                    job,
                    report.reason,
                    &report.message,
                    now,
                    facts,
                )),
                None => State::Nothing,
            },
        };
        Carry {
            state,
            fired: None,
            delivery: None,
        }
    }

    /// The job as the API server stored it after a wave patch, once written: its
    /// `resourceVersion` and conditions are the base of the status write that follows
    /// (the example of [`Carry::follow`] shows it).
    pub fn stored_job(&self) -> Option<&Value> {
        match &self.state {
            State::PatchJob(patch) => patch.stored(),
            _ => None,
        }
    }

    /// Takes the `resourceVersion` and the conditions of the job as stored after a
    /// wave patch: the conditions are written next with that version as a
    /// precondition, so they must be computed from what that version holds (someone
    /// else may have changed them meanwhile), not from the version read before.
    /// Changes nothing for any other effect, or before the patch is written.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::{Carry, CarryFacts, Machine};
    /// use nbv_core::io::Response;
    /// use nbv_core::plan::{Effect, EffectKey, PlannedEffect};
    ///
    /// let mut job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// }))?;
    /// let now = chrono::Utc::now();
    /// let wave = PlannedEffect {
    ///     key: EffectKey::notify(),
    ///     effect: Effect::PatchJob { patch: serde_json::json!({"metadata": {"labels": {"a": "b"}}}) },
    /// };
    /// let mut carry = Carry::start(&job, &wave, &CarryFacts::default(), now);
    /// let _patch = carry.next();
    /// carry.answer(Response::Object(Some(serde_json::json!({"metadata": {"resourceVersion": "12"}}))));
    /// assert_eq!(carry.stored_job().unwrap()["metadata"]["resourceVersion"], "12");
    /// carry.follow(&mut job);
    /// assert_eq!(job.metadata.resource_version.as_deref(), Some("12"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn follow(&self, job: &mut NotebookValidationJob) {
        let Some(stored) = self.stored_job() else {
            return;
        };
        job.metadata.resource_version = stored["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_owned);
        if let Some(status) = job.status.as_mut() {
            status.conditions = stored
                .pointer("/status/conditions")
                .and_then(|c| serde_json::from_value::<Vec<Condition>>(c.clone()).ok());
        }
    }

    /// How a trigger went, once it is done (`None` for any other effect).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::{Carry, CarryFacts, Machine, TriggerStatus};
    /// use nbv_core::io::{Response, Step};
    /// use nbv_core::plan::{Effect, EffectKey, PlannedEffect};
    /// use nbv_core::triggers::Grant;
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// }))?;
    /// let now = chrono::Utc::now();
    /// let set = nbv_core::triggers::parse_triggers(
    ///     "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}", "ml").unwrap();
    /// let restart = PlannedEffect {
    ///     key: EffectKey::notify(),
    ///     effect: Effect::Trigger { trigger: set.triggers()[0].clone(), completed_at: now },
    /// };
    /// let mut carry = Carry::start(&job, &restart, &CarryFacts::default(), now);
    /// assert_eq!(carry.grant(), Some(Grant::SameNamespace), "a trigger in its job's namespace");
    /// let _read = carry.next();
    /// carry.answer(Response::Object(None));
    /// assert!(matches!(carry.next(), Step::Done(_)));
    /// assert_eq!(carry.trigger_status(), Some(TriggerStatus::Failed), "the Deployment is missing");
    /// assert!(carry.warnings().is_empty());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn trigger_status(&self) -> Option<TriggerStatus> {
        self.fired.as_ref().map(TriggerStatus::of)
    }

    /// Why a trigger was allowed to act, once it was (the example of
    /// [`Carry::trigger_status`] shows it).
    pub fn grant(&self) -> Option<Grant> {
        match &self.state {
            State::Trigger(fire) => fire.grant(),
            _ => None,
        }
    }

    /// What the shell should log about how the effect went: an AppProject whose sync
    /// windows cannot be read, pods spared beyond the bound on owner reads (the example
    /// of [`Carry::trigger_status`] shows it).
    pub fn warnings(&self) -> &[String] {
        match &self.state {
            State::Trigger(fire) => fire.warnings(),
            _ => &[],
        }
    }

    /// Whether a notification Event was created now (not found from an earlier
    /// attempt): the moment a run counts as finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::carry::{Carry, CarryFacts, Machine};
    /// use nbv_core::events::{notification, NotificationContext};
    /// use nbv_core::io::Response;
    /// use nbv_core::plan::{Effect, EffectKey, PlannedEffect};
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
    ///     "status": {"phase": "Succeeded", "startTime": "2026-01-24T22:29:00Z",
    ///                "completionTime": "2026-01-24T22:30:00Z"}
    /// }))?;
    /// let event = notification(&job, &NotificationContext::default()).unwrap();
    /// let notify = PlannedEffect { key: EffectKey::notify(), effect: Effect::Notify { event } };
    /// let mut carry = Carry::start(&job, &notify, &CarryFacts::default(), chrono::Utc::now());
    /// let _post = carry.next();
    /// carry.answer(Response::Object(Some(serde_json::json!({}))));
    /// let _done = carry.next();
    /// assert!(carry.notified());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn notified(&self) -> bool {
        self.delivery == Some(Delivery::Created)
    }
}

impl Machine for Carry {
    type Output = Carried;

    fn next(&mut self) -> Step<Carried> {
        let written = |result: Result<(), Failure>| {
            Carried::Written(match result {
                Ok(()) => Outcome::Done,
                Err(failure) => failure.outcome(),
            })
        };
        match &mut self.state {
            State::PatchJob(patch) => match patch.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => Step::Done(written(result.map(drop))),
            },
            State::Trigger(fire) => match fire.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => {
                    self.fired = Some(result.clone());
                    Step::Done(Carried::Trigger(result.map_err(|f| f.outcome())))
                }
            },
            State::SyncResult(follow) => match follow.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => Step::Done(Carried::Sync(result.map_err(|f| f.outcome()))),
            },
            State::Notify(notify) => match notify.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => {
                    self.delivery = result.as_ref().ok().copied();
                    Step::Done(written(result.map(drop)))
                }
            },
            State::Report(report) => match report.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => Step::Done(written(result)),
            },
            State::Nothing => Step::Done(Carried::Written(Outcome::Done)),
        }
    }

    fn answer(&mut self, response: Response) {
        match &mut self.state {
            State::PatchJob(patch) => patch.answer(response),
            State::Trigger(fire) => fire.answer(response),
            State::SyncResult(follow) => follow.answer(response),
            State::Notify(notify) => notify.answer(response),
            State::Report(report) => report.answer(response),
            State::Nothing => {}
        }
    }
}
