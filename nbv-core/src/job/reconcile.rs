//! One reconcile of a job, from the job observed to its writes, as a sans-IO machine.

use std::collections::VecDeque;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::aggregate::JobEntry;
use crate::api::NotebookValidationJob;
use crate::api::Phase;
use crate::carry::{Carry, Machine, Notify, Report};
use crate::events::NotificationEvent;
use crate::io::{ObjectRef, Request, Response, Step, Subresource};
use crate::models::ModelRef;
use crate::plan::Effect;
use crate::plan::{Plan, PlanContext, RunKey, parent_diagnostics, plan_with};
use crate::reconcile::{
    AnswerClass, ParentReading, Settlement, StatusWrite, Wake, access_condition, merge_recent,
    read_parent, recent_persisted, status_patch,
};

use super::advance::{Advance, Advanced};
use super::{Done, Facts, Failure, Memory, Note, Settings};

/// One reconcile of a job: the front door of nbv-core for a shell, in the shape of
/// kube-runtime's watcher. [`start`](Reconcile::start) it with the job as observed, the
/// [`Settings`] and the [`Facts`] of the moment; then [`next`](Reconcile::next) says
/// what I/O it needs ([`Step::Io`]) and [`answer`](Reconcile::answer) gives it what
/// came of it, until it is [`Step::Done`].
///
/// In order, it:
///
/// 1. **advances the phase** (unless another controller runs the notebooks): the phase
///    machine stepped with what is observed of the job and its validation Pod, the
///    model gate asked, the Pod created or read; the status written when it changed,
///    with the job's `resourceVersion` as a precondition (a stale view never
///    overwrites a newer one), and the Events of a refused Pod created once it is;
/// 2. **plans** from the *persisted* status, its ledger merged with the one this
///    process recorded a moment ago ([`Memory`]): the GitOps effects of a terminal
///    transition are planned only once the terminal phase is written;
/// 3. **carries out** each effect ([`Carry`]), recording what it came to, and creates
///    the Events that report it at once;
/// 4. **persists** the ledger (`status.effects`) and the conditions in one status
///    patch, and creates the Events that announce what changed. When someone wrote
///    the job meanwhile, the ledger is written alone (a restart must not repeat what
///    it records) and the conditions wait for the next reconcile;
/// 5. says when to **look again** ([`Done::requeue`]).
///
/// See `nbv-core/examples/embed.rs` for a shell that drives it, in a few lines.
pub struct Reconcile {
    observed: NotebookValidationJob,
    job: NotebookValidationJob,
    namespace: String,
    settings: Arc<Settings>,
    facts: Facts,
    now: DateTime<Utc>,
    memory: Memory,
    wake: Wake,
    waits_for: Vec<ModelRef>,
    notes: Vec<Note>,
    stage: Stage,
    pending: Pending,
}

/// What the machine waits for.
enum Pending {
    /// The answer to this request.
    Answer(Request),
    /// Nothing: it is done.
    Finished(Done),
}

/// Where a reconcile is.
enum Stage {
    /// Advancing the phase.
    Phase(Box<Advance>),
    /// Writing the phase's status.
    WritePhase { announce: Vec<NotificationEvent> },
    /// Creating Events, whose failure is only noted, then going on.
    Announce {
        events: VecDeque<Announcement>,
        then: After,
    },
    /// Looking for the parent Application in the cache, namespace by namespace.
    Parent {
        entry: Box<JobEntry>,
        candidates: VecDeque<ObjectRef>,
    },
    /// Carrying out the plan's effects.
    Carry(Box<Carrying>),
    /// Writing the ledger and the conditions.
    Persist(Box<StatusWrite>),
    /// Writing the ledger alone, after a conflict.
    PersistLedger,
    /// Done.
    Done,
}

/// Where to go once Events are created.
enum After {
    Plan,
    Carry(Box<Carrying>),
    /// The status write that the Events announced.
    Persist(Box<StatusWrite>),
}

