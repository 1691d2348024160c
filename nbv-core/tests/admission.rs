//! The API server's refusals of a validation Pod: the classification over the shapes
//! real clusters write, and what a sequence of refusals does to the job.

use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::phase::{Attempt, ConditionType, PhaseEvent, RetryPolicy, find_condition, step};
use nbv_core::pod::{MAX_ANSWER_BYTES, PodRefusal, RefusalKind};
use nbv_core::reconcile::{ApiAnswer, RefusalWork, pod_refused_at};
use proptest::prelude::*;

fn forbidden(message: &str) -> ApiAnswer {
    ApiAnswer::status(403, "Forbidden", message)
}

fn kind(answer: &ApiAnswer) -> RefusalKind {
    PodRefusal::of(answer).expect("a refusal").kind
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The shapes of the answers, as Kubernetes, OpenShift, Kyverno and Gatekeeper write
/// them, with the kind each is, and whether it fails the attempt at once.
#[test]
fn real_answers_are_classified_by_the_policy_that_wrote_them() {
    let cases: Vec<(ApiAnswer, RefusalKind, bool)> = vec![
        (
            ApiAnswer::status(
                422,
                "Invalid",
                "Pod \"train-g1-r0\" is invalid: spec.containers[0].image: Required value",
            ),
            RefusalKind::SpecInvalid,
            true,
        ),
        (
            ApiAnswer::status(
                400,
                "BadRequest",
                "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal",
            ),
            RefusalKind::SpecInvalid,
            true,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"clone\" must set securityContext.allowPrivilegeEscalation=false)",
            ),
            RefusalKind::PodSecurity {
                profile: "restricted:latest".into(),
            },
            true,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: unable to validate against any security context constraint: [provider \"anyuid\": Forbidden: not usable by user or serviceaccount, provider restricted-v2: .containers[0].runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999], provider \"restricted\": Forbidden: not usable by user or serviceaccount]",
            ),
            RefusalKind::SecurityContextConstraints {
                providers: names(&["restricted-v2"]),
            },
            true,
        ),
        (
            // The SCC rules applied by a validating webhook (as the emulated SCC does).
            ApiAnswer::status(
                403,
                "Forbidden",
                "admission webhook \"scc.openshift.example\" denied the request: unable to validate against any security context constraint: [provider restricted-v2: .spec.securityContext.fsGroup: Invalid value: []int64{65532}: 65532 is not an allowed group]",
            ),
            RefusalKind::SecurityContextConstraints {
                providers: names(&["restricted-v2"]),
            },
            true,
        ),
        (
            ApiAnswer::status(
                400,
                "BadRequest",
                "admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\nresource Pod/ml/train-g1-r0 was blocked due to the following policies \n\ndisallow-privilege-escalation:\n  privilege-escalation: 'validation error: Privilege escalation is disallowed. rule privilege-escalation failed at path /spec/containers/0/securityContext/allowPrivilegeEscalation/'\nrequire-requests-limits:\n  validate-resources: 'validation error: CPU and memory resource requests and limits are required'\n",
            ),
            RefusalKind::WebhookDenied {
                webhook: "validate.kyverno.svc-fail".into(),
                policies: names(&["disallow-privilege-escalation", "require-requests-limits"]),
            },
            true,
        ),
        (
            forbidden(
                "admission webhook \"validation.gatekeeper.sh\" denied the request: [psp-pods-allowed-user-ranges] Container clone is attempting to run as disallowed user 65534. Allowed runAsUser: {\"ranges\": [{\"max\": 200, \"min\": 100}], \"rule\": \"MustRunAs\"}",
            ),
            RefusalKind::WebhookDenied {
                webhook: "validation.gatekeeper.sh".into(),
                policies: names(&["psp-pods-allowed-user-ranges"]),
            },
            true,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: ValidatingAdmissionPolicy 'require-team-label' with binding 'require-team-label-binding' denied request: every pod needs a team label",
            ),
            RefusalKind::PolicyDenied {
                policy: "require-team-label".into(),
            },
            true,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: failed quota: compute-resources: must specify limits.cpu for: clone,notebook; limits.memory for: clone,notebook",
            ),
            RefusalKind::QuotaRequiresLimits {
                quota: "compute-resources".into(),
            },
            true,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: [maximum cpu usage per Container is 2, but limit is 4, maximum memory usage per Pod is 4Gi, but limit is 8Gi]",
            ),
            RefusalKind::LimitRange,
            true,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: exceeded quota: compute-resources, requested: limits.cpu=2,limits.memory=4Gi, used: limits.cpu=7,limits.memory=30Gi, limited: limits.cpu=8,limits.memory=32Gi",
            ),
            RefusalKind::QuotaExceeded {
                quota: "compute-resources".into(),
            },
            false,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: status unknown for quota: compute-resources, resources: limits.cpu",
            ),
            RefusalKind::QuotaExceeded {
                quota: "compute-resources".into(),
            },
            false,
        ),
        (
            forbidden(
                "pods is forbidden: User \"system:serviceaccount:nbv-system:nbv-controller\" cannot create resource \"pods\" in API group \"\" in the namespace \"ml\"",
            ),
            RefusalKind::Forbidden {
                user: Some("system:serviceaccount:nbv-system:nbv-controller".into()),
            },
            false,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: unable to create new content in namespace ml because it is being terminated",
            ),
            RefusalKind::NamespaceTerminating,
            false,
        ),
        (
            ApiAnswer::status(
                500,
                "InternalError",
                "Internal error occurred: failed calling webhook \"validate.kyverno.svc-fail\": failed to call webhook: Post \"https://kyverno-svc.kyverno.svc:443/validate/fail?timeout=10s\": dial tcp 10.96.0.12:443: connect: connection refused",
            ),
            RefusalKind::WebhookUnavailable {
                webhook: "validate.kyverno.svc-fail".into(),
            },
            false,
        ),
        (
            ApiAnswer::status(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
            ),
            RefusalKind::Unavailable,
            false,
        ),
        (
            ApiAnswer::status(
                429,
                "TooManyRequests",
                "the server has received too many requests",
            ),
            RefusalKind::Unavailable,
            false,
        ),
        (
            ApiAnswer::status(
                504,
                "Timeout",
                "Timeout: request did not complete within requested timeout",
            ),
            RefusalKind::Unavailable,
            false,
        ),
        (
            ApiAnswer::no_answer("error trying to connect: tcp connect error: Connection refused"),
            RefusalKind::Unavailable,
            false,
        ),
        (
            forbidden(
                "pods \"train-g1-r0\" is forbidden: pod node label selector conflicts with its namespace node label selector",
            ),
            RefusalKind::Forbidden { user: None },
            false,
        ),
        (
            ApiAnswer::status(404, "NotFound", "namespaces \"ml\" not found"),
            RefusalKind::Unexpected,
            false,
        ),
    ];
    for (answer, expected, permanent) in cases {
        let refusal = PodRefusal::of(&answer).expect("a refusal");
        assert_eq!(refusal.kind, expected, "{answer}");
        assert_eq!(refusal.kind.is_permanent(), permanent, "{answer}");
        assert!(
            refusal
                .answer
                .starts_with(&answer.to_string()[..20.min(answer.to_string().len())])
        );
    }
}

