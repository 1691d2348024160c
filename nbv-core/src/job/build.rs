//! The run's image build as a sans-IO machine: find the build of the plan's key (a
//! job with equal inputs may have started it), create its objects when there is none,
//! read what the build system reports, cancel a build past its timeout, and keep only
//! a few finished builds. Every decision is [`crate::build`]'s; this asks and answers.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::build::{
    BUILD_KEY_LABEL, BuildObserved, BuildPlan, Route, build_objects, cancel, expired,
    history_selector, image_stream, observe, tagged_digest,
};
use crate::io::{ObjectRef, Request, Response};
use crate::phase::{FailureCause, PhaseEvent};
use crate::reconcile::{AnswerClass, Wake};

use super::{Failure, Note, Settings};

/// How often a running build is looked at: nbv does not watch build objects.
const BUILD_BACKSTOP: Duration = Duration::from_secs(30);

/// How long past its timeout a build may still run before nbv cancels it: the build
/// system enforces the timeout itself, and reports it first.
const CANCEL_GRACE: Duration = Duration::from_secs(60);

/// What the build came to in this reconcile.
#[derive(Debug, Default)]
pub(super) struct Built {
    /// Events for the phase machine, in order.
    pub events: Vec<PhaseEvent>,
    /// Whether the build still runs (the phase machine is not stepped again now).
    pub underway: bool,
    /// When to look again.
    pub wake: Wake,
    /// What the build's prepare step said of the image's contents.
    pub summary: Option<String>,
    /// What happened on the way.
    pub notes: Vec<Note>,
}

/// What the machine does after an answer.
pub(super) enum BuildStep {
    /// Carry this out and answer.
    Ask(Request),
    /// Done: what it came to, or a request that failed (the reconcile is tried again).
    Done(Result<Built, Failure>),
}

/// Where the machine is.
enum Stage {
    /// Reading the watched object of the route.
    Look,
    /// No build of the key exists: reading the ImageStream that would record its
    /// image, had an earlier build pushed it.
    Registry,
    /// Creating the build's objects, the watched one last.
    Create(VecDeque<(ObjectRef, Value)>),
    /// Cancelling a build past its timeout.
    Cancel,
    /// Listing the route's builds, to delete the finished ones beyond the history.
    History,
    /// Deleting those.
    Clean(VecDeque<ObjectRef>),
}

/// One reconcile's work on the run's build.
pub(super) struct BuildWork {
    plan: BuildPlan,
    /// The route whose objects are looked at or created now.
    route: Route,
    /// The route a build not found is created by: the first, until the cluster
    /// answers that it does not serve its API.
    create_by: Route,
    settings: Arc<Settings>,
    generation: i64,
    now: DateTime<Utc>,
    stage: Stage,
    built: Built,
}

impl BuildWork {
    /// Starts the work on `plan`'s build for the run of `generation`.
    pub(super) fn start(
        plan: BuildPlan,
        settings: Arc<Settings>,
        generation: i64,
        now: DateTime<Utc>,
    ) -> (Self, Request) {
        let route = Route::first(plan.strategy);
        let work = BuildWork {
            plan,
            route,
            create_by: route,
            settings,
            generation,
            now,
            stage: Stage::Look,
            built: Built::default(),
        };
        let look = Request::Get(route.watched(&work.plan));
        (work, look)
    }