/// The plan, and how far carrying it out has come.
struct Carrying {
    plan: Plan,
    settlement: Settlement,
    next: usize,
    current: Option<Carry>,
}

/// An Event to create.
enum Announcement {
    /// A notification (named after the run: created once).
    Notify(Notify),
    /// A report of what nbv did.
    Report(Report),
}

impl Announcement {
    fn next(&mut self) -> Step<Result<(), String>> {
        let done = |result: Result<(), crate::carry::Failure>| result.map_err(|f| f.to_string());
        match self {
            Announcement::Notify(notify) => match notify.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => Step::Done(done(result.map(drop))),
            },
            Announcement::Report(report) => match report.next() {
                Step::Io(request) => Step::Io(request),
                Step::Done(result) => Step::Done(done(result)),
            },
        }
    }

    fn answer(&mut self, response: Response) {
        match self {
            Announcement::Notify(notify) => notify.answer(response),
            Announcement::Report(report) => report.answer(response),
        }
    }
}

/// What to do after an answer.
enum Then {
    Ask(Request),
    Done(Result<(), Failure>),
}

impl Reconcile {
    /// Starts the reconcile of `job` as observed, at `now`.
    ///
    /// # Examples
    ///
    /// A job being deleted needs nothing:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::io::Step;
    /// use nbv_core::job::{Facts, Reconcile, Settings};
    ///
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
    /// let mut job = nbv_core::api::NotebookValidationJob::new("train", Default::default());
    /// job.metadata.namespace = Some("ml".into());
    /// job.metadata.deletion_timestamp = Some(serde_json::from_value(serde_json::json!("2026-01-24T21:00:00Z")).unwrap());
    /// let mut reconcile = Reconcile::start(&job, Arc::new(Settings::default()), Facts::default(), now);
    /// let Step::Done(done) = reconcile.next() else { panic!("no request for a deleted job") };
    /// assert!(done.deleted);
    /// ```
    pub fn start(
        job: &NotebookValidationJob,
        settings: Arc<Settings>,
        facts: Facts,
        now: DateTime<Utc>,
    ) -> Self {
        let namespace = job.metadata.namespace.clone().unwrap_or_default();
        let name = job.metadata.name.clone().unwrap_or_default();
        let memory = facts.memory.clone();
        let mut reconcile = Reconcile {
            observed: job.clone(),
            job: job.clone(),
            namespace,
            settings,
            facts,
            now,
            memory,
            wake: Wake::default(),
            waits_for: Vec::new(),
            notes: Vec::new(),
            stage: Stage::Done,
            pending: Pending::Finished(Done::default()),
        };
        let then = if reconcile.namespace.is_empty() || name.is_empty() {
            Then::Done(Err(Failure::Identity))
        } else if job.metadata.deletion_timestamp.is_some() {
            reconcile.pending = Pending::Finished(Done {
                deleted: true,
                ..Done::default()
            });
            return reconcile;
        } else if reconcile.settings.gitops_only {
            reconcile.plan()
        } else {
            let mut advance = Box::new(Advance::start(
                job,
                &reconcile.namespace,
                &name,
                Arc::clone(&reconcile.settings),
                now,
            ));
            let step = advance.next();
            reconcile.after_phase(advance, step)
        };
        reconcile.go(then);
        reconcile
    }

    /// What the reconcile needs next: a request to carry out and
    /// [`answer`](Self::answer), or its end. Asked again without an answer, it asks
    /// the same.
    pub fn next(&self) -> Step<Done> {
        match &self.pending {
            Pending::Answer(request) => Step::Io(request.clone()),
            Pending::Finished(done) => Step::Done(done.clone()),
        }
    }