#[test]
fn a_pod_that_exists_is_no_refusal() {
    assert_eq!(
        PodRefusal::of(&ApiAnswer::status(
            409,
            "AlreadyExists",
            "pods \"p\" already exists"
        )),
        None
    );
    assert_eq!(
        kind(&ApiAnswer::status(
            409,
            "Conflict",
            "the object has been modified"
        )),
        RefusalKind::Unexpected
    );
}

fn job(annotations: serde_json::Value) -> NotebookValidationJob {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u-1", "generation": 1,
                     "annotations": annotations},
        "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                 "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
    }))
    .expect("a job")
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap()
}

const ATTEMPT: Attempt = Attempt::new(1, 0);
const TIMEOUT: Duration = Duration::from_secs(600);

/// The texts a user reads: the condition, the Event, the failure, per kind.
#[test]
fn the_texts_of_a_refusal() {
    let answers = [
        (
            "scc",
            forbidden(
                "pods \"train-g1-r0\" is forbidden: unable to validate against any security context constraint: [provider restricted-v2: .containers[0].runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999]]",
            ),
        ),
        (
            "quota",
            forbidden(
                "pods \"train-g1-r0\" is forbidden: exceeded quota: compute, requested: limits.cpu=2, used: limits.cpu=7, limited: limits.cpu=8",
            ),
        ),
        (
            "kyverno",
            ApiAnswer::status(
                400,
                "BadRequest",
                "admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\nresource Pod/ml/train-g1-r0 was blocked due to the following policies \n\nrequire-requests-limits:\n  validate-resources: 'validation error: limits are required'\n",
            ),
        ),
    ];
    for (name, answer) in answers {
        let refusal = PodRefusal::of(&answer).unwrap();
        let job = job(serde_json::json!({}));
        let mut status = step(
            None,
            &PhaseEvent::observe(&job),
            t0(),
            &RetryPolicy::default(),
        )
        .status;
        let first = pod_refused_at(&job, ATTEMPT, &mut status, &refusal, TIMEOUT, t0());
        let condition = find_condition(
            status.conditions.as_deref().unwrap(),
            &ConditionType::POD_ADMITTED,
        )
        .unwrap()
        .clone();
        let event = first.announce.expect("the first refusal is announced");
        // At the deadline, a refusal still retried fails the attempt.
        let end = t0() + chrono::Duration::minutes(10);
        let last = pod_refused_at(&job, ATTEMPT, &mut status, &refusal, TIMEOUT, end);
        let failure = match (first.work, last.work) {
            (RefusalWork::Fail(event), _) | (RefusalWork::Retry(_), RefusalWork::Fail(event)) => {
                match *event {
                    PhaseEvent::PodFailed { failure, .. } => failure,
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other:?}"),
        };
        insta::assert_yaml_snapshot!(
            format!("refusal_texts_{name}"),
            serde_json::json!({
                "condition": {"status": condition.status, "reason": condition.reason, "message": condition.message,
                              "lastTransitionTime": condition.last_transition_time.0.to_string()},
                "event": {"name": event.name, "type": format!("{:?}", event.event_type), "reason": event.reason,
                          "message": event.message, "labels": event.labels},
                "failure": {"reason": failure.reason.as_str(), "message": failure.message},
            })
        );
    }
}

#[test]
fn an_invalid_timeout_annotation_fails_the_attempt_naming_it() {
    let job = job(serde_json::json!({"mlops.dev/pod-admission-timeout": "ten minutes"}));
    let mut status = step(
        None,
        &PhaseEvent::observe(&job),
        t0(),
        &RetryPolicy::default(),
    )
    .status;
    let quota = PodRefusal::of(&forbidden("exceeded quota: q, requested: pods=1")).unwrap();
    let refused = pod_refused_at(&job, ATTEMPT, &mut status, &quota, TIMEOUT, t0());
    let RefusalWork::Fail(event) = refused.work else {
        panic!("{refused:?}")
    };
    let PhaseEvent::PodFailed { failure, .. } = *event else {
        panic!()
    };
    assert_eq!(failure.reason.as_str(), "InvalidAnnotation");
    assert!(
        failure.message.contains("mlops.dev/pod-admission-timeout"),
        "{}",
        failure.message
    );
}

#[test]
fn the_annotation_overrides_the_operators_timeout() {
    let job = job(serde_json::json!({"mlops.dev/pod-admission-timeout": "1m"}));
    let mut status = step(
        None,
        &PhaseEvent::observe(&job),
        t0(),
        &RetryPolicy::default(),
    )
    .status;
    let quota = PodRefusal::of(&forbidden("exceeded quota: q, requested: pods=1")).unwrap();
    pod_refused_at(&job, ATTEMPT, &mut status, &quota, TIMEOUT, t0());
    let later = t0() + chrono::Duration::minutes(1);
    let refused = pod_refused_at(&job, ATTEMPT, &mut status, &quota, TIMEOUT, later);
    assert!(matches!(refused.work, RefusalWork::Fail(_)), "{refused:?}");
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

fn any_answer() -> impl Strategy<Value = ApiAnswer> {
    let message = prop_oneof![
        ".{0,300}",
        Just("pods \"p\" is forbidden: exceeded quota: q, requested: cpu=1".to_owned()),
        Just("unable to validate against any security context constraint: [provider restricted-v2: x]".to_owned()),
        Just("admission webhook \"w\" denied the request: [c] no".to_owned()),
        Just("User \"system:serviceaccount:nbv:nbv\" cannot create resource \"pods\"".to_owned()),
        Just("failed calling webhook \"w\": timeout".to_owned()),
        ".{0,50}token=[a-zA-Z0-9]{12}.{0,50}".prop_map(|s| s),
        ".{0,4000}",
    ];
    let code = prop_oneof![
        Just(0u16),
        Just(400),
        Just(403),
        Just(404),
        Just(409),
        Just(422),
        Just(429),
        Just(500),
        Just(503),
        0u16..1000
    ];
    let reason = prop_oneof![
        Just(String::new()),
        Just("Forbidden".to_owned()),
        Just("Invalid".to_owned()),
        Just("AlreadyExists".to_owned()),
        "[A-Za-z]{0,20}"
    ];
    prop_oneof![
        (code, reason, message.clone()).prop_map(|(c, r, m)| ApiAnswer::status(c, r, m)),
        message.prop_map(ApiAnswer::no_answer),
    ]
}

proptest! {
    /// For any answers, arriving at any times: the job carries the `PodAdmitted`
    /// condition from the first refusal on, never waits past the first refusal plus
    /// the timeout, and fails at once for a permanent refusal; its texts stay bounded.
    #[test]
    fn no_answer_leaves_a_job_waiting_past_its_deadline_or_without_a_condition(
        answers in prop::collection::vec((any_answer(), 0u64..400), 1..30),
        timeout_secs in 1u64..3600,
    ) {
        let timeout = Duration::from_secs(timeout_secs);
        let job = job(serde_json::json!({}));
        let policy = RetryPolicy::default();
        let mut status = step(None, &PhaseEvent::observe(&job), t0(), &policy).status;
        let mut now = t0();
        let mut first: Option<DateTime<Utc>> = None;
        for (answer, gap) in answers {
            let Some(refusal) = PodRefusal::of(&answer) else { continue };
            prop_assert!(refusal.answer.len() <= MAX_ANSWER_BYTES);
            let refused = pod_refused_at(&job, ATTEMPT, &mut status, &refusal, timeout, now);
            let first_at = *first.get_or_insert(now);
            let conditions = status.conditions.clone().unwrap_or_default();
            let condition = find_condition(&conditions, &ConditionType::POD_ADMITTED);
            prop_assert!(condition.is_some(), "a refusal without a condition");
            let condition = condition.unwrap();
            prop_assert_eq!(condition.status.as_str(), "False");
            prop_assert_eq!(condition.reason.as_str(), refusal.kind.cause().as_str());
            prop_assert!(condition.message.len() <= 4096, "{}", condition.message.len());
            let deadline = first_at + chrono::Duration::from_std(timeout).unwrap();
            match refused.work {
                RefusalWork::Fail(event) => {
                    prop_assert!(refusal.kind.is_permanent() || now >= deadline);
                    let failed = step(Some(&status), &event, now, &policy);
                    prop_assert_eq!(failed.status.phase, Some(Phase::Failed));
                    let ready = find_condition(failed.status.conditions.as_deref().unwrap(), &ConditionType::READY).unwrap();
                    prop_assert_eq!(ready.reason.as_str(), refusal.kind.cause().as_str());
                    prop_assert!(find_condition(failed.status.conditions.as_deref().unwrap(), &ConditionType::POD_ADMITTED).is_some());
                    break;
                }
                RefusalWork::Retry(after) => {
                    prop_assert!(!refusal.kind.is_permanent());
                    prop_assert!(now < deadline);
                    prop_assert!(!after.is_zero());
                    prop_assert!(now + chrono::Duration::from_std(after).unwrap() <= deadline, "waits past the deadline");
                    // The shell comes back after the wait, or later (a restart).
                    now += chrono::Duration::from_std(after).unwrap() + chrono::Duration::seconds(gap as i64);
                }
            }
        }
    }

    /// A credential in the API server's message does not reach the condition or the
    /// Event.
    #[test]
    fn credentials_in_answers_are_not_repeated(
        before in "[ -~]{0,100}", secret in "[a-zA-Z0-9]{16,24}", after in "[ -~]{0,100}",
        code in prop_oneof![Just(403u16), Just(422), Just(500)],
    ) {
        let message = format!("{before} token={secret} {after}");
        prop_assume!(!before.contains(&secret) && !after.contains(&secret));
        let refusal = PodRefusal::of(&ApiAnswer::status(code, "Forbidden", message)).unwrap();
        prop_assert!(!refusal.answer.contains(&secret), "{}", refusal.answer);
        let job = job(serde_json::json!({}));
        let mut status = step(None, &PhaseEvent::observe(&job), t0(), &RetryPolicy::default()).status;
        let refused = pod_refused_at(&job, ATTEMPT, &mut status, &refusal, TIMEOUT, t0());
        let text = serde_json::to_string(&status).unwrap();
        prop_assert!(!text.contains(&secret));
        if let Some(event) = refused.announce {
            prop_assert!(!event.message.contains(&secret));
            prop_assert!(event.message.len() <= nbv_core::events::MAX_EVENT_MESSAGE_BYTES);
        }
    }
}

#[test]
fn a_retry_and_a_new_run_start_without_the_earlier_refusals() {
    let job = job(serde_json::json!({}));
    let policy = RetryPolicy::default();
    let mut status = step(None, &PhaseEvent::observe(&job), t0(), &policy).status;
    let quota = PodRefusal::of(&forbidden("exceeded quota: q, requested: pods=1")).unwrap();
    pod_refused_at(&job, ATTEMPT, &mut status, &quota, TIMEOUT, t0());
    let mut next = job.clone();
    next.metadata.generation = Some(2);
    let run = step(Some(&status), &PhaseEvent::observe(&next), t0(), &policy);
    assert!(run.run_started);
    assert!(
        find_condition(
            run.status.conditions.as_deref().unwrap(),
            &ConditionType::POD_ADMITTED
        )
        .is_none()
    );
}
