//! The notification Event of a terminal transition (feature 5).
//!
//! One Kubernetes Event per terminal transition: `ValidationSucceeded` (Normal) or
//! `ValidationFailed` (Warning), labelled so that Argo CD notifications and plain
//! `kubectl get events -l` can select them, with a structured message a person can act
//! on. The Event is a pure value; its [`name`](NotificationEvent::name) is derived from
//! the run, so creating it twice is detectable (`AlreadyExists`) and a retried or
//! restarted shell never emits it twice.

mod message;
mod refusal;
mod report;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::annotations;
use crate::api::{NotebookValidationJob, Phase};
use crate::kube_names::is_label_value;

// Redaction at its old path; it lives below both the Events and the Pod.
pub use crate::redact::redact_secrets;
pub use refusal::{POD_REFUSED, pod_refused_event};
pub use report::{Report, ReportReason};

/// Longest Event message kept, in bytes: `events.k8s.io/v1` rejects a longer `note`, so a
/// message that fits is valid for both Event APIs.
pub const MAX_EVENT_MESSAGE_BYTES: usize = 1024;

/// Ends an Event message that was cut to [`MAX_EVENT_MESSAGE_BYTES`].
const MESSAGE_CUT_MARKER: &str = "…";

/// Severity of an Event, as Kubernetes spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EventType {
    /// A normal occurrence.
    Normal,
    /// Something a person should look at.
    Warning,
}

/// Why a notification was emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NotificationReason {
    /// The run succeeded.
    ValidationSucceeded,
    /// The run failed.
    ValidationFailed,
}

impl NotificationReason {
    /// The Event `reason`.
    pub const fn as_str(self) -> &'static str {
        match self {
            NotificationReason::ValidationSucceeded => "ValidationSucceeded",
            NotificationReason::ValidationFailed => "ValidationFailed",
        }
    }

    /// Value of the `mlops.dev/notification-type` label.
    pub const fn notification_type(self) -> &'static str {
        match self {
            NotificationReason::ValidationSucceeded => "validation-success",
            NotificationReason::ValidationFailed => "validation-failure",
        }
    }

    /// Severity that goes with the reason.
    pub const fn event_type(self) -> EventType {
        match self {
            NotificationReason::ValidationSucceeded => EventType::Normal,
            NotificationReason::ValidationFailed => EventType::Warning,
        }
    }
}

/// What the notification needs to know beyond the job itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotificationContext {
    /// Name of the parent Argo CD Application, when one was found that answers for
    /// the job's namespace (`nbv_core::reconcile::read_parent`).
    pub application: Option<String>,
    /// The job's sync wave, when it has a valid one.
    pub sync_wave: Option<i64>,
    /// Retry limit of the phase machine, shown as `retry n/max`.
    pub max_retries: u32,
}

/// A notification Event, ready for the shell to create.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus, Phase};
/// use nbv_core::events::{notification, NotificationContext, EventType};
///
/// let mut job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "uid": "u-1"},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
///     "status": {"phase": "Failed", "message": "ModuleNotFoundError: No module named 'x'",
///                "startTime": "2026-01-24T22:29:19Z", "completionTime": "2026-01-24T22:30:00Z",
///                "retryCount": 3}
/// }))?;
/// let ctx = NotificationContext { max_retries: 3, ..Default::default() };
/// let event = notification(&job, &ctx).expect("terminal job");
/// assert_eq!(event.event_type, EventType::Warning);
/// assert_eq!(event.reason, "ValidationFailed");
/// assert_eq!(event.labels["mlops.dev/notification-type"], "validation-failure");
/// assert!(event.message.contains("Duration: 41s"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationEvent {
    /// Event name, unique per job run and outcome (a valid object name).
    pub name: String,
    /// Namespace of the job (and of the Event).
    pub namespace: String,
    /// Normal or Warning.
    pub event_type: EventType,
    /// `ValidationSucceeded` or `ValidationFailed`.
    pub reason: &'static str,
    /// `mlops.dev/notification-type` and, when known, `app.kubernetes.io/part-of`.
    pub labels: BTreeMap<String, String>,
    /// The structured, secret-free message.
    pub message: String,
    /// The job's name.
    pub job_name: String,
    /// The job's uid, for `involvedObject`.
    pub job_uid: Option<String>,
    /// When the run ended (`eventTime`).
    pub completed_at: DateTime<Utc>,
}

