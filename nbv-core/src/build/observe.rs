//! What a build's watched object says of it: building, built (with the image's digest
//! and what was built), or failed (with the build system's reason and the log's
//! tail). Every text taken from a status is bounded and redacted: it ends up in the
//! job's status and Events, which anyone who can read the namespace sees.

use serde_json::Value;

use super::Route;
use crate::redact::redact_secrets;

/// The most bytes of a message or log tail taken from a build's status.
pub const MAX_STATUS_TEXT: usize = 4096;
/// The most bytes of a reason taken from a build's status.
const MAX_REASON: usize = 128;

/// The state of a build, read from its watched object ([`Route::watched`]).
///
/// # Examples
///
/// ```
/// use nbv_core::build::BuildObserved;
///
/// let failed = BuildObserved::Failed { reason: "PipelineRunTimeout".into(), message: "timed out".into() };
/// assert!(failed.is_finished());
/// assert!(!BuildObserved::Running.is_finished());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildObserved {
    /// Not started yet (queued, scheduling, pulling images).
    Pending,
    /// Building.
    Running,
    /// The image is pushed.
    Succeeded {
        /// Its digest (`sha256:` and 64 hexadecimal digits), when the build reported one.
        digest: Option<String>,
        /// `nbv build prepare`'s one-line summary, where nbv prepared the build.
        summary: Option<String>,
    },
    /// The build failed, timed out or was cancelled.
    Failed {
        /// The build system's reason (`PipelineRunTimeout`, `BuildRunCanceled`,
        /// `CloneFailed`…).
        reason: String,
        /// What it said, with the log's tail where it gives one; redacted.
        message: String,
    },
}

/// The reasons of a build stopped at its timeout: Tekton's, Shipwright's, and a Pod's
/// past its `activeDeadlineSeconds` (kaniko's; OpenShift's build Pods too).
const TIMEOUT_REASONS: [&str; 3] = ["PipelineRunTimeout", "BuildRunTimeout", "DeadlineExceeded"];

impl BuildObserved {
    /// Whether the build failed because it ran out of time (`buildConfig.timeout`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::BuildObserved;
    ///
    /// let failed = |reason: &str| BuildObserved::Failed { reason: reason.into(), message: String::new() };
    /// assert!(failed("PipelineRunTimeout").timed_out());
    /// assert!(failed("BuildRunTimeout").timed_out());
    /// assert!(!failed("Cancelled").timed_out());
    /// assert!(!BuildObserved::Running.timed_out());
    /// ```
    pub fn timed_out(&self) -> bool {
        matches!(self, BuildObserved::Failed { reason, .. } if TIMEOUT_REASONS.contains(&reason.as_str()))
    }

    /// Whether the build is over.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::BuildObserved;
    ///
    /// assert!(BuildObserved::Succeeded { digest: None, summary: None }.is_finished());
    /// assert!(!BuildObserved::Pending.is_finished());
    /// ```
    pub fn is_finished(&self) -> bool {
        matches!(
            self,
            BuildObserved::Succeeded { .. } | BuildObserved::Failed { .. }
        )
    }
}

/// What `object`, the watched object of a build by `route`, says of the build. An
/// object without a status has not started.
///
/// # Examples
///
/// ```
/// use nbv_core::build::{observe, BuildObserved, Route};
/// use serde_json::json;
///
/// let digest = format!("sha256:{}", "a".repeat(64));
/// let run = json!({"status": {
///     "conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}],
///     "results": [{"name": "IMAGE_DIGEST", "value": digest}, {"name": "SUMMARY", "value": "requirements.txt"}],
/// }});
/// assert_eq!(
///     observe(Route::Tekton, &run),
///     BuildObserved::Succeeded { digest: Some(digest), summary: Some("requirements.txt".into()) }
/// );
/// let build = json!({"status": {"phase": "Failed", "reason": "DockerBuildFailed",
///     "message": "Docker build strategy has failed.", "logSnippet": "error: no such file"}});
/// let BuildObserved::Failed { reason, message } = observe(Route::OpenShift, &build) else { panic!() };
/// assert_eq!(reason, "DockerBuildFailed");
/// assert!(message.ends_with("error: no such file"));
/// ```
pub fn observe(route: Route, object: &Value) -> BuildObserved {
    let status = &object["status"];
    match route {
        Route::Tekton => tekton(status),
        Route::Shipwright | Route::ShipwrightS2i => shipwright(status),
        Route::OpenShift => openshift(status),
        Route::Kaniko => kaniko(status),
    }
}

