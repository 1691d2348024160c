//! Tests of the confused-deputy rule: where a job's triggers may act.
//!
//! Properties state the rule's invariants over arbitrary namespaces, configurations
//! and facts; snapshots keep the refusal messages an administrator reads.

use std::collections::BTreeSet;

use nbv_core::triggers::{
    ACCEPT_TRIGGERS_FROM, AccessFacts, Action, Grant, TargetRef, Trigger, TriggerAccess,
};
use proptest::prelude::*;
use proptest::sample::select;

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Namespaces from a small alphabet, so that strategies often pick the same one twice.
fn namespace() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(vec!["ml", "serving", "argocd", "prod", "team-a"]).prop_map(str::to_owned),
        1 => "[a-z][a-z0-9-]{0,8}[a-z0-9]",
    ]
}

fn trigger_in(namespace: &str, application: bool, action: Action) -> Trigger {
    let (api_version, kind) = if application {
        ("argoproj.io/v1alpha1", "Application")
    } else {
        ("apps/v1", "Deployment")
    };
    let target = TargetRef::new(
        api_version.parse().expect("valid apiVersion"),
        kind.parse().expect("valid kind"),
        "target".parse().expect("valid name"),
        namespace.parse().expect("valid namespace"),
    );
    Trigger::new(target, action).expect("action fits the kind")
}

/// A trigger on anything but an Application.
fn workload_trigger(namespace: impl Strategy<Value = String>) -> impl Strategy<Value = Trigger> {
    (namespace, select(vec![Action::Restart, Action::Refresh]))
        .prop_map(|(ns, action)| trigger_in(&ns, false, action))
}

/// A trigger on an Argo CD Application.
fn application_trigger(namespace: impl Strategy<Value = String>) -> impl Strategy<Value = Trigger> {
    (namespace, select(vec![Action::Sync, Action::Refresh]))
        .prop_map(|(ns, action)| trigger_in(&ns, true, action))
}

fn any_trigger() -> impl Strategy<Value = Trigger> {
    prop_oneof![
        workload_trigger(namespace()),
        application_trigger(namespace())
    ]
}

/// An operator flag: a few namespaces, sometimes `*`.
fn access() -> impl Strategy<Value = TriggerAccess> {
    prop::collection::btree_set(
        prop_oneof![9 => namespace(), 1 => Just("*".to_owned())],
        0..4,
    )
    .prop_map(|allowed_namespaces| TriggerAccess { allowed_namespaces })
}

/// A value of the opt-in annotation as people write it: spaces, empty entries, `*`.
fn opt_in_value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![6 => namespace(), 1 => Just("*".to_owned()), 1 => Just(String::new())],
        0..5,
    )
    .prop_flat_map(|entries| {
        let n = entries.len();
        (
            Just(entries),
            prop::collection::vec(select(vec!["", " ", "  "]), n),
        )
    })
    .prop_map(|(entries, pads)| {
        entries
            .iter()
            .zip(pads)
            .map(|(e, pad)| format!("{pad}{e}{pad}"))
            .collect::<Vec<_>>()
            .join(",")
    })
}

fn facts() -> impl Strategy<Value = AccessFacts> {
    (
        prop::option::of(opt_in_value()),
        prop::option::of(namespace()),
    )
        .prop_map(
            |(target_namespace_accepts, application_destination)| AccessFacts {
                target_namespace_accepts,
                application_destination,
            },
        )
}

