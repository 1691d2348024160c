//! Every annotation and label key that nbv reads or writes, in one place.
//!
//! Keys under `mlops.dev/` are nbv's own; keys under `argocd.argoproj.io/` and
//! `app.kubernetes.io/` belong to Argo CD and Kubernetes conventions and are only
//! read, except [`ARGOCD_REFRESH`], which nbv writes to ask Argo CD for a refresh.

/// On a job: YAML list of resources to act on after each successful run.
pub const ON_SUCCESS_TRIGGER: &str = "mlops.dev/on-success-trigger";
/// On a job: the wave number (Argo CD syntax) that a succeeded run completed.
pub const WAVE_COMPLETE: &str = "mlops.dev/wave-complete";
/// On a job: the wave number (Argo CD syntax) that a failed run failed.
pub const WAVE_FAILED: &str = "mlops.dev/wave-failed";
/// On a job: RFC 3339 time at which the last run ended (success or failure).
pub const COMPLETION_TIME: &str = "mlops.dev/completion-time";
/// On a job: the wave that this job holds back until it has completed its own wave.
pub const BLOCK_WAVE: &str = "mlops.dev/block-wave";
/// On a trigger target: RFC 3339 time written by a `refresh` trigger.
pub const RESTART_TIMESTAMP: &str = "mlops.dev/restart-timestamp";
/// A request to run a finished job again: every new value starts one new run
/// ([`crate::phase::RerunRequest`]).
pub const RERUN: &str = "mlops.dev/rerun";
/// On an Argo CD Application: aggregated notebook status as JSON.
pub const NOTEBOOK_STATUS: &str = "mlops.dev/notebook-status";
/// On an Argo CD Application: one-line human summary of [`NOTEBOOK_STATUS`].
pub const NOTEBOOK_SUMMARY: &str = "mlops.dev/notebook-summary";
/// Label on notification Events: `validation-success` or `validation-failure`.
pub const NOTIFICATION_TYPE: &str = "mlops.dev/notification-type";

/// Argo CD: the sync wave of a resource (a signed integer, default 0).
pub const ARGOCD_SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
/// Annotation of a Helm hook's weight; Argo CD's wave when `sync-wave` is absent or
/// invalid (and the object is no Argo CD hook).
pub const HELM_HOOK_WEIGHT: &str = "helm.sh/hook-weight";
/// Annotation that makes an object an Argo CD hook (`PreSync`, `Sync`, `PostSync`, …).
pub const ARGOCD_HOOK: &str = "argocd.argoproj.io/hook";
/// Argo CD: annotation-based resource tracking (`app:group/kind:ns/name`).
pub const ARGOCD_TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
/// Annotation Argo CD writes on the resources it manages when its `installationID` is
/// set; a tracking id counts only when this matches Argo CD's installation id.
pub const ARGOCD_INSTALLATION_ID: &str = "argocd.argoproj.io/installation-id";
/// Annotation newer Argo CD writes with every refresh request, with a unique timestamp;
/// the controller removes it with the request only if it is unchanged.
pub const ARGOCD_REFRESH_TIMESTAMP: &str = "argocd.argoproj.io/refresh-timestamp";
/// Argo CD: set on an Application to request a refresh (`normal` or `hard`).
pub const ARGOCD_REFRESH: &str = "argocd.argoproj.io/refresh";

/// Label: the Argo CD Application instance (Argo CD's label-based tracking).
pub const APP_INSTANCE: &str = "app.kubernetes.io/instance";
/// Label: the higher-level application a resource is part of.
pub const APP_PART_OF: &str = "app.kubernetes.io/part-of";

/// Pod template annotation written by a rolling restart (the same key `kubectl rollout restart` uses).
pub const KUBECTL_RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";
/// Pod label by which KServe marks the pods of an InferenceService.
pub const KSERVE_INFERENCESERVICE: &str = "serving.kserve.io/inferenceservice";