    /// Takes what came of the request [`next`](Self::next) asked for.
    pub fn answer(&mut self, response: Response) {
        let Pending::Answer(request) =
            std::mem::replace(&mut self.pending, Pending::Finished(Done::default()))
        else {
            return;
        };
        let then = match std::mem::replace(&mut self.stage, Stage::Done) {
            Stage::Phase(mut advance) => {
                let step = advance.answer(&request, response);
                self.after_phase(advance, step)
            }
            Stage::WritePhase { announce } => self.phase_written(&request, response, announce),
            Stage::Announce { mut events, then } => {
                if let Some(event) = events.front_mut() {
                    event.answer(response);
                }
                self.announce(events, then)
            }
            Stage::Parent { entry, candidates } => self.parent_read(response, *entry, candidates),
            Stage::Carry(carrying) => self.carried(*carrying, response),
            Stage::Persist(write) => self.persisted(&request, response, *write),
            Stage::PersistLedger => match response.failure() {
                Some(answer) => Then::Done(Err(Failure::request(&request, answer.clone()))),
                None => Then::Done(Ok(())),
            },
            Stage::Done => Then::Done(Err(Failure::Unexpected {
                request: request.to_string(),
                answer: format!("{response:?}"),
            })),
        };
        self.go(then);
    }

    fn go(&mut self, then: Then) {
        self.pending = match then {
            Then::Ask(request) => Pending::Answer(request),
            Then::Done(result) => {
                self.stage = Stage::Done;
                Pending::Finished(self.done(result))
            }
        };
    }

    fn done(&mut self, result: Result<(), Failure>) -> Done {
        // A failure is tried again after the policy's pause, whatever else was due.
        let wake = match &result {
            Ok(()) => self.wake,
            Err(failure) => Wake::within(self.settings.requeue.after_error(failure.is_conflict())),
        };
        Done {
            // The one place a wake becomes a wait.
            requeue: wake.due(self.now, &self.settings.requeue),
            result,
            memory: self.memory.clone(),
            waits_for: std::mem::take(&mut self.waits_for),
            notes: std::mem::take(&mut self.notes),
            deleted: false,
        }
    }

    // 1. The phase.

    fn after_phase(
        &mut self,
        mut advance: Box<Advance>,
        step: Step<Result<Advanced, Failure>>,
    ) -> Then {
        self.notes.extend(advance.take_notes());
        match step {
            Step::Io(request) => {
                self.stage = Stage::Phase(advance);
                Then::Ask(request)
            }
            Step::Done(Err(failure)) => Then::Done(Err(failure)),
            Step::Done(Ok(advanced)) => {
                self.wake.merge(advanced.wake);
                self.waits_for = advanced.waits_for;
                let announce = advanced.announce;
                let patch = advanced
                    .status
                    .as_ref()
                    .and_then(|status| status_patch(&self.job, status));
                match patch {
                    Some(patch) => {
                        self.stage = Stage::WritePhase { announce };
                        Then::Ask(self.status_write(patch))
                    }
                    None => {
                        let events = self.notifications(&announce);
                        self.announce(events, After::Plan)
                    }
                }
            }
        }
    }

    fn phase_written(
        &mut self,
        request: &Request,
        response: Response,
        announce: Vec<NotificationEvent>,
    ) -> Then {
        match response {
            Response::Object(Some(stored)) => match serde_json::from_value(stored) {
                Ok(stored) => {
                    self.job = stored;
                    // The refusals' Events, now that the status that records them is
                    // written.
                    let events = self.notifications(&announce);
                    self.announce(events, After::Plan)
                }
                Err(error) => Then::Done(Err(Failure::Unexpected {
                    request: request.to_string(),
                    answer: error.to_string(),
                })),
            },
            Response::Failed(answer) => Then::Done(Err(Failure::request(request, answer))),
            other => Then::Done(Err(Failure::Unexpected {
                request: request.to_string(),
                answer: format!("{other:?}"),
            })),
        }
    }

    /// Creating `events` about the job as it is now.
    fn notifications(&self, events: &[NotificationEvent]) -> VecDeque<Announcement> {
        events
            .iter()
            .map(|event| Announcement::Notify(Notify::start(&self.job, event, &self.facts.carry)))
            .collect()
    }

