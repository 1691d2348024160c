//! The plan of a job's `buildConfig`: its key changes with every input that decides
//! the image and with nothing else, and what cannot be carried out is named.

use nbv_core::api::NotebookValidationJob;
use nbv_core::build::{BuildDefaults, BuildPlan, PlanError, Strategy};
use proptest::prelude::*;
use serde_json::{Value, json};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// A job of `ml` at `git_ref` whose `buildConfig` is `build` (merged over `enabled`).
fn job(name: &str, generation: i64, git_ref: &str, build: &Value) -> NotebookValidationJob {
    let mut config = json!({"enabled": true});
    json_patch::merge(&mut config, build);
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": name, "namespace": "ml", "uid": format!("uid-{name}"), "generation": generation},
        "spec": {
            "notebook": {"git": {"url": "https://example.com/org/repo.git", "ref": git_ref},
                         "path": "notebooks/tier2/train.ipynb"},
            "podConfig": {"containerImage": "img", "buildConfig": config},
        }
    }))
    .expect("a job")
}

fn plan(job: &NotebookValidationJob) -> Result<BuildPlan, PlanError> {
    BuildPlan::resolve(job, &BuildDefaults::default()).map(|p| p.expect("a build"))
}

/// One change of one input that decides the image.
fn changes() -> Vec<Value> {
    vec![
        json!({"strategy": "kaniko"}),
        json!({"baseImage": "quay.io/jupyter/scipy-notebook:2025-01-01"}),
        json!({"requirementsFile": "notebooks/requirements.txt"}),
        json!({"requirementsSources": ["a/requirements.txt", "requirements.txt"]}),
        json!({"autoGenerateRequirements": false}),
        json!({"dockerfile": "docker/Dockerfile"}),
        json!({"preferDockerfile": true}),
        json!({"fallbackStrategy": "fail"}),
        json!({"fallbackStrategy": "auto"}),
        json!({"strategyConfig": {"outputImage": "quay.io/team/notebooks"}}),
        json!({"strategyConfig": {"pushSecret": "quay-push"}}),
    ]
}

proptest! {
    /// Equal inputs, equal key: whatever the job's name, uid or generation, at a commit.
    #[test]
    fn equal_inputs_at_a_commit_share_a_key(
        a in "[a-z]{1,12}", b in "[a-z]{1,12}", ga in 1i64..100, gb in 1i64..100,
        change in proptest::option::of(0usize..11),
    ) {
        let build = change.map_or(json!({}), |i| changes()[i].clone());
        let first = plan(&job(&a, ga, COMMIT, &build)).expect("a plan");
        let second = plan(&job(&b, gb, COMMIT, &build)).expect("a plan");
        prop_assert_eq!(&first.key, &second.key);
        prop_assert_eq!(&first.name, &second.name);
        prop_assert_eq!(&first.image, &second.image);
        prop_assert!(first.shared);
    }

    /// Any change of an input that decides the image changes the key.
    #[test]
    fn any_change_of_an_input_changes_the_key(i in 0usize..11, j in 0usize..11) {
        let base = plan(&job("a", 1, COMMIT, &json!({}))).expect("a plan");
        let one = plan(&job("a", 1, COMMIT, &changes()[i])).expect("a plan");
        prop_assert_ne!(&base.key, &one.key, "{}", changes()[i]);
        if i != j {
            let other = plan(&job("a", 1, COMMIT, &changes()[j])).expect("a plan");
            prop_assert_ne!(&one.key, &other.key, "{} and {}", changes()[i], changes()[j]);
        }
    }

    /// A branch may move between runs: each run of each job has its own build.
    #[test]
    fn a_branch_is_never_shared(g in 1i64..1000) {
        let first = plan(&job("a", g, "main", &json!({}))).expect("a plan");
        prop_assert!(!first.shared);
        prop_assert_ne!(&first.key, &plan(&job("a", g + 1, "main", &json!({}))).expect("a plan").key);
        prop_assert_ne!(&first.key, &plan(&job("b", g, "main", &json!({}))).expect("a plan").key);
    }

    /// A rerun of a branch builds again (the branch may have moved); a rerun at a
    /// commit reuses the image of the generation's first run.
    #[test]
    fn reruns_build_again_only_from_a_branch(g in 1i64..1000, rerun in 1u32..50) {
        let defaults = BuildDefaults::default();
        let at = |git_ref: &str, n: u32| {
            BuildPlan::resolve_rerun(&job("a", g, git_ref, &json!({})), &defaults, n)
                .expect("a plan")
                .expect("a build")
                .key
        };
        prop_assert_ne!(at("main", 0), at("main", rerun));
        prop_assert_ne!(at("main", rerun), at("main", rerun + 1));
        prop_assert_eq!(at(COMMIT, 0), at(COMMIT, rerun));
        // A first run's key is the one `resolve` gives.
        prop_assert_eq!(at("main", 0), plan(&job("a", g, "main", &json!({}))).expect("a plan").key);
    }
}

