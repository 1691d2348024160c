//! The structured message of a notification.

use std::fmt::Write;

use crate::api::{NotebookValidationJob, Phase};
use crate::duration::format_go_seconds;
use crate::text::truncate;

use super::{MAX_EVENT_MESSAGE_BYTES, MESSAGE_CUT_MARKER, NotificationContext, NotificationReason};
use crate::redact::redact_secrets;

/// A suggested next step for a failure, chosen from the failure message.
pub(crate) fn suggested_action(failure: &str) -> &'static str {
    let f = failure.to_ascii_lowercase();
    let rules: [(&[&str], &str); 8] = [
        // First: a refused Pod's message repeats the API server's `403`, which is no
        // Git credential's.
        (
            &[
                "securitycontextconstraints:",
                "podsecurityviolation:",
                "admissionwebhookdenied:",
                "admissionpolicydenied:",
                "quotarequireslimits:",
                "limitrangeviolation:",
                "quotaexceeded:",
                "podcreateforbidden:",
            ],
            "The API server refused the validation Pod: fix the policy the job's PodAdmitted condition names",
        ),
        (
            &["modulenotfounderror", "importerror", "no module named"],
            "Add the missing Python package to spec.podConfig.containerImage or the build requirements",
        ),
        (
            &[
                "imagepull",
                "errimagepull",
                "image pull",
                "manifest unknown",
            ],
            "Check spec.podConfig.containerImage and the pull secret of the service account",
        ),
        (
            &[
                "authentication",
                "permission denied",
                "credential",
                "could not read username",
                "403",
                "401",
            ],
            "Check spec.notebook.git.credentialsSecret and that it grants read access to the repository",
        ),
        (
            &["not found", "no such file", "does not exist"],
            "Check spec.notebook.path and spec.notebook.git.ref",
        ),
        (
            &["deadline", "timeout", "timed out"],
            "Raise spec.timeout or make the notebook faster",
        ),
        (
            &["oomkilled", "out of memory", "memoryerror", "evicted"],
            "Raise spec.podConfig.resources limits",
        ),
        (
            &["assertionerror", "assert"],
            "A notebook assertion failed: check the failing cell's output",
        ),
    ];
    rules
        .iter()
        .find(|(needles, _)| needles.iter().any(|n| f.contains(n)))
        .map_or(
            "Check the failing cell's output in the validation Pod's logs",
            |(_, a)| a,
        )
}

pub(super) fn render(
    job: &NotebookValidationJob,
    reason: NotificationReason,
    ctx: &NotificationContext,
) -> String {
    let status = job.status.clone().unwrap_or_default();
    let name = job.metadata.name.as_deref().unwrap_or_default();
    let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
    let detail = redact_secrets(status.message.as_deref().unwrap_or_default().trim());

    let mut facts = String::new();
    let phase = status.phase.unwrap_or(Phase::Failed);
    let _ = writeln!(facts, "Phase: {phase}");
    let retries = status.retry_count.unwrap_or(0).max(0);
    let exhausted =
        reason == NotificationReason::ValidationFailed && retries as u32 >= ctx.max_retries;
    let _ = writeln!(
        facts,
        "Retry count: {retries}/{}{}",
        ctx.max_retries,
        if exhausted { " (exhausted)" } else { "" }
    );
    if let (Some(start), Some(end)) = (status.start_time, status.completion_time) {
        let _ = writeln!(
            facts,
            "Duration: {}",
            format_go_seconds(u64::try_from((end - start).num_seconds()).unwrap_or(0))
        );
    }
    if let Some(wave) = ctx.sync_wave {
        let _ = writeln!(facts, "Sync wave: {wave}");
    }
    if let Some(app) = &ctx.application {
        let _ = writeln!(facts, "Application: {app}");
    }
    if reason == NotificationReason::ValidationFailed {
        let _ = writeln!(facts, "Suggested action: {}", suggested_action(&detail));
    }
    match status
        .validation_pod_name
        .as_deref()
        .filter(|p| !p.is_empty())
    {
        Some(pod) => {
            let _ = write!(facts, "Logs: kubectl logs -n {namespace} {pod}");
        }
        None => {
            let _ = write!(
                facts,
                "Details: kubectl describe notebookvalidationjob -n {namespace} {name}"
            );
        }
    }

    let headline = match reason {
        NotificationReason::ValidationSucceeded => {
            format!("NotebookValidationJob '{name}' succeeded")
        }
        NotificationReason::ValidationFailed => format!("NotebookValidationJob '{name}' failed"),
    };
    // The detail is what gets cut when the message is too long: the facts are what a
    // person needs to act, and they are short.
    let frame = headline.len() + ":\n\n\n".len() + facts.len();
    let room = MAX_EVENT_MESSAGE_BYTES.saturating_sub(frame);
    let detail = truncate(&detail, room, MESSAGE_CUT_MARKER);
    let text = if detail.is_empty() {
        format!("{headline}\n\n{facts}")
    } else {
        format!("{headline}:\n{detail}\n\n{facts}")
    };
    truncate(&text, MAX_EVENT_MESSAGE_BYTES, MESSAGE_CUT_MARKER).into_owned()
}

#[cfg(test)]
mod tests {
    use super::suggested_action;

    #[test]
    fn a_refused_pod_points_at_the_policy_not_at_git() {
        let failure = "Validation failed: SecurityContextConstraints: OpenShift security \
                       context constraints (restricted-v2) refused the validation pod: 403 Forbidden";
        assert!(suggested_action(failure).contains("PodAdmitted"));
    }

    #[test]
    fn missing_modules_and_images_point_at_the_container_image() {
        assert!(
            suggested_action("ModuleNotFoundError: No module named 'torch'")
                .contains("containerImage")
        );
        assert!(suggested_action("ErrImagePull").contains("containerImage"));
    }
}
