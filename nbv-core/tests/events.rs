//! Notification Events: properties and snapshots.

use chrono::{DateTime, Duration, TimeZone, Utc};
use nbv_core::api::{NotebookValidationJobStatus, Phase};
use nbv_core::events::{
    EventType, MAX_EVENT_MESSAGE_BYTES, NotificationContext, notification, redact_secrets,
};
use nbv_testkit::fixtures::JobBuilder;
use proptest::prelude::*;

/// The seed's namespace, which the Events of its jobs name.
const NAMESPACE: &str = "self-healing-platform";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 29, 19).unwrap()
}

fn terminal(phase: Phase, message: &str, retries: i32, secs: i64) -> NotebookValidationJobStatus {
    NotebookValidationJobStatus {
        phase: Some(phase),
        message: Some(message.to_owned()),
        retry_count: Some(retries),
        start_time: Some(t0()),
        completion_time: Some(t0() + Duration::seconds(secs)),
        validation_pod_name: Some("predictive-analytics-kserve-validation-pod".to_owned()),
        ..Default::default()
    }
}

fn ctx() -> NotificationContext {
    NotificationContext {
        application: Some("self-healing-platform".to_owned()),
        sync_wave: Some(3),
        max_retries: 3,
    }
}

#[test]
fn failure_message_of_the_seed_example() {
    let job = JobBuilder::new(NAMESPACE, "predictive-analytics-kserve-validation")
        .uid("7d1c")
        .status(terminal(
            Phase::Failed,
            "ModuleNotFoundError: No module named 'kserve_wrapper'",
            3,
            41,
        ))
        .typed()
        .unwrap();
    let event = notification(&job, &ctx()).unwrap();
    insta::assert_snapshot!(event.message);
    insta::assert_json_snapshot!(event, {".message" => "[message]"});
}

#[test]
fn success_message() {
    let job = JobBuilder::new(NAMESPACE, "train")
        .uid("7d1c")
        .status(terminal(
            Phase::Succeeded,
            "Notebook validation succeeded",
            0,
            3725,
        ))
        .typed()
        .unwrap();
    let event = notification(
        &job,
        &NotificationContext {
            max_retries: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(event.event_type, EventType::Normal);
    insta::assert_snapshot!(event.message);
}

#[test]
fn an_oversized_error_is_cut_but_the_facts_stay() {
    let long = format!("Traceback: {}", "x".repeat(5000));
    let event = notification(
        &JobBuilder::new(NAMESPACE, "train")
            .uid("7d1c")
            .status(terminal(Phase::Failed, &long, 1, 5))
            .typed()
            .unwrap(),
        &ctx(),
    )
    .unwrap();
    assert!(event.message.len() <= MAX_EVENT_MESSAGE_BYTES);
    assert!(event.message.contains("Suggested action:"));
    assert!(event.message.ends_with(
        "Logs: kubectl logs -n self-healing-platform predictive-analytics-kserve-validation-pod"
    ));
    insta::assert_snapshot!(event.message.replace(&"x".repeat(50), "x50"));
}

fn phase() -> impl Strategy<Value = Phase> {
    proptest::sample::select(Phase::ALL.to_vec())
}

fn dns_name() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9.-]{0,300}[a-z0-9])?"
}

