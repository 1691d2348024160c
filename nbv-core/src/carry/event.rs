//! Kubernetes Events as requests: the notification of a terminal run (created once:
//! its name is derived from the run), and reports of what nbv did.

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use crate::api::{API_VERSION, KIND, NotebookValidationJob};
use crate::events::{
    EventType, MAX_EVENT_MESSAGE_BYTES, NotificationEvent, ReportReason, report_event_name,
};
use crate::io::{ObjectRef, Request, Response, Step};
use crate::reconcile::AnswerClass;
use crate::text::truncate;
use crate::time::rfc3339;

use super::machine::unexpected;
use super::target::JobRef;
use super::{CarryFacts, Failure, Machine};

/// Longest `reportingInstance` the API server accepts, in bytes.
const MAX_REPORTING_INSTANCE_BYTES: usize = 128;
/// Longest `generateName` prefix used, leaving room for the server's random suffix.
const MAX_GENERATE_NAME_BYTES: usize = 200;

/// Whether a notification Event was created, or found there: the result of one create,
/// kept apart from [`TriggerOutcome`](crate::actions::TriggerOutcome)'s
/// `Done`/`AlreadyDone` (which carry a trigger's summary and typed reason), and
/// recorded in the ledger as [`Outcome::Done`](crate::plan::Outcome::Done) either way;
/// only [`Carry::notified`](super::Carry::notified) tells them apart.
///
/// # Examples
///
/// ```
/// use nbv_core::carry::Delivery;
/// assert_ne!(Delivery::Created, Delivery::AlreadyExisted);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The Event was created now.
    Created,
    /// An Event of that name existed: an earlier attempt created it.
    AlreadyExisted,
}

/// Creating the notification Event of a job's run, exactly once: its name is derived
/// from the run, so an `AlreadyExists` answer means an earlier attempt created it,
/// which is success.
///
/// # Examples
///
/// ```
/// use nbv_core::carry::{CarryFacts, Delivery, Machine, Notify};
/// use nbv_core::events::{notification, NotificationContext};
/// use nbv_core::io::{Request, Response, Step};
/// use nbv_core::reconcile::ApiAnswer;
///
/// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "uid": "u-1"},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
///     "status": {"phase": "Succeeded", "startTime": "2026-01-24T22:29:00Z",
///                "completionTime": "2026-01-24T22:30:00Z"}
/// }))?;
/// let event = notification(&job, &NotificationContext::default()).unwrap();
/// let mut notify = Notify::start(&job, &event, &CarryFacts::default());
/// let Step::Io(Request::Create { body, .. }) = notify.next() else { panic!() };
/// assert_eq!(body["reason"], "ValidationSucceeded");
/// notify.answer(Response::Failed(ApiAnswer::status(409, "AlreadyExists", "exists")));
/// assert_eq!(notify.next(), Step::Done(Ok(Delivery::AlreadyExisted)));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Notify {
    state: Create<Delivery>,
}

impl Notify {
    /// Creates the notification `event` (from [`crate::events::notification`]) about
    /// `job`.
    pub fn start(
        job: &NotebookValidationJob,
        event: &NotificationEvent,
        facts: &CarryFacts,
    ) -> Self {
        let state = JobRef::of(job).and_then(|job| {
            let namespace = if event.namespace.is_empty() {
                job.namespace.clone()
            } else {
                event.namespace.clone()
            };
            let metadata = ObjectMeta {
                name: Some(event.name.clone()),
                namespace: Some(namespace.clone()),
                labels: Some(event.labels.clone()).filter(|l| !l.is_empty()),
                ..ObjectMeta::default()
            };
            let body = event_body(
                &job,
                facts,
                EventParts {
                    metadata,
                    event_type: event.event_type,
                    reason: event.reason,
                    action: "ValidateNotebook",
                    message: &event.message,
                    at: event.completed_at,
                },
            )?;
            Ok(Create::Post {
                object: ObjectRef::namespaced("v1", "Event", namespace.clone(), &event.name),
                name: format!("Event {namespace}/{}", event.name),
                body,
            })
        });
        Notify {
            state: Create::settled(state),
        }
    }
}

impl Machine for Notify {
    type Output = Result<Delivery, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        self.state.next()
    }

    fn answer(&mut self, response: Response) {
        self.state.answer(response, |created| match created {
            Ok(()) => Ok(Delivery::Created),
            Err(answer) if answer.class() == AnswerClass::Conflict => Ok(Delivery::AlreadyExisted),
            Err(answer) => Err(answer),
        });
    }
}

