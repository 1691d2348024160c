//! Examples from the ADR and the user guide.

use super::*;

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
