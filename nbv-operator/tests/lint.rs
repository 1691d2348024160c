//! `nbv triggers lint`: exit codes and messages.

use std::io::Write;

use nbv_operator::cli::commands::lint::{lint_text, run};

fn lint(text: &str) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = lint_text(text, "ml", &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn a_valid_value_lists_its_triggers_with_namespaces_resolved() {
    let (code, out, err) = lint(
        "- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: m, action: restart}\n\
         - {apiVersion: apps/v1, kind: Deployment, name: web, namespace: serving, action: restart}\n",
    );
    assert_eq!(code, 0);
    assert!(err.is_empty(), "{err}");
    insta::assert_snapshot!(out);
}

#[test]
fn an_invalid_value_names_entry_and_field_and_exits_1() {
    let (code, out, err) =
        lint("- {kind: Deployment, name: Web_Server, action: Restart, replicas: 2}\n");
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("entry 0"), "{err}");
    assert!(err.contains("\"action\""), "{err}");
    assert!(err.contains("\"apiVersion\""), "{err}");
    insta::assert_snapshot!(err);
}

#[test]
fn warnings_do_not_fail_a_valid_value() {
    let (code, _, err) =
        lint("- {apiVersion: v1, kind: ConfigMap, name: c, action: refresh, extra: 1}\n");
    assert_eq!(code, 0);
    assert!(err.starts_with("warning: "), "{err}");
}

#[test]
fn hostile_inputs_are_rejected_without_a_panic() {
    let bomb = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n";
    for text in [
        bomb,
        "{",
        "- [",
        "\u{0}",
        "- {apiVersion: v1, kind: ConfigMap, name: c, name: d, action: refresh}",
    ] {
        assert_eq!(lint(text).0, 1, "{text:?}");
    }
    let (code, _, err) = lint(&"#".repeat(70 * 1024));
    assert_eq!(code, 1);
    assert!(err.contains("KiB") || err.contains("bytes"), "{err}");
}

#[test]
fn files_are_read_and_unreadable_ones_exit_2() {
    let dir = std::env::temp_dir().join(format!("nbv-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.yaml");
    std::fs::File::create(&good)
        .unwrap()
        .write_all(b"- {apiVersion: v1, kind: ConfigMap, name: c, action: refresh}\n")
        .unwrap();
    let binary = dir.join("binary.yaml");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(run(Some(&good), "ml", &mut out, &mut err), 0);
    assert_eq!(run(Some(&binary), "ml", &mut out, &mut err), 1);
    assert_eq!(
        run(Some(&dir.join("missing.yaml")), "ml", &mut out, &mut err),
        2
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
