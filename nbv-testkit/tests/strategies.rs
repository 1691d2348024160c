//! The strategies produce what they promise, and nbv-core holds its promises on them:
//! hostile annotations are reported, never fatal, and never cost a job its
//! notification or its wave record.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use nbv_core::annotations::{ARGOCD_SYNC_WAVE, BLOCK_WAVE, ON_SUCCESS_TRIGGER};
use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus, Phase};
use nbv_core::plan::{Effect, PlanContext, plan};
use nbv_core::triggers::from_annotations;
use nbv_core::waves::{block_wave, effective_wave, sync_wave};
use nbv_testkit::FakeCluster;
use nbv_testkit::fixtures::JobBuilder;
use nbv_testkit::strategies::{annotations, hostile_value, job, status, status_json, time};
use proptest::prelude::*;

fn terminal_job(annotations: &BTreeMap<String, String>, phase: Phase) -> NotebookValidationJob {
    let at = Utc
        .with_ymd_and_hms(2026, 1, 24, 22, 30, 0)
        .single()
        .unwrap_or_default();
    let mut builder = JobBuilder::new("ml", "train")
        .generation(1)
        .phase(phase)
        .started_at(at)
        .completed_at(at);
    for (key, value) in annotations {
        builder = builder.annotation(key, value);
    }
    builder.typed().expect("a well-typed job")
}

proptest! {
    /// Every malformed annotation nbv reads is reported as an error naming it, and no
    /// valid one is.
    #[test]
    fn each_malformed_annotation_is_reported_by_name(annotations in annotations()) {
        let job = terminal_job(&annotations, Phase::Succeeded);
        let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).single().unwrap_or_default();
        let reported: Vec<&str> = plan(&job, &PlanContext::default(), now)
            .diagnostics
            .iter()
            .filter(|d| d.is_error)
            .map(|d| d.annotation)
            .collect();
        let malformed = [
            (ARGOCD_SYNC_WAVE, sync_wave(&annotations).is_err()),
            (BLOCK_WAVE, block_wave(&annotations).is_err()),
            (ON_SUCCESS_TRIGGER, from_annotations(&annotations, "ml").is_err()),
        ];
        for (key, is_malformed) in malformed {
            prop_assert_eq!(reported.contains(&key), is_malformed, "{} in {:?}", key, annotations);
        }
    }

    /// Whatever the annotations, a run that ended owes exactly one notification, and a
    /// job with a readable sync wave owes its wave record: a bad annotation costs
    /// nothing else.
    #[test]
    fn hostile_annotations_lose_nothing_else(
        annotations in annotations(),
        succeeded in any::<bool>(),
    ) {
        let phase = if succeeded { Phase::Succeeded } else { Phase::Failed };
        let job = terminal_job(&annotations, phase);
        let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).single().unwrap_or_default();
        let plan = plan(&job, &PlanContext::default(), now);
        let count = |f: fn(&Effect) -> bool| plan.effects.iter().filter(|e| f(&e.effect)).count();
        prop_assert_eq!(count(|e| matches!(e, Effect::Notify { .. })), 1);
        // The wave Argo CD puts the job in (an invalid sync-wave falls back to 0).
        let wave_owed = effective_wave(&annotations).wave.is_some();
        prop_assert_eq!(count(|e| matches!(e, Effect::PatchJob { .. })) == 1, wave_owed);
        if !succeeded {
            prop_assert_eq!(count(|e| matches!(e, Effect::Trigger { .. })), 0);
        }
    }

    /// The in-memory cluster stores every generated job as given.
    #[test]
    fn generated_jobs_are_stored_as_written(job in job()) {
        let cluster = FakeCluster::default();
        let stored = cluster.apply_object(job.clone());
        prop_assert!(stored.is_ok(), "{:?}", stored.err());
        let stored = stored.unwrap_or_default();
        prop_assert_eq!(&stored["metadata"]["annotations"], &job["metadata"]["annotations"]);
        prop_assert_eq!(&stored["status"], &job["status"]);
    }

    /// Typed statuses and their JSON agree, and the JSON statuses are always objects
    /// that name a phase or leave it out.
    #[test]
    fn statuses_are_objects_and_typed_ones_round_trip(typed in status(), raw in status_json()) {
        let value = serde_json::to_value(&typed).unwrap_or_default();
        prop_assert_eq!(serde_json::from_value::<NotebookValidationJobStatus>(value).ok(), Some(typed));
        prop_assert!(raw.is_object());
    }

    /// Hostile values stay small and times stay whole seconds.
    #[test]
    fn values_are_bounded(value in hostile_value(), at in time()) {
        prop_assert!(value.len() <= 2048);
        prop_assert_eq!(at.timestamp_subsec_nanos(), 0);
    }
}
