//! What a validation Pod's status means for the run: running, succeeded with results,
//! failed (and whether a retry may help), or nothing to report yet.

use std::time::Duration;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::{ContainerStateTerminated, ContainerStatus, Pod, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::{CellResult, ComparisonResult};
use crate::checks::Finding;
use crate::models::{MODELS_ENV, ReportedPrediction};
use crate::phase::{Attempt, Failure, FailureCause, PhaseEvent, PodRef};

use super::classify::{
    check_failure, classify_output, clone_failure, excerpt, human_seconds, notebook_error,
    prediction_failure, waiting_failure, with_detail,
};
use super::executor::{CHECKS_ENV, GOLDEN_ENV};
use super::git::{CHECKOUTS, Checkout};
use super::{ATTEMPT_LABEL, NOTEBOOK_CONTAINER, RunReport, pod_name};

/// The variables whose presence in the notebook container says what the Pod was to
/// report beside the cells: a comparison, the checks' findings, the models' answers.
/// Only their names are read ([`observed_part`](super::observed_part) keeps no more).
pub(super) const NOTEBOOK_SWITCHES: [&str; 3] = [GOLDEN_ENV, CHECKS_ENV, MODELS_ENV];

/// The condition of a Pod the node or the scheduler is stopping.
const DISRUPTION_TARGET: &str = "DisruptionTarget";
/// The condition that says why a Pod is not scheduled.
const POD_SCHEDULED: &str = "PodScheduled";
/// The Pod conditions the classification reads.
pub(super) const READ_CONDITIONS: [&str; 2] = [DISRUPTION_TARGET, POD_SCHEDULED];

/// The Pod named and labelled as the validation Pod of an attempt.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use nbv_core::phase::Attempt;
/// use nbv_core::pod::{pod_ref, ATTEMPT_LABEL};
///
/// let mut pod = Pod::default();
/// pod.metadata.name = Some("train-g3-r1".into());
/// pod.metadata.labels = Some([(ATTEMPT_LABEL.to_owned(), "g3-r1".to_owned())].into());
/// assert_eq!(pod_ref(&pod)?.attempt, Attempt::new(3, 1));
/// # Ok::<(), nbv_core::pod::InvalidValidationPod>(())
/// ```
///
/// # Errors
///
/// [`InvalidValidationPod`] when the Pod has no name or no valid [`ATTEMPT_LABEL`].
pub fn pod_ref(pod: &Pod) -> Result<PodRef, InvalidValidationPod> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let label = pod
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(ATTEMPT_LABEL));
    let attempt = match label.map(|l| l.parse::<Attempt>()) {
        Some(Ok(attempt)) if !name.is_empty() => attempt,
        Some(Ok(_)) => return Err(InvalidValidationPod::new(name, "it has no name")),
        Some(Err(e)) => return Err(InvalidValidationPod::new(name, e.to_string())),
        None => {
            return Err(InvalidValidationPod::new(
                name,
                format!("it has no {ATTEMPT_LABEL} label"),
            ));
        }
    };
    Ok(PodRef::new(name, attempt))
}

/// A Pod that is not a validation Pod nbv created.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use nbv_core::pod::pod_ref;
///
/// let err = pod_ref(&Pod::default()).unwrap_err();
/// assert_eq!(err.to_string(),
///     "pod \"\" is not a validation pod of nbv: it has no mlops.dev/attempt label");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pod {pod:?} is not a validation pod of nbv: {problem}")]
pub struct InvalidValidationPod {
    /// The Pod's name.
    pub pod: String,
    /// What is missing.
    pub problem: String,
}

impl InvalidValidationPod {
    fn new(pod: String, problem: impl Into<String>) -> Self {
        InvalidValidationPod {
            pod,
            problem: problem.into(),
        }
    }
}

