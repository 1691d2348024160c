//! Tests of the `mlops.dev/on-success-trigger` annotation: properties that
//! hold for every input, snapshots of the messages users read, and the
//! examples of the ADR and the user guide.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use nbv_core::annotations::ON_SUCCESS_TRIGGER;
use nbv_core::triggers::{
    Action, ApiVersion, ApiVersionError, Field, MAX_ANNOTATION_BYTES, NamespaceDefaults, TargetRef,
    Trigger, TriggerError, TriggerErrors, TriggerSet, from_annotations, parse_triggers,
};
use proptest::prelude::*;
use proptest::sample::select;
use serde_yaml_ng::{Mapping, Value};

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// DNS labels, including ones a YAML 1.1 or 1.2 resolver would read as
/// something other than a string if they were not quoted.
fn label() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?",
        1 => "[a-z0-9]{63}",
        1 => select(vec![
            "true", "false", "null", "yes", "no", "on", "off", "y", "n", "0x1f", "0o17",
            "0b101", "1e3", "123", "007", "nan", "inf", "1-2", "12e-3", "01e310", "0e0",
        ])
        .prop_map(str::to_owned),
    ]
}

fn subdomain() -> impl Strategy<Value = String> {
    prop::collection::vec(label(), 1..4).prop_map(|labels| labels.join("."))
}

fn kind() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Z][A-Za-z0-9]{0,20}",
        select(vec![
            "Deployment",
            "InferenceService",
            "StatefulSet",
            "ConfigMap"
        ])
        .prop_map(str::to_owned),
    ]
}

fn api_version() -> impl Strategy<Value = ApiVersion> {
    let core = "v[1-9][0-9]{0,2}((alpha|beta)[1-9][0-9]?)?";
    let grouped = (subdomain(), "[a-z]([a-z0-9-]{0,10}[a-z0-9])?");
    prop_oneof![
        core.prop_map(|v| ApiVersion::new("", &v).expect("core version")),
        grouped.prop_map(|(g, v)| ApiVersion::new(&g, &v).expect("grouped version")),
    ]
}

/// Valid triggers: Argo CD Applications get `sync` or `refresh`, other
/// kinds `restart` or `refresh`.
fn trigger() -> impl Strategy<Value = Trigger> {
    let application = (
        "v1(alpha|beta)?1".prop_map(|v| ApiVersion::new("argoproj.io", &v).expect("argo")),
        Just("Application".to_owned()),
        select(vec![Action::Sync, Action::Refresh]),
    );
    let workload = (
        api_version(),
        kind().prop_filter("not an Application", |k| k != "Application"),
        select(vec![Action::Restart, Action::Refresh]),
    );
    (
        prop_oneof![1 => application, 3 => workload],
        subdomain(),
        label(),
    )
        .prop_map(|((api_version, kind, action), name, namespace)| {
            let target = TargetRef::new(
                api_version,
                kind.parse().expect("kind"),
                name.parse().expect("name"),
                namespace.parse().expect("namespace"),
            );
            Trigger::new(target, action).expect("action fits the kind")
        })
}

/// Valid trigger sets (collecting drops repeated keys, as parsing does).
fn trigger_set(max: usize) -> impl Strategy<Value = TriggerSet> {
    prop::collection::vec(trigger(), 0..max).prop_map(|triggers| triggers.into_iter().collect())
}

/// The annotation form of one trigger, optionally without its namespace.
fn entry_value(trigger: &Trigger, with_namespace: bool) -> Value {
    let target = trigger.target();
    let mut map = Mapping::new();
    map.insert("apiVersion".into(), target.api_version().to_string().into());
    map.insert("kind".into(), target.kind().as_str().into());
    map.insert("name".into(), target.name().as_str().into());
    if with_namespace {
        map.insert("namespace".into(), target.namespace().as_str().into());
    }
    map.insert("action".into(), trigger.action().as_str().into());
    Value::Mapping(map)
}

/// Renders entries in block style with every key and scalar written as a
/// JSON string, number, boolean or null (JSON is YAML 1.2), so that each
/// value keeps its type whatever it looks like (`"1e3"` stays a string).
fn render(entries: &[Value]) -> String {
    let json = |value: &Value| serde_json::to_string(value).expect("JSON-compatible value");
    let mut out = String::new();
    for entry in entries {
        match entry {
            Value::Mapping(map) if !map.is_empty() => {
                for (i, (key, value)) in map.iter().enumerate() {
                    let prefix = if i == 0 { "- " } else { "  " };
                    let _ = writeln!(out, "{prefix}{}: {}", json(key), json(value));
                }
            }
            other => {
                let _ = writeln!(out, "- {}", json(other));
            }
        }
    }
    out
}

