//! The parent Application of a job: tracking methods, labels, annotations, what is refused.

use super::*;

// ---------------------------------------------------------------------------------------
// Parent Application
// ---------------------------------------------------------------------------------------

const JOB_ID: &str = "mlops.mlops.dev/NotebookValidationJob:ml/train";

fn job() -> JobKey {
    JobKey::new("ml", "train")
}

#[test]
fn tracking_id_wins_over_labels() {
    let annotations = map(&[(ARGOCD_TRACKING_ID, &format!("fraud:{JOB_ID}"))]);
    let labels = map(&[(APP_INSTANCE, "other"), (APP_PART_OF, "third")]);
    let lookup = parent_application(&job(), &annotations, &labels, &TrackingSettings::default());
    assert_eq!(
        lookup.parent,
        Some(AppRef {
            app: app("fraud"),
            source: ParentSource::TrackingId
        })
    );
    assert!(lookup.problems.is_empty());
}

fn label_tracking() -> TrackingSettings {
    TrackingSettings {
        method: TrackingMethod::Label,
        ..TrackingSettings::default()
    }
}

#[test]
fn instance_label_wins_over_part_of_under_label_tracking() {
    let labels = map(&[(APP_INSTANCE, "fraud"), (APP_PART_OF, "platform")]);
    let parent = parent_application(&job(), &BTreeMap::new(), &labels, &label_tracking())
        .parent
        .unwrap();
    assert_eq!(parent.app, app("fraud"));
    assert_eq!(parent.source, ParentSource::InstanceLabel);
    // A custom instance label key.
    let custom = TrackingSettings {
        instance_label_key: "argocd.argoproj.io/instance".into(),
        ..label_tracking()
    };
    let labels = map(&[
        ("argocd.argoproj.io/instance", "fraud"),
        (APP_INSTANCE, "other"),
    ]);
    let parent = parent_application(&job(), &BTreeMap::new(), &labels, &custom).parent;
    assert_eq!(parent.map(|p| p.app), Some(app("fraud")));
}

#[test]
fn each_tracking_method_reads_only_its_own_source() {
    let annotations = map(&[(ARGOCD_TRACKING_ID, &format!("by-annotation:{JOB_ID}"))]);
    let labels = map(&[(APP_INSTANCE, "by-label")]);
    for method in [
        TrackingMethod::Annotation,
        TrackingMethod::AnnotationAndLabel,
    ] {
        let settings = TrackingSettings {
            method,
            ..TrackingSettings::default()
        };
        let lookup = parent_application(&job(), &annotations, &labels, &settings);
        assert_eq!(lookup.parent.map(|p| p.app), Some(app("by-annotation")));
        // Without the annotation the label does not count, and the user hears why.
        let lookup = parent_application(&job(), &BTreeMap::new(), &labels, &settings);
        assert_eq!(lookup.parent, None);
        assert!(matches!(
            lookup.problems[..],
            [ParentProblem::LabelIgnored { .. }]
        ));
    }
    let lookup = parent_application(&job(), &annotations, &labels, &label_tracking());
    assert_eq!(lookup.parent.map(|p| p.app), Some(app("by-label")));
    let lookup = parent_application(&job(), &annotations, &BTreeMap::new(), &label_tracking());
    assert_eq!(lookup.parent, None);
}

#[test]
fn a_tracking_id_of_another_installation_does_not_count() {
    let tracked = |installation: Option<&str>| {
        let mut annotations = map(&[(ARGOCD_TRACKING_ID, &format!("fraud:{JOB_ID}"))]);
        if let Some(id) = installation {
            annotations.insert(ARGOCD_INSTALLATION_ID.to_owned(), id.to_owned());
        }
        annotations
    };
    let ours = TrackingSettings {
        installation_id: "prod".into(),
        ..TrackingSettings::default()
    };
    let found = |annotations, settings: &TrackingSettings| {
        parent_application(&job(), &annotations, &BTreeMap::new(), settings)
            .parent
            .is_some()
    };
    assert!(found(tracked(Some("prod")), &ours));
    assert!(!found(tracked(Some("staging")), &ours));
    assert!(!found(tracked(None), &ours));
    // Without an installation id of its own, Argo CD ignores ids that carry one.
    assert!(found(tracked(None), &TrackingSettings::default()));
    assert!(!found(tracked(Some("prod")), &TrackingSettings::default()));
    let lookup = parent_application(&job(), &tracked(Some("staging")), &BTreeMap::new(), &ours);
    insta::assert_snapshot!(lookup.problems[0].to_string());
}

