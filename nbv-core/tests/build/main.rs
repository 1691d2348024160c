//! Image builds: which requirements file or Dockerfile a build uses (`choose` over an
//! in-memory checkout), the Dockerfile generated for it, and what the job's status says
//! of it; the plan a job's `buildConfig` reads as, and its key. `nbv build prepare`, which runs them in the build, is tested in nbv-operator.

use std::collections::BTreeMap;

use nbv_core::api::FallbackStrategy;
use nbv_core::build::{RepoView, SourceConfig};

mod dockerfiles;
mod plan;
mod properties;
mod rules;

/// A checkout in memory: path → text.
#[derive(Clone, Debug, Default)]
struct Files(BTreeMap<String, String>);

impl Files {
    fn with(paths: &[(&str, &str)]) -> Files {
        Files(
            paths
                .iter()
                .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
                .collect(),
        )
    }
}

impl RepoView for Files {
    fn is_file(&self, path: &str) -> bool {
        self.0.contains_key(path)
    }

    fn read(&self, path: &str) -> Option<String> {
        self.0.get(path).cloned()
    }
}

/// The settings of a job that names nothing: the default search, `warn`.
fn config(notebook: &str) -> SourceConfig {
    SourceConfig {
        notebook_path: notebook.to_owned(),
        base_image: "quay.io/jupyter/minimal-notebook:latest".to_owned(),
        requirements_file: None,
        requirements_sources: None,
        auto_generate: true,
        dockerfile: None,
        prefer_dockerfile: false,
        fallback: FallbackStrategy::Warn,
    }
}

/// An nbformat 4 notebook whose code cells are `cells`.
fn notebook(cells: &[&str]) -> String {
    let cells: Vec<serde_json::Value> = cells
        .iter()
        .map(|s| serde_json::json!({"cell_type": "code", "source": s, "outputs": []}))
        .collect();
    serde_json::json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
        .to_string()
}
