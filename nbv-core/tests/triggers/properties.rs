//! Properties of parsing and validating the annotation, under arbitrary input.

use super::*;

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
        let too_many = matches!(many.parse::<ApiVersion>(), Err(InvalidApiVersion::TooManySlashes { .. }));
        prop_assert!(too_many, "{}", many);
        let no_group = matches!(format!("/{side}").parse::<ApiVersion>(), Err(InvalidApiVersion::EmptyGroup { .. }));
        prop_assert!(no_group, "/{}", side);
        if !side.is_empty() {
            let no_version = matches!(format!("{side}/").parse::<ApiVersion>(), Err(InvalidApiVersion::EmptyVersion { .. }));
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
