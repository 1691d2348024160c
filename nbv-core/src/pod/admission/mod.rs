//! The API server's refusal to create a validation Pod: what refused it, whether a
//! retry can help, and until when nbv tries again.
//!
//! [`PodRefusal::of`] reads the answer to a Pod create ([`crate::api_answer::ApiAnswer`]:
//! the HTTP code, reason and message, or no answer) into a [`RefusalKind`] that names
//! the policy: a schema error, Pod Security admission, OpenShift's SCCs, an admission
//! webhook (Kyverno, Gatekeeper, …) or a ValidatingAdmissionPolicy, a ResourceQuota
//! (used up, or requiring limits the Pod lacks), a LimitRange, nbv's own RBAC, a
//! namespace being deleted, or an API server or webhook that is not available.
//!
//! A permanent kind fails the attempt at once; any other is someone else's to fix and
//! is tried again with backoff until the pod admission timeout
//! ([`admission_timeout`], from the job's `mlops.dev/pod-admission-timeout` or the
//! operator's `--pod-admission-timeout`) has passed since the first refusal
//! ([`admission_after`]). [`crate::reconcile::pod_refused_at`] puts it together with
//! the job's `PodAdmitted` condition, which records that first refusal.

mod deadline;
mod refusal;
mod shapes;

pub use deadline::{
    Admission, DEFAULT_POD_ADMISSION_TIMEOUT, InvalidAdmissionTimeout,
    POD_ADMISSION_TIMEOUT_ANNOTATION, admission_after, admission_timeout, refusal_message,
};
pub use refusal::{MAX_ANSWER_BYTES, PodRefusal, RefusalKind};
