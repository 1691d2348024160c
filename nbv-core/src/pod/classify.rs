//! What the messages a validation Pod leaves mean: the notebook's report, the
//! kubelet's waiting reasons, and the output of a container that failed without a
//! report (the kubelet keeps the end of its log).

use std::time::Duration;

use k8s_openapi::api::core::v1::{ContainerStateWaiting, ContainerStatus};

use crate::phase::{Failure, FailureCause};
use crate::text::tail;

use super::git::{Checkout, NOTEBOOK_CHECKOUT};
use super::{RunErrorKind, RunReport};
use crate::checks::Outcome;

/// Longest excerpt of a container's output kept in a failure message.
const MAX_EXCERPT_BYTES: usize = 512;
/// Lines of a container's output kept in a failure message.
const EXCERPT_LINES: usize = 3;

/// Starts an excerpt whose beginning was cut.
const EXCERPT_CUT_MARKER: &str = "...";

/// The failure a notebook container reported in its result.
pub(super) fn notebook_error(report: &RunReport) -> Option<Failure> {
    let error = report.error.as_ref()?;
    let exception = match (error.ename.trim(), error.evalue.trim()) {
        ("", value) => value.to_owned(),
        (name, "") => name.to_owned(),
        (name, value) => format!("{name}: {value}"),
    };
    Some(match error.kind {
        RunErrorKind::Cell => {
            let cell = error
                .cell
                .map_or_else(|| "a cell".to_owned(), |c| format!("cell {c}"));
            FailureCause::NotebookCellFailed.failure(format!("{cell}: {exception}"))
        }
        RunErrorKind::Missing => FailureCause::NotebookNotFound.failure(format!(
            "{exception}; check spec.notebook.path and spec.notebook.git.ref"
        )),
        RunErrorKind::Invalid => FailureCause::NotebookInvalid
            .failure(format!("the notebook file cannot be read: {exception}")),
        RunErrorKind::Kernel => FailureCause::KernelDied.failure(format!(
            "the kernel died ({exception}); it most often ran out of memory: raise \
             spec.podConfig.resources.limits.memory"
        )),
        RunErrorKind::Setup => FailureCause::ExecutorSetupFailed.failure(format!(
            "{exception}; the image needs papermill (pip install papermill) and the kernel \
             the notebook names (metadata.kernelspec.name)"
        )),
        RunErrorKind::Comparison => {
            let first = report.cmp.as_ref().map(|c| c.first_difference());
            FailureCause::GoldenMismatch.failure(format!(
                "the outputs differ from the golden notebook (spec.goldenNotebook): {}",
                first.unwrap_or(exception)
            ))
        }
        RunErrorKind::Golden if error.ename == "FileNotFoundError" => FailureCause::GoldenNotFound
            .failure(format!(
                "{exception}; check spec.goldenNotebook.path and spec.goldenNotebook.git.ref"
            )),
        RunErrorKind::Golden => FailureCause::GoldenInvalid
            .failure(format!("the golden notebook cannot be read: {exception}")),
        RunErrorKind::Model => prediction_failure(report).unwrap_or_else(|| {
            prediction_cause(&error.ename).failure(format!("prediction check: {}", error.evalue))
        }),
        RunErrorKind::Check => {
            check_failure(report).unwrap_or_else(|| FailureCause::CheckFailed.failure(exception))
        }
        RunErrorKind::Internal | RunErrorKind::Unknown => FailureCause::ExecutorFailed
            .failure(format!("running the notebook failed: {exception}")),
    })
}

/// The failure a failing check finding means, whatever the exit code: the core, not
/// the script, decides that a finding fails the job. The message is the first failing
/// finding (it names the cell and the rule) and how many more there are.
pub(super) fn check_failure(report: &RunReport) -> Option<Failure> {
    let checks = report.chk.as_ref()?;
    let first = checks.failed()?;
    let others = checks
        .findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail)
        .count()
        - 1;
    let more = others as u64 + checks.more;
    let mut message = first.to_string();
    if more > 0 {
        message.push_str(&format!(
            "; {more} more {}",
            if more == 1 { "finding" } else { "findings" }
        ));
    }
    Some(FailureCause::CheckFailed.failure(message))
}