/// The notification for a job whose status is terminal; `None` for any other job
/// (including a terminal job without a `completionTime`, which the phase machine never
/// writes).
pub fn notification(
    job: &NotebookValidationJob,
    ctx: &NotificationContext,
) -> Option<NotificationEvent> {
    let status = job.status.as_ref()?;
    let reason = match status.phase? {
        Phase::Succeeded => NotificationReason::ValidationSucceeded,
        Phase::Failed => NotificationReason::ValidationFailed,
        _ => return None,
    };
    let completed_at = status.completion_time?;
    let job_name = job.metadata.name.clone().unwrap_or_default();
    let namespace = job.metadata.namespace.clone().unwrap_or_default();

    let mut labels = BTreeMap::from([(
        annotations::NOTIFICATION_TYPE.to_owned(),
        reason.notification_type().to_owned(),
    )]);
    // Only an Application that answers for the job names it: a job's own `part-of`
    // label is what anyone who creates the job writes, and routing by this label would
    // let them reach another team's channel.
    if let Some(app) = ctx.application.clone().filter(|a| is_label_value(a)) {
        labels.insert(annotations::APP_PART_OF.to_owned(), app);
    }

    Some(NotificationEvent {
        name: event_name(&job_name, reason, completed_at),
        namespace: namespace.clone(),
        event_type: reason.event_type(),
        reason: reason.as_str(),
        labels,
        message: message::render(job, reason, ctx),
        job_name,
        job_uid: job.metadata.uid.clone(),
        completed_at,
    })
}

/// `<job>.<outcome>.<unix seconds of completion>`, cut to fit the 253-byte name limit
/// while keeping the run-specific suffix, so two runs never share a name.
fn event_name(job: &str, reason: NotificationReason, completed_at: DateTime<Utc>) -> String {
    let suffix = format!(
        ".{}.{}",
        match reason {
            NotificationReason::ValidationSucceeded => "succeeded",
            NotificationReason::ValidationFailed => "failed",
        },
        completed_at.timestamp()
    );
    name_with_suffix(job, &suffix)
}

/// The name of the Event of a report created once ([`Report::once`]):
/// `<job>.<16 hex digits>`, the digits a SHA-256 of the job's uid and the report's key,
/// the job's name cut so that the whole fits the 253-byte limit of an object name.
///
/// # Examples
///
/// ```
/// use nbv_core::events::report_event_name;
///
/// let name = report_event_name("train", Some("u-1"), "AnnotationsValid|absent>False");
/// assert!(name.starts_with("train.") && name.len() == "train.".len() + 16);
/// assert_eq!(name, report_event_name("train", Some("u-1"), "AnnotationsValid|absent>False"));
/// assert_ne!(name, report_event_name("train", Some("u-2"), "AnnotationsValid|absent>False"));
/// ```
pub fn report_event_name(job: &str, uid: Option<&str>, key: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(uid.unwrap_or_default())
        .chain_update([0])
        .chain_update(key)
        .finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    name_with_suffix(job, &format!(".{hex}"))
}

/// The longest name of an object, in bytes.
const MAX_NAME_BYTES: usize = 253;

/// `job` followed by `suffix`, the job's name cut so that the whole fits the 253-byte
/// limit of an object name.
fn name_with_suffix(job: &str, suffix: &str) -> String {
    let room = MAX_NAME_BYTES.saturating_sub(suffix.len());
    let prefix = crate::text::truncate(job, room, "");
    format!("{}{suffix}", prefix.trim_end_matches(['.', '-']))
}
