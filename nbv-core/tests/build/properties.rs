//! Properties of the decision over arbitrary settings and checkouts.

use nbv_core::api::FallbackStrategy;
use nbv_core::build::{Recipe, SourceConfig, candidates, choose, generate_dockerfile};
use proptest::prelude::*;

use super::{Files, notebook};

/// Path segments, some hostile.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,3}",
        1 => Just("..".to_owned()),
        1 => Just(".".to_owned()),
        1 => Just(String::new()),
        1 => Just("requirements.txt".to_owned()),
        1 => Just("Dockerfile".to_owned()),
        1 => Just("a\nb".to_owned()),
    ]
}

/// Paths, mostly relative, some absolute or escaping.
fn path() -> impl Strategy<Value = String> {
    (any::<bool>(), prop::collection::vec(segment(), 1..5)).prop_map(|(absolute, segments)| {
        let joined = segments.join("/");
        if absolute && joined.len() % 5 == 0 {
            format!("/{joined}")
        } else {
            joined
        }
    })
}

/// Paths that are inside the repository, in the directories the default search visits.
fn good_path() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof!["[a-c]", Just("nb".to_owned())], 0..3).prop_flat_map(|dirs| {
        prop_oneof![
            Just("requirements.txt".to_owned()),
            Just("Dockerfile".to_owned()),
            Just("train.ipynb".to_owned()),
            "[a-z]{1,4}\\.txt",
        ]
        .prop_map(move |name| {
            let mut parts = dirs.clone();
            parts.push(name);
            parts.join("/")
        })
    })
}

fn fallback() -> impl Strategy<Value = FallbackStrategy> {
    prop_oneof![
        Just(FallbackStrategy::Warn),
        Just(FallbackStrategy::Fail),
        Just(FallbackStrategy::Auto),
    ]
}

prop_compose! {
    fn source_config(paths: BoxedStrategy<String>)(
        notebook_path in paths.clone(),
        requirements_file in prop::option::of(paths.clone()),
        requirements_sources in prop::option::of(prop::collection::vec(paths.clone(), 0..4)),
        auto_generate in any::<bool>(),
        dockerfile in prop::option::weighted(0.2, paths),
        prefer_dockerfile in any::<bool>(),
        fallback in fallback(),
    ) -> SourceConfig {
        SourceConfig {
            notebook_path,
            base_image: "quay.io/jupyter/minimal-notebook:latest".to_owned(),
            requirements_file,
            requirements_sources,
            auto_generate,
            dockerfile,
            prefer_dockerfile,
            fallback,
        }
    }
}