fn entries_of(value: &str) -> Vec<&str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect()
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    /// A trigger on a workload in its job's own namespace never needs permission.
    #[test]
    fn own_namespace_is_always_allowed_for_workloads(
        job in namespace(),
        action in select(vec![Action::Restart, Action::Refresh]),
        access in access(),
        facts in facts(),
    ) {
        let trigger = trigger_in(&job, false, action);
        prop_assert_eq!(access.authorize(&trigger, &job, &facts), Ok(Grant::SameNamespace));
    }

    /// With no flag and no opt-in, nothing outside the job's namespace is allowed,
    /// except an Application that deploys into the job's namespace.
    #[test]
    fn nothing_else_is_allowed_without_configuration(
        job in namespace(),
        trigger in any_trigger(),
        destination in prop::option::of(namespace()),
    ) {
        let facts = AccessFacts { target_namespace_accepts: None, application_destination: destination.clone() };
        let decision = TriggerAccess::default().authorize(&trigger, &job, &facts);
        let expected_allowed = if trigger.is_argo_application() {
            destination.as_deref() == Some(job.as_str())
        } else {
            trigger.target().namespace().as_str() == job
        };
        prop_assert_eq!(decision.is_ok(), expected_allowed, "{:?}", decision);
    }

    /// An Application in the job's own namespace is not allowed for that reason alone:
    /// it may deploy anywhere its project allows.
    #[test]
    fn an_application_beside_the_job_still_needs_a_reason(
        job in namespace(),
        destination in prop::option::of(namespace()),
    ) {
        prop_assume!(destination.as_deref() != Some(job.as_str()));
        let trigger = trigger_in(&job, true, Action::Sync);
        let facts = AccessFacts { target_namespace_accepts: None, application_destination: destination };
        prop_assert!(TriggerAccess::default().authorize(&trigger, &job, &facts).is_err());
    }

    /// `*` in the operator flag allows every trigger, whatever the facts.
    #[test]
    fn star_in_the_flag_allows_everything(
        job in namespace(),
        trigger in any_trigger(),
        mut access in access(),
        facts in facts(),
    ) {
        access.allowed_namespaces.insert("*".to_owned());
        prop_assert!(access.authorize(&trigger, &job, &facts).is_ok());
    }

    /// `*` in the target namespace's opt-in allows every job.
    #[test]
    fn star_in_the_opt_in_allows_every_job(
        job in namespace(),
        trigger in any_trigger(),
        access in access(),
        others in opt_in_value(),
    ) {
        let facts = AccessFacts {
            target_namespace_accepts: Some(format!("{others}, *")),
            application_destination: None,
        };
        prop_assert!(access.authorize(&trigger, &job, &facts).is_ok());
    }

    /// The flag naming the target's namespace allows the trigger.
    #[test]
    fn the_flag_naming_the_target_namespace_allows_it(
        job in namespace(),
        trigger in any_trigger(),
        mut access in access(),
        facts in facts(),
    ) {
        access.allowed_namespaces.insert(trigger.target().namespace().to_string());
        prop_assert!(access.authorize(&trigger, &job, &facts).is_ok());
    }

    /// An opt-in naming the job's namespace (anywhere in the list, with any spacing)
    /// allows the trigger.
    #[test]
    fn an_opt_in_naming_the_job_allows_it(
        job in namespace(),
        trigger in any_trigger(),
        before in opt_in_value(),
        after in opt_in_value(),
    ) {
        let facts = AccessFacts {
            target_namespace_accepts: Some(format!("{before}, {job} ,{after}")),
            application_destination: None,
        };
        prop_assert!(TriggerAccess::default().authorize(&trigger, &job, &facts).is_ok());
    }

    /// An opt-in that lists other namespaces (and not `*`) does not allow this job.
    #[test]
    fn an_opt_in_for_others_does_not_allow_this_job(
        job in namespace(),
        trigger in any_trigger(),
        value in opt_in_value(),
        destination in prop::option::of(namespace()),
    ) {
        let entries = entries_of(&value);
        prop_assume!(!entries.contains(&"*") && !entries.contains(&job.as_str()));
        prop_assume!(trigger.target().namespace().as_str() != job || trigger.is_argo_application());
        prop_assume!(destination.as_deref() != Some(job.as_str()));
        let facts = AccessFacts { target_namespace_accepts: Some(value), application_destination: destination };
        prop_assert!(TriggerAccess::default().authorize(&trigger, &job, &facts).is_err());
    }

    /// Facts and flag entries only widen access: a shell may decide without facts
    /// first and fetch them only when refused.
    #[test]
    fn more_facts_and_flags_never_refuse_what_was_allowed(
        job in namespace(),
        trigger in any_trigger(),
        access in access(),
        facts in facts(),
        extra_flag in prop::collection::btree_set(namespace(), 0..3),
    ) {
        let bare = AccessFacts::default();
        let wider: BTreeSet<String> = access.allowed_namespaces.union(&extra_flag).cloned().collect();
        let wider = TriggerAccess { allowed_namespaces: wider };
        if access.authorize(&trigger, &job, &bare).is_ok() {
            prop_assert!(access.authorize(&trigger, &job, &facts).is_ok());
            prop_assert!(wider.authorize(&trigger, &job, &facts).is_ok());
        }
        if access.authorize(&trigger, &job, &facts).is_ok() {
            prop_assert!(wider.authorize(&trigger, &job, &facts).is_ok());
        }
    }

    /// Every refusal names both namespaces and says exactly what would allow it.
    #[test]
    fn a_refusal_says_how_to_allow_it(
        job in namespace(),
        trigger in any_trigger(),
        access in access(),
        facts in facts(),
    ) {
        if let Err(refusal) = access.authorize(&trigger, &job, &facts) {
            let target = trigger.target().namespace().as_str();
            prop_assert_eq!(refusal.target_namespace(), target);
            prop_assert_eq!(refusal.job_namespace(), job.as_str());
            let fix = format!(
                "add namespace {target} to --trigger-namespaces or annotate namespace {target} \
                 with {ACCEPT_TRIGGERS_FROM}: {job}"
            );
            prop_assert!(refusal.to_string().ends_with(&fix), "{}", refusal);
        }
    }

    /// A refusal tells the job's author nothing about the target they could not read
    /// (where the Application deploys, whom its namespace accepts triggers from): its
    /// text is the same whatever those facts are.
    #[test]
    fn a_refusal_reveals_nothing_of_the_target(
        job in namespace(),
        trigger in any_trigger(),
        first in facts(),
        second in facts(),
    ) {
        let access = TriggerAccess::default();
        if let (Err(a), Err(b)) = (access.authorize(&trigger, &job, &first), access.authorize(&trigger, &job, &second)) {
            prop_assert_eq!(a.to_string(), b.to_string());
        }
    }

    /// Hostile opt-in values cost little and are quoted in bounded form.
    #[test]
    fn hostile_opt_in_values_are_bounded(
        entry in "[a-z]{100,300}",
        count in 1usize..2000,
    ) {
        let value = vec![entry; count].join(",");
        let trigger = trigger_in("serving", false, Action::Restart);
        let facts = AccessFacts { target_namespace_accepts: Some(value), application_destination: None };
        let refusal = TriggerAccess::default().authorize(&trigger, "ml", &facts).unwrap_err();
        prop_assert!(refusal.to_string().len() < 2048, "{} bytes", refusal.to_string().len());
    }
}