/// Reporting what nbv did about a job as an Event, under a name the API server
/// generates: reports are not deduplicated (the effect ledger keeps the shell from
/// reporting one outcome twice).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::carry::{CarryFacts, Machine, Report};
/// use nbv_core::events::ReportReason;
/// use nbv_core::io::{Request, Response, Step};
///
/// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml"},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// }))?;
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
/// let mut report = Report::start(&job, ReportReason::TriggerSucceeded, "rolling restart of Deployment ml/web", now, &CarryFacts::default());
/// let Step::Io(Request::Create { body, .. }) = report.next() else { panic!() };
/// assert_eq!(body["metadata"]["generateName"], "train.");
/// report.answer(Response::Object(Some(body)));
/// assert_eq!(report.next(), Step::Done(Ok(())));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Report {
    state: Create<()>,
    /// Named from its key: `AlreadyExists` is an earlier attempt's success.
    once: bool,
}

impl Report {
    /// Reports `message` about `job` with `reason`, at `now`.
    pub fn start(
        job: &NotebookValidationJob,
        reason: ReportReason,
        message: &str,
        now: DateTime<Utc>,
        facts: &CarryFacts,
    ) -> Self {
        Report::create(job, reason, message, None, now, facts)
    }

    /// Announces `report` about `job` at `now`: created once when it is a
    /// [`Report::once`](crate::events::Report::once) (its name derived from its key, an
    /// `AlreadyExists` answer meaning an earlier attempt created it), otherwise as
    /// [`Report::start`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::carry::{CarryFacts, Machine, Report};
    /// use nbv_core::events::{self, ReportReason};
    /// use nbv_core::io::{Request, Response, Step};
    /// use nbv_core::reconcile::ApiAnswer;
    ///
    /// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml", "uid": "u-1"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    /// let once = events::Report::once(ReportReason::InvalidAnnotation, "bad", "key");
    /// let mut report = Report::announce(&job, &once, now, &CarryFacts::default());
    /// let Step::Io(Request::Create { body, .. }) = report.next() else { panic!() };
    /// assert_eq!(body["metadata"]["name"], events::report_event_name("train", Some("u-1"), "key"));
    /// report.answer(Response::Failed(ApiAnswer::status(409, "AlreadyExists", "exists")));
    /// assert_eq!(report.next(), Step::Done(Ok(())));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn announce(
        job: &NotebookValidationJob,
        report: &crate::events::Report,
        now: DateTime<Utc>,
        facts: &CarryFacts,
    ) -> Self {
        let once = report.once.as_deref();
        Report::create(job, report.reason, &report.message, once, now, facts)
    }

    fn create(
        job: &NotebookValidationJob,
        reason: ReportReason,
        message: &str,
        once: Option<&str>,
        now: DateTime<Utc>,
        facts: &CarryFacts,
    ) -> Self {
        let state = JobRef::of(job).and_then(|job| {
            let metadata = match once {
                Some(key) => ObjectMeta {
                    name: Some(report_event_name(&job.name, job.uid.as_deref(), key)),
                    namespace: Some(job.namespace.clone()),
                    ..ObjectMeta::default()
                },
                None => {
                    let prefix = truncate(&job.name, MAX_GENERATE_NAME_BYTES, "");
                    ObjectMeta {
                        generate_name: Some(format!("{}.", prefix.trim_end_matches(['.', '-']))),
                        namespace: Some(job.namespace.clone()),
                        ..ObjectMeta::default()
                    }
                }
            };
            let named = metadata.name.clone().unwrap_or_default();
            let body = event_body(
                &job,
                facts,
                EventParts {
                    metadata,
                    event_type: reason.event_type(),
                    reason: reason.as_str(),
                    action: reason.action(),
                    message,
                    at: now,
                },
            )?;
            Ok(Create::Post {
                object: ObjectRef::namespaced("v1", "Event", &job.namespace, named),
                name: format!(
                    "{} Event for NotebookValidationJob {}/{}",
                    reason.as_str(),
                    job.namespace,
                    job.name
                ),
                body,
            })
        });
        Report {
            state: Create::settled(state),
            once: once.is_some(),
        }
    }
}