/// Arbitrary YAML values, up to a few levels deep.
fn yaml_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        select(vec![
            "restart",
            "sync",
            "refresh",
            "Restart",
            "v1",
            "apps/v1",
            "a/b/c",
            "/v1",
            "Deployment",
            "Foo_Bar",
            "ml",
            "",
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Sequence),
            prop::collection::vec((yaml_key(), inner), 0..4)
                .prop_map(|pairs| Value::Mapping(pairs.into_iter().collect())),
        ]
    })
}

/// Keys: mostly the real fields (so entries get deep into validation), some
/// near misses, some of other types.
fn yaml_key() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => select(Field::ALL.map(Field::as_str).to_vec()).prop_map(Value::from),
        2 => select(vec!["Name", "apiversion", "namspace", "replicas", "<<"]).prop_map(Value::from),
        1 => "[a-zA-Z]{1,8}".prop_map(Value::String),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<bool>().prop_map(Value::Bool),
    ]
}

/// An entry: usually a mapping with most fields, sometimes anything at all.
fn yaml_entry() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop::collection::vec((yaml_key(), yaml_value()), 0..7)
            .prop_map(|pairs| Value::Mapping(pairs.into_iter().collect())),
        1 => yaml_value(),
    ]
}

/// One entry that is invalid in exactly one way.
fn invalid_entry() -> impl Strategy<Value = Value> {
    (trigger(), 0..12usize).prop_map(|(trigger, flaw)| {
        let Value::Mapping(mut map) = entry_value(&trigger, true) else {
            unreachable!("entry_value returns a mapping")
        };
        let mut set = |key: &str, value: Value| {
            map.insert(key.into(), value);
        };
        match flaw {
            0 => set("action", "Restart".into()),
            1 => set("action", "delete".into()),
            2 => set("name", 5.into()),
            3 => set("name", Value::Sequence(vec!["a".into()])),
            4 => set("name", "Foo_Bar".into()),
            5 => set("apiVersion", "apps/v1/extra".into()),
            6 => set("apiVersion", "/v1".into()),
            7 => set("kind", "deployment".into()),
            8 => set("namespace", "Not.A.Label".into()),
            9 => set("namespace", Value::Null),
            10 => {
                map.remove("name");
            }
            _ => return Value::String("restart".into()),
        }
        Value::Mapping(map)
    })
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Asserts the invariants every error list has, whatever the input:
/// one line per error, entry errors naming their entry and field.
fn check_error_invariants(errors: &TriggerErrors, entries: Option<usize>) {
    assert!(!errors.errors().is_empty());
    let text = errors.to_string();
    assert_eq!(text.lines().count(), errors.errors().len(), "{text}");
    for error in errors {
        let message = error.to_string();
        assert!(!message.is_empty());
        if let Some(index) = error.entry_index() {
            assert!(
                message.starts_with(&format!("entry {index}")),
                "entry error without its index: {message}"
            );
            if let Some(count) = entries {
                assert!(index < count, "{message}");
            }
        }
        if let Some(field) = error.field() {
            assert!(
                message.contains(&format!("field \"{field}\"")),
                "field error without its field: {message}"
            );
        }
    }
}

/// Parses and checks the universal invariants; returns the outcome.
fn parse_checked(value: &str, entries: Option<usize>) -> Result<TriggerSet, TriggerErrors> {
    let started = Instant::now();
    let result = parse_triggers(value, "job-ns");
    // Generous: the real bound is structural (size limit, no alias
    // expansion, depth limit); this only catches a pathological slowdown.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "parse took {:?}",
        started.elapsed()
    );
    match &result {
        Ok(set) => {
            let mut keys: Vec<String> = set.iter().map(Trigger::key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), set.len(), "duplicate triggers in a set");
            if let Some(count) = entries {
                assert!(set.len() <= count);
            }
            for warning in set.warnings() {
                assert!(
                    warning
                        .to_string()
                        .starts_with(&format!("entry {}", warning.entry_index()))
                );
            }
        }
        Err(errors) => check_error_invariants(errors, entries),
    }
    result
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// (1) A valid set, rendered in its canonical form or as JSON (which
    /// is YAML) by another library, parses back to the same set, whatever the
    /// job's namespace.
    #[test]
    fn rendered_sets_parse_back_to_themselves(set in trigger_set(8), job_ns in label()) {
        let canonical = set.to_annotation_value();
        let parsed = parse_triggers(&canonical, &job_ns)
            .map_err(|e| TestCaseError::fail(format!("{canonical}\n{e}")))?;
        prop_assert_eq!(&parsed, &set);
        prop_assert!(parsed.warnings().is_empty());

        let json = serde_json::to_string_pretty(&set).expect("render JSON");
        let parsed = parse_triggers(&json, &job_ns)
            .map_err(|e| TestCaseError::fail(format!("{json}\n{e}")))?;
        prop_assert_eq!(&parsed, &set);
    }

    /// (3) An entry without a namespace gets the job's, or Argo CD's for an Application;
    /// one with a namespace keeps it.
    #[test]
    fn namespace_defaults_to_the_jobs(
        triggers in prop::collection::vec(trigger(), 1..8),
        omit in prop::collection::vec(any::<bool>(), 8),
        job_ns in label(),
        argocd_ns in label(),
    ) {
        // Distinct names, so that defaulting a namespace cannot make two
        // entries duplicates of each other.
        let triggers: Vec<Trigger> = triggers
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let target = t.target();
                let name = format!("{}-{i}", target.name()).parse().expect("name");
                let target = TargetRef::new(target.api_version().clone(), target.kind().clone(), name, target.namespace().clone());
                Trigger::new(target, t.action()).expect("same action")
            })
            .collect();
        let entries: Vec<Value> = triggers.iter().zip(&omit).map(|(t, omit)| entry_value(t, !omit)).collect();
        let defaults = NamespaceDefaults { job_namespace: &job_ns, argocd_namespace: &argocd_ns };
        let set = parse_triggers(&render(&entries), defaults).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(set.len(), triggers.len());
        for ((parsed, original), omitted) in set.iter().zip(&triggers).zip(&omit) {
            let expected = match (*omitted, original.is_argo_application()) {
                (true, true) => argocd_ns.as_str(),
                (true, false) => job_ns.as_str(),
                (false, _) => original.target().namespace().as_str(),
            };
            prop_assert_eq!(parsed.target().namespace().as_str(), expected);
            prop_assert_eq!(parsed.target().name(), original.target().name());
        }
    }

    /// (4) One invalid entry anywhere makes the annotation invalid, and every
    /// error is about that entry, however many valid entries surround it.
    #[test]
    fn one_bad_entry_invalidates_all(
        valid in prop::collection::vec(trigger(), 0..10),
        bad in invalid_entry(),
        at in any::<prop::sample::Index>(),
    ) {
        let mut entries: Vec<Value> = valid.iter().map(|t| entry_value(t, true)).collect();
        let position = at.index(entries.len() + 1);
        entries.insert(position, bad);
        let count = entries.len();
        let yaml = render(&entries);
        let errors = parse_triggers(&yaml, "job-ns").expect_err("must be invalid");
        check_error_invariants(&errors, Some(count));
        for error in &errors {
            prop_assert_eq!(error.entry_index(), Some(position), "{}", error);
        }
    }

    /// (5) Any value longer than the limit is rejected without being parsed:
    /// the only error is the size, even for a valid list or for garbage.
    #[test]
    fn oversized_values_are_not_parsed(
        set in trigger_set(4),
        garbage in any::<bool>(),
        extra in 1..4096usize,
    ) {
        let head = if garbage { "- &bomb [*bomb\n: :".to_owned() } else { set.to_annotation_value() };
        let padding = (MAX_ANNOTATION_BYTES + extra).saturating_sub(head.len() + 2);
        let value = format!("{head}\n#{}", "x".repeat(padding));
        prop_assert!(value.len() > MAX_ANNOTATION_BYTES);
        let errors = parse_triggers(&value, "job-ns").expect_err("too large");
        prop_assert_eq!(
            errors.errors(),
            &[TriggerError::TooLarge { size: value.len(), max: MAX_ANNOTATION_BYTES }][..]
        );
    }

    /// (5') ...and a valid value of exactly the limit is parsed.
    #[test]
    fn values_at_the_limit_are_parsed(set in trigger_set(4)) {
        let head = set.to_annotation_value();
        let value = format!("{head}#{}", "x".repeat(MAX_ANNOTATION_BYTES - head.len() - 1));
        prop_assert_eq!(value.len(), MAX_ANNOTATION_BYTES);
        let parsed = parse_triggers(&value, "job-ns").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed, set);
    }

    /// (6) ApiVersion: Display and parse are inverse on valid values.
    #[test]
    fn api_version_round_trips(version in api_version()) {
        let text = version.to_string();
        prop_assert_eq!(text.parse::<ApiVersion>(), Ok(version.clone()));
        prop_assert_eq!(text.matches('/').count(), usize::from(!version.is_core()));
    }

    /// (6') ApiVersion: two or more slashes, or an empty side of the slash,
    /// are always rejected, whatever the parts.
    #[test]
    fn api_version_rejects_bad_shapes(
        parts in prop::collection::vec("[a-z0-9./-]{0,8}", 3..6),
        side in "[a-z0-9.-]{0,12}",
    ) {
        let many = parts.join("/");
        prop_assert!(many.matches('/').count() >= 2);
        let too_many = matches!(many.parse::<ApiVersion>(), Err(ApiVersionError::TooManySlashes { .. }));
        prop_assert!(too_many, "{}", many);
        let no_group = matches!(format!("/{side}").parse::<ApiVersion>(), Err(ApiVersionError::EmptyGroup { .. }));
        prop_assert!(no_group, "/{}", side);
        if !side.is_empty() {
            let no_version = matches!(format!("{side}/").parse::<ApiVersion>(), Err(ApiVersionError::EmptyVersion { .. }));
            prop_assert!(no_version, "{}/", side);
        }
    }

    /// Actions parse only in exact lowercase; any other casing is rejected
    /// with the right action suggested.
    #[test]
    fn actions_are_exact_lowercase(action in select(Action::ALL.to_vec()), flips in prop::collection::vec(any::<bool>(), 7)) {
        prop_assert_eq!(action.to_string().parse::<Action>(), Ok(action));
        let variant: String = action
            .as_str()
            .chars()
            .zip(flips.iter().cycle())
            .map(|(c, flip)| if *flip { c.to_ascii_uppercase() } else { c })
            .collect();
        match variant.parse::<Action>() {
            Ok(parsed) => prop_assert_eq!(variant.as_str(), parsed.as_str()),
            Err(err) => prop_assert_eq!(err.suggestion(), Some(action)),
        }
    }

    /// The key identifies (action, group, kind, namespace, name): equal keys
    /// exactly when those parts are equal.
    #[test]
    fn keys_are_injective(a in trigger(), b in trigger()) {
        let identity = |t: &Trigger| {
            let target = t.target();
            (
                t.action(),
                target.api_version().group().to_owned(),
                target.kind().clone(),
                target.namespace().clone(),
                target.name().clone(),
            )
        };
        prop_assert_eq!(a.key() == b.key(), identity(&a) == identity(&b));
    }
}

