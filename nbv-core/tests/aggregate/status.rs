//! The status JSON and summary published to an Application.

use super::*;

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
