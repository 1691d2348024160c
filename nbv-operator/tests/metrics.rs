//! The operator's metrics as Prometheus scrapes them.

use std::collections::BTreeMap;
use std::time::Duration;

use nbv_core::api::Phase;
use nbv_operator::metrics::{Metrics, ReconcileOutcome, TriggerStatus};
use proptest::prelude::*;

/// The value of the sample `series` (name and labels exactly as encoded), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(series)?.strip_prefix(' ')?;
        value.parse().ok()
    })
}

const FAMILIES: [(&str, &str); 7] = [
    ("notebook_validation_total", "counter"),
    ("notebook_validation_duration_seconds", "histogram"),
    ("argocd_triggers_total", "counter"),
    ("nbv_reconcile_total", "counter"),
    ("nbv_reconcile_duration_seconds", "histogram"),
    ("nbv_reconcile_errors_total", "counter"),
    ("nbv_application_status_patches_total", "counter"),
];

#[test]
fn every_family_has_help_and_type_once_used() {
    let metrics = Metrics::new();
    metrics.trigger("restart", TriggerStatus::Succeeded);
    metrics.reconcile_error("transient");
    metrics.application_published("patched");
    let text = metrics.encode();
    for (name, kind) in FAMILIES {
        // OpenMetrics names a counter family without its `_total` suffix.
        let family = name.strip_suffix("_total").unwrap_or(name);
        assert!(
            text.contains(&format!("# TYPE {family} {kind}\n")),
            "no TYPE line for {family}:\n{text}"
        );
        let help = format!("# HELP {family} ");
        let help_line = text.lines().find(|line| line.starts_with(&help));
        assert!(
            help_line.is_some_and(|line| line.len() > help.len() + 10),
            "no HELP text for {family}:\n{text}"
        );
    }
    assert!(text.contains("# UNIT notebook_validation_duration_seconds seconds\n"));
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn the_exposition_after_a_fixed_sequence_of_calls() {
    let metrics = Metrics::new();
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(42)));
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(3 * 3600)));
    metrics.validation_finished(Phase::Failed, Some(Duration::from_millis(500)));
    metrics.validation_finished(Phase::Failed, None);
    metrics.trigger("restart", TriggerStatus::Succeeded);
    metrics.trigger("restart", TriggerStatus::Succeeded);
    metrics.trigger("sync", TriggerStatus::Deferred);
    metrics.trigger("refresh", TriggerStatus::Failed);
    metrics.trigger("restart", TriggerStatus::Refused);
    metrics.reconciled(ReconcileOutcome::Ok, Duration::from_millis(12));
    metrics.reconciled(ReconcileOutcome::Error, Duration::from_secs(3));
    metrics.reconcile_error("conflict");
    metrics.application_published("patched");
    metrics.application_published("unchanged");
    // Series order inside a family follows a hash map; sort the samples within each
    // family so that the snapshot is stable.
    insta::assert_snapshot!(sorted_within_families(&metrics.encode()));
}

/// The exposition with the sample lines of each family sorted, comments kept in place.
fn sorted_within_families(text: &str) -> String {
    let mut out = Vec::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            samples.sort_unstable();
            out.append(&mut samples);
            out.push(line);
        } else {
            samples.push(line);
        }
    }
    samples.sort_unstable();
    out.append(&mut samples);
    out.join("\n")
}

#[test]
fn the_ratios_alerts_use_exist_before_any_event() {
    let text = Metrics::new().encode();
    for series in [
        "notebook_validation_total{phase=\"Succeeded\"}",
        "notebook_validation_total{phase=\"Failed\"}",
        "notebook_validation_duration_seconds_count{phase=\"Failed\"}",
        "nbv_reconcile_total{outcome=\"ok\"}",
        "nbv_reconcile_total{outcome=\"error\"}",
        "nbv_reconcile_duration_seconds_count",
    ] {
        assert_eq!(sample(&text, series), Some(0.0), "{series} in\n{text}");
    }
    // Families whose labels come from callers appear with their first series.
    assert!(!text.contains("argocd_triggers"), "{text}");
}

#[test]
fn validation_durations_fall_in_notebook_sized_buckets() {
    let metrics = Metrics::new();
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(2 * 3600)));
    let text = metrics.encode();
    let bucket = |le: &str| {
        sample(
            &text,
            &format!(
                "notebook_validation_duration_seconds_bucket{{le=\"{le}\",phase=\"Succeeded\"}}"
            ),
        )
    };
    assert_eq!(bucket("5400.0"), Some(0.0));
    assert_eq!(bucket("7200.0"), Some(1.0));
    assert_eq!(bucket("14400.0"), Some(1.0));
    assert_eq!(bucket("+Inf"), Some(1.0));
}

