//! Proptest strategies for jobs, statuses and annotations, valid and hostile.
//!
//! Hostile values are what users and other controllers really write: an empty
//! message, a retry count of `0` (both true in Lua, which Argo CD's health scripts
//! run), legacy phases, a terminal phase without a completion time, a wave of ` 3`,
//! YAML that is not a list, a number too large for 64 bits. Every strategy is bounded:
//! no value is larger than a few KiB.
//!
//! # Examples
//!
//! ```
//! use nbv_testkit::strategies;
//! use proptest::prelude::*;
//! use proptest::test_runner::TestRunner;
//!
//! let mut runner = TestRunner::deterministic();
//! runner.run(&strategies::job(), |job| {
//!     prop_assert_eq!(&job["kind"], "NotebookValidationJob");
//!     prop_assert!(job["metadata"]["name"].is_string());
//!     Ok(())
//! }).unwrap();
//! ```

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::annotations::{
    APP_INSTANCE, APP_PART_OF, ARGOCD_SYNC_WAVE, ARGOCD_TRACKING_ID, BLOCK_WAVE, COMPLETION_TIME,
    ON_SUCCESS_TRIGGER, WAVE_COMPLETE, WAVE_FAILED,
};
use nbv_core::api::{NotebookValidationJobStatus, Phase};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};

use crate::fixtures::JobBuilder;

/// Every phase, legacy ones included.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::phase;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&phase(), |p| { assert!(nbv_core::api::Phase::ALL.contains(&p)); Ok(()) }).unwrap();
/// ```
pub fn phase() -> impl Strategy<Value = Phase> {
    select(Phase::ALL.to_vec())
}

/// A DNS label of 1 to 20 characters, as Kubernetes names are.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::dns_label;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&dns_label(), |name| {
///     assert!(nbv_core::pod::is_dns_label(&name), "{name}");
///     Ok(())
/// }).unwrap();
/// ```
pub fn dns_label() -> impl Strategy<Value = String> {
    "[a-z]([a-z0-9-]{0,18}[a-z0-9])?"
}

/// A time within a few days of 2026-01-24, to the second.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::time;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&time(), |t| { assert_eq!(t.timestamp_subsec_nanos(), 0); Ok(()) }).unwrap();
/// ```
pub fn time() -> impl Strategy<Value = DateTime<Utc>> {
    (0i64..5 * 24 * 3600).prop_map(|offset| {
        let base = Utc
            .with_ymd_and_hms(2026, 1, 22, 0, 0, 0)
            .single()
            .unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
        base + chrono::Duration::seconds(offset)
    })
}

/// A message, including the truthiness traps of Lua: `""` and `"0"`.
fn message() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some(String::new())),
        Just(Some("0".to_owned())),
        Just(Some(" ".to_owned())),
        "[ -~]{1,40}".prop_map(Some),
        "\\PC{1,20}".prop_map(Some),
    ]
}

/// A typed status in every phase, with the traps a health check must survive: an empty
/// message, a retry count of 0 (or negative), a terminal phase without completion time,
/// a running phase with one, no phase at all.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::status;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&status(), |s| {
///     // Always a status the API accepts: it serializes and reads back unchanged.
///     let json = serde_json::to_value(&s).unwrap();
///     assert_eq!(serde_json::from_value::<nbv_core::api::NotebookValidationJobStatus>(json).unwrap(), s);
///     Ok(())
/// }).unwrap();
/// ```
pub fn status() -> impl Strategy<Value = NotebookValidationJobStatus> {
    (
        proptest::option::weighted(0.9, phase()),
        message(),
        proptest::option::of(-1i32..5),
        proptest::option::of(time()),
        proptest::option::of(time()),
        proptest::option::of(1i64..5),
    )
        .prop_map(
            |(phase, message, retry_count, start_time, completion_time, observed_generation)| {
                NotebookValidationJobStatus {
                    phase,
                    message,
                    retry_count,
                    start_time,
                    completion_time,
                    observed_generation,
                    ..NotebookValidationJobStatus::default()
                }
            },
        )
}

