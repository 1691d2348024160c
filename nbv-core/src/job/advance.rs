//! Advancing the phase: the phase machine stepped with what is observed of the job and
//! its validation Pod, the model gate asked, the Pod created, refused or read.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Pod;

use crate::api::{NotebookValidationJob, NotebookValidationJobStatus, Phase};
use crate::carry::{Machine, NamespaceOptIn};
use crate::events::NotificationEvent;
use crate::io::{ObjectRef, Request, Response, Step};
use crate::models::{
    InferenceService, ModelFacts, ModelGate, ModelRef, ModelSettings, Platform, ServedModel, gate,
    gate_failure, record_predictions, record_result, record_wait,
};
use crate::phase::{Attempt, FailureCause, PhaseEvent, Transition, record_admitted, step};
use crate::pod::{
    JOB_LABEL, MANAGED_BY, MANAGED_BY_LABEL, PodRefusal, PodSpecError, is_controlled_by,
    job_label_value, observe_pod, pod_name, pod_vanished, reported_predictions, validation_pod,
};
use crate::reconcile::{
    AnswerClass, MAX_PHASE_STEPS, PodWork, RefusalWork, Wake, pod_refused, pod_refused_at,
};

use super::build::{BuildStep, BuildWork, Built};
use super::pod::{delete_other_attempts, parse_pod, pod_ref};
use super::{Failure, Note, Settings};
use crate::build::BuildPlan;

/// What advancing the phase came to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Advanced {
    /// The new status, when it changed.
    pub status: Option<NotebookValidationJobStatus>,
    /// When to look again for the phase's sake.
    pub wake: Wake,
    /// Events to create once the status is written (a refused Pod's `PodRefused`).
    pub announce: Vec<NotificationEvent>,
    /// The models the job waits for: look again when one of them changes.
    pub waits_for: Vec<ModelRef>,
}

/// The phase machine and the validation Pod, as a sans-IO machine: it asks for the
/// reads and writes of the Pod and the model gate's facts, and ends with the status to
/// write. Every decision is the phase machine's ([`step`]), [`PodWork`]'s and the
/// model gate's ([`gate`]).
pub(super) struct Advance {
    job: NotebookValidationJob,
    namespace: String,
    name: String,
    settings: Arc<Settings>,
    now: DateTime<Utc>,
    transition: Transition,
    changed: bool,
    steps: usize,
    /// The model gate's wake, while it waits.
    gate_wake: Wake,
    /// A refused Pod's retry, which takes the place of the phase's backstop.
    refused_wake: Option<Wake>,
    /// A running build's next look, which does too.
    build_wake: Option<Wake>,
    announce: Vec<NotificationEvent>,
    waits_for: Vec<ModelRef>,
    notes: Vec<Note>,
    state: State,
}

/// Where the machine is.
enum State {
    /// Deciding what the transition asks for.
    Decide,
    /// The run's image build.
    Build(Box<BuildWork>),
    /// The model gate: the attempt's Pod (a gate that opened for it is not asked
    /// again), then the facts it needs.
    Gate {
        attempt: Attempt,
        clear_earlier: bool,
        settings: Box<ModelSettings>,
        asked: Ask,
        facts: GateFacts,
    },
    /// Deleting the Pods of earlier attempts.
    ClearEarlier {
        attempt: Attempt,
        models: Option<Vec<ServedModel>>,
    },
    /// Looking for the attempt's Pod in the cache before creating it.
    FindPod {
        attempt: Attempt,
        models: Option<Vec<ServedModel>>,
    },
    /// Creating the attempt's Pod.
    CreatePod { attempt: Attempt },
    /// Reading the attempt's Pod: the cache, then the API server.
    ReadPod { attempt: Attempt, cached: bool },
    /// Deleting a Pod of the attempt's name left by an earlier job.
    DeleteLeftOver { pod: String },
    /// Reading what the Pod reported of the prediction check, which expects this.
    Predictions { expected: serde_json::Value },
    /// Done (the result was given).
    Done,
}

