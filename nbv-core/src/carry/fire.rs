//! Firing one on-success trigger: authorize, then restart, sync or refresh, each as
//! [`crate::actions`] decides.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::actions::{Run, TriggerOutcome, refresh};
use crate::api::NotebookValidationJob;
use crate::io::{Response, Step};
use crate::triggers::{Action, Grant, Trigger};

use super::access::{Authorize, Authorized};
use super::machine::forward;
use super::restart::Restart;
use super::sync::Sync;
use super::target::{JobRef, PatchWrite, Read};
use super::{CarryFacts, Failure, Machine};

/// Firing `trigger` of a job for the run that completed at `completed_at`.
///
/// The trigger is first checked against the confused-deputy rule
/// ([`crate::triggers::TriggerAccess`]); a refused trigger writes nothing. Then:
///
/// - `restart` of a Deployment, StatefulSet or DaemonSet: a rolling restart, a merge
///   patch of the template's `kubectl.kubernetes.io/restartedAt` with the
///   `resourceVersion` of a `GET` just before
///   ([`rolling_restart`](crate::actions::restart::rolling_restart));
/// - `restart` of a KServe InferenceService: the pods labelled with its name that
///   predate the run are evicted (Eviction API, so PodDisruptionBudgets apply), one
///   at a time and each with its uid as precondition, the next only once the last is
///   replaced by a Ready pod ([`pace`](crate::actions::restart::pace));
/// - `restart` of any other kind: the same for the pods its `spec.selector` selects
///   and that it owns (directly or through intermediate owners);
/// - `sync` of an Argo CD Application: the operation
///   [`actions::sync::decide`](crate::actions::sync::decide) builds, within the sync
///   windows of its AppProject;
/// - `refresh`: what [`refresh::decide`] writes.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::TriggerOutcome;
/// use nbv_core::carry::{CarryFacts, Fire, Machine};
/// use nbv_core::io::{Request, Response, Step};
///
/// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml"},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// }))?;
/// let set = nbv_core::triggers::parse_triggers(
///     "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}", "ml").unwrap();
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let mut fire = Fire::start(&job, &set.triggers()[0], ended, &CarryFacts::default(), ended);
///
/// assert_eq!(fire.next().request().map(ToString::to_string).as_deref(), Some("GET Deployment ml/web"));
/// fire.answer(Response::Object(Some(serde_json::json!({"metadata": {"name": "web", "resourceVersion": "5"}}))));
/// assert!(matches!(fire.next(), Step::Io(Request::Patch { .. })));
/// fire.answer(Response::Object(Some(serde_json::json!({}))));
/// assert!(matches!(fire.next(), Step::Done(Ok(TriggerOutcome::Done { .. }))));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Fire {
    trigger: Trigger,
    run: Run,
    facts: CarryFacts,
    now: DateTime<Utc>,
    grant: Option<Grant>,
    state: FireState,
}

#[derive(Clone, Debug)]
enum FireState {
    Authorize(Authorize),
    /// Read the target a sync or refresh acts on (when authorizing did not read it).
    Read(Read),
    Restart(Restart),
    Sync(Box<Sync>),
    Refresh(PatchWrite),
    Done(Result<TriggerOutcome, Failure>),
}

impl Fire {
    /// Fires `trigger` of `job` for the run that completed at `completed_at`, at `now`
    /// (the time of sync windows and of refresh requests).
    pub fn start(
        job: &NotebookValidationJob,
        trigger: &Trigger,
        completed_at: DateTime<Utc>,
        facts: &CarryFacts,
        now: DateTime<Utc>,
    ) -> Fire {
        let (run, state) = match JobRef::of(job) {
            Ok(job) => (
                job.run(completed_at),
                FireState::Authorize(Authorize::start(
                    trigger,
                    &job.namespace,
                    &facts.trigger_access,
                )),
            ),
            Err(failure) => (
                Run::new("", "", completed_at),
                FireState::Done(Err(failure)),
            ),
        };
        let mut fire = Fire {
            trigger: trigger.clone(),
            run,
            facts: facts.clone(),
            now,
            grant: None,
            state,
        };
        fire.settle();
        fire
    }

    /// Why the trigger was allowed to act, once it was.
    pub fn grant(&self) -> Option<Grant> {
        self.grant
    }

    /// What the shell should log about how the trigger went (an unreadable sync
    /// window, pods spared because they have too many owners).
    pub fn warnings(&self) -> &[String] {
        match &self.state {
            FireState::Restart(restart) => &restart.warnings,
            FireState::Sync(sync) => &sync.warnings,
            _ => &[],
        }
    }

    /// The action on the target as read (`object`).
    fn act_on(&self, object: Value) -> FireState {
        let target = self.trigger.target();
        match self.trigger.action() {
            Action::Sync => FireState::Sync(Box::new(Sync::start(
                target,
                object,
                &self.run,
                &self.facts,
                self.now,
            ))),
            _ => FireState::Refresh(PatchWrite::start(
                target,
                refresh::decide(&object, target, &self.run, self.now),
            )),
        }
    }

    /// Leaves every finished step for the next one, until a request is due or the
    /// trigger is done.
    fn settle(&mut self) {
        loop {
            let next = match &mut self.state {
                FireState::Authorize(authorize) => match authorize.next() {
                    Step::Io(_) => return,
                    Step::Done(Err(failure)) => FireState::Done(Err(failure)),
                    Step::Done(Ok(Authorized { grant, application })) => {
                        self.grant = Some(grant);
                        let target = self.trigger.target();
                        match (self.trigger.action(), application) {
                            (Action::Restart, _) => {
                                FireState::Restart(Restart::start(target, &self.run, self.now))
                            }
                            (_, Some(application)) => self.act_on(application),
                            (_, None) => FireState::Read(Read::target(target)),
                        }
                    }
                },
                FireState::Read(read) => match read.next() {
                    Step::Io(_) => return,
                    Step::Done(Ok(object)) => self.act_on(object),
                    Step::Done(Err(failure)) => FireState::Done(Err(failure)),
                },
                // The actions keep their state once done, for their warnings.
                FireState::Restart(_)
                | FireState::Sync(_)
                | FireState::Refresh(_)
                | FireState::Done(_) => return,
            };
            self.state = next;
        }
    }
}

impl Machine for Fire {
    type Output = Result<TriggerOutcome, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match &mut self.state {
            FireState::Authorize(authorize) => forward(authorize.next()),
            FireState::Read(read) => forward(read.next()),
            FireState::Restart(restart) => restart.next(),
            FireState::Sync(sync) => sync.next(),
            FireState::Refresh(write) => write.next(),
            FireState::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        match &mut self.state {
            FireState::Authorize(authorize) => authorize.answer(response),
            FireState::Read(read) => read.answer(response),
            FireState::Restart(restart) => restart.answer(response),
            FireState::Sync(sync) => sync.answer(response),
            FireState::Refresh(write) => write.answer(response),
            FireState::Done(_) => {}
        }
        self.settle();
    }
}