/// A `status` as any controller might have written it, typed or not: the values of
/// [`status`] plus unknown phases, wrong cases, wrong types and nulls. Not every value
/// deserializes into the typed status; code that reads statuses must not panic on any.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::status_json;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&status_json(), |s| { assert!(s.is_object()); Ok(()) }).unwrap();
/// ```
pub fn status_json() -> impl Strategy<Value = Value> {
    let hostile_phase = prop_oneof![
        Just(json!("")),
        Just(json!("succeeded")),
        Just(json!("Complete")),
        Just(json!(null)),
        Just(json!(3)),
        Just(json!(["Succeeded"])),
    ];
    prop_oneof![
        3 => status().prop_map(|s| serde_json::to_value(s).unwrap_or_else(|_| json!({}))),
        1 => (hostile_phase, message(), prop_oneof![Just(json!("0")), Just(json!(-1)), Just(json!(null))])
            .prop_map(|(phase, message, retry)| json!({
                "phase": phase, "message": message, "retryCount": retry,
                "completionTime": "not a time"
            })),
    ]
}

/// A sync-wave value Argo CD accepts (`Atoi`): canonical or with `+` and leading zeros.
///
/// # Examples
///
/// ```
/// use nbv_core::waves::Wave;
/// use nbv_testkit::strategies::valid_wave;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&valid_wave(), |w| { assert!(w.parse::<Wave>().is_ok(), "{w}"); Ok(()) }).unwrap();
/// ```
pub fn valid_wave() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (-5i64..10).prop_map(|w| w.to_string()),
        1 => (0i64..10).prop_map(|w| format!("+{w}")),
        1 => (0i64..10).prop_map(|w| format!("0{w}")),
    ]
}

/// An annotation value nbv must survive without panicking or losing anything else:
/// empty, blank, padded numbers, numbers beyond 64 bits, YAML that is a scalar, a
/// mapping, an alias or not YAML at all, control characters, long text (at most 2 KiB).
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::hostile_value;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&hostile_value(), |v| { assert!(v.len() <= 2048); Ok(()) }).unwrap();
/// ```
pub fn hostile_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("   ".to_owned()),
        Just(" 3".to_owned()),
        Just("3.0".to_owned()),
        Just("0x10".to_owned()),
        Just("three".to_owned()),
        Just("-0".to_owned()),
        Just("99999999999999999999".to_owned()),
        Just("~".to_owned()),
        Just("{kind: Deployment}".to_owned()),
        Just("- &a [*a]".to_owned()),
        Just("- {apiVersion: apps/v1, kind: Deployment, action: restart}".to_owned()),
        Just("- {apiVersion: apps/v1, kind: Deployment, name: Web_1, action: Restart}".to_owned()),
        Just("[\n".to_owned()),
        Just("\u{0}\u{7}\t".to_owned()),
        "\\PC{0,64}",
        "[a-z ]{1024,2048}",
    ]
}

/// One valid `mlops.dev/on-success-trigger` entry, as a YAML flow mapping.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::trigger_entry;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&trigger_entry(), |entry| {
///     let value = format!("- {entry}");
///     assert!(nbv_core::triggers::parse_triggers(&value, "ml").is_ok(), "{value}");
///     Ok(())
/// }).unwrap();
/// ```
pub fn trigger_entry() -> impl Strategy<Value = String> {
    let target = prop_oneof![
        Just(("apps/v1", "Deployment", "restart")),
        Just(("apps/v1", "StatefulSet", "restart")),
        Just(("serving.kserve.io/v1beta1", "InferenceService", "restart")),
        Just(("serving.kserve.io/v1beta1", "InferenceService", "refresh")),
        Just(("v1", "ConfigMap", "refresh")),
        Just(("argoproj.io/v1alpha1", "Application", "sync")),
        Just(("argoproj.io/v1alpha1", "Application", "refresh")),
    ];
    (target, dns_label(), proptest::option::of(dns_label())).prop_map(
        |((api_version, kind, action), name, namespace)| match namespace {
            Some(ns) => format!(
                "{{apiVersion: {api_version}, kind: {kind}, name: {name}, namespace: {ns}, action: {action}}}"
            ),
            None => format!("{{apiVersion: {api_version}, kind: {kind}, name: {name}, action: {action}}}"),
        },
    )
}