#[test]
fn the_repository_url_ref_and_notebook_directory_are_inputs() {
    let key = |url: &str, git_ref: &str, path: &str| {
        let mut job = job("a", 1, git_ref, &json!({}));
        job.spec.notebook.git.url = url.to_owned();
        job.spec.notebook.path = path.to_owned();
        plan(&job).expect("a plan").key
    };
    let base = key(
        "https://example.com/org/repo.git",
        COMMIT,
        "notebooks/tier2/train.ipynb",
    );
    let other_commit = "1123456789abcdef0123456789abcdef01234567";
    assert_ne!(
        base,
        key(
            "https://example.com/org/other.git",
            COMMIT,
            "notebooks/tier2/train.ipynb"
        )
    );
    assert_ne!(
        base,
        key(
            "https://example.com/org/repo.git",
            other_commit,
            "notebooks/tier2/train.ipynb"
        )
    );
    assert_ne!(
        base,
        key(
            "https://example.com/org/repo.git",
            COMMIT,
            "notebooks/tier1/train.ipynb"
        )
    );
    // Another notebook of the same directory uses the same search: the same image.
    assert_eq!(
        base,
        key(
            "https://example.com/org/repo.git",
            COMMIT,
            "notebooks/tier2/score.ipynb"
        )
    );
}

#[test]
fn settings_that_do_not_change_the_image_do_not_change_the_key() {
    let base = plan(&job("a", 1, COMMIT, &json!({}))).expect("a plan");
    for change in [
        json!({"timeout": "30m"}),
        json!({"strategyConfig": {"serviceAccount": "builder"}}),
    ] {
        let other = plan(&job("a", 1, COMMIT, &change)).expect("a plan");
        assert_eq!(base.key, other.key, "{change}");
        assert_ne!(base, other, "{change} is in the plan");
    }
}

#[test]
fn what_cannot_be_carried_out_is_named() {
    let cases = [
        (
            json!({"strategy": "custom"}),
            "spec.podConfig.buildConfig.strategy",
        ),
        (
            json!({"strategyConfig": {"registry": "x"}}),
            "spec.podConfig.buildConfig.strategyConfig.registry",
        ),
        (
            json!({"strategyConfig": {"pushSecret": "Not A Name"}}),
            "spec.podConfig.buildConfig.strategyConfig.pushSecret",
        ),
        (
            json!({"strategyConfig": {"outputImage": "quay.io/team/notebooks:v1"}}),
            "spec.podConfig.buildConfig.strategyConfig.outputImage",
        ),
        (
            json!({"strategyConfig": {"clusterBuildStrategy": "a", "buildStrategy": "b"}}),
            "spec.podConfig.buildConfig.strategyConfig.buildStrategy",
        ),
        (
            json!({"baseImage": "not an image"}),
            "spec.podConfig.buildConfig.baseImage",
        ),
        (
            json!({"timeout": "soon"}),
            "spec.podConfig.buildConfig.timeout",
        ),
        (
            json!({"timeout": "48h"}),
            "spec.podConfig.buildConfig.timeout",
        ),
        (
            json!({"requirementsFile": "../outside.txt"}),
            "spec.podConfig.buildConfig.requirementsFile",
        ),
    ];
    for (build, field) in cases {
        let error = plan(&job("a", 1, COMMIT, &build)).expect_err(&build.to_string());
        assert_eq!(error.field(), field, "{build}");
        let failure = error.failure();
        assert!(
            failure.message.contains(field),
            "{build}: {}",
            failure.message
        );
    }
}

#[test]
fn the_strategy_defaults_to_s2i_and_a_disabled_build_is_none() {
    assert_eq!(
        plan(&job("a", 1, COMMIT, &json!({})))
            .expect("a plan")
            .strategy,
        Strategy::S2i
    );
    let off = job("a", 1, COMMIT, &json!({"enabled": false}));
    assert_eq!(
        BuildPlan::resolve(&off, &BuildDefaults::default()),
        Ok(None)
    );
}
