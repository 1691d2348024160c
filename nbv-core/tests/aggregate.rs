//! Parent Applications, the incremental index, the status annotations and the publish
//! policy.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use nbv_core::aggregate::{
    Aggregate, AggregateIndex, AppId, AppPart, AppRef, JobKey, JobPhase, MIN_INTERVAL,
    NotebookStatus, ParentProblem, ParentSource, PublishDecision, RESYNC_INTERVAL, StatusLimit,
    TrackingMethod, TrackingSettings, decide_publish, parent_application,
};
use nbv_core::annotations::{
    APP_INSTANCE, APP_PART_OF, ARGOCD_INSTALLATION_ID, ARGOCD_TRACKING_ID, NOTEBOOK_STATUS,
    NOTEBOOK_SUMMARY,
};
use proptest::prelude::*;
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, h, m, s).unwrap()
}

fn app(name: &str) -> AppId {
    AppId::new(None, name).unwrap()
}

fn parent(app: &AppId) -> Option<AppRef> {
    Some(AppRef {
        app: app.clone(),
        source: ParentSource::InstanceLabel,
    })
}

/// Applies a JSON merge patch (RFC 7386) of `metadata.annotations` to an annotation map.
fn apply(annotations: &mut BTreeMap<String, String>, patch: &Value) {
    let changes = patch["metadata"]["annotations"]
        .as_object()
        .expect("annotations object");
    assert_eq!(patch.as_object().map(|o| o.len()), Some(1), "{patch}");
    assert!(!changes.is_empty(), "a patch is never empty");
    for (key, value) in changes {
        match value {
            Value::Null => {
                annotations.remove(key);
            }
            Value::String(s) => {
                annotations.insert(key.clone(), s.clone());
            }
            other => panic!("annotation {key} patched with a non-string {other}"),
        }
    }
}

/// Builds an Application's aggregate through the index.
fn aggregate_of(jobs: &[(&str, &str, JobPhase)]) -> Aggregate {
    let target = app("ml-platform");
    let mut index = AggregateIndex::new();
    for (namespace, name, phase) in jobs {
        index.upsert(JobKey::new(*namespace, *name), parent(&target), *phase);
    }
    index.aggregate(&target).clone()
}

fn seed_aggregate() -> Aggregate {
    let mut jobs: Vec<(String, JobPhase)> = (0..30)
        .map(|i| (format!("notebook-{i:02}"), JobPhase::Succeeded))
        .collect();
    jobs.push((
        "predictive-analytics-kserve-validation".into(),
        JobPhase::Failed,
    ));
    jobs.push(("multi-cluster-healing-validation".into(), JobPhase::Failed));
    let borrowed: Vec<(&str, &str, JobPhase)> = jobs
        .iter()
        .map(|(n, p)| ("self-healing-platform", n.as_str(), *p))
        .collect();
    aggregate_of(&borrowed)
}

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

// ---------------------------------------------------------------------------------------
// The index, against a from-scratch model
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Upsert {
        job: usize,
        app: Option<usize>,
        phase: JobPhase,
    },
    Remove {
        job: usize,
    },
    /// A relist: only the jobs in `keep` still exist.
    Retain {
        keep: BTreeSet<usize>,
    },
}

const JOBS: usize = 8;
const APPS: usize = 3;

fn job_key(i: usize) -> JobKey {
    // Two namespaces share names, so per-Application grouping must not use names alone.
    JobKey::new(["ml", "ops"][i % 2], format!("job-{}", i / 2))
}

fn app_id(i: usize) -> AppId {
    [
        AppId::new(None, "a").unwrap(),
        AppId::new(Some("team"), "a").unwrap(),
        AppId::new(None, "b").unwrap(),
    ][i]
        .clone()
}

fn job_phase() -> impl Strategy<Value = JobPhase> {
    prop_oneof![
        Just(JobPhase::Running),
        Just(JobPhase::Succeeded),
        Just(JobPhase::Failed)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..JOBS, proptest::option::of(0..APPS), job_phase())
            .prop_map(|(job, app, phase)| Op::Upsert { job, app, phase }),
        1 => (0..JOBS).prop_map(|job| Op::Remove { job }),
        1 => proptest::collection::btree_set(0..JOBS, 0..JOBS).prop_map(|keep| Op::Retain { keep }),
    ]
}

/// The model: the set of live jobs, and an aggregate recomputed from scratch.
type Model = HashMap<usize, (Option<usize>, JobPhase)>;