// ---------------------------------------------------------------------------
// Examples and messages
// ---------------------------------------------------------------------------

#[test]
fn grants_name_the_rule_that_applied() {
    let job = "ml";
    let workload = trigger_in("serving", false, Action::Restart);
    let app = trigger_in("argocd", true, Action::Sync);
    let none = AccessFacts::default();
    let flag = TriggerAccess::from_list("serving,argocd");
    assert_eq!(
        TriggerAccess::default().authorize(&trigger_in("ml", false, Action::Refresh), job, &none),
        Ok(Grant::SameNamespace)
    );
    assert_eq!(
        flag.authorize(&workload, job, &none),
        Ok(Grant::OperatorFlag)
    );
    assert_eq!(flag.authorize(&app, job, &none), Ok(Grant::OperatorFlag));
    let into_ml = AccessFacts {
        application_destination: Some("ml".into()),
        ..AccessFacts::default()
    };
    assert_eq!(
        TriggerAccess::default().authorize(&app, job, &into_ml),
        Ok(Grant::ApplicationDestination)
    );
    let opt_in = AccessFacts {
        target_namespace_accepts: Some("research,ml".into()),
        ..AccessFacts::default()
    };
    assert_eq!(
        TriggerAccess::default().authorize(&workload, job, &opt_in),
        Ok(Grant::NamespaceOptIn)
    );
}

#[test]
fn the_opt_in_matches_whole_entries_only() {
    let trigger = trigger_in("serving", false, Action::Restart);
    for value in ["ml-team", "xml", "m l", "ML", "ml.", ""] {
        let facts = AccessFacts {
            target_namespace_accepts: Some(value.into()),
            ..AccessFacts::default()
        };
        assert!(
            TriggerAccess::default()
                .authorize(&trigger, "ml", &facts)
                .is_err(),
            "{value:?}"
        );
    }
}

#[test]
fn the_flag_list_ignores_spaces_and_empty_entries() {
    let access = TriggerAccess::from_list(" serving , ,models,");
    assert_eq!(
        access.allowed_namespaces,
        BTreeSet::from(["models".to_owned(), "serving".to_owned()])
    );
    assert!(TriggerAccess::from_list("").allowed_namespaces.is_empty());
}

#[test]
fn refusal_messages() {
    let none = TriggerAccess::default();
    let workload = trigger_in("serving", false, Action::Restart);
    let app = trigger_in("argocd", true, Action::Sync);
    let facts = |accepts: Option<&str>, destination: Option<&str>| AccessFacts {
        target_namespace_accepts: accepts.map(str::to_owned),
        application_destination: destination.map(str::to_owned),
    };
    let many = (0..12)
        .map(|i| format!("team-{i}"))
        .collect::<Vec<_>>()
        .join(",");
    let cases = [
        ("workload, no opt-in", &workload, facts(None, None)),
        (
            "workload, opt-in for others",
            &workload,
            facts(Some("research, prod"), None),
        ),
        ("workload, long opt-in", &workload, facts(Some(&many), None)),
        (
            "application deploying elsewhere",
            &app,
            facts(None, Some("prod")),
        ),
        (
            "application without destination",
            &app,
            facts(Some(""), None),
        ),
    ];
    let rendered = cases
        .iter()
        .map(|(name, trigger, facts)| {
            let refusal = none
                .authorize(trigger, "ml", facts)
                .expect_err("refused without configuration");
            format!("{name}:\n{refusal}")
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    insta::assert_snapshot!(rendered);
}
