//! The executor's calls: each starts a machine of [`nbv_core::carry`], drives it to
//! its end, and logs what it came to.

use chrono::{DateTime, Utc};
use kube::api::DynamicObject;
use nbv_core::api::NotebookValidationJob;
use nbv_core::carry::{ApplicationStatus, Carry, Fire, JobPatch, Notify, Report, SyncResult};
use nbv_core::plan::{Effect, PlannedEffect};
use nbv_core::reconcile::Carried;
use nbv_core::triggers::{TargetRef, Trigger};
use serde_json::Value;

use super::{Delivery, EffectError, Executor, ReportReason, SyncReport, TriggerOutcome};

impl Executor {
    /// Carries `planned` out for `job` at `now` ([`Carry`]), and says what it came to.
    /// The finished machine tells the rest: the job as stored after a wave patch
    /// ([`Carry::follow`]), how a trigger went, whether a notification was created.
    pub async fn carry(
        &self,
        job: &NotebookValidationJob,
        planned: &PlannedEffect,
        now: DateTime<Utc>,
    ) -> (Carried, Carry) {
        let mut carry = Carry::start(job, planned, &self.carry_facts(), now);
        let carried = self.drive(&mut carry).await;
        if let Effect::Trigger { trigger, .. } = &planned.effect {
            for warning in carry.warnings() {
                tracing::warn!(trigger = %trigger, "{warning}");
            }
            let grant = carry.grant().map(|g| g.to_string()).unwrap_or_default();
            match &carried {
                Carried::Trigger(Ok(TriggerOutcome::Deferred { reason, .. })) => {
                    tracing::info!(job = ?job.metadata.name, %trigger, %reason, "trigger deferred");
                }
                Carried::Trigger(Ok(done)) => {
                    tracing::info!(trigger = %trigger, %grant, ?done, "trigger fired");
                }
                Carried::Trigger(Err(error)) => {
                    tracing::warn!(trigger = %trigger, ?error, "trigger failed");
                }
                _ => {}
            }
        }
        (carried, carry)
    }

    /// Fires `trigger` of `job` for the run that completed at `completed_at`, as
    /// [`Fire`] decides (its documentation says what each action writes), at the
    /// executor's time.
    ///
    /// # Errors
    ///
    /// [`EffectError::Refused`] when the trigger may not act on its target, and the
    /// other [`EffectError`] kinds when a request fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::triggers::parse_triggers;
    /// use nbv_operator::operator::effects::{Executor, ExecutorConfig, TriggerOutcome};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("the read");
    /// #     assert_eq!(request.method(), "GET");
    /// #     assert_eq!(request.uri().path(), "/apis/apps/v1/namespaces/ml/deployments/web");
    /// #     let web = br#"{"metadata": {"name": "web", "resourceVersion": "5"}}"#;
    /// #     reply.send_response(http::Response::new(kube::client::Body::from(web.to_vec())));
    /// #     let (request, reply) = server.next_request().await.expect("the patch");
    /// #     assert_eq!(request.method(), "PATCH");
    /// #     assert_eq!(request.uri().path(), "/apis/apps/v1/namespaces/ml/deployments/web");
    /// #     reply.send_response(http::Response::new(kube::client::Body::from(b"{}".to_vec())));
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// })).unwrap();
    /// let set = parse_triggers("- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}", "ml").unwrap();
    /// let completed_at = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
    ///
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// let outcome = executor.fire_trigger(&job, &set.triggers()[0], completed_at).await.unwrap();
    /// assert!(matches!(outcome, TriggerOutcome::Done { .. }));
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn fire_trigger(
        &self,
        job: &NotebookValidationJob,
        trigger: &Trigger,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        let mut fire = Fire::start(
            job,
            trigger,
            completed_at,
            &self.carry_facts(),
            self.clock.now(),
        );
        let outcome = self.drive(&mut fire).await;
        for warning in fire.warnings() {
            tracing::warn!(trigger = %trigger, "{warning}");
        }
        match &outcome {
            Ok(done) => {
                let grant = fire.grant().map(|g| g.to_string()).unwrap_or_default();
                tracing::info!(trigger = %trigger, %grant, ?done, "trigger fired");
            }
            Err(error) => tracing::warn!(trigger = %trigger, %error, "trigger failed"),
        }
        outcome
    }