/// (total, succeeded, failed, running, failed jobs) of `app`, from scratch.
fn recompute(model: &Model, app: usize) -> (u64, u64, u64, u64, Vec<String>) {
    let mut counts = (0, 0, 0, 0, BTreeSet::new());
    for (job, (parent, phase)) in model {
        if *parent != Some(app) {
            continue;
        }
        counts.0 += 1;
        match phase {
            JobPhase::Succeeded => counts.1 += 1,
            JobPhase::Failed => {
                counts.2 += 1;
                counts.4.insert(job_key(*job).to_string());
            }
            JobPhase::Running => counts.3 += 1,
        }
    }
    (
        counts.0,
        counts.1,
        counts.2,
        counts.3,
        counts.4.into_iter().collect(),
    )
}

fn observed(agg: &Aggregate) -> (u64, u64, u64, u64, Vec<String>) {
    (
        agg.total(),
        agg.succeeded(),
        agg.failed(),
        agg.running(),
        agg.failed_jobs().map(str::to_owned).collect(),
    )
}

proptest! {
    #[test]
    fn index_matches_a_from_scratch_recomputation(ops in proptest::collection::vec(op(), 0..60)) {
        let mut index = AggregateIndex::new();
        let mut model = Model::new();
        for op in ops {
            let before: Vec<_> = (0..APPS).map(|a| recompute(&model, a)).collect();
            let changed = match op {
                Op::Upsert { job, app, phase } => {
                    model.insert(job, (app, phase));
                    index.upsert(job_key(job), app.map(app_id).and_then(|a| parent(&a)), phase)
                }
                Op::Remove { job } => {
                    model.remove(&job);
                    index.remove(&job_key(job))
                }
                Op::Retain { keep } => {
                    model.retain(|job, _| keep.contains(job));
                    let keys: BTreeSet<JobKey> = keep.iter().map(|j| job_key(*j)).collect();
                    index.retain(|job| keys.contains(job))
                }
            };
            // Exactly the Applications whose aggregate changed are reported, sorted.
            let expected: Vec<AppId> = (0..APPS)
                .filter(|a| before[*a] != recompute(&model, *a))
                .map(app_id)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            prop_assert_eq!(changed, expected);
            for a in 0..APPS {
                let agg = index.aggregate(&app_id(a));
                prop_assert_eq!(observed(agg), recompute(&model, a));
                prop_assert_eq!(agg.total(), agg.succeeded() + agg.failed() + agg.running());
            }
            // Only Applications with jobs are remembered.
            let known: BTreeSet<AppId> = index.applications().cloned().collect();
            let live: BTreeSet<AppId> = (0..APPS)
                .filter(|a| recompute(&model, *a).0 > 0)
                .map(app_id)
                .collect();
            prop_assert_eq!(known, live);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Status JSON and summary
// ---------------------------------------------------------------------------------------

fn failed_names() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-z0-9-]{1,60}", 0..200)
}

fn aggregate_with(failed: &[String], succeeded: usize, running: usize) -> Aggregate {
    let mut jobs: Vec<(String, JobPhase)> = failed
        .iter()
        .map(|n| (format!("f-{n}"), JobPhase::Failed))
        .collect();
    jobs.extend((0..succeeded).map(|i| (format!("s-{i}"), JobPhase::Succeeded)));
    jobs.extend((0..running).map(|i| (format!("r-{i}"), JobPhase::Running)));
    let borrowed: Vec<(&str, &str, JobPhase)> =
        jobs.iter().map(|(n, p)| ("ml", n.as_str(), *p)).collect();
    aggregate_of(&borrowed)
}

proptest! {
    #[test]
    fn capped_status_fits_and_counts_what_it_omits(
        failed in failed_names(),
        succeeded in 0usize..50,
        running in 0usize..50,
        limit in StatusLimit::MIN_BYTES..6_000,
        seconds in 0i64..4_000_000_000,
    ) {
        let agg = aggregate_with(&failed, succeeded, running);
        let limit = StatusLimit::new(limit).unwrap();
        let now = Utc.timestamp_opt(seconds, 0).unwrap();
        let status = agg.status(now, limit);
        let json = status.to_json();
        prop_assert!(json.len() <= limit.bytes(), "{} > {}", json.len(), limit.bytes());

        let listed = status.failed_jobs();
        let all: Vec<&str> = agg.failed_jobs().collect();
        // A sorted prefix of the failed jobs, each once, and the rest counted.
        prop_assert_eq!(listed.len() as u64 + status.failed_jobs_omitted(), agg.failed());
        prop_assert!(listed.iter().map(String::as_str).eq(all.iter().copied().take(listed.len())));
        // Not wasteful: when something was left out, the next name would not have fit
        // (give or take the digits that failedJobsOmitted may lose).
        if let Some(next) = all.get(listed.len()) {
            let cost = serde_json::to_string(next).unwrap().len() + 1;
            prop_assert!(json.len() + cost > limit.bytes() - 20);
        }

        let value: Value = serde_json::from_str(&json).unwrap();
        let fields = [
            "total", "succeeded", "failed", "running", "lastUpdate", "failedJobs", "failedJobsOmitted",
        ];
        prop_assert_eq!(value.as_object().unwrap().len(), fields.len());
        let positions: Vec<Option<usize>> =
            fields.iter().map(|f| json.find(&format!("\"{f}\":"))).collect();
        prop_assert!(positions.iter().all(Option::is_some) && positions.is_sorted(), "{}", json);
        prop_assert_eq!(value["total"].as_u64(), Some(agg.total()));
        let expected_time = now.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        prop_assert_eq!(value["lastUpdate"].as_str(), Some(expected_time.as_str()));
    }

    #[test]
    fn success_rate_is_exact_to_two_decimals(succeeded in 0u64..2_000, extra in 0u64..2_000) {
        let total = succeeded + extra;
        let mut jobs = Vec::new();
        let names: Vec<String> = (0..total).map(|i| format!("j{i}")).collect();
        for (i, name) in names.iter().enumerate() {
            let phase = if (i as u64) < succeeded { JobPhase::Succeeded } else { JobPhase::Running };
            jobs.push(("ml", name.as_str(), phase));
        }
        let summary = aggregate_of(&jobs).summary();
        if total == 0 {
            prop_assert_eq!(summary, "No notebook validation jobs");
            return Ok(());
        }
        let prefix = format!("{succeeded}/{total} succeeded (");
        prop_assert!(summary.starts_with(&prefix), "{}", summary);
        let rate = summary[prefix.len()..].strip_suffix("% success rate)").unwrap();
        let (whole, fraction) = rate.split_once('.').unwrap_or((rate, ""));
        prop_assert!(fraction.len() <= 2 && !fraction.ends_with('0'), "{}", rate);
        let hundredths: u64 = whole.parse::<u64>().unwrap() * 100
            + format!("{fraction:0<2}").parse::<u64>().unwrap();
        // |rate - exact| <= half a hundredth: |h * total - 10000 * s| <= total / 2,
        // except where the rate is held off 0% and 100%.
        let exact = 10_000 * succeeded;
        let error = (hundredths * total).abs_diff(exact);
        let clamped = (hundredths == 9_999 && succeeded < total) || (hundredths == 1 && succeeded > 0);
        prop_assert!(2 * error <= total || clamped, "{} for {}/{}", rate, succeeded, total);
        prop_assert_eq!(hundredths == 10_000, succeeded == total);
        prop_assert_eq!(hundredths == 0, succeeded == 0);
    }

    #[test]
    fn application_patch_is_idempotent_and_ignores_time(
        failed in proptest::collection::vec("[a-z]{1,5}", 0..5),
        succeeded in 0usize..5,
        running in 0usize..5,
        mut current in proptest::collection::btree_map(
            prop_oneof![Just(NOTEBOOK_STATUS.to_owned()), Just(NOTEBOOK_SUMMARY.to_owned()), Just("team".to_owned())],
            ".{0,20}", 0..3),
        later in 0i64..1_000_000,
    ) {
        let agg = aggregate_with(&failed, succeeded, running);
        let status = agg.status(at(22, 30, 0), StatusLimit::DEFAULT);
        let team = current.get("team").cloned();
        if let Some(patch) = status.application_patch(&current) {
            apply(&mut current, &patch);
        }
        prop_assert_eq!(current.get("team"), team.as_ref());
        prop_assert_eq!(current.get(NOTEBOOK_SUMMARY), Some(&agg.summary()));
        let republished = agg.status(at(22, 30, 0) + TimeDelta::seconds(later), StatusLimit::DEFAULT);
        prop_assert_eq!(republished.application_patch(&current), None);
    }
}

#[test]
fn summaries() {
    let cases = [
        (vec![], "No notebook validation jobs"),
        (
            vec![("ml", "a", JobPhase::Succeeded)],
            "1/1 succeeded (100% success rate)",
        ),
        (
            vec![
                ("ml", "a", JobPhase::Succeeded),
                ("ml", "b", JobPhase::Running),
            ],
            "1/2 succeeded (50% success rate)",
        ),
        (
            vec![
                ("ml", "a", JobPhase::Succeeded),
                ("ml", "b", JobPhase::Failed),
                ("ml", "c", JobPhase::Failed),
            ],
            "1/3 succeeded (33.33% success rate)",
        ),
        (
            vec![("ml", "a", JobPhase::Running)],
            "0/1 succeeded (0% success rate)",
        ),
    ];
    for (jobs, expected) in cases {
        assert_eq!(aggregate_of(&jobs).summary(), expected);
    }
    assert_eq!(
        seed_aggregate().summary(),
        "30/32 succeeded (93.75% success rate)"
    );
}

#[test]
fn failed_jobs_are_namespace_qualified() {
    let agg = aggregate_of(&[
        ("ml", "train", JobPhase::Failed),
        ("ops", "train", JobPhase::Failed),
    ]);
    assert_eq!(agg.failed(), 2);
    assert!(agg.failed_jobs().eq(["ml/train", "ops/train"]));
}

#[test]
fn status_snapshots() {
    let now = at(22, 30, 0);
    let small = StatusLimit::new(StatusLimit::MIN_BYTES).unwrap();
    let many_failed: Vec<String> = (0..40).map(|i| format!("validation-{i:02}")).collect();
    let rendered: Vec<String> = [
        (Aggregate::default(), StatusLimit::DEFAULT),
        (seed_aggregate(), StatusLimit::DEFAULT),
        (aggregate_with(&[], 0, 3), StatusLimit::DEFAULT),
        (aggregate_with(&many_failed, 5, 2), small),
    ]
    .into_iter()
    .map(|(agg, limit)| {
        let status = agg.status(now, limit);
        format!("{}\n{}\n", status.summary(), status.to_json())
    })
    .collect();
    insta::assert_snapshot!(rendered.join("\n"));
}

#[test]
fn application_patch_snapshot() {
    let status: NotebookStatus = seed_aggregate().status(at(22, 30, 0), StatusLimit::DEFAULT);
    let current = map(&[
        ("argocd.argoproj.io/refresh", "normal"),
        (NOTEBOOK_SUMMARY, "29/32 succeeded (90.63% success rate)"),
    ]);
    insta::assert_json_snapshot!(status.application_patch(&current).unwrap());
}

#[test]
fn an_unreadable_or_foreign_status_is_replaced() {
    let status = seed_aggregate().status(at(22, 30, 0), StatusLimit::DEFAULT);
    let summary = status.summary();
    for bad in [
        "not json",
        "{}",
        // The upstream format, without failedJobsOmitted.
        r#"{"total":32,"succeeded":30,"failed":2,"running":0,"lastUpdate":"2026-01-24T22:30:00Z","failedJobs":["self-healing-platform/multi-cluster-healing-validation","self-healing-platform/predictive-analytics-kserve-validation"]}"#,
    ] {
        let current = map(&[(NOTEBOOK_STATUS, bad), (NOTEBOOK_SUMMARY, &summary)]);
        let patch = status.application_patch(&current).unwrap();
        let changes = patch["metadata"]["annotations"].as_object().unwrap();
        assert_eq!(
            changes.keys().collect::<Vec<_>>(),
            [NOTEBOOK_STATUS],
            "{bad}"
        );
    }
}

#[test]
fn status_limit_rejects_tiny_budgets() {
    insta::assert_snapshot!(StatusLimit::new(100).unwrap_err().to_string());
}

// ---------------------------------------------------------------------------------------
// Publish policy, simulated on a virtual clock
// ---------------------------------------------------------------------------------------

/// The result of driving [`decide_publish`] like a shell would.
struct Simulation {
    publishes: Vec<(DateTime<Utc>, u32)>,
    final_version: u32,
    last_change: Option<DateTime<Utc>>,
    end: DateTime<Utc>,
}

/// Changes arrive at `start + offsets[i]` ms; the shell calls the policy at start, on
/// every change and at every time the policy asked to be woken, publishing on `Now`.
fn simulate(mut offsets: Vec<i64>) -> Simulation {
    offsets.sort_unstable();
    let start = at(12, 0, 0);
    let changes: Vec<DateTime<Utc>> = offsets
        .iter()
        .map(|ms| start + TimeDelta::milliseconds(*ms))
        .collect();
    let end = changes.last().copied().unwrap_or(start) + TimeDelta::minutes(12);

    let mut publishes = Vec::new();
    let (mut version, mut last_publish, mut last_change, mut pending) = (0u32, None, None, false);
    let mut wake: Option<DateTime<Utc>> = Some(start);
    let mut next_change = 0;
    loop {
        let change_at = changes.get(next_change).copied();
        let now = match (change_at, wake) {
            (Some(c), Some(w)) => c.min(w),
            (Some(c), None) => c,
            (None, Some(w)) => w,
            (None, None) => break,
        };
        if now > end {
            break;
        }
        if change_at == Some(now) {
            next_change += 1;
            version += 1;
            last_change = Some(now);
            pending = true;
        }
        // A shell re-evaluates after each publish to learn when to wake next.
        loop {
            match decide_publish(last_publish, last_change, now, pending) {
                PublishDecision::Now => {
                    publishes.push((now, version));
                    last_publish = Some(now);
                    pending = false;
                }
                PublishDecision::At(t) | PublishDecision::Idle { resync_at: t } => {
                    assert!(t > now, "the policy asked to be woken in the past");
                    wake = Some(t);
                    break;
                }
            }
            assert!(publishes.len() < 100_000, "runaway publishing");
        }
    }
    Simulation {
        publishes,
        final_version: version,
        last_change,
        end,
    }
}

proptest! {
    #[test]
    fn publish_policy_limits_rate_and_never_goes_stale(
        offsets in proptest::collection::vec(
            prop_oneof![0i64..30 * 60_000, 0i64..120_000], 0..40)
    ) {
        let sim = simulate(offsets);
        let times: Vec<DateTime<Utc>> = sim.publishes.iter().map(|p| p.0).collect();
        prop_assert!(!times.is_empty());
        for pair in times.windows(2) {
            prop_assert!(pair[1] - pair[0] >= MIN_INTERVAL, "publishes at {} and {}", pair[0], pair[1]);
            prop_assert!(pair[1] - pair[0] <= RESYNC_INTERVAL, "silent from {} to {}", pair[0], pair[1]);
        }
        prop_assert!(sim.end - *times.last().unwrap() <= RESYNC_INTERVAL);
        if let Some(changed) = sim.last_change {
            // The final state is published within a minute of the last change.
            let trailing = sim.publishes.iter().find(|(t, _)| *t >= changed);
            let Some((t, version)) = trailing else {
                return Err(TestCaseError::fail("final state never published"));
            };
            prop_assert!(*t - changed <= MIN_INTERVAL);
            prop_assert_eq!(*version, sim.final_version);
        }
        // What is shown at the end is the true state.
        prop_assert_eq!(sim.publishes.last().unwrap().1, sim.final_version);
    }
}

#[test]
fn publish_policy_edges() {
    let t = at(12, 0, 0);
    // Exactly at the boundary, publishing is allowed.
    assert_eq!(
        decide_publish(Some(t), None, t + MIN_INTERVAL, true),
        PublishDecision::Now
    );
    assert_eq!(
        decide_publish(Some(t), None, t + RESYNC_INTERVAL, false),
        PublishDecision::Now
    );
    // A change recorded only as a timestamp counts as pending.
    assert_eq!(
        decide_publish(
            Some(t),
            Some(t + TimeDelta::seconds(1)),
            t + TimeDelta::seconds(2),
            false
        ),
        PublishDecision::At(t + MIN_INTERVAL)
    );
    // A change before the last publish is already published.
    assert_eq!(
        decide_publish(Some(t), Some(t - TimeDelta::seconds(1)), t, false),
        PublishDecision::Idle {
            resync_at: t + RESYNC_INTERVAL
        }
    );
    // A last publish in the future never stalls publishing.
    assert_eq!(
        decide_publish(Some(t + TimeDelta::hours(1)), None, t, true),
        PublishDecision::Now
    );
    // The end of time does not overflow.
    let last = DateTime::<Utc>::MAX_UTC;
    assert_eq!(
        decide_publish(Some(last), None, last, true),
        PublishDecision::Now
    );
}