/// What the gate asks next.
enum Ask {
    Exists,
    Namespaces(VecDeque<String>),
    Models(VecDeque<ModelRef>),
}

/// What [`Advance::answer`] should do next, once an answer is taken.
enum Then {
    Ask(Request),
    /// The result, boxed: it holds a whole status.
    Finish(Result<Box<Advanced>, Failure>),
}

impl Advance {
    /// Starts advancing the phase of `job` (its namespace and name known) at `now`.
    pub(super) fn start(
        job: &NotebookValidationJob,
        namespace: &str,
        name: &str,
        settings: Arc<Settings>,
        now: DateTime<Utc>,
    ) -> Self {
        let transition = step(
            job.status.as_ref(),
            &PhaseEvent::observe(job),
            now,
            &settings.retry,
        );
        Advance {
            job: job.clone(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            settings,
            now,
            changed: transition.changed,
            transition,
            steps: 0,
            gate_wake: Wake::default(),
            refused_wake: None,
            build_wake: None,
            announce: Vec::new(),
            waits_for: Vec::new(),
            notes: Vec::new(),
            state: State::Decide,
        }
    }

    /// What the machine noted on the way (for logs and metrics).
    pub(super) fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }

    /// The first request, or the result.
    pub(super) fn next(&mut self) -> Step<Result<Advanced, Failure>> {
        match self.decide() {
            Then::Ask(request) => Step::Io(request),
            Then::Finish(result) => self.finish(result.map(|advanced| *advanced)),
        }
    }

    /// Takes the answer to `request` (the last one asked) and says what is next.
    pub(super) fn answer(
        &mut self,
        request: &Request,
        response: Response,
    ) -> Step<Result<Advanced, Failure>> {
        let then = match std::mem::replace(&mut self.state, State::Done) {
            State::Gate {
                attempt,
                clear_earlier,
                settings,
                asked,
                facts,
            } => self.gate_answer(
                request,
                response,
                attempt,
                clear_earlier,
                settings,
                asked,
                facts,
            ),
            State::ClearEarlier { attempt, models } => {
                if let Some(answer) = response.failure() {
                    self.notes.push(Note::EarlierPodsKept(Failure::request(
                        request,
                        answer.clone(),
                    )));
                }
                self.find_pod(attempt, models)
            }
            State::FindPod { attempt, models } => match response {
                Response::Object(Some(_)) => self.started(attempt),
                _ => self.create_pod(attempt, models.as_deref()),
            },
            State::CreatePod { attempt } => self.created(request, response, attempt),
            State::ReadPod { attempt, cached } => self.pod_read(request, response, attempt, cached),
            State::DeleteLeftOver { pod } => match response.failure() {
                Some(answer)
                    if !matches!(
                        answer.class(),
                        AnswerClass::NotFound | AnswerClass::Conflict
                    ) =>
                {
                    Then::Finish(Err(Failure::request(request, answer.clone())))
                }
                _ => Then::Finish(Err(Failure::LeftOver { pod })),
            },
            State::Predictions { expected } => {
                if let Response::Object(Some(pod)) = response {
                    self.record_predictions(parse_pod(pod).as_ref(), &expected);
                }
                Then::Finish(Ok(Box::new(self.advanced())))
            }
            State::Build(mut work) => match work.answer(request, response) {
                BuildStep::Ask(request) => {
                    self.state = State::Build(work);
                    Then::Ask(request)
                }
                BuildStep::Done(Ok(built)) => self.built(built),
                BuildStep::Done(Err(failure)) => Then::Finish(Err(failure)),
            },
            State::Decide | State::Done => Then::Finish(Err(Failure::Unexpected {
                request: request.to_string(),
                answer: format!("{response:?}"),
            })),
        };
        match then {
            Then::Ask(request) => Step::Io(request),
            Then::Finish(result) => self.finish(result.map(|advanced| *advanced)),
        }
    }