    /// How the sync that `job`'s run (ended at `completed_at`) started on `target`
    /// stands ([`SyncResult`]).
    ///
    /// # Errors
    ///
    /// The error of reading the Application.
    pub async fn sync_result(
        &self,
        job: &NotebookValidationJob,
        target: &TargetRef,
        completed_at: DateTime<Utc>,
    ) -> Result<SyncReport, EffectError> {
        self.drive(&mut SyncResult::start(job, target, completed_at))
            .await
    }

    /// Creates the notification `event` (from [`nbv_core::events::notification`]) about
    /// `job`, exactly once ([`Notify`]).
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
    /// use nbv_operator::operator::effects::{Delivery, Executor, ExecutorConfig};
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
        event: &nbv_core::events::NotificationEvent,
    ) -> Result<Delivery, EffectError> {
        self.drive(&mut Notify::start(job, event, &self.carry_facts()))
            .await
    }

    /// Reports `message` about `job` as an Event with `reason`, at `now` ([`Report`]).
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
    /// use nbv_operator::operator::effects::{Executor, ExecutorConfig, ReportReason};
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
        self.drive(&mut Report::start(
            job,
            reason,
            message,
            now,
            &self.carry_facts(),
        ))
        .await
    }

    /// Applies `patch`, a JSON merge patch of the job's `metadata.annotations` and
    /// `metadata.labels` (nbv-core's wave patch), to the job `namespace/name`, and
    /// returns the job as the API server stored it ([`JobPatch`]).
    ///
    /// # Errors
    ///
    /// [`EffectError::Invalid`] without any request when the patch touches anything
    /// but annotations and labels: the job's spec and status are written elsewhere.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::effects::{Executor, ExecutorConfig};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("one request");
    /// #     assert_eq!(request.uri().path(), "/apis/mlops.mlops.dev/v1alpha1/namespaces/ml/notebookvalidationjobs/train");
    /// #     reply.send_response(http::Response::new(kube::client::Body::from(b"{}".to_vec())));
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// let patch = json!({"metadata": {"annotations": {"mlops.dev/wave-complete": "3", "mlops.dev/wave-failed": null}}});
    /// executor.patch_job_metadata("ml", "train", &patch).await.unwrap();
    ///
    /// let not_metadata = json!({"spec": {"timeout": "1h"}});
    /// assert!(executor.patch_job_metadata("ml", "train", &not_metadata).await.is_err());
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn patch_job_metadata(
        &self,
        namespace: &str,
        name: &str,
        patch: &Value,
    ) -> Result<DynamicObject, EffectError> {
        let stored = self
            .drive(&mut JobPatch::start(namespace, name, patch))
            .await?;
        Ok(serde_json::from_value(stored).unwrap_or_else(|_| {
            DynamicObject::new(
                name,
                &kube::core::ApiResource::erase::<NotebookValidationJob>(&()),
            )
        }))
    }

    /// Applies `patch` (from [`nbv_core::aggregate::NotebookStatus::application_patch`])
    /// to the Application `app_namespace/app_name` ([`ApplicationStatus`]: only
    /// `mlops.dev/notebook-status` and `mlops.dev/notebook-summary` may be in it).
    ///
    /// # Errors
    ///
    /// [`EffectError::Invalid`] without any request when the patch touches anything
    /// else; [`EffectError::NotFound`] when the Application does not exist.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::effects::{EffectError, Executor, ExecutorConfig};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (mock, mut server) = tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<kube::client::Body>>();
    /// # let api = tokio::spawn(async move {
    /// #     let (request, reply) = server.next_request().await.expect("one request");
    /// #     assert_eq!(request.uri().path(), "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/fraud");
    /// #     reply.send_response(http::Response::new(kube::client::Body::from(b"{}".to_vec())));
    /// # });
    /// # let client = kube::Client::new(mock, "default");
    /// let executor = Executor::new(client, ExecutorConfig::default());
    /// let patch = json!({"metadata": {"annotations": {
    ///     "mlops.dev/notebook-summary": "1/1 succeeded (100% success rate)"
    /// }}});
    /// executor.publish_application_status("argocd", "fraud", &patch).await.unwrap();
    ///
    /// let wave = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "5"}}});
    /// let refused = executor.publish_application_status("argocd", "fraud", &wave).await;
    /// assert!(matches!(refused, Err(EffectError::Invalid { .. })));
    /// # api.await.unwrap();
    /// # }
    /// ```
    pub async fn publish_application_status(
        &self,
        app_namespace: &str,
        app_name: &str,
        patch: &Value,
    ) -> Result<(), EffectError> {
        self.drive(&mut ApplicationStatus::start(
            app_namespace,
            app_name,
            patch,
        ))
        .await
    }
}