/// What the validation Pod's status says, as the event to give the phase machine:
///
/// - `Pending` → `None`, unless the Pod is stuck: an image that cannot be pulled, or a
///   container that cannot be configured (a missing Secret), for `start_grace`; or no
///   start at all within its `activeDeadlineSeconds`;
/// - `Running` → [`PhaseEvent::PodRunning`];
/// - `Succeeded` → [`PhaseEvent::PodSucceeded`] with the cells of the notebook
///   container's report (none, and a message saying so, when it cannot be read);
/// - `Failed` → [`PhaseEvent::PodFailed`] with the [`FailureCause`] the status shows and
///   the cells reported, if any;
/// - `Unknown` (the node does not answer) → `None`: the node controller decides.
///
/// Messages quote what the Pod reported, with credentials redacted.
///
/// # Examples
///
/// ```
/// use chrono::Utc;
/// use nbv_core::phase::PhaseEvent;
/// use nbv_core::pod::{observe_pod, DEFAULT_START_GRACE};
///
/// let pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "train-g1-r0", "labels": {"mlops.dev/attempt": "g1-r0"}},
///     "status": {"phase": "Failed", "containerStatuses": [{
///         "name": "notebook", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
///         "state": {"terminated": {"exitCode": 1, "message":
///             "{\"cells\":[{\"i\":4,\"s\":\"err\",\"e\":\"KeyError: 'x'\"}],\"error\":{\"kind\":\"cell\",\"cell\":4,\"ename\":\"KeyError\",\"evalue\":\"'x'\"}}"}}
///     }]}
/// }))?;
/// let Some(PhaseEvent::PodFailed { failure, results, .. }) = observe_pod(&pod, Utc::now(), DEFAULT_START_GRACE)? else {
///     panic!("a failed pod");
/// };
/// assert_eq!(failure.reason.as_str(), "NotebookCellFailed");
/// assert_eq!(failure.message, "cell 4: KeyError: 'x'");
/// assert_eq!(results.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`InvalidValidationPod`] when the Pod lacks the name or attempt label nbv gives it.
pub fn observe_pod(
    pod: &Pod,
    now: DateTime<Utc>,
    start_grace: Duration,
) -> Result<Option<PhaseEvent>, InvalidValidationPod> {
    let pod_ref = pod_ref(pod)?;
    let Some(status) = pod.status.as_ref() else {
        return Ok(None);
    };
    let view = View { pod, status };
    Ok(match status.phase.as_deref() {
        Some("Running") => Some(PhaseEvent::PodRunning { pod: pod_ref }),
        Some("Succeeded") => Some(match view.success() {
            Ended::Passed((results, message, comparison)) => PhaseEvent::PodSucceeded {
                pod: pod_ref,
                results,
                message: Some(message),
                comparison,
                warnings: view.warnings(),
            },
            Ended::Failed((failure, results, comparison)) => PhaseEvent::PodFailed {
                pod: pod_ref,
                failure,
                results,
                comparison,
                warnings: view.warnings(),
            },
        }),
        Some("Failed") => {
            let (failure, results, comparison) = view.failure();
            Some(PhaseEvent::PodFailed {
                pod: pod_ref,
                failure,
                results,
                comparison,
                warnings: view.warnings(),
            })
        }
        Some("Pending") | None => {
            view.stuck(now, start_grace)
                .map(|failure| PhaseEvent::PodFailed {
                    pod: pod_ref,
                    failure,
                    results: Vec::new(),
                    comparison: None,
                    warnings: Vec::new(),
                })
        }
        Some(_) => None,
    })
}

/// What the validation Pod reported of the prediction check (`mdl` of its report),
/// for [`record_predictions`](crate::models::record_predictions): `None` when its
/// notebook container wrote no readable report or the report has no prediction check.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::reported_predictions;
///
/// let pod = serde_json::from_value(serde_json::json!({
///     "status": {"phase": "Succeeded", "containerStatuses": [{
///         "name": "notebook", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
///         "state": {"terminated": {"exitCode": 0, "message":
///             "{\"cells\":[],\"mdl\":[{\"m\":\"ml/fraud\",\"ok\":true}]}"}}
///     }]}
/// }))?;
/// let predictions = reported_predictions(&pod).expect("reported");
/// assert!(predictions[0].ok);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn reported_predictions(pod: &Pod) -> Option<Vec<ReportedPrediction>> {
    let status = pod.status.as_ref()?;
    let view = View { pod, status };
    view.report()?.ok()?.mdl
}