    /// Steps the machine until it needs a request.
    fn decide(&mut self) -> Then {
        loop {
            if self.steps >= MAX_PHASE_STEPS {
                return self.predictions();
            }
            self.steps += 1;
            let event = match PodWork::of(&self.job, &self.transition) {
                PodWork::Step(event) => *event,
                PodWork::Start {
                    attempt,
                    clear_earlier,
                } => return self.admit(attempt, clear_earlier),
                PodWork::Watch(attempt) => return self.read_pod(attempt),
                PodWork::Build { generation } => return self.build(generation),
                PodWork::Rest => return self.predictions(),
            };
            if !self.apply(&event) {
                return self.predictions();
            }
        }
    }

    /// Steps the phase machine with `event`; whether the status changed.
    fn apply(&mut self, event: &PhaseEvent) -> bool {
        let next = step(
            Some(&self.transition.status),
            event,
            self.now,
            &self.settings.retry,
        );
        if !next.changed {
            return false;
        }
        self.changed = true;
        self.transition = next;
        true
    }

    /// Steps with `event`, then decides again.
    fn then_step(&mut self, event: &PhaseEvent) -> Then {
        if self.apply(event) {
            self.decide()
        } else {
            self.predictions()
        }
    }

    /// The run's image build: the plan of the job's `buildConfig` (a field that cannot
    /// be carried out fails the run, naming it), then its [`BuildWork`].
    fn build(&mut self, generation: i64) -> Then {
        // The build runs the job's base image with nbv's rights: a job the cluster
        // admin's policy refuses is refused before it builds, as its Pod would be.
        if let Err(refusal) = self.settings.pod_defaults.policy.check(&self.job) {
            let failure = PodSpecError::from(refusal).failure();
            return self.then_step(&PhaseEvent::BuildFailed {
                generation,
                reason: failure.reason,
                message: failure.message,
            });
        }
        // The run's number within its generation is the status's being written now,
        // not the job's as read (a rerun starts in this very reconcile).
        let rerun = self.transition.status.rerun.as_ref().map_or(0, |r| r.count);
        let plan = match BuildPlan::resolve_rerun(&self.job, &self.settings.build, rerun) {
            Ok(Some(plan)) => plan,
            Ok(None) => {
                let failure = FailureCause::BuildConfigInvalid.failure(
                    "podConfig.buildConfig: the run asked for a build the spec no longer has",
                );
                return self.then_step(&PhaseEvent::BuildFailed {
                    generation,
                    reason: failure.reason,
                    message: failure.message,
                });
            }
            Err(error) => {
                let failure = error.failure();
                return self.then_step(&PhaseEvent::BuildFailed {
                    generation,
                    reason: failure.reason,
                    message: failure.message,
                });
            }
        };
        let strategy = plan.strategy;
        let (work, request) =
            BuildWork::start(plan, Arc::clone(&self.settings), generation, self.now);
        let record = self
            .transition
            .status
            .build_status
            .get_or_insert_with(Default::default);
        if record.strategy.as_deref() != Some(strategy.as_str()) {
            record.strategy = Some(strategy.as_str().to_owned());
            self.changed = true;
        }
        self.state = State::Build(Box::new(work));
        Then::Ask(request)
    }

    /// What the build came to: its events stepped in order; while it runs, look again
    /// soon; once it ended, go on (to the Pod, or the run's end).
    fn built(&mut self, built: Built) -> Then {
        self.notes.extend(built.notes);
        for event in &built.events {
            self.apply(event);
        }
        if let Some(record) = self.transition.status.build_status.as_mut() {
            if let Some(summary) = built.summary
                && record.message.as_deref() != Some(summary.as_str())
            {
                record.message = Some(summary);
                self.changed = true;
            }
            if let (Some(start), Some(end), None) =
                (record.start_time, record.completion_time, &record.duration)
            {
                record.duration = Some(crate::duration::format(
                    (end - start).to_std().unwrap_or_default(),
                ));
                self.changed = true;
            }
        }
        if built.underway {
            self.build_wake = Some(built.wake);
            return self.predictions();
        }
        self.decide()
    }

