//! The rules of `choose`, case by case, and the errors that name the field to fix.

use nbv_core::api::FallbackStrategy;
use nbv_core::build::{Recipe, SourceError, candidates, choose};

use super::{Files, config, notebook};

const NB: &str = "notebooks/tier2/train.ipynb";

#[test]
fn the_default_chain_is_notebook_dir_tier_dir_root() {
    assert_eq!(
        candidates(&config(NB)).unwrap(),
        [
            "notebooks/tier2/requirements.txt",
            "notebooks/requirements.txt",
            "requirements.txt"
        ]
    );
    assert_eq!(
        candidates(&config("train.ipynb")).unwrap(),
        ["requirements.txt"]
    );
    assert_eq!(
        candidates(&config("nb/train.ipynb")).unwrap(),
        ["nb/requirements.txt", "requirements.txt"]
    );
}

#[test]
fn no_search_without_auto_generate_or_names() {
    let mut c = config(NB);
    c.auto_generate = false;
    assert!(candidates(&c).unwrap().is_empty());
    c.requirements_sources = Some(vec!["a.txt".into(), "./a.txt".into(), "b.txt".into()]);
    assert_eq!(candidates(&c).unwrap(), ["a.txt", "b.txt"]);
    // An empty list is the list left out.
    c.requirements_sources = Some(vec![]);
    c.auto_generate = true;
    assert_eq!(candidates(&c).unwrap().len(), 3);
}

#[test]
fn the_nearest_requirements_file_wins() {
    let repo = Files::with(&[
        ("requirements.txt", "pandas\n"),
        ("notebooks/requirements.txt", "numpy\n"),
    ]);
    assert_eq!(
        choose(&config(NB), &repo).unwrap(),
        Recipe::Requirements {
            path: "notebooks/requirements.txt".into()
        }
    );
}

#[test]
fn an_explicit_dockerfile_must_exist_and_wins() {
    let mut c = config(NB);
    c.dockerfile = Some("docker/Dockerfile".into());
    let repo = Files::with(&[("requirements.txt", ""), ("docker/Dockerfile", "FROM x\n")]);
    assert_eq!(
        choose(&c, &repo).unwrap(),
        Recipe::Dockerfile {
            path: "docker/Dockerfile".into()
        }
    );
    let error = choose(&c, &Files::with(&[("requirements.txt", "")])).unwrap_err();
    assert_eq!(error.field(), "spec.podConfig.buildConfig.dockerfile");
    insta::assert_snapshot!("missing_dockerfile", error);
}

#[test]
fn prefer_dockerfile_searches_the_chain_directories() {
    let mut c = config(NB);
    c.prefer_dockerfile = true;
    let repo = Files::with(&[
        ("notebooks/tier2/requirements.txt", ""),
        ("notebooks/Dockerfile", "FROM x\n"),
        ("Dockerfile", "FROM y\n"),
    ]);
    assert_eq!(
        choose(&c, &repo).unwrap(),
        Recipe::Dockerfile {
            path: "notebooks/Dockerfile".into()
        }
    );
    // No Dockerfile: requirements as without the preference.
    let repo = Files::with(&[("notebooks/tier2/requirements.txt", "")]);
    assert_eq!(
        choose(&c, &repo).unwrap(),
        Recipe::Requirements {
            path: "notebooks/tier2/requirements.txt".into()
        }
    );
}

#[test]
fn a_missing_requirements_file_is_an_error_whatever_the_fallback() {
    for fallback in [
        FallbackStrategy::Warn,
        FallbackStrategy::Fail,
        FallbackStrategy::Auto,
    ] {
        let mut c = config(NB);
        c.requirements_file = Some("env/requirements.txt".into());
        c.fallback = fallback;
        let repo = Files::with(&[("requirements.txt", ""), (NB, &notebook(&[]))]);
        let error = choose(&c, &repo).unwrap_err();
        assert_eq!(
            error,
            SourceError::Missing {
                field: "spec.podConfig.buildConfig.requirementsFile".into(),
                path: "env/requirements.txt".into()
            }
        );
    }
}

#[test]
fn nothing_found_follows_the_fallback() {
    let repo = Files::with(&[(
        NB,
        &notebook(&["import numpy as np\nimport os\nfrom sklearn import svm"]),
    )]);
    let mut c = config(NB);
    c.fallback = FallbackStrategy::Fail;
    let error = choose(&c, &repo).unwrap_err();
    insta::assert_snapshot!("nothing_found_fail", error);
    c.auto_generate = false;
    insta::assert_snapshot!("nothing_named_fail", choose(&c, &repo).unwrap_err());
    c.auto_generate = true;
    c.fallback = FallbackStrategy::Warn;
    assert_eq!(
        choose(&c, &repo).unwrap(),
        Recipe::BaseImage {
            looked_at: candidates(&c).unwrap()
        }
    );
    c.fallback = FallbackStrategy::Auto;
    assert_eq!(
        choose(&c, &repo).unwrap(),
        Recipe::Imports {
            packages: vec!["numpy".into(), "scikit-learn".into()]
        }
    );
}

#[test]
fn auto_leaves_out_the_repositorys_own_modules() {
    let repo = Files::with(&[
        (
            NB,
            &notebook(&["import helpers\nimport shared\nimport torch"]),
        ),
        ("notebooks/tier2/helpers.py", ""),
        ("shared/__init__.py", ""),
    ]);
    let mut c = config(NB);
    c.fallback = FallbackStrategy::Auto;
    assert_eq!(
        choose(&c, &repo).unwrap(),
        Recipe::Imports {
            packages: vec!["torch".into()]
        }
    );
}

#[test]
fn auto_with_an_unreadable_notebook_names_the_notebook() {
    let mut c = config(NB);
    c.fallback = FallbackStrategy::Auto;
    let error = choose(&c, &Files::default()).unwrap_err();
    assert_eq!(error.field(), "spec.notebook.path");
    let error = choose(&c, &Files::with(&[(NB, "{not json")])).unwrap_err();
    assert_eq!(error.field(), "spec.notebook.path");
    insta::assert_snapshot!("notebook_not_json", error);
}

/// A change to the settings.
type Edit = fn(&mut nbv_core::build::SourceConfig);

#[test]
fn paths_outside_the_repository_name_their_field() {
    let cases: [(&str, Edit); 4] = [
        ("spec.notebook.path", |c| {
            c.notebook_path = "/abs.ipynb".into()
        }),
        ("spec.podConfig.buildConfig.requirementsFile", |c| {
            c.requirements_file = Some("../x.txt".into())
        }),
        ("spec.podConfig.buildConfig.requirementsSources[2]", |c| {
            c.requirements_sources = Some(vec!["a".into(), "b".into(), "c//d".into()])
        }),
        ("spec.podConfig.buildConfig.dockerfile", |c| {
            c.dockerfile = Some("x/\nRUN id".into())
        }),
    ];
    for (field, set) in cases {
        let mut c = config(NB);
        set(&mut c);
        let error = candidates(&c).unwrap_err();
        assert_eq!(error.field(), field);
        assert_eq!(choose(&c, &Files::default()).unwrap_err(), error);
        assert!(error.to_string().starts_with(field), "{error}");
    }
}