/// The event for an attempt whose Pod was started but no longer exists: a transient
/// [`FailureCause::PodDeleted`] (someone deleted it, or it was garbage-collected with
/// its node).
///
/// # Examples
///
/// ```
/// use nbv_core::phase::{Attempt, PhaseEvent};
///
/// let event = nbv_core::pod::pod_vanished("train", Attempt::new(2, 0));
/// let PhaseEvent::PodFailed { pod, failure, .. } = event else { panic!() };
/// assert_eq!(pod.name, "train-g2-r0");
/// assert_eq!(failure.reason.as_str(), "PodDeleted");
/// ```
pub fn pod_vanished(job_name: &str, attempt: Attempt) -> PhaseEvent {
    let name = pod_name(job_name, attempt);
    let failure = FailureCause::PodDeleted.failure(format!(
        "the validation pod {name} no longer exists; it was deleted before it ended"
    ));
    PhaseEvent::PodFailed {
        pod: PodRef::new(name, attempt),
        failure,
        results: Vec::new(),
        comparison: None,
        warnings: Vec::new(),
    }
}

/// What a succeeded Pod reports: cell results, the summary, the comparison.
type Success = (Vec<CellResult>, String, Option<ComparisonResult>);
/// What a failed Pod reports: the failure, cell results, the comparison.
type Failed = (Failure, Vec<CellResult>, Option<ComparisonResult>);

/// How a Pod that ended Succeeded ended for nbv.
enum Ended {
    Passed(Success),
    Failed(Failed),
}

/// A Pod and its status, with the lookups the classification needs.
struct View<'a> {
    pod: &'a Pod,
    status: &'a PodStatus,
}