    /// The model gate of the attempt ([`gate`]). A job without model validation, or
    /// whose `modelValidation` the Pod builder refuses (naming the field), starts as it
    /// is; so does an attempt whose Pod exists already (the gate opened for it: a model
    /// that changes while it runs is the notebook's to find).
    fn admit(&mut self, attempt: Attempt, clear_earlier: bool) -> Then {
        let settings = self
            .job
            .spec
            .model_validation
            .as_ref()
            .and_then(|spec| ModelSettings::resolve(spec, &self.namespace).ok().flatten());
        let Some(settings) = settings else {
            return self.open(attempt, clear_earlier, None);
        };
        self.state = State::Gate {
            attempt,
            clear_earlier,
            settings: Box::new(settings),
            asked: Ask::Exists,
            facts: GateFacts::default(),
        };
        Then::Ask(Request::Cached(self.pod_of(attempt)))
    }

    #[allow(clippy::too_many_arguments)]
    fn gate_answer(
        &mut self,
        request: &Request,
        response: Response,
        attempt: Attempt,
        clear_earlier: bool,
        settings: Box<ModelSettings>,
        asked: Ask,
        mut facts: GateFacts,
    ) -> Then {
        let asked = match asked {
            Ask::Exists => {
                if matches!(response, Response::Object(Some(_))) {
                    return self.open(attempt, clear_earlier, None);
                }
                // The Pod is still to be created: a job the cluster admin's policy
                // refuses fails at once, not after waiting for its models.
                if let Err(refusal) = self.settings.pod_defaults.policy.check(&self.job) {
                    let failure = PodSpecError::from(refusal).failure();
                    return self.then_step(&pod_refused(&self.job, attempt, failure));
                }
                let access = &self.settings.trigger_access;
                Ask::Namespaces(
                    settings
                        .targets
                        .iter()
                        .map(|model| model.namespace.clone())
                        .filter(|ns| *ns != self.namespace && !access.allows_namespace(ns))
                        .collect::<std::collections::BTreeSet<_>>()
                        .into_iter()
                        .collect(),
                )
            }
            Ask::Namespaces(mut left) => {
                let asked = left.pop_front().unwrap_or_default();
                // The one reading of a namespace's opt-in, as triggers read it.
                let failed = response.failure().cloned();
                let mut opt_in = NamespaceOptIn::start(&asked);
                opt_in.answer(response);
                let accepts = match (opt_in.next(), failed) {
                    (Step::Done(Ok(accepts)), _) => accepts,
                    (_, Some(answer)) => {
                        return Then::Finish(Err(Failure::request(request, answer)));
                    }
                    (_, None) => None,
                };
                facts.accepts.insert(asked, accepts);
                Ask::Namespaces(left)
            }
            Ask::Models(mut left) => {
                let model = left.pop_front();
                facts.learn(model, response);
                if facts
                    .platform
                    .as_ref()
                    .is_some_and(|p| !p.served || p.unreadable.is_some())
                    || !facts.synced
                {
                    left.clear();
                }
                Ask::Models(left)
            }
        };
        // The next question, or the gate's decision.
        let question = match &asked {
            // The opt-in's own read, which its machine then reads the answer of.
            Ask::Namespaces(left) if !left.is_empty() => {
                NamespaceOptIn::start(&left[0]).next().request().cloned()
            }
            Ask::Namespaces(_) => settings
                .targets
                .first()
                .map(|model| Request::Cached(inference_service(model))),
            Ask::Models(left) => left
                .front()
                .map(|model| Request::Cached(inference_service(model))),
            Ask::Exists => None,
        };
        let asked = match asked {
            Ask::Namespaces(left) if left.is_empty() => {
                Ask::Models(settings.targets.iter().cloned().collect())
            }
            asked => asked,
        };
        if let Some(question) = question {
            self.state = State::Gate {
                attempt,
                clear_earlier,
                settings,
                asked,
                facts,
            };
            return Then::Ask(question);
        }
        let run_started = self
            .job
            .status
            .as_ref()
            .and_then(|s| s.start_time)
            .unwrap_or(self.now);
        let access = &self.settings.trigger_access;
        let decision = gate(
            &settings,
            &self.namespace,
            access,
            &facts,
            run_started,
            self.now,
        );
        self.gate_wake.merge(decision.wake());
        match decision {
            ModelGate::Open { models, result } => {
                self.changed |= record_result(&mut self.transition.status, &result);
                self.open(attempt, clear_earlier, Some(models))
            }
            ModelGate::Wait { message, .. } => {
                self.changed |= record_wait(&mut self.transition.status, &message, self.now);
                self.waits_for = settings.targets.clone();
                self.predictions()
            }
            ModelGate::Fail { message, result } => {
                self.changed |= record_result(&mut self.transition.status, &result);
                let event = pod_refused(&self.job, attempt, gate_failure(&message));
                self.then_step(&event)
            }
        }
    }