#[test]
fn part_of_is_nbvs_convention_and_can_be_turned_off() {
    let labels = map(&[(APP_PART_OF, "platform")]);
    let parent = parent_application(
        &job(),
        &BTreeMap::new(),
        &labels,
        &TrackingSettings::default(),
    );
    assert_eq!(
        parent.parent.map(|p| p.source),
        Some(ParentSource::PartOfLabel)
    );
    let off = TrackingSettings {
        part_of: false,
        ..TrackingSettings::default()
    };
    assert_eq!(
        parent_application(&job(), &BTreeMap::new(), &labels, &off).parent,
        None
    );
}

#[test]
fn tracking_settings_from_argocd_cm() {
    let cm = map(&[
        ("application.resourceTrackingMethod", "annotation+label"),
        ("installationID", "prod"),
    ]);
    let (settings, problems) = TrackingSettings::from_argocd_cm(&cm);
    assert_eq!(settings.method, TrackingMethod::AnnotationAndLabel);
    assert_eq!(settings.installation_id, "prod");
    assert_eq!(settings.instance_label_key, APP_INSTANCE);
    assert!(problems.is_empty());
    let (settings, problems) =
        TrackingSettings::from_argocd_cm(&map(&[("application.resourceTrackingMethod", "labels")]));
    assert_eq!(settings.method, TrackingMethod::Annotation);
    insta::assert_snapshot!(problems.join("\n"));
}

#[test]
fn apps_in_any_namespace() {
    let annotations = map(&[(ARGOCD_TRACKING_ID, &format!("team-a_fraud:{JOB_ID}"))]);
    let parent = parent_application(
        &job(),
        &annotations,
        &BTreeMap::new(),
        &TrackingSettings::default(),
    )
    .parent
    .unwrap();
    assert_eq!(parent.app, AppId::new(Some("team-a"), "fraud").unwrap());
    let labels = map(&[(APP_PART_OF, "team-b_platform")]);
    let parent = parent_application(
        &job(),
        &BTreeMap::new(),
        &labels,
        &TrackingSettings::default(),
    )
    .parent
    .unwrap();
    assert_eq!(parent.app.namespace(), Some("team-b"));
    assert_eq!(parent.app.name(), "platform");
}

#[test]
fn core_group_and_colons_in_the_last_part_follow_argo_cd() {
    // Argo CD splits at the first two ':' only, so a third ':' lands in namespace/name.
    let foreign = map(&[(ARGOCD_TRACKING_ID, "fraud:/ConfigMap:ml/train")]);
    let lookup = parent_application(
        &job(),
        &foreign,
        &BTreeMap::new(),
        &TrackingSettings::default(),
    );
    assert!(matches!(
        lookup.problems[..],
        [ParentProblem::ForeignTrackingId { .. }]
    ));
    let odd = map(&[(
        ARGOCD_TRACKING_ID,
        "fraud:mlops.mlops.dev/NotebookValidationJob:ml/train:x",
    )]);
    let lookup = parent_application(&job(), &odd, &BTreeMap::new(), &TrackingSettings::default());
    assert!(matches!(
        lookup.problems[..],
        [ParentProblem::ForeignTrackingId { .. }]
    ));
}

#[test]
fn unusable_sources_fall_back_and_are_reported() {
    let annotations = map(&[(ARGOCD_TRACKING_ID, "fraud")]);
    let labels = map(&[(APP_INSTANCE, "Fraud_Detection"), (APP_PART_OF, "platform")]);
    let lookup = parent_application(&job(), &annotations, &labels, &label_tracking());
    assert_eq!(lookup.parent.unwrap().source, ParentSource::PartOfLabel);
    let mut messages: Vec<String> = lookup.problems.iter().map(ToString::to_string).collect();
    let lookup = parent_application(&job(), &annotations, &labels, &TrackingSettings::default());
    assert_eq!(lookup.parent.unwrap().source, ParentSource::PartOfLabel);
    messages.extend(lookup.problems.iter().map(ToString::to_string));
    let copied = map(&[(
        ARGOCD_TRACKING_ID,
        "fraud:mlops.mlops.dev/NotebookValidationJob:ml/other-job",
    )]);
    let mut all = messages;
    all.extend(
        parent_application(
            &job(),
            &copied,
            &BTreeMap::new(),
            &TrackingSettings::default(),
        )
        .problems
        .iter()
        .map(ToString::to_string),
    );
    let bad_app = map(&[(ARGOCD_TRACKING_ID, &format!("_fraud:{JOB_ID}"))]);
    all.extend(
        parent_application(
            &job(),
            &bad_app,
            &BTreeMap::new(),
            &TrackingSettings::default(),
        )
        .problems
        .iter()
        .map(ToString::to_string),
    );
    let long = map(&[(APP_PART_OF, &"x".repeat(300))]);
    all.extend(
        parent_application(
            &job(),
            &BTreeMap::new(),
            &long,
            &TrackingSettings::default(),
        )
        .problems
        .iter()
        .map(ToString::to_string),
    );
    insta::assert_snapshot!(all.join("\n"));
}

