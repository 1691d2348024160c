//! The one classification of the API server's answer to a Pod create that did not
//! create the Pod.

use std::fmt;

use crate::api_answer::{AnswerClass, ApiAnswer};
use crate::redact::redact_secrets;
use crate::text::truncate;

use super::shapes::{
    LIMIT_RANGE, POD_SECURITY, QUOTA_EXCEEDED, QUOTA_FAILED, QUOTA_UNKNOWN, RBAC_CANNOT, RBAC_USER,
    SCC, TERMINATING, VAP, WEBHOOK_DENIED, WEBHOOK_FAILED, engine_policies, name_after,
    scc_providers,
};
use crate::phase::FailureCause;

/// Longest part of the API server's answer that nbv repeats (in a condition, a status
/// message, an Event), in bytes: enough for an SCC refusal that lists a few providers,
/// bounded so that a webhook's essay does not fill the job's status.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{MAX_ANSWER_BYTES, PodRefusal};
/// use nbv_core::api_answer::ApiAnswer;
///
/// let essay = ApiAnswer::status(403, "Forbidden", "x".repeat(10_000));
/// assert!(PodRefusal::of(&essay).unwrap().answer.len() <= MAX_ANSWER_BYTES);
/// ```
pub const MAX_ANSWER_BYTES: usize = 2048;

/// Ends an answer that was cut to [`MAX_ANSWER_BYTES`].
const ANSWER_CUT_MARKER: &str = "… [cut]";

/// Who or what refused the validation Pod, as read from the API server's answer.
///
/// # Examples
///
/// ```
/// use nbv_core::pod::RefusalKind;
///
/// let kind = RefusalKind::QuotaExceeded { quota: "compute".into() };
/// assert!(!kind.is_permanent());
/// assert_eq!(kind.cause().as_str(), "QuotaExceeded");
/// assert_eq!(kind.to_string(), "ResourceQuota \"compute\" is used up");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// The Pod is invalid (422 Invalid, 400 BadRequest).
    SpecInvalid,
    /// Pod Security admission forbids the Pod in its namespace.
    PodSecurity {
        /// The enforced level and version, e.g. `restricted:latest`.
        profile: String,
    },
    /// OpenShift's security context constraints admit the Pod under none of the SCCs
    /// its service account may use (from the SCC admission plugin, or a webhook that
    /// applies the same rules).
    SecurityContextConstraints {
        /// The SCCs that judged the Pod and refused it (`restricted-v2`).
        providers: Vec<String>,
    },
    /// A validating admission webhook denied the Pod (Kyverno, Gatekeeper, …).
    WebhookDenied {
        /// The webhook's name, e.g. `validate.kyverno.svc-fail`.
        webhook: String,
        /// The policies or constraints the denial names (Kyverno's policies,
        /// Gatekeeper's constraints), when it names any.
        policies: Vec<String>,
    },
    /// A ValidatingAdmissionPolicy denied the Pod.
    PolicyDenied {
        /// The policy's name.
        policy: String,
    },
    /// A ResourceQuota requires requests or limits the Pod does not set.
    QuotaRequiresLimits {
        /// The quota's name.
        quota: String,
    },
    /// A LimitRange of the namespace refuses the Pod's requests or limits.
    LimitRange,
    /// A ResourceQuota is used up (or its usage is not computed yet).
    QuotaExceeded {
        /// The quota's name.
        quota: String,
    },
    /// nbv may not create Pods there (its RBAC), or an unknown policy forbids it.
    Forbidden {
        /// The user RBAC names (`system:serviceaccount:nbv-system:nbv`), when the
        /// answer is RBAC's.
        user: Option<String>,
    },
    /// The namespace is being deleted.
    NamespaceTerminating,
    /// An admission webhook could not be called (down, unreachable, timed out).
    WebhookUnavailable {
        /// The webhook's name.
        webhook: String,
    },
    /// The API server did not answer, or answered 5xx, 429, 408 or 401.
    Unavailable,
    /// Any other answer (404, 405, …).
    Unexpected,
}