    /// The gate is open: clear the earlier attempts' Pods if asked, then start.
    fn open(
        &mut self,
        attempt: Attempt,
        clear_earlier: bool,
        models: Option<Vec<ServedModel>>,
    ) -> Then {
        if clear_earlier {
            self.state = State::ClearEarlier { attempt, models };
            return Then::Ask(delete_other_attempts(&self.namespace, &self.name, attempt));
        }
        self.find_pod(attempt, models)
    }

    fn find_pod(&mut self, attempt: Attempt, models: Option<Vec<ServedModel>>) -> Then {
        self.state = State::FindPod { attempt, models };
        Then::Ask(Request::Cached(self.pod_of(attempt)))
    }

    /// Creates the Pod of `attempt`, built by [`validation_pod`]; a job that cannot
    /// become a Pod fails the attempt, naming the field.
    fn create_pod(&mut self, attempt: Attempt, models: Option<&[ServedModel]>) -> Then {
        // The run's built image, by digest where the build system reported one.
        let built = self
            .transition
            .status
            .build_status
            .as_ref()
            .filter(|b| b.phase == Some(crate::api::BuildPhase::Complete))
            .and_then(|b| b.image_reference.clone());
        match validation_pod(
            &self.job,
            attempt,
            built.as_deref(),
            models,
            &self.settings.pod_defaults,
        ) {
            Ok(pod) => match serde_json::to_value(&pod) {
                Ok(body) => {
                    self.state = State::CreatePod { attempt };
                    Then::Ask(Request::Create {
                        object: self.pod_of(attempt),
                        body,
                    })
                }
                Err(error) => Then::Finish(Err(Failure::Unexpected {
                    request: format!("POST {}", self.pod_of(attempt)),
                    answer: error.to_string(),
                })),
            },
            Err(spec) => {
                let event = pod_refused(&self.job, attempt, spec.failure());
                self.then_step(&event)
            }
        }
    }

    /// The API server's answer to the Pod's creation: created, created before (the
    /// name is the attempt's, so it is this Pod), or refused ([`pod_refused_at`]).
    fn created(&mut self, request: &Request, response: Response, attempt: Attempt) -> Then {
        let refusal = response.failure().and_then(PodRefusal::of);
        self.notes.push(Note::PodCreated {
            namespace: self.namespace.clone(),
            ok: refusal.is_none(),
        });
        let Some(refusal) = refusal else {
            return self.started(attempt);
        };
        let _ = request;
        let before = self.transition.status.clone();
        let refused = pod_refused_at(
            &self.job,
            attempt,
            &mut self.transition.status,
            &refusal,
            self.settings.pod_admission_timeout,
            self.now,
        );
        self.changed |= self.transition.status != before;
        self.announce.extend(refused.announce);
        let wake = refused.work.wake();
        match refused.work {
            RefusalWork::Fail(event) => self.then_step(&event),
            RefusalWork::Retry(after) => {
                self.notes.push(Note::PodRefusedRetrying {
                    pod: pod_name(&self.name, attempt),
                    reason: refusal.kind.cause().as_str().to_owned(),
                    retry_in: after,
                });
                self.refused_wake = Some(wake);
                self.predictions()
            }
        }
    }