/// The failure a failed prediction check means, whatever the exit code: the core
/// decides that a model's answer fails the job. The message names the first failing
/// model, what it answered and how many more failed.
pub(super) fn prediction_failure(report: &RunReport) -> Option<Failure> {
    let predictions = report.mdl.as_ref()?;
    let first = predictions.iter().find(|p| !p.ok)?;
    let detail = first
        .detail
        .as_deref()
        .unwrap_or("its answer did not match spec.modelValidation.predictionValidation");
    let mut message = format!("prediction check: model {}: {detail}", first.model);
    let more = predictions.iter().filter(|p| !p.ok).count() - 1;
    if more > 0 {
        message.push_str(&format!(
            "; {more} more {} failed",
            if more == 1 { "model" } else { "models" }
        ));
    }
    // The reason the script gave, when it is the one for this model; otherwise what
    // the entry shows: an answer quoted is a mismatch, none is a model that did not
    // answer.
    let cause = match report.error.as_ref() {
        Some(e)
            if e.kind == RunErrorKind::Model
                && e.evalue.starts_with(&format!("model {}:", first.model)) =>
        {
            prediction_cause(&e.ename)
        }
        _ if first.actual.is_some() => FailureCause::PredictionMismatch,
        _ => FailureCause::PredictionFailed,
    };
    Some(cause.failure(message))
}

fn prediction_cause(ename: &str) -> FailureCause {
    if ename == "PredictionMismatch" {
        FailureCause::PredictionMismatch
    } else {
        FailureCause::PredictionFailed
    }
}

/// A failure for a container waiting for `waited` in `state`.
pub(super) fn waiting_failure(
    container: &ContainerStatus,
    state: &ContainerStateWaiting,
    waited: Duration,
    grace: Duration,
) -> Option<Failure> {
    let reason = state.reason.as_deref()?;
    let message = state.message.as_deref().unwrap_or_default();
    let name = &container.name;
    let image = &container.image;
    let after = human_seconds(i64::try_from(waited.as_secs()).unwrap_or(i64::MAX));
    match reason {
        "InvalidImageName" => Some(FailureCause::ImageNotFound.failure(with_detail(
            &format!("container {name:?} has an invalid image name {image:?}"),
            message,
        ))),
        "ErrImagePull" | "ImagePullBackOff" if waited >= grace => {
            let lower = message.to_ascii_lowercase();
            let cause = if IMAGE_MISSING.iter().any(|n| lower.contains(n)) {
                FailureCause::ImageNotFound
            } else {
                FailureCause::ImagePullBackOff
            };
            Some(cause.failure(with_detail(
                &format!(
                    "container {name:?} could not pull image {image:?} for {after}; check the \
                     image name and the pull secret of the service account"
                ),
                message,
            )))
        }
        "CreateContainerConfigError" if waited >= grace => {
            Some(FailureCause::ContainerConfigInvalid.failure(with_detail(
                &format!("container {name:?} cannot be configured after {after}"),
                message,
            )))
        }
        "CreateContainerError" if waited >= grace => {
            Some(FailureCause::ContainerCreateFailed.failure(with_detail(
                &format!("container {name:?} cannot be created after {after}"),
                message,
            )))
        }
        _ => None,
    }
}

/// A failure read from the notebook container's output when it wrote no report (the
/// kubelet then keeps the end of its log).
pub(super) fn classify_output(head: &str, output: &str) -> Failure {
    let lower = output.to_ascii_lowercase();
    if lower.contains("no module named 'papermill'")
        || lower.contains("python3: not found")
        || lower.contains("executable file not found")
    {
        FailureCause::ExecutorSetupFailed.failure(with_detail(
            &format!("{head}: the image lacks python3 or papermill"),
            output,
        ))
    } else if lower.contains("no such file") || lower.contains("filenotfounderror") {
        FailureCause::NotebookNotFound.failure(with_detail(
            &format!("{head}; check spec.notebook.path and spec.notebook.git.ref"),
            output,
        ))
    } else {
        FailureCause::ExecutorFailed.failure(with_detail(head, output))
    }
}

