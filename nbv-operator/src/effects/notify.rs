//! Kubernetes Events: the notification of a terminal run, and reports of what nbv did.

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Api, PostParams};
use nbv_core::api::{API_VERSION, KIND, NotebookValidationJob};
use nbv_core::events::{EventType, MAX_EVENT_MESSAGE_BYTES, NotificationEvent, ReportReason};

use nbv_core::text::truncate;

use super::target::{JobRef, timestamp};
use super::{EffectError, Executor};
use crate::api_error::is_conflict;

/// Longest `reportingInstance` the API server accepts, in bytes.
const MAX_REPORTING_INSTANCE_BYTES: usize = 128;
/// Longest `generateName` prefix used, leaving room for the server's random suffix.
const MAX_GENERATE_NAME_BYTES: usize = 200;

/// Whether [`Executor::create_notification`] created the Event or found it there.
///
/// # Examples
///
/// ```
/// use nbv_operator::effects::Delivery;
/// assert_ne!(Delivery::Created, Delivery::AlreadyExisted);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// The Event was created now.
    Created,
    /// An Event of that name existed: an earlier attempt created it.
    AlreadyExisted,
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

impl Executor {
    /// Creates the notification `event` (from [`nbv_core::events::notification`]) about
    /// `job`, exactly once: its name is derived from the run, so an `AlreadyExists`
    /// answer means an earlier attempt created it, which is success.
    ///
    /// # Errors
    ///
    /// [`EffectError::Invalid`] for a job without namespace or name, and the
    /// classified error of any other failed request.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::events::{notification, NotificationContext};
    /// use nbv_operator::effects::{Delivery, Executor, ExecutorConfig};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("one request");
    /// #     assert_eq!(request.method(), "POST");
    /// #     let status = br#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"AlreadyExists","code":409,"message":"exists"}"#;
    /// #     reply.send_response(http::Response::builder().status(409).body(kube::client::Body::from(status.to_vec())).unwrap());
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml", "uid": "u-1"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
    ///     "status": {"phase": "Succeeded", "startTime": "2026-01-24T22:29:00Z",
    ///                "completionTime": "2026-01-24T22:30:00Z"}
    /// })).unwrap();
    /// let event = notification(&job, &NotificationContext::default()).unwrap();
    ///
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// // The API server answers 409: an earlier attempt created the Event.
    /// let delivery = executor.create_notification(&job, &event).await.unwrap();
    /// assert_eq!(delivery, Delivery::AlreadyExisted);
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn create_notification(
        &self,
        job: &NotebookValidationJob,
        event: &NotificationEvent,
    ) -> Result<Delivery, EffectError> {
        let job = JobRef::of(job)?;
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
        let object = format!("Event {namespace}/{}", event.name);
        let body = self.event(
            &job,
            EventParts {
                metadata,
                event_type: event.event_type,
                reason: event.reason,
                action: "ValidateNotebook",
                message: &event.message,
                at: event.completed_at,
            },
        )?;
        let events: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        match events.create(&PostParams::default(), &body).await {
            Ok(_) => Ok(Delivery::Created),
            Err(e) if is_conflict(&e) => Ok(Delivery::AlreadyExisted),
            Err(e) => Err(EffectError::from_kube(
                format!("create {object}"),
                &object,
                e,
            )),
        }
    }

    /// Reports `message` about `job` as an Event with `reason`, at `now`, under a name
    /// the API server generates: reports are not deduplicated (the effect ledger keeps
    /// the caller from reporting one outcome twice).
    ///
    /// # Errors
    ///
    /// [`EffectError::Invalid`] for a job without namespace or name, and the
    /// classified error of a failed request.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_operator::effects::{Executor, ExecutorConfig, ReportReason};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("one request");
    /// #     assert_eq!(request.uri().path(), "/api/v1/namespaces/ml/events");
    /// #     reply.send_response(http::Response::builder().status(201).body(kube::client::Body::from(b"{}".to_vec())).unwrap());
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// })).unwrap();
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    ///
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// let reported = executor
    ///     .report(&job, ReportReason::TriggerSucceeded, "rolling restart of Deployment ml/web", now)
    ///     .await;
    /// assert!(reported.is_ok());
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn report(
        &self,
        job: &NotebookValidationJob,
        reason: ReportReason,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<(), EffectError> {
        let job = JobRef::of(job)?;
        let prefix = truncate(&job.name, MAX_GENERATE_NAME_BYTES, "");
        let prefix = prefix.trim_end_matches(['.', '-']);
        let metadata = ObjectMeta {
            generate_name: Some(format!("{prefix}.")),
            namespace: Some(job.namespace.clone()),
            ..ObjectMeta::default()
        };
        let body = self.event(
            &job,
            EventParts {
                metadata,
                event_type: reason.event_type(),
                reason: reason.as_str(),
                action: reason.action(),
                message,
                at: now,
            },
        )?;
        let object = format!(
            "{} Event for NotebookValidationJob {}/{}",
            reason.as_str(),
            job.namespace,
            job.name
        );
        let events: Api<Event> = Api::namespaced(self.client.clone(), &job.namespace);
        events
            .create(&PostParams::default(), &body)
            .await
            .map_err(|e| EffectError::from_kube(format!("create {object}"), &object, e))?;
        Ok(())
    }

    /// A `core/v1` Event about `job`, in the shape `kubectl describe` and Argo CD
    /// notifications read, that also passes the API server's checks for Events with an
    /// `eventTime` (`action`, `reportingComponent` and `reportingInstance` set).
    fn event(&self, job: &JobRef, parts: EventParts<'_>) -> Result<Event, EffectError> {
        let at = timestamp(parts.at)?;
        let component = &self.config.field_manager;
        Ok(Event {
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
            message: Some(truncate(parts.message, MAX_EVENT_MESSAGE_BYTES, "").into_owned()),
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
                truncate(
                    &self.config.reporting_instance,
                    MAX_REPORTING_INSTANCE_BYTES,
                    "",
                )
                .into_owned(),
            ),
            ..Event::default()
        })
    }
}