impl RefusalKind {
    /// Whether no retry can fix it: the Pod or a policy must change. The other kinds
    /// are someone else's to fix (a quota that frees, a permission granted, a webhook
    /// back up): they are retried until the pod admission timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::RefusalKind;
    ///
    /// assert!(RefusalKind::LimitRange.is_permanent());
    /// assert!(!RefusalKind::Unavailable.is_permanent());
    /// ```
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            RefusalKind::SpecInvalid
                | RefusalKind::PodSecurity { .. }
                | RefusalKind::SecurityContextConstraints { .. }
                | RefusalKind::WebhookDenied { .. }
                | RefusalKind::PolicyDenied { .. }
                | RefusalKind::QuotaRequiresLimits { .. }
                | RefusalKind::LimitRange
        )
    }

    /// The cause, whose name is the reason of the `PodAdmitted` condition and, when
    /// the attempt fails, of the job's failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::pod::RefusalKind;
    ///
    /// let kind = RefusalKind::PodSecurity { profile: "restricted:latest".into() };
    /// assert_eq!(kind.cause().as_str(), "PodSecurityViolation");
    /// ```
    pub fn cause(&self) -> FailureCause {
        match self {
            RefusalKind::SpecInvalid => FailureCause::PodSpecInvalid,
            RefusalKind::PodSecurity { .. } => FailureCause::PodSecurityViolation,
            RefusalKind::SecurityContextConstraints { .. } => {
                FailureCause::SecurityContextConstraints
            }
            RefusalKind::WebhookDenied { .. } => FailureCause::AdmissionWebhookDenied,
            RefusalKind::PolicyDenied { .. } => FailureCause::AdmissionPolicyDenied,
            RefusalKind::QuotaRequiresLimits { .. } => FailureCause::QuotaRequiresLimits,
            RefusalKind::LimitRange => FailureCause::LimitRangeViolation,
            RefusalKind::QuotaExceeded { .. } => FailureCause::QuotaExceeded,
            RefusalKind::Forbidden { .. } => FailureCause::PodCreateForbidden,
            RefusalKind::NamespaceTerminating => FailureCause::NamespaceTerminating,
            RefusalKind::WebhookUnavailable { .. } => FailureCause::AdmissionWebhookUnavailable,
            RefusalKind::Unavailable => FailureCause::APIServerUnavailable,
            RefusalKind::Unexpected => FailureCause::PodCreateFailed,
        }
    }
}

/// What refused the Pod, naming the policy: "OpenShift security context constraints
/// (restricted-v2) refused the validation pod".
impl fmt::Display for RefusalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusalKind::SpecInvalid => {
                f.write_str("the API server found the validation pod invalid")
            }
            RefusalKind::PodSecurity { profile } => write!(
                f,
                "Pod Security admission (profile \"{profile}\") refused the validation pod"
            ),
            RefusalKind::SecurityContextConstraints { providers } if providers.is_empty() => {
                f.write_str("OpenShift security context constraints refused the validation pod")
            }
            RefusalKind::SecurityContextConstraints { providers } => write!(
                f,
                "OpenShift security context constraints ({}) refused the validation pod",
                providers.join(", ")
            ),
            RefusalKind::WebhookDenied { webhook, policies } if policies.is_empty() => {
                write!(
                    f,
                    "admission webhook \"{webhook}\" denied the validation pod"
                )
            }
            RefusalKind::WebhookDenied { webhook, policies } => write!(
                f,
                "admission webhook \"{webhook}\" (policies {}) denied the validation pod",
                policies.join(", ")
            ),
            RefusalKind::PolicyDenied { policy } => write!(
                f,
                "ValidatingAdmissionPolicy \"{policy}\" denied the validation pod"
            ),
            RefusalKind::QuotaRequiresLimits { quota } => write!(
                f,
                "ResourceQuota \"{quota}\" requires requests or limits the validation pod does not set"
            ),
            RefusalKind::LimitRange => {
                f.write_str("a LimitRange of the namespace refused the validation pod's resources")
            }
            RefusalKind::QuotaExceeded { quota } => {
                write!(f, "ResourceQuota \"{quota}\" is used up")
            }
            RefusalKind::Forbidden { user: Some(user) } => write!(
                f,
                "RBAC does not let nbv ({user}) create pods in the job's namespace"
            ),
            RefusalKind::Forbidden { user: None } => {
                f.write_str("the API server forbade creating the validation pod")
            }
            RefusalKind::NamespaceTerminating => {
                f.write_str("the job's namespace is being deleted")
            }
            RefusalKind::WebhookUnavailable { webhook } => {
                write!(f, "admission webhook \"{webhook}\" could not be called")
            }
            RefusalKind::Unavailable => f.write_str("the API server was not available"),
            RefusalKind::Unexpected => f.write_str("the API server refused the validation pod"),
        }
    }
}