/// A checkout holding some of `paths` (and, at the notebook's path, a notebook).
fn checkout(config: &SourceConfig, present: &[String]) -> Files {
    let mut files = Files::default();
    for path in present {
        files.0.insert(path.clone(), String::new());
    }
    files.0.insert(
        config.notebook_path.clone(),
        notebook(&["import numpy\nimport os"]),
    );
    files
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn candidates_are_always_inside_the_repository(config in source_config(path().boxed())) {
        if let Ok(found) = candidates(&config) {
            for path in found {
                prop_assert!(!path.is_empty());
                prop_assert!(!path.starts_with('/'), "{path}");
                prop_assert!(!path.contains(['\0', '\n', '\r']), "{path:?}");
                prop_assert!(path.split('/').all(|s| !s.is_empty() && s != "." && s != ".."), "{path}");
            }
        }
    }

    #[test]
    fn an_explicit_file_is_the_only_candidate(
        config in source_config(good_path().boxed()),
        file in good_path(),
    ) {
        let mut config = config;
        config.requirements_file = Some(file.clone());
        prop_assert_eq!(candidates(&config).unwrap(), vec![file]);
    }

    #[test]
    fn the_first_existing_candidate_is_chosen(
        config in source_config(good_path().boxed()),
        present in prop::collection::vec(good_path(), 0..6),
    ) {
        let mut config = config;
        config.dockerfile = None;
        config.prefer_dockerfile = false;
        let repo = checkout(&config, &present);
        let found = candidates(&config).unwrap();
        let first = found.iter().find(|p| repo.0.contains_key(*p)).cloned();
        match (choose(&config, &repo), first) {
            (Ok(Recipe::Requirements { path }), Some(first)) => prop_assert_eq!(path, first),
            (Ok(Recipe::Requirements { path }), None) => prop_assert!(false, "chose {path}, none exists"),
            (_, Some(first)) => prop_assert!(false, "{first} exists and was not chosen"),
            (_, None) => {}
        }
    }

    #[test]
    fn fallback_fail_never_builds_on_the_bare_base_image(
        config in source_config(good_path().boxed()),
        present in prop::collection::vec(good_path(), 0..6),
    ) {
        let mut config = config;
        config.fallback = FallbackStrategy::Fail;
        let repo = checkout(&config, &present);
        match choose(&config, &repo) {
            Ok(Recipe::BaseImage { .. }) | Ok(Recipe::Imports { .. }) => {
                prop_assert!(false, "a fallback with fallbackStrategy fail")
            }
            Ok(Recipe::Requirements { .. }) | Ok(Recipe::Dockerfile { .. }) | Err(_) => {}
        }
        let nothing = Files::default();
        let nothing_named = config.dockerfile.is_none() && !config.prefer_dockerfile;
        if nothing_named {
            prop_assert!(choose(&config, &nothing).is_err());
        }
    }

    #[test]
    fn prefer_dockerfile_wins_over_requirements(
        config in source_config(good_path().boxed()),
        present in prop::collection::vec(good_path(), 0..6),
    ) {
        let mut config = config;
        config.dockerfile = None;
        config.prefer_dockerfile = true;
        let mut present = present;
        present.push("Dockerfile".to_owned());
        present.push("requirements.txt".to_owned());
        let repo = checkout(&config, &present);
        let chosen = choose(&config, &repo).unwrap();
        prop_assert!(matches!(chosen, Recipe::Dockerfile { .. }), "{:?}", chosen);
    }

    #[test]
    fn the_decision_is_deterministic(
        config in source_config(path().boxed()),
        present in prop::collection::vec(good_path(), 0..6),
    ) {
        let repo = checkout(&config, &present);
        prop_assert_eq!(choose(&config, &repo), choose(&config.clone(), &repo.clone()));
        prop_assert_eq!(candidates(&config), candidates(&config));
    }

    #[test]
    fn generated_dockerfiles_start_from_the_base_and_add_no_line_from_an_input(
        base in prop_oneof![
            "[a-z]{1,8}(\\.[a-z]{2,4})?(/[a-z0-9]{1,6}){0,2}(:[a-z0-9.]{1,6})?",
            ".{0,20}",
        ],
        config in source_config(path().boxed()),
        present in prop::collection::vec(good_path(), 0..6),
    ) {
        let repo = checkout(&config, &present);
        let Ok(recipe) = choose(&config, &repo) else { return Ok(()) };
        match generate_dockerfile(&base, &recipe) {
            Ok(Some(text)) => {
                let from = format!("FROM {base}\n");
                prop_assert!(text.starts_with(&from), "{text}");
                prop_assert!(!base.contains(['\n', '\r', ' ']));
                // Every line is nbv's own: the FROM, or an instruction from a fixed set.
                for line in text.lines().skip(1) {
                    prop_assert!(line.starts_with("COPY .nbv-build/") || line.starts_with("RUN "), "{line}");
                }
            }
            Ok(None) => prop_assert!(matches!(recipe, Recipe::Dockerfile { .. }), "{recipe:?}"),
            Err(e) => prop_assert_eq!(e.field(), "spec.podConfig.buildConfig.baseImage"),
        }
    }
}