impl View<'_> {
    fn container(&self, name: &str) -> Option<&ContainerStatus> {
        let init = self.status.init_container_statuses.iter().flatten();
        let main = self.status.container_statuses.iter().flatten();
        init.chain(main).find(|c| c.name == name)
    }

    fn terminated(&self, name: &str) -> Option<&ContainerStateTerminated> {
        let status = self.container(name)?;
        let state = status.state.as_ref().and_then(|s| s.terminated.as_ref());
        state.or_else(|| status.last_state.as_ref()?.terminated.as_ref())
    }

    /// The notebook container's report, when it wrote one.
    fn report(&self) -> Option<Result<RunReport, super::InvalidReport>> {
        let message = self.terminated(NOTEBOOK_CONTAINER)?.message.as_deref()?;
        (!message.trim().is_empty()).then(|| RunReport::parse(message))
    }

    /// Whether the notebook container sets the environment variable `name`.
    fn notebook_env(&self, name: &str) -> bool {
        let Some(spec) = self.pod.spec.as_ref() else {
            return false;
        };
        spec.containers
            .iter()
            .filter(|c| c.name == NOTEBOOK_CONTAINER)
            .flat_map(|c| c.env.iter().flatten())
            .any(|e| e.name == name)
    }

    /// Whether the Pod compares with a golden notebook (its notebook container has
    /// the golden notebook's path).
    fn compares(&self) -> bool {
        self.notebook_env(GOLDEN_ENV)
    }

    /// Whether the Pod runs the checks of `spec.validationConfig` (its notebook
    /// container has the check policy).
    fn checks(&self) -> bool {
        self.notebook_env(CHECKS_ENV)
    }

    /// Whether the Pod asks models for predictions (its notebook container has the
    /// prediction check's settings).
    fn predicts(&self) -> bool {
        self.notebook_env(MODELS_ENV)
    }

    /// What the report must hold beside the cells, named for a message: a Pod that
    /// was to compare, check or ask the models and does not say how it went has not
    /// passed.
    fn owed(&self) -> Option<String> {
        let owed = self.owed_before_models();
        if !self.predicts() {
            return owed.map(str::to_owned);
        }
        let models = "the prediction check of spec.modelValidation";
        Some(match owed {
            None => format!("{models} is unknown"),
            Some(owed) => format!("{owed}, and so is {models}"),
        })
    }

    fn owed_before_models(&self) -> Option<&'static str> {
        match (self.compares(), self.checks()) {
            (true, true) => {
                Some("the comparison with the golden notebook and the checks are unknown")
            }
            (true, false) => Some("the comparison with the golden notebook is unknown"),
            (false, true) => Some("the outcome of the checks of spec.validationConfig is unknown"),
            (false, false) => None,
        }
    }

    /// The check findings that only warn.
    fn warnings(&self) -> Vec<Finding> {
        let report = self.report().and_then(Result::ok);
        let checks = report.and_then(|r| r.chk);
        checks.map_or_else(Vec::new, |c| c.warnings().cloned().collect())
    }

    /// The outcome of a Pod that ended Succeeded: a success, or a failure when the
    /// report says the comparison or a check failed, or lacks a comparison or checks
    /// the Pod was to make (the core, not the script's exit code, has the last word).
    fn success(&self) -> Ended {
        let report = match (self.report(), self.owed()) {
            (Some(Ok(report)), _) => report,
            (Some(Err(e)), Some(owed)) => {
                return Ended::Failed((
                    FailureCause::ExecutorFailed.failure(format!(
                        "the notebook ran, but its result could not be read, so {owed}: {e}"
                    )),
                    Vec::new(),
                    None,
                ));
            }
            (Some(Err(e)), None) => {
                return Ended::Passed((
                    Vec::new(),
                    format!("the notebook ran, but its result could not be read: {e}"),
                    None,
                ));
            }
            (None, Some(owed)) => {
                return Ended::Failed((
                    FailureCause::ExecutorFailed.failure(format!(
                        "the notebook ran, but its container reported no result, so {owed}"
                    )),
                    Vec::new(),
                    None,
                ));
            }
            (None, None) => {
                return Ended::Passed((
                    Vec::new(),
                    "the notebook ran, but its container reported no result".to_owned(),
                    None,
                ));
            }
        };
        let results = report.cell_results();
        let comparison = report.cmp.as_ref().map(|c| c.status());
        let missing = |what: &str| {
            FailureCause::ExecutorFailed.failure(format!(
                "the notebook ran, but its container reported no {what}; the image's python3 \
                 may have run another script"
            ))
        };
        let mut summary = report.summary();
        match &report.cmp {
            Some(cmp) if !cmp.matched() => {
                let failure = FailureCause::GoldenMismatch.failure(format!(
                    "the outputs differ from the golden notebook (spec.goldenNotebook): {}",
                    cmp.first_difference()
                ));
                return Ended::Failed((failure, results, comparison));
            }
            None if self.compares() => {
                let failure = missing("comparison with the golden notebook");
                return Ended::Failed((failure, results, None));
            }
            Some(cmp) => summary.push_str(&format!(
                "; the outputs match the golden notebook ({} code {} compared, {})",
                cmp.total,
                if cmp.total == 1 { "cell" } else { "cells" },
                cmp.strategy
            )),
            None => {}
        }
        if let Some(failure) = check_failure(&report) {
            return Ended::Failed((failure, results, comparison));
        }
        if let Some(failure) = prediction_failure(&report) {
            return Ended::Failed((failure, results, comparison));
        }
        match &report.mdl {
            None if self.predicts() => {
                let failure = missing("answers of the models to the prediction check");
                return Ended::Failed((failure, results, comparison));
            }
            Some(predictions) if !predictions.is_empty() => summary.push_str(&format!(
                "; {} answered as spec.modelValidation.predictionValidation expects",
                if predictions.len() == 1 {
                    "the model".to_owned()
                } else {
                    format!("the {} models", predictions.len())
                }
            )),
            _ => {}
        }
        match &report.chk {
            None if self.checks() => {
                let failure = missing("findings of the checks of spec.validationConfig");
                return Ended::Failed((failure, results, comparison));
            }
            Some(checks) => {
                let warnings: Vec<Finding> = checks.warnings().cloned().collect();
                if !warnings.is_empty() {
                    summary.push_str("; ");
                    summary.push_str(&crate::checks::warnings_message(&warnings));
                }
            }
            None => {}
        }
        Ended::Passed((results, summary, comparison))
    }

    fn failure(&self) -> Failed {
        let report = self.report().and_then(Result::ok);
        let results = report
            .as_ref()
            .map(RunReport::cell_results)
            .unwrap_or_default();
        let comparison = report
            .as_ref()
            .and_then(|r| r.cmp.as_ref())
            .map(|c| c.status());
        let failure = if self.status.reason.as_deref() == Some("DeadlineExceeded") {
            self.deadline_exceeded()
        } else if let Some(failure) = report.as_ref().and_then(notebook_error) {
            failure
        } else if let Some(failure) = self.disrupted() {
            failure
        } else if let Some(failure) = self.clone_failed() {
            failure
        } else if let Some(failure) = self.notebook_failed(report.is_some()) {
            failure
        } else {
            let reason = self.status.reason.as_deref().unwrap_or("no reason given");
            let message = self.status.message.as_deref().unwrap_or_default();
            FailureCause::PodRejected.failure(with_detail(
                &format!("the pod failed before its containers ran ({reason})"),
                message,
            ))
        };
        (failure, results, comparison)
    }

    fn deadline_exceeded(&self) -> Failure {
        let deadline = self.deadline_text();
        // A notebook container still waiting at the deadline never ran: the time went
        // to getting the Pod going, and a faster notebook would not help.
        let waiting = self
            .container(NOTEBOOK_CONTAINER)
            .and_then(|c| c.state.as_ref()?.waiting.as_ref());
        if let Some(waiting) = waiting {
            let reason = waiting.reason.as_deref().unwrap_or("no reason given");
            return FailureCause::Timeout.failure(format!(
                "the notebook never started within spec.timeout ({deadline}): its container \
                 was still waiting ({reason}) when the pod was stopped; fix what keeps the \
                 pod from starting (image, volumes, node resources) or raise spec.timeout"
            ));
        }
        FailureCause::Timeout.failure(format!(
            "the notebook did not finish within spec.timeout ({deadline}) and was stopped; \
             raise spec.timeout or make the notebook faster"
        ))
    }

    fn deadline_text(&self) -> String {
        let seconds = self
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.active_deadline_seconds);
        seconds.map_or_else(|| "unknown".to_owned(), human_seconds)
    }

    /// Failures of the Pod as a whole: eviction, preemption, a lost node.
    fn disrupted(&self) -> Option<Failure> {
        let message = self.status.message.as_deref().unwrap_or_default();
        let cause = match self.status.reason.as_deref() {
            Some("Evicted") => Some(FailureCause::Evicted),
            Some("NodeLost" | "NodeShutdown" | "Shutdown" | "Terminated") => {
                Some(FailureCause::NodeLost)
            }
            Some("Preempting") => Some(FailureCause::Preempted),
            _ => None,
        };
        if let Some(cause) = cause {
            return Some(cause.failure(with_detail(
                "the pod was stopped before the notebook finished",
                message,
            )));
        }
        let condition = self
            .status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == DISRUPTION_TARGET && c.status == "True")?;
        let cause = match condition.reason.as_deref() {
            Some("PreemptionByScheduler") => FailureCause::Preempted,
            Some("DeletionByTaintManager" | "DeletionByPodGC") => FailureCause::NodeLost,
            _ => FailureCause::Evicted,
        };
        let reason = condition.reason.as_deref().unwrap_or("DisruptionTarget");
        let detail = condition.message.as_deref().unwrap_or_default();
        Some(cause.failure(with_detail(
            &format!("the pod was disrupted ({reason})"),
            detail,
        )))
    }

    fn clone_failed(&self) -> Option<Failure> {
        CHECKOUTS.into_iter().find_map(|checkout| {
            let terminated = self
                .terminated(checkout.container)
                .filter(|t| t.exit_code != 0)?;
            Some(clone_failure(
                checkout,
                terminated.exit_code,
                terminated.message.as_deref().unwrap_or_default(),
                self.git_secret(checkout).as_deref(),
            ))
        })
    }

    /// The Secret the clone container of `checkout` takes credentials from.
    fn git_secret(&self, checkout: Checkout) -> Option<String> {
        let spec = self.pod.spec.as_ref()?;
        let clone = spec
            .init_containers
            .iter()
            .flatten()
            .find(|c| c.name == checkout.container)?;
        let from_env = clone
            .env
            .iter()
            .flatten()
            .filter_map(|e| e.value_from.as_ref()?.secret_key_ref.as_ref())
            .map(|s| s.name.clone())
            .next();
        let from_volume = || {
            spec.volumes
                .iter()
                .flatten()
                .filter(|v| v.name == checkout.ssh_volume)
                .find_map(|v| v.secret.as_ref()?.secret_name.clone())
        };
        from_env.or_else(from_volume)
    }

    /// Failures of the notebook container that its report does not explain.
    fn notebook_failed(&self, reported: bool) -> Option<Failure> {
        let terminated = self.terminated(NOTEBOOK_CONTAINER)?;
        let code = terminated.exit_code;
        let output = excerpt(terminated.message.as_deref().unwrap_or_default());
        let head = format!("the notebook container exited with code {code}");
        let failure = match terminated.reason.as_deref() {
            Some("OOMKilled") => FailureCause::OOMKilled.failure(format!(
                "the notebook container was OOMKilled: it exceeded its memory limit; raise \
                 spec.podConfig.resources.limits.memory{}",
                self.memory_limit()
                    .map_or_else(String::new, |l| format!(" (now {l})"))
            )),
            Some("ContainerStatusUnknown") => FailureCause::NodeLost
                .failure("the notebook container's state was lost, most likely with its node"),
            Some("StartError" | "ContainerCannotRun") => {
                FailureCause::ExecutorSetupFailed.failure(with_detail(
                    "the image cannot run python3; use an image with Python 3 and papermill",
                    &output,
                ))
            }
            _ if reported => FailureCause::ExecutorFailed.failure(with_detail(&head, &output)),
            _ => classify_output(&head, &output),
        };
        Some(failure)
    }

    fn memory_limit(&self) -> Option<String> {
        let spec = self.pod.spec.as_ref()?;
        let container = spec
            .containers
            .iter()
            .find(|c| c.name == NOTEBOOK_CONTAINER)?;
        let limits = container.resources.as_ref()?.limits.as_ref()?;
        limits.get("memory").map(|q| q.0.clone())
    }

    /// A failure for a Pending Pod that cannot get going.
    fn stuck(&self, now: DateTime<Utc>, grace: Duration) -> Option<Failure> {
        let started = self
            .status
            .start_time
            .as_ref()
            .or(self.pod.metadata.creation_timestamp.as_ref())
            .and_then(chrono_time);
        let waited = started.map_or(Duration::ZERO, |t| elapsed(t, now));
        let waiting = self
            .status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(self.status.container_statuses.iter().flatten())
            .filter_map(|c| Some((c, c.state.as_ref()?.waiting.as_ref()?)));
        for (container, state) in waiting {
            if let Some(failure) = waiting_failure(container, state, waited, grace) {
                return Some(failure);
            }
        }
        let created = self
            .pod
            .metadata
            .creation_timestamp
            .as_ref()
            .and_then(chrono_time)?;
        let deadline = self.pod.spec.as_ref()?.active_deadline_seconds?;
        let deadline = Duration::from_secs(u64::try_from(deadline).unwrap_or(0));
        if elapsed(created, now) < deadline {
            return None;
        }
        let scheduling = self
            .status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == POD_SCHEDULED && c.status == "False")
            .and_then(|c| c.message.as_deref())
            .unwrap_or_default();
        Some(FailureCause::Timeout.failure(with_detail(
            &format!(
                "the pod did not start within spec.timeout ({})",
                self.deadline_text()
            ),
            scheduling,
        )))
    }
}

fn chrono_time(time: &Time) -> Option<DateTime<Utc>> {
    let nanos = u32::try_from(time.0.subsec_nanosecond()).unwrap_or(0);
    DateTime::from_timestamp(time.0.as_second(), nanos)
}

fn elapsed(since: DateTime<Utc>, now: DateTime<Utc>) -> Duration {
    (now - since).to_std().unwrap_or(Duration::ZERO)
}