    /// Takes the answer to `request`, the last one asked.
    pub(super) fn answer(&mut self, request: &Request, response: Response) -> BuildStep {
        match std::mem::replace(&mut self.stage, Stage::Look) {
            Stage::Look => match response {
                Response::Object(Some(object)) => self.found(&object),
                // Not there: look where the next route would have built it (s2i where
                // OpenShift's builds are not served), then create by the first route
                // the cluster serves.
                Response::Object(None) | Response::NotCached => match self.route.fallback() {
                    Some(next) => {
                        self.route = next;
                        BuildStep::Ask(Request::Get(next.watched(&self.plan)))
                    }
                    None => {
                        self.route = self.create_by;
                        self.in_registry()
                    }
                },
                Response::Failed(answer) if answer.class() == AnswerClass::Forbidden => {
                    self.forbidden(request, &answer)
                }
                Response::Failed(answer) => self.failed(request, answer),
                other => unexpected(request, &other),
            },
            Stage::Registry => match response {
                Response::Object(Some(stream)) => {
                    match tagged_digest(&stream, self.plan.key.as_str()) {
                        Some(digest) => self.reused(&digest),
                        None => self.create(),
                    }
                }
                // No ImageStream, no API (not OpenShift), no right to read it: build.
                other => {
                    if let Some(answer) = other.failure()
                        && answer.class() != AnswerClass::NotFound
                    {
                        self.built.notes.push(Note::Warning(format!(
                            "{request} failed: {answer}; the image is built without looking \
                             for it in the registry"
                        )));
                    }
                    self.create()
                }
            },
            Stage::Create(mut left) => match response.failure().map(|a| (a.class(), a)) {
                None | Some((AnswerClass::Conflict, _)) => match left.pop_front() {
                    Some((object, body)) => {
                        self.stage = Stage::Create(left);
                        BuildStep::Ask(Request::Create { object, body })
                    }
                    None => {
                        self.started();
                        self.running(None)
                    }
                },
                // A collection that is not there: the cluster does not serve the API.
                Some((AnswerClass::NotFound, _)) => match self.route.fallback() {
                    Some(route) => {
                        self.route = route;
                        self.create_by = route;
                        self.create()
                    }
                    None => self.fail(
                        FailureCause::BuildApiNotServed,
                        format!(
                            "strategy {} needs the API {} ({}), which this cluster does not serve; \
                             install it or choose another podConfig.buildConfig.strategy",
                            self.plan.strategy,
                            self.route.api(),
                            request.object().kind,
                        ),
                    ),
                },
                // nbv's role lacks the build's resource: the job says so rather than
                // wait without a word (docs/rbac.md lists the rules).
                Some((AnswerClass::Forbidden, answer)) => self.forbidden(request, answer),
                // The API server refused the object as written: no retry changes it.
                Some((AnswerClass::Rejected, answer)) => self.fail(
                    FailureCause::BuildConfigInvalid,
                    format!("{request} was refused: {}", answer.message()),
                ),
                Some((_, answer)) => self.failed(request, answer.clone()),
            },
            Stage::Cancel => {
                if let Some(answer) = response.failure() {
                    self.built.notes.push(Note::Warning(format!(
                        "the build {} past its timeout could not be cancelled: {answer}",
                        self.plan.name
                    )));
                }
                self.history()
            }
            Stage::History => match response {
                Response::Objects(objects) => {
                    // The run's own build is never among them (the watched object's
                    // name: an OpenShift Build's is its BuildConfig's and a number).
                    let current = self.route.watched(&self.plan).name;
                    let old = expired(self.route, &objects, self.settings.build.history, &current);
                    self.clean(old.into())
                }
                // The history is kept next time.
                _ => self.done(),
            },
            Stage::Clean(left) => {
                if let Some(answer) = response.failure()
                    && answer.class() != AnswerClass::NotFound
                {
                    self.built.notes.push(Note::Warning(format!(
                        "{request} failed: {answer}; it is tried again after the next build"
                    )));
                }
                self.clean(left)
            }
        }
    }

    /// The watched object exists: it is this build (or the build of a job with equal
    /// inputs), unless its key says otherwise.
    fn found(&mut self, object: &Value) -> BuildStep {
        // The whole key is the annotation's; the label holds its first digits only.
        let key = object["metadata"]["annotations"][BUILD_KEY_LABEL].as_str();
        if key != Some(self.plan.key.as_str()) {
            return self.fail(
                FailureCause::BuildConfigInvalid,
                format!(
                    "{} exists and is not the build of these inputs (its {BUILD_KEY_LABEL} \
                     annotation differs); delete it to build again",
                    self.route.watched(&self.plan),
                ),
            );
        }
        self.started();
        let observed = observe(self.route, object);
        // The build system's own reason for running out of time (each route's list).
        let timed_out = observed.timed_out();
        match observed {
            BuildObserved::Pending | BuildObserved::Running => {
                let created = object["metadata"]["creationTimestamp"]
                    .as_str()
                    .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                    .map(|t| t.with_timezone(&Utc));
                self.running(created)
            }
            BuildObserved::Succeeded { digest, summary } => {
                let image = match digest {
                    Some(digest) => format!("{}@{digest}", self.plan.repository),
                    None => self.plan.image.clone(),
                };
                self.built.summary = summary;
                self.built.events.push(PhaseEvent::BuildSucceeded {
                    generation: self.generation,
                    image,
                });
                self.history()
            }
            BuildObserved::Failed { reason, message } => {
                let cause = if timed_out {
                    FailureCause::BuildTimedOut
                } else {
                    FailureCause::BuildFailed
                };
                let failure = cause.failure(format!(
                    "{} ({reason}): {message}",
                    self.route.watched(&self.plan)
                ));
                self.built.events.push(PhaseEvent::BuildFailed {
                    generation: self.generation,
                    reason: failure.reason,
                    message: failure.message,
                });
                self.history()
            }
        }
    }