    /// The Pod of `attempt` exists: recorded as admitted, then read.
    fn started(&mut self, attempt: Attempt) -> Then {
        let name = pod_name(&self.name, attempt);
        self.changed |= record_admitted(&mut self.transition.status, &name, self.now);
        self.read_pod(attempt)
    }

    fn read_pod(&mut self, attempt: Attempt) -> Then {
        self.state = State::ReadPod {
            attempt,
            cached: true,
        };
        Then::Ask(Request::Cached(self.pod_of(attempt)))
    }

    /// What the Pod of `attempt` says. The cache lags the API server: a Pod it does
    /// not hold may have just been created, so only the API server can say it is gone.
    fn pod_read(
        &mut self,
        request: &Request,
        response: Response,
        attempt: Attempt,
        cached: bool,
    ) -> Then {
        let pod = match response {
            Response::Object(Some(pod)) => pod,
            Response::Object(None) | Response::NotCached if cached => {
                self.state = State::ReadPod {
                    attempt,
                    cached: false,
                };
                return Then::Ask(Request::Get(self.pod_of(attempt)));
            }
            Response::Object(None) => {
                let event = pod_vanished(&self.name, attempt);
                return self.then_step(&event);
            }
            Response::Failed(answer) => {
                return Then::Finish(Err(Failure::request(request, answer)));
            }
            other => {
                return Then::Finish(Err(Failure::Unexpected {
                    request: request.to_string(),
                    answer: format!("{other:?}"),
                }));
            }
        };
        let Some(pod) = parse_pod(pod) else {
            return Then::Finish(Err(Failure::Unexpected {
                request: request.to_string(),
                answer: "an object that is not a Pod".to_owned(),
            }));
        };
        if !is_controlled_by(&pod, &self.job) {
            // Only what nbv made for an earlier job of this name is nbv's to delete; a
            // Pod anyone else put under the name is left alone, and the attempt says so.
            if left_by_an_earlier_job(&pod, &self.name) {
                return self.delete_left_over(&pod);
            }
            let failure = FailureCause::PodCreateFailed.failure(format!(
                "a Pod named {}/{} that nbv did not create for this job is in the way of \
                 the attempt's Pod; delete or rename it",
                self.namespace,
                pod.metadata.name.as_deref().unwrap_or_default(),
            ));
            return self.then_step(&pod_refused(&self.job, attempt, failure));
        }
        match observe_pod(&pod, self.now, self.settings.pod_defaults.start_grace) {
            Ok(Some(event)) => self.then_step(&event),
            Ok(None) => self.predictions(),
            Err(invalid) => Then::Finish(Err(Failure::InvalidValidationPod(invalid))),
        }
    }

    /// Deletes the Pod that was read (never one created meanwhile under that name).
    fn delete_left_over(&mut self, pod: &Pod) -> Then {
        let name = pod.metadata.name.clone().unwrap_or_default();
        self.state = State::DeleteLeftOver {
            pod: format!("{}/{name}", self.namespace),
        };
        Then::Ask(Request::Delete {
            object: pod_ref(&self.namespace, &name),
            uid: pod.metadata.uid.clone(),
        })
    }

    /// A run that ended now: what its Pod reported of the prediction check is read
    /// into the model check's result.
    fn predictions(&mut self) -> Then {
        let ended = self.changed && self.transition.status.phase.is_some_and(Phase::is_terminal);
        let pod = self.transition.status.validation_pod_name.clone();
        let recorded = self.transition.status.model_validation_result.is_some();
        match (ended && recorded, pod, self.expected_prediction()) {
            (true, Some(pod), Some(expected)) => {
                self.state = State::Predictions { expected };
                Then::Ask(Request::Cached(pod_ref(&self.namespace, &pod)))
            }
            _ => Then::Finish(Ok(Box::new(self.advanced()))),
        }
    }

    /// The output the job's prediction check expects, when it asks for one.
    fn expected_prediction(&self) -> Option<serde_json::Value> {
        let spec = self.job.spec.model_validation.as_ref()?;
        let settings = ModelSettings::resolve(spec, &self.namespace).ok()??;
        Some(settings.prediction?.expected_output)
    }