/// A valid trigger annotation: a YAML list of one to four entries.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::trigger_annotation;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&trigger_annotation(), |value| {
///     let set = nbv_core::triggers::parse_triggers(&value, "ml").unwrap();
///     assert!((1..=4).contains(&set.len()));
///     Ok(())
/// }).unwrap();
/// ```
pub fn trigger_annotation() -> impl Strategy<Value = String> {
    proptest::collection::vec(trigger_entry(), 1..=4).prop_map(|entries| {
        entries
            .iter()
            .map(|e| format!("- {e}"))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The keys nbv reads or writes on a job.
const NBV_KEYS: [&str; 8] = [
    ARGOCD_SYNC_WAVE,
    BLOCK_WAVE,
    ON_SUCCESS_TRIGGER,
    WAVE_COMPLETE,
    WAVE_FAILED,
    COMPLETION_TIME,
    ARGOCD_TRACKING_ID,
    "example.com/unrelated",
];

/// Job annotations with well-formed values only: a sync wave, maybe a block wave,
/// maybe triggers.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::valid_annotations;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&valid_annotations(), |a| {
///     assert!(nbv_core::waves::sync_wave(&a).is_ok());
///     assert!(nbv_core::triggers::from_annotations(&a, "ml").is_ok());
///     Ok(())
/// }).unwrap();
/// ```
pub fn valid_annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
    (
        proptest::option::of(valid_wave()),
        proptest::option::of(valid_wave()),
        proptest::option::of(trigger_annotation()),
    )
        .prop_map(|(wave, block, triggers)| {
            let mut annotations = BTreeMap::new();
            if let Some(w) = wave {
                annotations.insert(ARGOCD_SYNC_WAVE.to_owned(), w);
            }
            if let Some(b) = block {
                annotations.insert(BLOCK_WAVE.to_owned(), b);
            }
            if let Some(t) = triggers {
                annotations.insert(ON_SUCCESS_TRIGGER.to_owned(), t);
            }
            annotations
        })
}

/// Job annotations where any of nbv's keys (and an unrelated one) may hold a valid or a
/// hostile value.
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::annotations;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&annotations(), |a| { assert!(a.len() <= 8); Ok(()) }).unwrap();
/// ```
pub fn annotations() -> impl Strategy<Value = BTreeMap<String, String>> {
    let value = prop_oneof![
        2 => valid_wave(),
        1 => trigger_annotation(),
        2 => hostile_value(),
    ];
    (
        valid_annotations(),
        proptest::collection::btree_map(select(NBV_KEYS.to_vec()), value, 0..4),
    )
        .prop_map(|(mut base, overrides)| {
            for (key, value) in overrides {
                base.insert(key.to_owned(), value);
            }
            base
        })
}

/// A job manifest: any name, [`annotations`], maybe a parent Application label, and a
/// [`status_json`] (or none).
///
/// # Examples
///
/// ```
/// use nbv_testkit::strategies::job;
/// use proptest::test_runner::TestRunner;
///
/// let mut runner = TestRunner::deterministic();
/// runner.run(&job(), |j| { assert_eq!(j["apiVersion"], "mlops.mlops.dev/v1alpha1"); Ok(()) }).unwrap();
/// ```
pub fn job() -> impl Strategy<Value = Value> {
    let parent = prop_oneof![
        Just(None),
        dns_label().prop_map(|a| Some((APP_PART_OF, a))),
        dns_label().prop_map(|a| Some((APP_INSTANCE, a))),
    ];
    (
        dns_label(),
        dns_label(),
        annotations(),
        parent,
        proptest::option::weighted(0.8, status_json()),
    )
        .prop_map(|(namespace, name, annotations, parent, status)| {
            let mut builder = JobBuilder::new(namespace, name);
            for (key, value) in annotations {
                builder = builder.annotation(key, value);
            }
            if let Some((key, app)) = parent {
                builder = builder.label(key, app);
            }
            let mut job = builder.build();
            if let Some(status) = status {
                job["status"] = status;
            }
            job
        })
}