    /// No build of the key: look for its image in the internal registry's ImageStream
    /// of the job's namespace, when the image goes there; else create the build.
    fn in_registry(&mut self) -> BuildStep {
        match image_stream(&self.plan.repository, &self.plan.namespace) {
            Some(stream) => {
                self.stage = Stage::Registry;
                BuildStep::Ask(Request::Get(stream))
            }
            None => self.create(),
        }
    }

    /// The image of the key is in the registry already: the run uses it, unbuilt.
    fn reused(&mut self, digest: &str) -> BuildStep {
        self.built.summary = Some(format!(
            "reused {}, already in the registry",
            self.plan.image
        ));
        self.built.events.push(PhaseEvent::BuildSucceeded {
            generation: self.generation,
            image: format!("{}@{digest}", self.plan.repository),
        });
        self.done()
    }

    /// No build of the key: create its objects.
    fn create(&mut self) -> BuildStep {
        let objects = build_objects(
            &self.plan,
            self.route,
            &self.settings.pod_defaults,
            &self.settings.build,
        );
        match objects {
            Err(error) => {
                let failure = error.failure();
                self.built.events.push(PhaseEvent::BuildFailed {
                    generation: self.generation,
                    reason: failure.reason,
                    message: failure.message,
                });
                self.done()
            }
            Ok(objects) => {
                let mut left: VecDeque<_> = objects.into();
                match left.pop_front() {
                    Some((object, body)) => {
                        self.stage = Stage::Create(left);
                        BuildStep::Ask(Request::Create { object, body })
                    }
                    None => self.done(),
                }
            }
        }
    }

    /// The run's build started (or was found started).
    fn started(&mut self) {
        self.built.events.push(PhaseEvent::BuildStarted {
            generation: self.generation,
            build_name: self.plan.name.clone(),
        });
    }

    /// The build runs (created at `created`, when known): cancelled past its timeout,
    /// else looked at again soon.
    fn running(&mut self, created: Option<DateTime<Utc>>) -> BuildStep {
        let limit = self.plan.timeout + CANCEL_GRACE;
        let age = created
            .and_then(|at| (self.now - at).to_std().ok())
            .unwrap_or_default();
        if age > limit {
            let failure = FailureCause::BuildTimedOut.failure(format!(
                "{} ran longer than podConfig.buildConfig.timeout ({}s) and was cancelled",
                self.route.watched(&self.plan),
                self.plan.timeout.as_secs(),
            ));
            self.built.events.push(PhaseEvent::BuildFailed {
                generation: self.generation,
                reason: failure.reason,
                message: failure.message,
            });
            self.stage = Stage::Cancel;
            return BuildStep::Ask(cancel(self.route, &self.plan));
        }
        self.built.underway = true;
        self.built.wake = Wake::within(BUILD_BACKSTOP.min(limit - age + Duration::from_secs(1)));
        self.done()
    }

    /// The run fails with `cause`, permanently.
    fn fail(&mut self, cause: FailureCause, message: String) -> BuildStep {
        let failure = cause.failure(message);
        self.built.events.push(PhaseEvent::BuildFailed {
            generation: self.generation,
            reason: failure.reason,
            message: failure.message,
        });
        self.done()
    }

    /// nbv may not read or create the build's objects: the run fails, naming the
    /// request, rather than wait for rights nobody is told are missing.
    fn forbidden(&mut self, request: &Request, answer: &crate::io::ApiAnswer) -> BuildStep {
        self.fail(
            FailureCause::BuildFailed,
            format!(
                "nbv may not {request}: {}; grant the operator's role the build rules of \
                 config/rbac/role.yaml (docs/rbac.md)",
                answer.message()
            ),
        )
    }

    /// A request failed for a reason a later reconcile may not meet.
    fn failed(&mut self, request: &Request, answer: crate::io::ApiAnswer) -> BuildStep {
        BuildStep::Done(Err(Failure::request(request, answer)))
    }

    /// The build ended: list the route's builds to keep only the newest few.
    fn history(&mut self) -> BuildStep {
        self.stage = Stage::History;
        let watched = self.route.watched(&self.plan);
        BuildStep::Ask(Request::List {
            kind: ObjectRef {
                name: String::new(),
                ..watched
            },
            label_selector: history_selector(self.route),
        })
    }

    fn clean(&mut self, mut left: VecDeque<ObjectRef>) -> BuildStep {
        match left.pop_front() {
            Some(object) => {
                self.stage = Stage::Clean(left);
                BuildStep::Ask(Request::Delete { object, uid: None })
            }
            None => self.done(),
        }
    }

    fn done(&mut self) -> BuildStep {
        BuildStep::Done(Ok(std::mem::take(&mut self.built)))
    }
}

fn unexpected(request: &Request, response: &Response) -> BuildStep {
    BuildStep::Done(Err(Failure::Unexpected {
        request: request.to_string(),
        answer: format!("{response:?}"),
    }))
}