/// The `Succeeded` condition of a Knative-style status (Tekton, Shipwright).
fn succeeded_condition(status: &Value) -> Option<&Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Succeeded")
}

fn tekton(status: &Value) -> BuildObserved {
    let Some(condition) = succeeded_condition(status) else {
        return BuildObserved::Pending;
    };
    let reason = condition["reason"].as_str().unwrap_or_default();
    match condition["status"].as_str() {
        Some("True") => {
            // `results` in v1, `pipelineResults` in v1beta1.
            let results = status["results"]
                .as_array()
                .or_else(|| status["pipelineResults"].as_array());
            let result = |name: &str| {
                results?
                    .iter()
                    .find(|r| r["name"] == name)
                    .and_then(|r| r["value"].as_str())
            };
            BuildObserved::Succeeded {
                digest: result("IMAGE_DIGEST").and_then(digest),
                summary: result("SUMMARY").and_then(summary),
            }
        }
        Some("False") => BuildObserved::Failed {
            reason: bounded_reason(reason, "Failed"),
            message: message(&[condition["message"].as_str()]),
        },
        _ if matches!(reason, "PipelineRunPending" | "ResolvingPipelineRef" | "") => {
            BuildObserved::Pending
        }
        _ => BuildObserved::Running,
    }
}

fn shipwright(status: &Value) -> BuildObserved {
    let Some(condition) = succeeded_condition(status) else {
        return BuildObserved::Pending;
    };
    let reason = condition["reason"].as_str().unwrap_or_default();
    match condition["status"].as_str() {
        Some("True") => BuildObserved::Succeeded {
            digest: status["output"]["digest"].as_str().and_then(digest),
            summary: None,
        },
        Some("False") => {
            let details = &status["failureDetails"];
            // A step's failure says more than the condition's generic `Failed`.
            let reason = match details["reason"].as_str() {
                Some(detail) if reason == "Failed" || reason.is_empty() => detail,
                _ => reason,
            };
            let container = details["location"]["container"].as_str();
            let detail = details["message"].as_str().map(|m| match container {
                Some(container) => format!("{container}: {m}"),
                None => m.to_owned(),
            });
            BuildObserved::Failed {
                reason: bounded_reason(reason, "Failed"),
                message: message(&[condition["message"].as_str(), detail.as_deref()]),
            }
        }
        _ if matches!(reason, "Pending" | "") => BuildObserved::Pending,
        _ => BuildObserved::Running,
    }
}

fn openshift(status: &Value) -> BuildObserved {
    match status["phase"].as_str() {
        Some("Running") => BuildObserved::Running,
        Some("Complete") => BuildObserved::Succeeded {
            digest: status["output"]["to"]["imageDigest"]
                .as_str()
                .and_then(digest),
            summary: None,
        },
        Some(phase @ ("Failed" | "Error" | "Cancelled")) => BuildObserved::Failed {
            reason: bounded_reason(status["reason"].as_str().unwrap_or_default(), phase),
            message: message(&[status["message"].as_str(), status["logSnippet"].as_str()]),
        },
        // New, Pending, or not yet seen by the build controller.
        _ => BuildObserved::Pending,
    }
}

/// The kaniko Pod's containers, by name.
const CLONE: &str = "clone";
const PREPARE: &str = "prepare";
use super::objects::KANIKO_CONTAINER;