proptest! {
    // Cheap cases, and the ones most likely to find a panic: run more of them.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// (2a) Arbitrary text never panics, returns quickly, and every error
    /// keeps the message invariants.
    #[test]
    fn arbitrary_text_never_panics(value in prop_oneof![
        any::<String>(),
        "[-:&*!|>%@`'\"\\[\\]{},#? \n\ta-z0-9]{0,200}",
        prop::collection::vec(any::<u8>(), 0..300)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
    ]) {
        let _ = parse_checked(&value, None);
    }

    /// (2b) Arbitrary YAML structures (lists of maps with random keys and
    /// values of random types) never panic; errors name entry and field.
    #[test]
    fn arbitrary_structures_never_panic(entries in prop::collection::vec(yaml_entry(), 0..6)) {
        let count = entries.len();
        let yaml = serde_yaml_ng::to_string(&entries).expect("render YAML");
        let _ = parse_checked(&yaml, Some(count));
    }

    /// (2c) Valid annotations with random characters inserted never panic.
    #[test]
    fn mutated_annotations_never_panic(
        set in trigger_set(4),
        edits in prop::collection::vec((any::<prop::sample::Index>(), select(vec![
            '&', '*', ':', '-', '[', ']', '{', '}', '\n', ' ', '\t', '#', '!', '|', '>', '"', '\'', '<', '?', ',',
        ])), 1..6),
    ) {
        let mut yaml: Vec<char> = set.to_annotation_value().chars().collect();
        for (at, ch) in edits {
            let position = at.index(yaml.len() + 1);
            yaml.insert(position, ch);
        }
        let yaml: String = yaml.into_iter().collect();
        let _ = parse_checked(&yaml, None);
    }
}