    /// Creating the Event of `report`.
    fn report(&self, report: &crate::events::Report) -> Announcement {
        Announcement::Report(Report::announce(
            &self.job,
            report,
            self.now,
            &self.facts.carry,
        ))
    }

    /// Creates `events` one after the other (an Event that cannot be created is only
    /// noted: the status records what it announces), then goes on.
    fn announce(&mut self, mut events: VecDeque<Announcement>, then: After) -> Then {
        while let Some(event) = events.front_mut() {
            match event.next() {
                Step::Io(request) => {
                    self.stage = Stage::Announce { events, then };
                    return Then::Ask(request);
                }
                Step::Done(result) => {
                    if let Err(error) = result {
                        self.notes.push(Note::EventNotCreated(error));
                    }
                    events.pop_front();
                }
            }
        }
        self.after(then)
    }

    fn after(&mut self, then: After) -> Then {
        match then {
            After::Plan => self.plan(),
            After::Carry(carrying) => self.carry_next(*carrying),
            After::Persist(write) => {
                // With the version this reconcile last wrote or read (the wave patch's,
                // when it made one): the conditions are shared with the phase machine.
                let patch = write.patch(self.job.metadata.resource_version.as_deref());
                self.stage = Stage::Persist(write);
                Then::Ask(self.status_write(patch))
            }
        }
    }

    // 2. The plan.

    /// Plans from the persisted status, once its parent Application is looked up.
    fn plan(&mut self) -> Then {
        let Some(entry) = JobEntry::of(&self.job, &self.settings.tracking) else {
            return Then::Done(Err(Failure::Identity));
        };
        let candidates = match &entry.lookup.parent {
            Some(parent) => self.application_candidates(parent.app.name(), parent.app.namespace()),
            None => VecDeque::new(),
        };
        self.parent_next(entry, candidates)
    }

    /// Where the parent Application may be: its own namespace if it names one, else
    /// the namespaces Applications are watched in, then the job's.
    fn application_candidates(&self, name: &str, namespace: Option<&str>) -> VecDeque<ObjectRef> {
        let application =
            |ns: &str| ObjectRef::namespaced("argoproj.io/v1alpha1", "Application", ns, name);
        match namespace {
            Some(ns) => VecDeque::from([application(ns)]),
            None => self
                .settings
                .application_namespaces
                .iter()
                .map(String::as_str)
                .chain([self.namespace.as_str()])
                .map(application)
                .collect(),
        }
    }

    fn parent_next(&mut self, entry: JobEntry, mut candidates: VecDeque<ObjectRef>) -> Then {
        match candidates.pop_front() {
            Some(candidate) => {
                self.stage = Stage::Parent {
                    entry: Box::new(entry),
                    candidates,
                };
                Then::Ask(Request::Cached(candidate))
            }
            None => self.planned(&entry, None),
        }
    }

    fn parent_read(
        &mut self,
        response: Response,
        entry: JobEntry,
        candidates: VecDeque<ObjectRef>,
    ) -> Then {
        match response {
            Response::Object(Some(application)) => {
                let reading = read_parent(&application, &self.namespace);
                self.planned(&entry, Some(reading))
            }
            // Without a cache of Applications, there is nothing to show.
            Response::NotCached => self.planned(&entry, None),
            _ => self.parent_next(entry, candidates),
        }
    }