/// The API server's answer to a Pod create that did not create the Pod, classified:
/// what refused it ([`RefusalKind`]), and the answer itself, cut to
/// [`MAX_ANSWER_BYTES`] with credentials redacted.
///
/// The one classification of these answers: the shell asks it for every Pod create
/// that fails and does what it says ([`crate::reconcile::pod_refused_at`]); `None`
/// from [`PodRefusal::of`] means the Pod exists (409 `AlreadyExists`).
///
/// # Examples
///
/// ```
/// use nbv_core::pod::{PodRefusal, RefusalKind};
/// use nbv_core::api_answer::ApiAnswer;
///
/// let answer = ApiAnswer::status(403, "Forbidden",
///     "pods \"train-g1-r0\" is forbidden: unable to validate against any security context constraint: \
///      [provider restricted-v2: .containers[0].runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999]]");
/// let refusal = PodRefusal::of(&answer).expect("refused");
/// assert_eq!(refusal.kind, RefusalKind::SecurityContextConstraints { providers: vec!["restricted-v2".into()] });
/// assert!(refusal.kind.is_permanent());
/// assert!(refusal.answer.starts_with("403 Forbidden: pods \"train-g1-r0\" is forbidden"));
///
/// assert!(PodRefusal::of(&ApiAnswer::status(409, "AlreadyExists", "pods \"p\" already exists")).is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodRefusal {
    /// What refused the Pod.
    pub kind: RefusalKind,
    /// The answer (`403 Forbidden: <message>`), redacted and bounded.
    pub answer: String,
}

impl PodRefusal {
    /// The refusal `answer` is; `None` when it says that the Pod already exists (an
    /// earlier reconcile created it: it is the attempt's Pod).
    pub fn of(answer: &ApiAnswer) -> Option<PodRefusal> {
        let kind = kind_of(answer)?;
        let text = redact_secrets(answer.to_string().trim());
        Some(PodRefusal {
            kind,
            answer: truncate(&text, MAX_ANSWER_BYTES, ANSWER_CUT_MARKER).into_owned(),
        })
    }
}

fn kind_of(answer: &ApiAnswer) -> Option<RefusalKind> {
    let class = answer.class();
    let (code, reason, message) = match answer {
        ApiAnswer::Status {
            code,
            reason,
            message,
        } => (*code, reason.as_str(), message.as_str()),
        ApiAnswer::NoAnswer { .. } => return Some(RefusalKind::Unavailable),
    };
    if class == AnswerClass::Conflict && reason != "Conflict" {
        // 409 AlreadyExists: the attempt's Pod exists. (A `Conflict` cannot answer a
        // create; it is read as any other unexpected answer below.)
        return None;
    }
    // The message first: a webhook or a plugin may answer with any code.
    if message.contains(SCC) {
        return Some(RefusalKind::SecurityContextConstraints {
            providers: scc_providers(message),
        });
    }
    if let Some(profile) = name_after(message, POD_SECURITY, &[':', ' ']) {
        return Some(RefusalKind::PodSecurity {
            profile: profile.to_owned(),
        });
    }
    if message.contains(" denied the request")
        && let Some(webhook) = name_after(message, WEBHOOK_DENIED, &[' '])
    {
        return Some(RefusalKind::WebhookDenied {
            webhook: webhook.to_owned(),
            policies: engine_policies(message),
        });
    }
    if message.contains(" denied request")
        && let Some(policy) = name_after(message, VAP, &[' '])
    {
        return Some(RefusalKind::PolicyDenied {
            policy: policy.to_owned(),
        });
    }
    if let Some(webhook) = name_after(message, WEBHOOK_FAILED, &[':', ' ']) {
        return Some(RefusalKind::WebhookUnavailable {
            webhook: webhook.to_owned(),
        });
    }
    if let Some(quota) = name_after(message, QUOTA_FAILED, &[':', ',', ' ']) {
        return Some(RefusalKind::QuotaRequiresLimits {
            quota: quota.to_owned(),
        });
    }
    if let Some(quota) = name_after(message, QUOTA_EXCEEDED, &[',', ' '])
        .or_else(|| name_after(message, QUOTA_UNKNOWN, &[',', ' ']))
    {
        return Some(RefusalKind::QuotaExceeded {
            quota: quota.to_owned(),
        });
    }
    if LIMIT_RANGE.iter().any(|shape| message.contains(shape)) {
        return Some(RefusalKind::LimitRange);
    }
    if message.contains(TERMINATING) {
        return Some(RefusalKind::NamespaceTerminating);
    }
    if message.contains(RBAC_CANNOT) {
        let user = name_after(message, RBAC_USER.trim_end_matches('"'), &[' ']);
        return Some(RefusalKind::Forbidden {
            user: user.map(str::to_owned),
        });
    }
    Some(match class {
        _ if code == 422 || code == 400 || reason == "Invalid" || reason == "BadRequest" => {
            RefusalKind::SpecInvalid
        }
        AnswerClass::Forbidden => RefusalKind::Forbidden { user: None },
        AnswerClass::Transient => RefusalKind::Unavailable,
        AnswerClass::NotFound | AnswerClass::Conflict | AnswerClass::Rejected => {
            RefusalKind::Unexpected
        }
    })
}