// ---------------------------------------------------------------------------
// Examples from the ADR and the user guide
// ---------------------------------------------------------------------------

fn keys(set: &TriggerSet) -> Vec<String> {
    set.iter().map(Trigger::key).collect()
}

#[test]
fn adr_feature_2_example() {
    let value = "\
- apiVersion: serving.kserve.io/v1beta1
  kind: InferenceService
  name: predictive-analytics
  namespace: self-healing-platform
  action: restart
- apiVersion: serving.kserve.io/v1beta1
  kind: InferenceService
  name: anomaly-detector
  namespace: self-healing-platform
  action: refresh
";
    let set = parse_triggers(value, "self-healing-platform").expect("valid");
    assert_eq!(
        keys(&set),
        [
            "restart:serving.kserve.io/InferenceService:self-healing-platform/predictive-analytics",
            "refresh:serving.kserve.io/InferenceService:self-healing-platform/anomaly-detector",
        ]
    );
    assert!(set.warnings().is_empty());
    assert!(
        set.iter()
            .all(|t| t.target().api_version().version() == "v1beta1")
    );
    insta::assert_yaml_snapshot!("adr_example_parsed", set);
}

#[test]
fn adr_after_example_and_guide_example() {
    // The "After" manifest of the ADR; the job is in another namespace than the target.
    let after = "\
- apiVersion: serving.kserve.io/v1beta1
  kind: InferenceService
  name: predictive-analytics
  namespace: self-healing-platform
  action: restart
";
    let set = parse_triggers(after, "notebooks").expect("valid");
    assert_eq!(
        keys(&set),
        ["restart:serving.kserve.io/InferenceService:self-healing-platform/predictive-analytics"]
    );

    // The user guide's example, read through the job's annotations.
    let annotations = BTreeMap::from([(
        ON_SUCCESS_TRIGGER.to_owned(),
        "- apiVersion: serving.kserve.io/v1beta1\n  kind: InferenceService\n  name: my-model\n  namespace: ml-platform\n  action: restart\n"
            .to_owned(),
    )]);
    let set = from_annotations(&annotations, "ml-platform").expect("valid");
    assert_eq!(
        keys(&set),
        ["restart:serving.kserve.io/InferenceService:ml-platform/my-model"]
    );
}

