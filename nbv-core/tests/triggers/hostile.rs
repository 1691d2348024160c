//! Hostile input: huge, deep, odd or malicious annotation values.

use super::*;

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