#[test]
fn the_validation_histogram_has_no_job_name_label() {
    let metrics = Metrics::new();
    metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(1)));
    let text = metrics.encode();
    assert!(!text.contains("job_name"), "{text}");
}

#[test]
fn free_form_labels_are_bounded() {
    let metrics = Metrics::new();
    for i in 0..100 {
        metrics.reconcile_error(&format!("kind-{i:03}"));
    }
    metrics.reconcile_error("");
    metrics.reconcile_error(&"x".repeat(Metrics::MAX_LABEL_LEN + 1));
    metrics.reconcile_error("kind-000");
    let text = metrics.encode();
    let series: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("nbv_reconcile_errors_total{"))
        .collect();
    assert_eq!(series.len(), Metrics::MAX_LABEL_VALUES + 1, "{text}");
    // The first values are kept; everything past the budget, the empty value and the
    // long value went to "other".
    assert_eq!(
        sample(&text, "nbv_reconcile_errors_total{kind=\"kind-000\"}"),
        Some(2.0)
    );
    let overflow = 100 - Metrics::MAX_LABEL_VALUES + 2;
    assert_eq!(
        sample(&text, "nbv_reconcile_errors_total{kind=\"other\"}"),
        Some(overflow as f64)
    );
}

#[test]
fn label_values_are_escaped() {
    let metrics = Metrics::new();
    metrics.application_published("a\"b");
    let text = metrics.encode();
    assert!(
        text.contains("nbv_application_status_patches_total{result=\"a\\\"b\"} 1"),
        "{text}"
    );
}

const ACTIONS: [&str; 3] = ["restart", "sync", "refresh"];
const STATUSES: [TriggerStatus; 4] = [
    TriggerStatus::Succeeded,
    TriggerStatus::Failed,
    TriggerStatus::Refused,
    TriggerStatus::Deferred,
];

proptest! {
    /// Every call is counted exactly once, under its own labels.
    #[test]
    fn counters_count_each_call_under_its_labels(
        triggers in prop::collection::vec((0..ACTIONS.len(), 0..STATUSES.len()), 0..60),
        runs in prop::collection::vec((any::<bool>(), prop::option::of(0u64..20_000)), 0..60),
    ) {
        let metrics = Metrics::new();
        let mut expected_triggers = BTreeMap::<(usize, usize), u64>::new();
        for &(action, status) in &triggers {
            metrics.trigger(ACTIONS[action], STATUSES[status]);
            *expected_triggers.entry((action, status)).or_default() += 1;
        }
        let mut finished = BTreeMap::<&str, (u64, u64, u64)>::new();
        for &(succeeded, secs) in &runs {
            let phase = if succeeded { Phase::Succeeded } else { Phase::Failed };
            metrics.validation_finished(phase, secs.map(Duration::from_secs));
            let entry = finished.entry(phase.as_str()).or_default();
            entry.0 += 1;
            if let Some(secs) = secs {
                entry.1 += 1;
                entry.2 += secs;
            }
        }
        let text = metrics.encode();
        for (action, name) in ACTIONS.iter().enumerate() {
            for (status, value) in STATUSES.iter().enumerate() {
                let series = format!(
                    "argocd_triggers_total{{action=\"{name}\",status=\"{}\"}}",
                    value.as_str()
                );
                let count = expected_triggers.get(&(action, status)).copied();
                prop_assert_eq!(sample(&text, &series), count.map(|c| c as f64), "{}", series);
            }
        }
        for phase in ["Succeeded", "Failed"] {
            let (total, observed, sum) = finished.get(phase).copied().unwrap_or_default();
            let labels = format!("{{phase=\"{phase}\"}}");
            prop_assert_eq!(sample(&text, &format!("notebook_validation_total{labels}")), Some(total as f64));
            prop_assert_eq!(
                sample(&text, &format!("notebook_validation_duration_seconds_count{labels}")),
                Some(observed as f64)
            );
            prop_assert_eq!(
                sample(&text, &format!("notebook_validation_duration_seconds_sum{labels}")),
                Some(sum as f64)
            );
        }
    }
}
