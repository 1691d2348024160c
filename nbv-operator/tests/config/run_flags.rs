//! `nbv run`'s flags, parsed as the command line parses them, and the controller
//! configuration they resolve to.

use clap::Parser;

use nbv_operator::cli::{Cli, Command};

fn max_retries(value: &str) -> Result<u32, String> {
    let cli =
        Cli::try_parse_from(["nbv", "run", "--max-retries", value]).map_err(|e| e.to_string())?;
    let Command::Run(run) = cli.command else {
        panic!("`nbv run` parses as the run command");
    };
    Ok(run.max_retries)
}

fn run_args(args: &[&str]) -> nbv_operator::cli::config::RunArgs {
    let cli =
        Cli::try_parse_from(["nbv", "run"].iter().chain(args)).unwrap_or_else(|e| panic!("{e}"));
    let Command::Run(run) = cli.command else {
        panic!("`nbv run` parses as the run command");
    };
    *run
}

#[test]
fn without_the_flag_argocds_namespace_is_found_at_start() {
    let config = run_args(&[]).operator_config();
    assert!(config.discover_argocd_namespace);
    assert!(config.application_namespaces.is_empty());
    let found = config.with_argocd_namespace("openshift-gitops");
    assert_eq!(found.application_namespaces, ["openshift-gitops"]);
    assert_eq!(found.argocd_namespace, "openshift-gitops");
}

#[test]
fn the_flag_wins_and_the_application_namespaces_follow_it() {
    let config = run_args(&["--argocd-namespace", " gitops "]).operator_config();
    assert!(!config.discover_argocd_namespace);
    assert_eq!(config.argocd_namespace, "gitops");
    assert_eq!(config.application_namespaces, ["gitops"]);
    let config = run_args(&[
        "--argocd-namespace",
        "gitops",
        "--application-namespaces",
        "apps,team-a",
    ])
    .operator_config();
    assert_eq!(config.application_namespaces, ["apps", "team-a"]);
    let empty = run_args(&["--argocd-namespace", " "]).operator_config();
    assert!(empty.discover_argocd_namespace, "an empty flag is no flag");
}

#[test]
fn max_retries_accepts_what_status_retry_count_holds() {
    assert_eq!(max_retries("0"), Ok(0));
    assert_eq!(max_retries("5"), Ok(5));
    assert_eq!(max_retries("2147483647"), Ok(2_147_483_647));
}

#[test]
fn the_pod_admission_timeout_is_a_duration_defaulting_to_ten_minutes() {
    let run = |args: &[&str]| {
        let cli =
            Cli::try_parse_from([&["nbv", "run"], args].concat()).map_err(|e| e.to_string())?;
        let Command::Run(run) = cli.command else {
            panic!("`nbv run` parses as the run command");
        };
        Ok::<_, String>(run.pod_admission_timeout)
    };
    assert_eq!(run(&[]), Ok(std::time::Duration::from_secs(600)));
    assert_eq!(
        run(&["--pod-admission-timeout", "1h30m"]),
        Ok(std::time::Duration::from_secs(5400))
    );
    let error = run(&["--pod-admission-timeout", "10 minutes"]).unwrap_err();
    assert!(error.contains("invalid duration"), "{error}");
}

#[test]
fn max_retries_out_of_range_is_an_error_that_names_the_range() {
    for value in [
        "2147483648",
        "4294967295",
        "4294967296",
        "99999999999999999999",
    ] {
        let error = max_retries(value).expect_err(value);
        assert!(error.contains("use 0 to 2147483647"), "{value}: {error}");
    }
    let error = max_retries("three").unwrap_err();
    assert!(
        error.contains("\"three\" is not a whole number of retries"),
        "{error}"
    );
}

#[test]
fn without_policy_flags_jobs_may_put_anything_they_can_express_in_their_pods() {
    let policy = run_args(&[]).pod_policy().expect("a policy");
    assert_eq!(policy, nbv_core::pod::PodPolicy::default());
    // Empty entries are ignored, as in every list: an empty list restricts nothing.
    let policy = run_args(&["--allowed-images", " , ", "--allowed-secrets", ""])
        .pod_policy()
        .expect("a policy");
    assert_eq!(policy, nbv_core::pod::PodPolicy::default());
}

#[test]
fn the_policy_flags_build_the_policy_they_name() {
    use nbv_core::pod::PlacementField;

    let policy = run_args(&[
        "--allowed-images",
        "quay.io/ml-team/, registry.example.com",
        "--allowed-service-accounts",
        "default,ml/notebook-runner",
        "--allowed-secrets",
        "git-credentials",
        "--deny-job-placement",
        "tolerations,affinity",
        "--allowed-volume-sources",
        "configMap,emptyDir",
        "--deny-api-token",
    ])
    .pod_policy()
    .expect("a policy");
    let images: Vec<&str> = policy.images.iter().flatten().map(|p| p.as_str()).collect();
    assert_eq!(images, ["quay.io/ml-team", "registry.example.com"]);
    let accounts: Vec<String> = policy
        .service_accounts
        .iter()
        .flatten()
        .map(ToString::to_string)
        .collect();
    assert_eq!(accounts, ["default", "ml/notebook-runner"]);
    assert_eq!(policy.secrets.map(|s| s.len()), Some(1));
    assert_eq!(
        policy.denied_placement.into_iter().collect::<Vec<_>>(),
        [PlacementField::Tolerations, PlacementField::Affinity]
    );
    assert_eq!(policy.volume_sources.map(|s| s.len()), Some(2));
    assert!(policy.deny_api_token);

    let none = run_args(&["--deny-secrets"])
        .pod_policy()
        .expect("a policy");
    assert_eq!(none.secrets, Some(Default::default()), "no Secret at all");
}

#[test]
fn an_invalid_policy_entry_names_the_flag_and_the_entry() {
    for (flag, entry) in [
        ("--allowed-images", "python"),
        ("--allowed-service-accounts", "Admin"),
        ("--allowed-secrets", "a/b/c"),
        ("--deny-job-placement", "priorityClassName"),
        ("--allowed-volume-sources", "hostPath"),
    ] {
        let error = run_args(&[flag, entry])
            .pod_policy()
            .expect_err("invalid")
            .to_string();
        assert!(
            error.starts_with(&format!("{flag}: {entry:?}: ")),
            "{error}"
        );
    }
    let error = run_args(&["--allowed-secrets", "git", "--deny-secrets"])
        .pod_policy()
        .expect_err("contradictory")
        .to_string();
    assert!(
        error.contains("--allowed-secrets") && error.contains("--deny-secrets"),
        "{error}"
    );
}
