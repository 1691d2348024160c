//! `nbv build prepare`: the binary as an image build's step runs it, over checkouts in
//! temporary directories, with the settings in `NBV_BUILD` as nbv-core's
//! `SourceConfig` serializes them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nbv_core::api::FallbackStrategy;
use nbv_core::build::{PREPARED_DOCKERFILE, PREPARED_REQUIREMENTS, SourceConfig};

mod prepare;
mod refusals;

const NBV: &str = env!("CARGO_BIN_EXE_nbv");

const NOTEBOOK: &str = "notebooks/tier2/train.ipynb";

/// A fresh directory for one test, with a `repo/` and room beside it.
fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nbv-build-cmd-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("repo")).expect("temp dir");
    dir
}

/// Writes `files` (path → text) under `root`.
fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
        std::fs::write(path, text).expect("a file");
    }
}

/// The settings of a job that names nothing: the default search, `warn`.
fn config() -> SourceConfig {
    SourceConfig {
        notebook_path: NOTEBOOK.to_owned(),
        base_image: "quay.io/jupyter/minimal-notebook:latest".to_owned(),
        requirements_file: None,
        requirements_sources: None,
        auto_generate: true,
        dockerfile: None,
        prefer_dockerfile: false,
        fallback: FallbackStrategy::Warn,
    }
}

/// An nbformat 4 notebook with one code cell.
fn notebook(code: &str) -> String {
    serde_json::json!({
        "cells": [{"cell_type": "code", "source": code, "outputs": [], "metadata": {}}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    })
    .to_string()
}

/// `nbv build prepare --source repo [extra]` with `NBV_BUILD` set to `settings`.
fn prepare(repo: &Path, settings: Option<&str>, extra: &[&str]) -> Output {
    let mut command = Command::new(NBV);
    command
        .args(["build", "prepare", "--source"])
        .arg(repo)
        .args(extra)
        .env_clear();
    if let Some(settings) = settings {
        command.env("NBV_BUILD", settings);
    }
    command.output().expect("nbv runs")
}

fn prepare_with(repo: &Path, config: &SourceConfig) -> Output {
    prepare(
        repo,
        Some(&serde_json::to_string(config).expect("JSON")),
        &[],
    )
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn prepared_dockerfile(repo: &Path) -> String {
    std::fs::read_to_string(repo.join(PREPARED_DOCKERFILE)).expect("a prepared Dockerfile")
}

fn prepared_requirements(repo: &Path) -> Option<Vec<u8>> {
    std::fs::read(repo.join(PREPARED_REQUIREMENTS)).ok()
}
