//! The roles as written: real verbs, bound to the right service account.

use super::*;

#[test]
fn every_rule_names_existing_verbs() {
    const VERBS: [&str; 8] = [
        "get",
        "list",
        "watch",
        "create",
        "update",
        "patch",
        "delete",
        "deletecollection",
    ];
    for file in [
        "role.yaml",
        "leader_election_role.yaml",
        "extra-trigger-targets.example.yaml",
        "wait-hook-role.yaml",
    ] {
        let all = permissions(file);
        assert!(!all.is_empty(), "config/rbac/{file} grants nothing");
        for p in all {
            assert!(VERBS.contains(&p.verb.as_str()), "unknown verb in {p}");
        }
    }
}

#[test]
fn the_role_is_bound_to_the_operators_service_account() {
    let mut subjects: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for file in ["role_binding.yaml", "leader_election_role_binding.yaml"] {
        let text =
            std::fs::read_to_string(config_path(&format!("rbac/{file}"))).unwrap_or_default();
        let binding: Value = serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|e| panic!("config/rbac/{file} does not parse: {e}"));
        let role = binding["roleRef"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        for subject in binding["subjects"].as_array().into_iter().flatten() {
            subjects.entry(role.clone()).or_default().push((
                subject["name"].as_str().unwrap_or_default().to_owned(),
                subject["namespace"].as_str().unwrap_or_default().to_owned(),
            ));
        }
    }
    let operator = vec![("nbv-operator".to_owned(), OPERATOR_NAMESPACE.to_owned())];
    assert_eq!(subjects.get("nbv-operator"), Some(&operator));
    assert_eq!(
        subjects.get("nbv-operator-leader-election"),
        Some(&operator)
    );
}