/// The failure of the clone container of `checkout` that exited with `exit_code`, from
/// the end of its output; `secret` is the credentials Secret it used, if any.
pub(super) fn clone_failure(
    checkout: Checkout,
    exit_code: i32,
    output: &str,
    secret: Option<&str>,
) -> Failure {
    let output = excerpt(output);
    let lower = output.to_ascii_lowercase();
    let origin = checkout.origin;
    let what = if checkout == NOTEBOOK_CHECKOUT {
        "the repository"
    } else {
        "the golden notebook's repository"
    };
    let head = format!(
        "cloning {what} failed (init container {:?}, exit code {exit_code})",
        checkout.container
    );
    if AUTH_FAILURES.iter().any(|n| lower.contains(n)) {
        let fix = secret.map_or_else(
            || format!("no credentials were given: set {origin}.git.credentialsSecret"),
            |s| format!("check the credentials in Secret {s:?}"),
        );
        FailureCause::GitCredentialsInvalid.failure(with_detail(
            &format!("{head}: the server refused access; {fix}"),
            &output,
        ))
    } else if NETWORK_FAILURES.iter().any(|n| lower.contains(n)) {
        FailureCause::GitUnreachable.failure(with_detail(
            &format!("{head}: the server could not be reached"),
            &output,
        ))
    } else {
        FailureCause::GitCloneFailed.failure(with_detail(
            &format!("{head}; check {origin}.git.url and {origin}.git.ref"),
            &output,
        ))
    }
}

/// What git prints when the server refuses access (lowercase).
const AUTH_FAILURES: [&str; 10] = [
    "authentication failed",
    "could not read username",
    "could not read password",
    "invalid username or password",
    "terminal prompts disabled",
    "permission denied (publickey",
    "host key verification failed",
    "access denied",
    "returned error: 401",
    "returned error: 403",
];

/// What git prints when the server cannot be reached (lowercase).
const NETWORK_FAILURES: [&str; 11] = [
    "could not resolve host",
    "temporary failure in name resolution",
    "connection timed out",
    "connection refused",
    "failed to connect",
    "operation timed out",
    "network is unreachable",
    "early eof",
    "the remote end hung up unexpectedly",
    "rpc failed",
    "returned error: 5",
];

/// What a kubelet's pull message says when the image cannot exist for this Pod
/// (lowercase).
const IMAGE_MISSING: [&str; 6] = [
    "not found",
    "manifest unknown",
    "repository does not exist",
    "pull access denied",
    "unauthorized",
    "authentication required",
];

/// `head: detail`, or `head` alone when the detail is blank.
pub(super) fn with_detail(head: &str, detail: &str) -> String {
    let detail = detail.trim();
    if detail.is_empty() {
        head.to_owned()
    } else {
        format!("{head}: {detail}")
    }
}

/// The last lines of a container's output, joined by ` | ` and cut to 512 bytes.
pub(super) fn excerpt(output: &str) -> String {
    // Only the end matters; bound the work on a long message.
    let lines: Vec<&str> = tail(output, 8 * MAX_EXCERPT_BYTES)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines[lines.len().saturating_sub(EXCERPT_LINES)..].join(" | ");
    if joined.len() <= MAX_EXCERPT_BYTES {
        return joined;
    }
    format!("{EXCERPT_CUT_MARKER}{}", tail(&joined, MAX_EXCERPT_BYTES))
}

/// `90` → `1m30s`, `3600` → `1h`; a negative count is `0s`.
pub(super) fn human_seconds(seconds: i64) -> String {
    crate::duration::format(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_timeouts() {
        assert_eq!(human_seconds(0), "0s");
        assert_eq!(human_seconds(90), "1m30s");
        assert_eq!(human_seconds(3600), "1h");
        assert_eq!(human_seconds(5430), "1h30m30s");
        assert_eq!(human_seconds(-5), "0s");
    }

    #[test]
    fn excerpts_keep_the_last_lines_within_the_budget() {
        assert_eq!(excerpt("a\n\nb\nc\nd\n"), "b | c | d");
        let long = format!("x\n{}", "é".repeat(1000));
        let cut = excerpt(&long);
        assert!(cut.len() <= MAX_EXCERPT_BYTES + 3 && cut.starts_with("..."));
        assert_eq!(excerpt(""), "");
    }
}
