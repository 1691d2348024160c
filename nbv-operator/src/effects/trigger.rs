//! Firing one on-success trigger: authorize, then restart, sync or refresh, each as
//! [`nbv_core::actions`] decides.

use chrono::{DateTime, Utc};
use nbv_core::api::NotebookValidationJob;
use nbv_core::triggers::{Action, Trigger};

use super::target::JobRef;
use super::{EffectError, Executor, TriggerOutcome};

impl Executor {
    /// Fires `trigger` of `job` for the run that completed at `completed_at`.
    ///
    /// The trigger is first checked against the confused-deputy rule
    /// ([`nbv_core::triggers::TriggerAccess`]); a refused trigger writes nothing. Then:
    ///
    /// - `restart` of a Deployment, StatefulSet or DaemonSet (group `apps`): a rolling
    ///   restart, by a merge patch of
    ///   `spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]` to
    ///   `completed_at` (RFC 3339, seconds), carrying the `resourceVersion` of a `GET`
    ///   just before. When the template already has this time or a later one, nothing
    ///   is written ([`TriggerOutcome::AlreadyDone`]): a repeated trigger starts no
    ///   second rollout, and a retried one never moves the time back over a newer run's
    ///   restart. (A StatefulSet or DaemonSet with the `OnDelete` update
    ///   strategy restarts nothing on a template change, as with `kubectl rollout
    ///   restart`.)
    /// - `restart` of a KServe InferenceService: the pods labelled
    ///   `serving.kserve.io/inferenceservice=<name>` that were created before
    ///   `completed_at` are deleted (each with its uid as precondition); pods created
    ///   later already serve the new model, which makes a repeated trigger a no-op.
    /// - `restart` of any other kind: the pods its `spec.selector` selects, that it owns
    ///   (directly or through one intermediate owner such as a ReplicaSet) and that were
    ///   created before `completed_at`. A target without a selector is refused: nbv never
    ///   deletes every pod of a namespace.
    /// - `sync` of an Argo CD Application: as [`nbv_core::sync::decide_sync`] decides, a
    ///   sync operation written as `argocd app sync` does (clearing a leftover
    ///   `status.operationState`), unless an operation is requested or a sync window of
    ///   its AppProject is closed ([`TriggerOutcome::Deferred`]) or the Application
    ///   already carries this run's marker or a full sync since the run
    ///   ([`TriggerOutcome::AlreadyDone`]).
    /// - `refresh`: the annotation `mlops.dev/restart-timestamp: <completed_at>`, and for
    ///   an Application also `argocd.argoproj.io/refresh: normal` with a new
    ///   `argocd.argoproj.io/refresh-timestamp`; read and written like a rolling restart
    ///   (nothing written when the timestamp is not older than the run).
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
    /// use nbv_operator::effects::{Executor, ExecutorConfig, TriggerOutcome};
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
        let job = JobRef::of(job)?;
        let run = job.run(completed_at);
        let authorized = self.authorize(&job, trigger).await?;
        let outcome = match trigger.action() {
            Action::Restart => self.restart(trigger.target(), &run).await,
            Action::Sync => {
                let application = match authorized.application {
                    Some(app) => app,
                    None => self.read_target(trigger.target()).await?,
                };
                self.sync(trigger.target(), application, &run).await
            }
            Action::Refresh => {
                self.refresh(trigger.target(), authorized.application, &run)
                    .await
            }
        };
        match &outcome {
            Ok(done) => {
                tracing::info!(trigger = %trigger, grant = %authorized.grant, ?done, "trigger fired")
            }
            Err(error) => tracing::warn!(trigger = %trigger, %error, "trigger failed"),
        }
        outcome
    }
}