#[test]
fn empty_values_mean_no_triggers() {
    for value in ["", "   ", "\n\t\n", "[]", "# nothing yet\n", "~", "null"] {
        let set = parse_triggers(value, "ml").unwrap_or_else(|e| panic!("{value:?}: {e}"));
        assert!(set.is_empty() && set.warnings().is_empty(), "{value:?}");
    }
    assert!(
        from_annotations(&BTreeMap::new(), "ml")
            .expect("absent")
            .is_empty()
    );
}

#[test]
fn argo_applications_are_recognised_by_group_and_kind() {
    let value = "\
- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: sync}
- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: refresh}
- {apiVersion: example.com/v1, kind: Application, name: other, action: restart}
";
    let set = parse_triggers(value, "ml").expect("valid");
    let flags: Vec<bool> = set.iter().map(Trigger::is_argo_application).collect();
    assert_eq!(flags, [true, true, false]);
}

#[test]
fn duplicates_differing_only_in_version_are_one_trigger() {
    let value = "\
- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}
- {apiVersion: apps/v1beta2, kind: Deployment, name: web, namespace: ml, action: restart}
- {apiVersion: apps/v1, kind: Deployment, name: web, action: refresh}
";
    let set = parse_triggers(value, "ml").expect("valid");
    assert_eq!(
        keys(&set),
        [
            "restart:apps/Deployment:ml/web",
            "refresh:apps/Deployment:ml/web"
        ]
    );
    assert_eq!(set.warnings().len(), 1);
    assert_eq!(set.warnings()[0].entry_index(), 1);
}

#[test]
fn invalid_job_namespace_only_matters_when_it_is_the_default() {
    let explicit =
        "- {apiVersion: apps/v1, kind: Deployment, name: web, namespace: ml, action: restart}";
    assert!(parse_triggers(explicit, "").is_ok());
    let defaulted = "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}";
    let errors = parse_triggers(defaulted, "").expect_err("no namespace to default to");
    assert_eq!(errors.errors()[0].field(), Some(Field::Namespace));
}