impl Machine for Report {
    type Output = Result<(), Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        self.state.next()
    }

    fn answer(&mut self, response: Response) {
        let once = self.once;
        self.state.answer(response, |created| match created {
            Err(answer) if once && answer.class() == AnswerClass::Conflict => Ok(()),
            other => other,
        });
    }
}

/// One `POST` of an Event, and what its answer means.
#[derive(Clone, Debug)]
enum Create<T> {
    Post {
        object: ObjectRef,
        /// What is created, for errors.
        name: String,
        body: Value,
    },
    Done(Result<T, Failure>),
}

impl<T: Clone> Create<T> {
    fn settled(post: Result<Create<T>, Failure>) -> Self {
        post.unwrap_or_else(|failure| Create::Done(Err(failure)))
    }

    fn next(&self) -> Step<Result<T, Failure>> {
        match self {
            Create::Post { object, body, .. } => Step::Io(Request::Create {
                object: object.clone(),
                body: body.clone(),
            }),
            Create::Done(result) => Step::Done(result.clone()),
        }
    }

    /// `meaning` reads the answer: created, or the API server's refusal.
    fn answer(
        &mut self,
        response: Response,
        meaning: impl FnOnce(
            Result<(), crate::reconcile::ApiAnswer>,
        ) -> Result<T, crate::reconcile::ApiAnswer>,
    ) {
        let Create::Post { name, .. } = self else {
            return;
        };
        let request = format!("create {name}");
        let result = match response {
            Response::Object(_) => meaning(Ok(())),
            Response::Failed(answer) => meaning(Err(answer)),
            other => {
                *self = Create::Done(Err(unexpected(&request, &other)));
                return;
            }
        };
        *self = Create::Done(result.map_err(|answer| Failure::of(request, name.as_str(), &answer)));
    }
}

/// What varies between the Events nbv creates.
struct EventParts<'a> {
    metadata: ObjectMeta,
    event_type: EventType,
    reason: &'a str,
    action: &'a str,
    message: &'a str,
    at: DateTime<Utc>,
}

/// A `core/v1` Event about `job`, in the shape `kubectl describe` and Argo CD
/// notifications read, that also passes the API server's checks for Events with an
/// `eventTime` (`action`, `reportingComponent` and `reportingInstance` set).
fn event_body(job: &JobRef, facts: &CarryFacts, parts: EventParts<'_>) -> Result<Value, Failure> {
    let at = timestamp(parts.at)?;
    let component = &facts.field_manager;
    let event = Event {
        metadata: parts.metadata,
        involved_object: ObjectReference {
            api_version: Some(API_VERSION.to_owned()),
            kind: Some(KIND.to_owned()),
            name: Some(job.name.clone()),
            namespace: Some(job.namespace.clone()),
            uid: job.uid.clone(),
            ..ObjectReference::default()
        },
        type_: Some(
            match parts.event_type {
                EventType::Normal => "Normal",
                EventType::Warning => "Warning",
            }
            .to_owned(),
        ),
        reason: Some(parts.reason.to_owned()),
        action: Some(parts.action.to_owned()),
        // Redacted before it is cut: a cut could leave a secret's shape unrecognisable.
        message: Some(
            truncate(
                &crate::redact::redact_secrets(parts.message),
                MAX_EVENT_MESSAGE_BYTES,
                "",
            )
            .into_owned(),
        ),
        first_timestamp: Some(Time(at)),
        last_timestamp: Some(Time(at)),
        event_time: Some(MicroTime(at)),
        count: Some(1),
        source: Some(EventSource {
            component: Some(component.clone()),
            host: None,
        }),
        reporting_component: Some(component.clone()),
        reporting_instance: Some(
            truncate(&facts.reporting_instance, MAX_REPORTING_INSTANCE_BYTES, "").into_owned(),
        ),
        ..Event::default()
    };
    serde_json::to_value(&event)
        .map_err(|e| Failure::invalid("create an Event", format!("cannot write it: {e}")))
}

/// `time` as the timestamp type of Kubernetes objects.
fn timestamp(time: DateTime<Utc>) -> Result<Timestamp, Failure> {
    let nanos = i32::try_from(time.timestamp_subsec_nanos()).unwrap_or(0);
    Timestamp::new(time.timestamp(), nanos).map_err(|e| {
        Failure::invalid(
            format!("use the time {}", rfc3339(time)),
            format!("it cannot be written in a Kubernetes object: {e}"),
        )
    })
}