proptest! {
    #[test]
    fn exactly_the_terminal_phases_notify_and_the_event_agrees_with_the_phase(
        p in phase(), msg in ".{0,1500}", retries in 0i32..10, secs in 0i64..100_000
    ) {
        let event = notification(&JobBuilder::new(NAMESPACE, "j").uid("7d1c").status(terminal(p, &msg, retries, secs)).typed().unwrap(), &ctx());
        prop_assert_eq!(event.is_some(), p.is_terminal());
        if let Some(e) = event {
            let failed = p == Phase::Failed;
            prop_assert_eq!(e.event_type, if failed { EventType::Warning } else { EventType::Normal });
            prop_assert_eq!(e.reason, if failed { "ValidationFailed" } else { "ValidationSucceeded" });
            prop_assert_eq!(
                e.labels["mlops.dev/notification-type"].as_str(),
                if failed { "validation-failure" } else { "validation-success" }
            );
            prop_assert_eq!(e.labels["app.kubernetes.io/part-of"].as_str(), "self-healing-platform");
            prop_assert!(e.message.len() <= MAX_EVENT_MESSAGE_BYTES);
            let want = format!("Phase: {p}");
            prop_assert!(e.message.contains(&want));
            // However long the failure, the facts a person acts on survive the size cap.
            prop_assert!(e.message.ends_with("Logs: kubectl logs -n self-healing-platform predictive-analytics-kserve-validation-pod"));
        }
    }

    #[test]
    fn a_terminal_job_without_completion_time_does_not_notify(p in phase()) {
        let mut status = terminal(p, "m", 0, 1);
        status.completion_time = None;
        prop_assert!(notification(&JobBuilder::new(NAMESPACE, "j").uid("7d1c").status(status).typed().unwrap(), &ctx()).is_none());
    }

    #[test]
    fn credentials_in_the_failure_never_reach_the_event(
        user in "[a-z]{1,8}", secret in "[A-Za-z0-9_]{12,40}", key in "(token|password|api_key|secret)",
        before in "[ a-z]{0,30}", after in "[ a-z]{0,30}"
    ) {
        for msg in [
            format!("{before} https://{user}:{secret}@github.com/o/r.git {after}"),
            format!("{before} {key}={secret} {after}"),
            format!("{before} {key}: {secret} {after}"),
        ] {
            let e = notification(&JobBuilder::new(NAMESPACE, "j").uid("7d1c").status(terminal(Phase::Failed, &msg, 3, 1)).typed().unwrap(), &ctx()).unwrap();
            prop_assert!(!e.message.contains(&secret), "{} leaked in {}", secret, e.message);
        }
    }

    #[test]
    fn redaction_leaves_secret_free_text_alone(text in "[a-zA-Z0-9 .,()'_-]{0,200}") {
        prop_assert_eq!(redact_secrets(&text), text);
    }

    #[test]
    fn event_names_are_valid_bounded_and_unique_per_run(
        name in dns_name(), p in prop_oneof![Just(Phase::Succeeded), Just(Phase::Failed)],
        a in 0i64..1_000_000, b in 0i64..1_000_000
    ) {
        let ea = notification(&JobBuilder::new(NAMESPACE, &name).uid("7d1c").status(terminal(p, "m", 0, a)).typed().unwrap(), &ctx()).unwrap();
        let eb = notification(&JobBuilder::new(NAMESPACE, &name).uid("7d1c").status(terminal(p, "m", 0, b)).typed().unwrap(), &ctx()).unwrap();
        prop_assert!(ea.name.len() <= 253);
        prop_assert!(ea.name.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-' || c == b'.'));
        prop_assert!(ea.name.starts_with(|c: char| c.is_ascii_alphanumeric()));
        prop_assert_eq!(ea.name == eb.name, a == b);
    }
}

#[test]
fn a_redacted_value_cannot_join_a_url_to_credentials_after_it() {
    // Found by the `redact` fuzz target: redacting `token=abc/def` removed the `/`
    // that ended the URL's host, and `u:p@` then belonged to the URL.
    let out = redact_secrets("http://token=abc/def,u:p@host");
    assert!(!out.contains("u:p@"), "{out}");
    assert!(!out.contains("abc"), "{out}");
}

proptest! {
    /// Redaction is a fixed point: redacting its own output changes nothing, and no
    /// `user:password@` survives after a scheme.
    #[test]
    fn redaction_is_idempotent_and_leaves_no_userinfo(text in "[a-z:/=@,&. ]{0,60}") {
        let once = redact_secrets(&text);
        prop_assert_eq!(redact_secrets(&once), once.clone());
        for (i, _) in once.match_indices("://") {
            let authority: String = once[i + 3..].chars().take_while(|c| *c != '/' && !c.is_whitespace()).collect();
            if let Some(at) = authority.rfind('@') {
                prop_assert_eq!(&authority[..at], "***");
            }
        }
    }
}

#[test]
fn a_jobs_own_part_of_label_does_not_label_its_notification() {
    // Only the Application found to answer for the job names it (`ctx.application`).
    let job = JobBuilder::new(NAMESPACE, "j")
        .uid("7d1c")
        .part_of("someone-elses-app")
        .status(terminal(Phase::Failed, "boom", 0, 1))
        .typed()
        .unwrap();
    let ctx = NotificationContext {
        application: None,
        ..ctx()
    };
    let event = notification(&job, &ctx).expect("a terminal job notifies");
    assert!(
        !event.labels.contains_key("app.kubernetes.io/part-of"),
        "{:?}",
        event.labels
    );
}