    /// Plans with what the job's Application said, if one was found.
    fn planned(&mut self, entry: &JobEntry, parent: Option<ParentReading>) -> Then {
        let run = RunKey::of(&self.job);
        let observed = self.job.status.as_ref().and_then(|s| s.effects.as_ref());
        let recent = match self.memory.ledger.take() {
            // The job shows the write: nothing of the memory is needed any more.
            Some(ledger) if recent_persisted(run.as_str(), observed, &ledger) => {
                self.memory = Memory::default();
                None
            }
            ledger => {
                self.memory.ledger.clone_from(&ledger);
                ledger
            }
        };
        let merged = merge_recent(run.as_str(), observed, recent);
        if let Some(status) = self.job.status.as_mut() {
            status.effects = merged;
        }
        let (application, parent) = match parent {
            Some(reading) => (reading.parent, Some(reading.reported)),
            None => (None, None),
        };
        let ctx = PlanContext {
            // Only an Application that answers for the job labels its notifications.
            application,
            max_retries: self.settings.max_retries,
            retry: self.settings.effect_retry.clone(),
            argocd_namespace: self.settings.argocd_namespace.clone(),
        };
        let mut plan = plan_with(&self.job, &ctx, self.now, &self.facts.parsed);
        plan.diagnostics
            .extend(parent_diagnostics(&entry.lookup.problems));
        let mut settlement = Settlement::new(&plan);
        if let Some(parent) = parent {
            settlement.report(parent);
        }
        // A sync that waits for the Role in Argo CD's namespace says so on the job.
        let conditions = self
            .job
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_deref());
        if let Some(reported) = access_condition(
            &plan,
            &self.facts.carry.argocd_access,
            conditions.unwrap_or_default(),
        ) {
            settlement.report(reported);
        }
        self.carry_next(Carrying {
            plan,
            settlement,
            next: 0,
            current: None,
        })
    }

    // 3. Carrying out.

    fn carry_next(&mut self, mut carrying: Carrying) -> Then {
        let Some(planned) = carrying.plan.effects.get(carrying.next) else {
            return self.persist(carrying);
        };
        let mut carry = Carry::start(&self.job, planned, &self.facts.carry, self.now);
        let step = carry.next();
        carrying.current = Some(carry);
        self.carry_step(carrying, step)
    }

    fn carried(&mut self, mut carrying: Carrying, response: Response) -> Then {
        let Some(carry) = carrying.current.as_mut() else {
            return Then::Done(Err(Failure::Unexpected {
                request: "carrying an effect".into(),
                answer: format!("{response:?}"),
            }));
        };
        carry.answer(response);
        let step = carry.next();
        self.carry_step(carrying, step)
    }

    fn carry_step(
        &mut self,
        mut carrying: Carrying,
        step: Step<crate::reconcile::Carried>,
    ) -> Then {
        let carried = match step {
            Step::Io(request) => {
                self.stage = Stage::Carry(Box::new(carrying));
                return Then::Ask(request);
            }
            Step::Done(carried) => carried,
        };
        let planned = &carrying.plan.effects[carrying.next];
        if let Some(carry) = carrying.current.take() {
            // A write of the job's own metadata: the status write that follows is based
            // on the version it made.
            carry.follow(&mut self.job);
            self.note_carried(&planned.effect, &carry);
        }
        if let Some(error) = carried.failure() {
            self.notes.push(Note::EffectFailed {
                effect: planned.key.to_string(),
                error: error.to_owned(),
            });
        }
        let report =
            carrying
                .settlement
                .record(planned, carried, self.now, &self.settings.effect_retry);
        carrying.next += 1;
        match report {
            Some(report) => {
                let event = self.report(&report);
                self.announce(VecDeque::from([event]), After::Carry(Box::new(carrying)))
            }
            None => self.carry_next(carrying),
        }
    }

    /// Notes how an effect went, for the shell's logs and metrics.
    fn note_carried(&mut self, effect: &Effect, carry: &Carry) {
        if let (Effect::Trigger { trigger, .. }, Some(status)) = (effect, carry.trigger_status()) {
            self.notes.push(Note::Triggered {
                trigger: trigger.to_string(),
                action: trigger.action().as_str(),
                status,
                grant: carry.grant().map(|grant| grant.to_string()),
            });
        }
        self.notes
            .extend(carry.warnings().iter().cloned().map(Note::Warning));
        if carry.notified() {
            // A run counts as ended once, when its notification is created.
            let status = self.job.status.as_ref();
            if let Some(phase) = status.and_then(|s| s.phase).map(Phase::migrated) {
                let duration = status
                    .and_then(|s| Some(s.completion_time? - s.start_time?))
                    .and_then(|d| d.to_std().ok());
                self.notes.push(Note::RunEnded { phase, duration });
            }
        }
    }

    // 4. Persisting.

    fn persist(&mut self, carrying: Carrying) -> Then {
        let Carrying {
            plan, settlement, ..
        } = carrying;
        self.wake.merge(settlement.wake());
        let persisted = self
            .observed
            .status
            .as_ref()
            .and_then(|s| s.effects.as_ref());
        let before = self
            .job
            .status
            .as_ref()
            .and_then(|s| s.conditions.clone())
            .unwrap_or_default();
        let write = settlement
            .status_write(persisted, &before, self.now, self.job.metadata.generation)
            .filter(|write| write.ledger.is_some() || write.conditions.is_some());
        // A view from before this process's last status write (the watch events of the
        // versions that write replaced arrive after it) on which nothing was carried
        // out: what it would write, that write wrote, and the event of that write
        // follows.
        let stale = plan.carries_out_nothing() && self.predates_last_write();
        let Some(write) = write.filter(|_| !stale) else {
            return Then::Done(Ok(()));
        };
        if let Some(ledger) = &write.ledger {
            // Remembered before it is written: a reconcile that fails to write it must
            // still not carry its effects out again.
            self.memory.ledger = Some(ledger.clone());
        }
        // Announced before the write, each Event once (its name derived from the
        // change it announces): after a write carried out whose answer was lost, the
        // next reconcile sees no change left to announce.
        let events = write.announce().iter().map(|r| self.report(r)).collect();
        self.announce(events, After::Persist(Box::new(write)))
    }

    /// Whether the observed version is one that this process's last status write
    /// replaced. A version it did not replace comes after it (the watch cache only
    /// moves forward): the replaced versions will not be seen again.
    fn predates_last_write(&mut self) -> bool {
        let Some(version) = self.observed.metadata.resource_version.as_deref() else {
            return false;
        };
        if self.memory.superseded.iter().any(|v| v == version) {
            return true;
        }
        self.memory.superseded.clear();
        false
    }

    fn persisted(&mut self, request: &Request, response: Response, write: StatusWrite) -> Then {
        match response.failure() {
            None => {
                let replaced = [
                    self.observed.metadata.resource_version.clone(),
                    self.job.metadata.resource_version.clone(),
                ];
                self.memory.superseded = replaced.into_iter().flatten().collect();
                Then::Done(Ok(()))
            }
            // Someone wrote the job meanwhile: the ledger is recorded all the same (a
            // restart must not repeat what it records), and the next reconcile sees the
            // new version and writes the conditions.
            Some(answer) if answer.class() == AnswerClass::Conflict => {
                self.wake.conflicted();
                match write.ledger_patch() {
                    Some(ledger) => {
                        self.stage = Stage::PersistLedger;
                        Then::Ask(self.status_write(ledger))
                    }
                    None => Then::Done(Ok(())),
                }
            }
            Some(answer) => Then::Done(Err(Failure::request(request, answer.clone()))),
        }
    }

    fn status_write(&self, patch: serde_json::Value) -> Request {
        Request::Patch {
            object: job_ref(&self.job),
            subresource: Subresource::Status,
            patch,
        }
    }
}

/// The job as a request names it.
pub(super) fn job_ref(job: &NotebookValidationJob) -> ObjectRef {
    ObjectRef::namespaced(
        crate::api::API_VERSION,
        crate::api::KIND,
        job.metadata.namespace.clone().unwrap_or_default(),
        job.metadata.name.clone().unwrap_or_default(),
    )
}