fn kaniko(status: &Value) -> BuildObserved {
    let init = status["initContainerStatuses"].as_array();
    let main = status["containerStatuses"].as_array();
    // The first container that failed, in the order they run.
    let failed = [
        (init, CLONE, "CloneFailed"),
        (init, PREPARE, "PrepareFailed"),
        (main, KANIKO_CONTAINER, "BuildFailed"),
    ]
    .into_iter()
    .find_map(|(statuses, name, reason)| {
        let state = terminated(statuses, name)?;
        (state["exitCode"].as_i64() != Some(0)).then_some((name, reason, state))
    });
    match (status["phase"].as_str(), failed) {
        (Some("Failed"), _) if status["reason"] == "DeadlineExceeded" => BuildObserved::Failed {
            reason: "DeadlineExceeded".to_owned(),
            message: message(&[
                Some("the build did not finish within its timeout"),
                status["message"].as_str(),
            ]),
        },
        (_, Some((name, reason, state))) => {
            let why = state["reason"].as_str().unwrap_or("Error");
            let text = state["message"].as_str().unwrap_or_default();
            BuildObserved::Failed {
                reason: reason.to_owned(),
                message: message(&[Some(&format!("{name} failed ({why})")), Some(text)]),
            }
        }
        (Some("Succeeded"), None) => BuildObserved::Succeeded {
            digest: terminated(main, KANIKO_CONTAINER)
                .and_then(|t| t["message"].as_str())
                .and_then(digest),
            summary: terminated(init, PREPARE)
                .and_then(|t| t["message"].as_str())
                .and_then(summary),
        },
        (Some("Failed"), None) => BuildObserved::Failed {
            reason: bounded_reason(status["reason"].as_str().unwrap_or_default(), "Failed"),
            message: message(&[status["message"].as_str()]),
        },
        (Some("Running"), None) => BuildObserved::Running,
        // Pending: running once the first init container has started.
        _ => {
            let started = init
                .into_iter()
                .flatten()
                .any(|s| s["state"]["running"].is_object() || s["state"]["terminated"].is_object());
            if started {
                BuildObserved::Running
            } else {
                BuildObserved::Pending
            }
        }
    }
}

/// The `state.terminated` of the container `name` among `statuses`.
fn terminated<'a>(statuses: Option<&'a Vec<Value>>, name: &str) -> Option<&'a Value> {
    statuses?
        .iter()
        .find(|s| s["name"] == name)
        .map(|s| &s["state"]["terminated"])
        .filter(|t| t.is_object())
}

/// `text` as an image digest, or `None` when it is not `sha256:` and 64 lowercase
/// hexadecimal digits.
fn digest(text: &str) -> Option<String> {
    let text = text.trim();
    let hex = text.strip_prefix("sha256:")?;
    (hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| text.to_owned())
}

/// A summary line, redacted and bounded; `None` when empty.
fn summary(text: &str) -> Option<String> {
    let text = bounded(text.trim(), MAX_STATUS_TEXT);
    (!text.is_empty()).then_some(text)
}

/// The non-empty parts joined into one message, redacted, its tail kept within
/// [`MAX_STATUS_TEXT`]: a log's last lines say why it failed.
fn message(parts: &[Option<&str>]) -> String {
    let joined: Vec<&str> = parts
        .iter()
        .flatten()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect();
    bounded(&joined.join("\n"), MAX_STATUS_TEXT)
}

fn bounded_reason(reason: &str, otherwise: &str) -> String {
    let reason = reason.trim();
    let reason = if reason.is_empty() { otherwise } else { reason };
    bounded(reason, MAX_REASON)
}

/// `text` redacted, then cut to its last `max` bytes (on a character boundary), with
/// `…` where it was cut. Redacting first: a cut could split a credential.
fn bounded(text: &str, max: usize) -> String {
    let text = redact_secrets(text);
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - (max - '…'.len_utf8());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::{bounded, digest};

    #[test]
    fn only_a_sha256_digest_is_one() {
        let good = format!("sha256:{}", "0f".repeat(32));
        assert_eq!(digest(&format!(" {good}\n")), Some(good));
        assert_eq!(digest(&format!("sha256:{}", "0F".repeat(32))), None);
        assert_eq!(digest("sha256:abc"), None);
        assert_eq!(digest("error: push failed"), None);
    }

    #[test]
    fn long_texts_keep_their_tail_within_the_bound() {
        let text = format!("{}é the end", "x".repeat(5000));
        let cut = bounded(&text, 100);
        assert!(cut.len() <= 100, "{}", cut.len());
        assert!(cut.starts_with('…') && cut.ends_with("é the end"));
        assert_eq!(bounded("short", 100), "short");
    }
}