#[test]
fn no_source_no_parent() {
    let lookup = parent_application(
        &job(),
        &map(&[("x", "y")]),
        &map(&[("app", "fraud")]),
        &TrackingSettings::default(),
    );
    assert_eq!(lookup.parent, None);
    assert!(lookup.problems.is_empty());
}

#[test]
fn application_name_rules() {
    for good in ["a", "fraud-detection", "ml.platform", "0", &"a".repeat(253)] {
        assert!(AppId::new(None, good).is_ok(), "{good}");
    }
    for bad in [
        "",
        "-a",
        "a-",
        "A",
        "a_b",
        "a..b",
        ".a",
        "a/b",
        &"a".repeat(254),
    ] {
        assert_eq!(
            AppId::new(None, bad).unwrap_err().part(),
            AppPart::Name,
            "{bad}"
        );
    }
    for bad in ["", "a.b", &"a".repeat(64)] {
        assert_eq!(
            AppId::new(Some(bad), "ok").unwrap_err().part(),
            AppPart::Namespace,
            "{bad}"
        );
    }
}

fn dns_label() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?"
}

proptest! {
    #[test]
    fn tracking_id_round_trips(
        app_ns in proptest::option::of(dns_label()),
        app_name in "[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?",
        job_ns in dns_label(),
        job_name in dns_label(),
    ) {
        prop_assume!(AppId::new(None, &app_name).is_ok());
        let instance = match &app_ns {
            Some(ns) => format!("{ns}_{app_name}"),
            None => app_name.clone(),
        };
        let value = format!("{instance}:mlops.mlops.dev/NotebookValidationJob:{job_ns}/{job_name}");
        let lookup = parent_application(
            &JobKey::new(&job_ns, &job_name),
            &map(&[(ARGOCD_TRACKING_ID, &value)]),
            &BTreeMap::new(), &TrackingSettings::default());
        let found = lookup.parent.unwrap();
        prop_assert_eq!(found.source, ParentSource::TrackingId);
        prop_assert_eq!(found.app.namespace(), app_ns.as_deref());
        prop_assert_eq!(found.app.name(), app_name.as_str());
    }

    #[test]
    fn a_tracking_id_is_accepted_only_when_it_names_this_job(
        value in "[a-z_:/.A-Za-z-]{0,60}",
        label in proptest::option::of("[a-z_-]{1,8}"),
    ) {
        let labels = label.iter().map(|l| (APP_INSTANCE.to_owned(), l.clone())).collect();
        let lookup = parent_application(&job(), &map(&[(ARGOCD_TRACKING_ID, &value)]), &labels, &TrackingSettings::default());
        match &lookup.parent {
            Some(AppRef { app, source: ParentSource::TrackingId }) => {
                let instance = match app.namespace() {
                    Some(ns) => format!("{ns}_{}", app.name()),
                    None => app.name().to_owned(),
                };
                prop_assert_eq!(value, format!("{instance}:{JOB_ID}"));
                prop_assert!(lookup.problems.is_empty());
            }
            // Anything else: the tracking id was skipped and said so.
            _ => {
                let skipped = matches!(
                    lookup.problems.first(),
                    Some(
                        ParentProblem::MalformedTrackingId { .. }
                            | ParentProblem::ForeignTrackingId { .. }
                            | ParentProblem::InvalidApplication { .. }
                    )
                );
                prop_assert!(skipped, "{:?}", lookup);
            }
        }
    }

    #[test]
    fn parent_lookup_never_panics(
        annotations in proptest::collection::btree_map(
            prop_oneof![Just(ARGOCD_TRACKING_ID.to_owned()), ".{0,5}"], ".{0,300}", 0..3),
        labels in proptest::collection::btree_map(
            prop_oneof![Just(APP_INSTANCE.to_owned()), Just(APP_PART_OF.to_owned())], ".{0,300}", 0..3),
    ) {
        for settings in [TrackingSettings::default(), label_tracking()] {
            let lookup = parent_application(&job(), &annotations, &labels, &settings);
            prop_assert!(lookup.problems.len() <= 3);
            for problem in &lookup.problems {
                prop_assert!(problem.to_string().len() < 600);
            }
        }
        let lookup = parent_application(&job(), &annotations, &labels, &TrackingSettings::default());
        for problem in &lookup.problems {
            prop_assert!(problem.to_string().len() < 600);
        }
    }
}