// ---------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------

/// The classic "billion laughs": nine levels of nine aliases each, 9^9
/// strings once expanded.
fn billion_laughs() -> String {
    let mut yaml = String::from(
        "- &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for pair in names.windows(2) {
        let refs = vec![format!("*{}", pair[0]); 9].join(",");
        let _ = writeln!(yaml, "- &{} [{refs}]", pair[1]);
    }
    yaml
}

#[test]
fn alias_bomb_is_rejected_at_the_first_anchor_and_fast() {
    let bomb = billion_laughs();
    let started = Instant::now();
    let errors = parse_triggers(&bomb, "ml").expect_err("bomb");
    let elapsed = started.elapsed();
    // Rejected at the first anchor, before any alias is seen, let alone expanded.
    match errors.errors() {
        [
            TriggerError::AliasNotAllowed {
                location: Some(location),
            },
        ] => assert_eq!(location.line, 1),
        other => panic!("unexpected errors: {other:?}"),
    }
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");

    // Same when the bomb hides behind a valid entry.
    let hidden = format!("- {{apiVersion: v1, kind: Pod, name: p, action: restart}}\n{bomb}");
    let errors = parse_triggers(&hidden, "ml").expect_err("bomb");
    assert!(matches!(
        errors.errors(),
        [TriggerError::AliasNotAllowed { location: Some(l) }] if l.line == 2
    ));
}

#[test]
fn largest_values_parse_quickly() {
    // A value just under the limit, as many small entries as fit: the most
    // nodes a value can make the parser and the validator handle.
    let entry = "- {apiVersion: v1, kind: Pod, name: p, action: restart}\n";
    let flow = "- [a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a]\n";
    for unit in [entry, flow, "- a\n"] {
        let value = unit.repeat(MAX_ANNOTATION_BYTES / unit.len());
        let started = Instant::now();
        let result = parse_triggers(&value, "ml");
        let elapsed = started.elapsed();
        assert!(elapsed < Duration::from_secs(5), "{unit:?}: {elapsed:?}");
        match result {
            // Every entry is the same trigger: one kept, the rest warned about.
            Ok(set) => assert_eq!(
                (set.len(), set.warnings().len()),
                (1, value.lines().count() - 1)
            ),
            Err(errors) => assert_eq!(errors.errors().len(), value.lines().count()),
        }
    }
}

#[test]
fn deep_nesting_is_rejected() {
    for value in [
        "[".repeat(MAX_ANNOTATION_BYTES),
        "- ".repeat(MAX_ANNOTATION_BYTES / 2),
        format!("{}a{}", "{a: ".repeat(5000), "}".repeat(5000)),
    ] {
        let errors = parse_triggers(&value, "ml").expect_err("too deep");
        assert!(
            matches!(errors.errors(), [TriggerError::Yaml { .. }]),
            "{errors}"
        );
    }
}

// ---------------------------------------------------------------------------
// Message catalogue (snapshots)
// ---------------------------------------------------------------------------

/// What a linter would print for a value: the value, then errors or the
/// triggers, then warnings.
fn report(value: &str) -> String {
    let mut out = String::new();
    if value.len() <= 2048 {
        let _ = writeln!(out, "--- annotation\n{value}");
    } else {
        let _ = writeln!(out, "--- annotation ({} bytes, not shown)", value.len());
    }
    let warnings = match parse_triggers(value, "job-ns") {
        Ok(set) => {
            let _ = writeln!(out, "--- valid, {} trigger(s)", set.len());
            for trigger in &set {
                let _ = writeln!(out, "{trigger}");
            }
            set.warnings().to_vec()
        }
        Err(errors) => {
            let _ = writeln!(out, "--- errors\n{errors}");
            errors.warnings().to_vec()
        }
    };
    if !warnings.is_empty() {
        let _ = writeln!(out, "--- warnings");
        for warning in warnings {
            let _ = writeln!(out, "{warning}");
        }
    }
    out
}

const GOOD: &str =
    "apiVersion: serving.kserve.io/v1beta1\n  kind: InferenceService\n  name: predictive-analytics";

#[test]
fn snapshot_bad_action() {
    insta::assert_snapshot!(
        "bad_action",
        report(&format!(
            "- {GOOD}\n  action: restart\n- {GOOD}\n  action: Restart\n- {GOOD}\n  action: reload\n"
        ))
    );
}