    fn record_predictions(&mut self, pod: Option<&Pod>, expected: &serde_json::Value) {
        let Some(reports) = pod.and_then(reported_predictions) else {
            return;
        };
        let Some(result) = self.transition.status.model_validation_result.as_mut() else {
            return;
        };
        let before = result.clone();
        record_predictions(result, expected, &reports);
        self.changed |= *result != before;
    }

    fn advanced(&mut self) -> Advanced {
        // The refusal's backoff (which never reaches past its deadline) in place of
        // the phase's backstop; and, woken when a model changes, at the latest when
        // the gate's wait ends.
        let wake = self
            .refused_wake
            .or(self.build_wake)
            .unwrap_or_else(|| PodWork::wake(&self.transition))
            .and(self.gate_wake);
        Advanced {
            status: self.changed.then(|| self.transition.status.clone()),
            wake,
            announce: std::mem::take(&mut self.announce),
            waits_for: std::mem::take(&mut self.waits_for),
        }
    }

    fn finish(&mut self, result: Result<Advanced, Failure>) -> Step<Result<Advanced, Failure>> {
        self.state = State::Done;
        Step::Done(result)
    }

    fn pod_of(&self, attempt: Attempt) -> ObjectRef {
        pod_ref(&self.namespace, &pod_name(&self.name, attempt))
    }
}

/// Whether `pod` is a validation Pod nbv made for an earlier job named `job` (deleted
/// with `--cascade=orphan`): nbv's labels for that job, and a job of that name as its
/// controller.
fn left_by_an_earlier_job(pod: &Pod, job: &str) -> bool {
    let labels = pod.metadata.labels.clone().unwrap_or_default();
    let label = |key: &str| labels.get(key).map(String::as_str);
    let owner = crate::pod::controller_of(pod);
    label(MANAGED_BY_LABEL) == Some(MANAGED_BY)
        && label(JOB_LABEL) == Some(job_label_value(job).as_str())
        && owner.is_some_and(|o| o.kind == crate::api::KIND && o.name == job)
}

fn inference_service(model: &ModelRef) -> ObjectRef {
    ObjectRef::namespaced(
        "serving.kserve.io/v1beta1",
        "InferenceService",
        model.namespace.clone(),
        model.name.clone(),
    )
}

/// The model gate's facts, from the shell's answers: the watch cache of
/// InferenceServices answers a read as its listing did (not served: 404; not
/// readable: 403; not listed yet: not cached).
#[derive(Default)]
struct GateFacts {
    platform: Option<Platform>,
    synced: bool,
    services: HashMap<ModelRef, InferenceService>,
    accepts: HashMap<String, Option<String>>,
}

impl GateFacts {
    fn learn(&mut self, model: Option<ModelRef>, response: Response) {
        match response {
            Response::Object(found) => {
                self.platform = Some(Platform {
                    served: true,
                    unreadable: None,
                });
                self.synced = true;
                if let (Some(model), Some(object)) = (model, found) {
                    self.services
                        .insert(model, InferenceService::from_object(&object));
                }
            }
            Response::Failed(answer) => match answer.class() {
                AnswerClass::NotFound => {
                    self.platform = Some(Platform {
                        served: false,
                        unreadable: None,
                    });
                }
                AnswerClass::Forbidden => {
                    self.platform = Some(Platform {
                        served: true,
                        unreadable: Some(answer.message().to_owned()),
                    });
                }
                _ => {}
            },
            _ => {}
        }
    }
}

impl ModelFacts for GateFacts {
    fn platform(&self) -> Option<Platform> {
        self.platform.clone()
    }

    fn inference_service(&self, model: &ModelRef) -> Option<InferenceService> {
        self.services.get(model).cloned()
    }

    fn synced(&self) -> bool {
        self.synced
    }

    fn namespace_accepts(&self, namespace: &str) -> Option<String> {
        self.accepts.get(namespace).cloned().flatten()
    }
}
