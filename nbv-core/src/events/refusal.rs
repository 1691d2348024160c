//! The `PodRefused` Event: the API server refused the attempt's validation Pod.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::annotations;
use crate::api::NotebookValidationJob;
use crate::phase::Attempt;
use crate::pod::{PodRefusal, pod_name};

use super::{
    EventType, MAX_EVENT_MESSAGE_BYTES, MESSAGE_CUT_MARKER, NotificationEvent, name_with_suffix,
};

/// The Event `reason` of a refused validation Pod.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::events::POD_REFUSED, "PodRefused");
/// ```
pub const POD_REFUSED: &str = "PodRefused";

/// The `mlops.dev/notification-type` of a `PodRefused` Event.
const NOTIFICATION_TYPE: &str = "pod-refused";

/// The Warning Event that tells that the API server refused the Pod of `attempt`
/// (first at `first_refused`), naming the policy and carrying `message` (the
/// `PodAdmitted` condition's, cut to an Event's length).
///
/// Its name is derived from the job, the attempt, the kind of refusal and the first
/// refusal's time, so a shell that creates it again (a reconcile that lost its status
/// write, a restart) finds it there instead of creating another: one Event per
/// attempt and kind of refusal.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::events::{pod_refused_event, EventType};
/// use nbv_core::phase::Attempt;
/// use nbv_core::pod::PodRefusal;
/// use nbv_core::api_answer::ApiAnswer;
/// # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
/// #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
/// #     "metadata": {"name": "train", "namespace": "ml", "uid": "u-1"},
/// #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
/// #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// # })).unwrap();
///
/// let refusal = PodRefusal::of(&ApiAnswer::status(403, "Forbidden", "pods \"train-g1-r0\" is forbidden: violates PodSecurity \"restricted:latest\": runAsNonRoot != true")).unwrap();
/// let t0 = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
/// let event = pod_refused_event(&job, Attempt::new(1, 0), &refusal, "Pod Security …", t0);
/// assert_eq!(event.reason, "PodRefused");
/// assert_eq!(event.event_type, EventType::Warning);
/// assert_eq!(event.name, "train.g1-r0.podsecurityviolation.1769292000");
/// ```
pub fn pod_refused_event(
    job: &NotebookValidationJob,
    attempt: Attempt,
    refusal: &PodRefusal,
    message: &str,
    first_refused: DateTime<Utc>,
) -> NotificationEvent {
    let job_name = job.metadata.name.clone().unwrap_or_default();
    let pod = pod_name(&job_name, attempt);
    let text = format!("The API server refused validation pod {pod}: {message}");
    let suffix = format!(
        ".{attempt}.{}.{}",
        refusal.kind.cause().as_str().to_ascii_lowercase(),
        first_refused.timestamp()
    );
    NotificationEvent {
        name: name_with_suffix(&job_name, &suffix),
        namespace: job.metadata.namespace.clone().unwrap_or_default(),
        event_type: EventType::Warning,
        reason: POD_REFUSED,
        labels: BTreeMap::from([(
            annotations::NOTIFICATION_TYPE.to_owned(),
            NOTIFICATION_TYPE.to_owned(),
        )]),
        message: crate::text::truncate(&text, MAX_EVENT_MESSAGE_BYTES, MESSAGE_CUT_MARKER)
            .into_owned(),
        job_name,
        job_uid: job.metadata.uid.clone(),
        completed_at: first_refused,
    }
}
