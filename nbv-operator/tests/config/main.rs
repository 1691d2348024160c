//! The deployable files (`config/`, `Dockerfile`) against the code they deploy.
//!
//! Generated files must equal what the code renders, byte for byte; every kustomization
//! must point at files that exist; the samples must be what nbv accepts; the Deployment
//! and the wait hook must use flags, environment variables, ports and the user the
//! binary and the image really have.
//!
//! `NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test config` rewrites the
//! generated files (the CRD and the Argo CD health checks) instead of failing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use nbv_core::annotations::{
    BLOCK_WAVE, NOTEBOOK_STATUS, NOTEBOOK_SUMMARY, NOTIFICATION_TYPE, ON_SUCCESS_TRIGGER,
};
use nbv_core::api::NotebookValidationJob;
use nbv_core::health::actions::{ACTIONS_KEY, DISCOVERY_SCRIPT, RERUN_SCRIPT, render_actions};
use nbv_core::health::{HEALTH_KEY, Variant, render_argocd_health_check, render_health_configmap};
use nbv_core::triggers::from_annotations;
use nbv_core::waves::{block_wave, sync_wave};
use nbv_operator::cli::{Cli, Command};
use repository::{documents, read, root};
use serde_json::Value;

#[path = "../repository/mod.rs"]
mod repository;

/// Every file under `config/` with its path relative to the repository root.
fn config_files() -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, base, out);
            } else if let Ok(relative) = path.strip_prefix(base) {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("config"), &root(), &mut out);
    out
}

/// Argo CD's test layout for resource customizations (`health_test.yaml`, `health.lua`,
/// `testdata/`): inputs of `nbv health test`, not manifests to deploy.
const HEALTH_TESTS: &str = "config/argocd/tests/";

/// A plain Prometheus rule file and its promtool unit tests (config/monitoring):
/// inputs of promtool, not manifests to deploy.
const PROMTOOL_FILES: &str = "config/monitoring/promtool/";

/// kustomize's transformer configurations (a kustomization's `configurations`, such as
/// `config/manager/kustomizeconfig.yaml`): inputs of kustomize, not manifests to deploy.
fn is_kustomize_configuration(file: &str) -> bool {
    file.ends_with("/kustomizeconfig.yaml")
}

/// The YAML files that are manifests or kustomizations.
fn yaml_files() -> Vec<String> {
    config_files()
        .into_iter()
        .filter(|f| f.ends_with(".yaml") || f.ends_with(".yml"))
        .filter(|f| !f.starts_with(HEALTH_TESTS) && !f.starts_with(PROMTOOL_FILES))
        .filter(|f| !is_kustomize_configuration(f))
        .collect()
}

/// The manifests (not kustomizations) under `config/`, with their file.
fn manifests() -> Vec<(String, Value)> {
    yaml_files()
        .into_iter()
        .filter(|f| !f.ends_with("/kustomization.yaml"))
        .flat_map(|f| documents(&f).into_iter().map(move |d| (f.clone(), d)))
        .collect()
}

fn find<'a>(manifests: &'a [(String, Value)], kind: &str, name: &str) -> &'a Value {
    manifests
        .iter()
        .find(|(_, m)| m["kind"] == kind && m["metadata"]["name"] == name)
        .map(|(_, m)| m)
        .unwrap_or_else(|| panic!("no {kind} {name} under config/"))
}

mod deployment;
mod disruption_and_ingress;
mod generated;
mod kustomize;
mod pod_defaults;
mod run_flags;
mod samples;
