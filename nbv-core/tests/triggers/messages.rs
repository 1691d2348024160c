//! The message catalogue (snapshots): every error says what to fix.

use super::*;

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