#[test]
fn snapshot_action_not_supported() {
    insta::assert_snapshot!(
        "action_not_supported",
        report(
            "- {apiVersion: apps/v1, kind: Deployment, name: web, action: sync}\n\
             - {apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: restart}\n"
        )
    );
}

#[test]
fn snapshot_missing_fields() {
    insta::assert_snapshot!(
        "missing_fields",
        report("- apiversion: apps/v1\n  kind: Deployment\n  action: restart\n- {}\n")
    );
}

#[test]
fn snapshot_wrong_types() {
    insta::assert_snapshot!(
        "wrong_types",
        report(
            "- apiVersion: v1\n  kind: Pod\n  name: 5\n  namespace: [a]\n  action: true\n\
             - apiVersion: {group: apps}\n  kind: ~\n  name: web\n  action: 1.5\n\
             - just-a-string\n\
             - [apiVersion, v1]\n\
             - 5: five\n  apiVersion: v1\n  kind: Pod\n  name: p\n  action: restart\n"
        )
    );
}

#[test]
fn snapshot_not_a_list() {
    insta::assert_snapshot!(
        "not_a_list_mapping",
        report(&format!("{GOOD}\naction: restart\n").replace("\n  ", "\n"))
    );
    insta::assert_snapshot!("not_a_list_scalar", report("restart"));
}

#[test]
fn snapshot_alias() {
    insta::assert_snapshot!(
        "alias",
        report(&format!("- &isvc\n  {GOOD}\n  action: restart\n- *isvc\n"))
    );
}

#[test]
fn snapshot_duplicate_key() {
    insta::assert_snapshot!(
        "duplicate_key",
        report(&format!("- {GOOD}\n  action: restart\n  action: refresh\n"))
    );
}

#[test]
fn snapshot_too_large() {
    let value = format!(
        "- {GOOD}\n  action: restart\n#{}",
        "x".repeat(MAX_ANNOTATION_BYTES)
    );
    insta::assert_snapshot!("too_large", report(&value));
}

#[test]
fn snapshot_bad_api_versions() {
    insta::assert_snapshot!(
        "bad_api_versions",
        report(
            "- {apiVersion: apps/v1/extra, kind: Deployment, name: a, action: restart}\n\
             - {apiVersion: /v1, kind: Deployment, name: b, action: restart}\n\
             - {apiVersion: apps/, kind: Deployment, name: c, action: restart}\n\
             - {apiVersion: apps, kind: Deployment, name: d, action: restart}\n\
             - {apiVersion: core/v1, kind: ConfigMap, name: e, action: refresh}\n\
             - {apiVersion: Serving.KServe.io/v1beta1, kind: InferenceService, name: f, action: restart}\n\
             - {apiVersion: '', kind: Deployment, name: g, action: restart}\n"
        )
    );
}

#[test]
fn snapshot_bad_names() {
    insta::assert_snapshot!(
        "bad_names",
        report(
            "- {apiVersion: apps/v1, kind: Deployment, name: Foo_Bar, action: restart}\n\
             - {apiVersion: apps/v1, kind: Deployment, name: web, namespace: ml.platform, action: restart}\n\
             - {apiVersion: apps/v1, kind: deployment, name: web, action: restart}\n\
             - {apiVersion: apps/v1, kind: Deployment, name: '-web', action: restart}\n\
             - {apiVersion: apps/v1, kind: Deployment, name: '', action: restart}\n"
        )
    );
}

#[test]
fn snapshot_unknown_field_warning() {
    insta::assert_snapshot!(
        "unknown_field_warning",
        report(&format!(
            "- {GOOD}\n  action: restart\n  namspace: ml\n  replicas: 2\n"
        ))
    );
}

#[test]
fn snapshot_duplicate_trigger_warning() {
    insta::assert_snapshot!(
        "duplicate_trigger_warning",
        report(&format!(
            "- {GOOD}\n  action: restart\n- {GOOD}\n  namespace: job-ns\n  action: restart\n"
        ))
    );
}

#[test]
fn snapshot_yaml_syntax_errors() {
    insta::assert_snapshot!("yaml_syntax_unclosed", report("- [apiVersion: v1\n"));
    insta::assert_snapshot!("yaml_syntax_two_documents", report("- a\n---\n- b\n"));
    insta::assert_snapshot!(
        "yaml_syntax_merge_key",
        report("- <<: {kind: Pod}\n  name: p\n")
    );
}
