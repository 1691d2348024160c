//! What every OLM file is made of: the package's names and versions, the sources in
//! `config/` (compiled in), the error that names the source to fix, and the header of a
//! generated file.

use std::path::PathBuf;

use serde_json::{Value, json};

/// The OLM package name.
pub const PACKAGE: &str = "nbv-operator";
/// The channel every release is published in (and the default channel).
pub const CHANNEL: &str = "alpha";
/// The OpenShift versions the bundle is published for
/// (`com.redhat.openshift.versions`): 4.18 to 4.20, as ADR-045's clusters run.
pub const OPENSHIFT_VERSIONS: &str = "v4.18-v4.20";
/// The oldest Kubernetes the bundle installs on: 1.21, which serves the `policy/v1`
/// PodDisruptionBudget of `config/manager/pdb.yaml`. nbv itself runs on 1.20, the API
/// server of its end-to-end suite, installed without that budget (docs/install.md).
pub const MIN_KUBE_VERSION: &str = "1.21.0";
/// The version of this build, which the bundle describes.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The sources of the bundle, as `config/` holds them.
pub mod sources {
    /// `config/manager/deployment.yaml`.
    pub const DEPLOYMENT: &str = include_str!("../../../../../config/manager/deployment.yaml");
    /// `config/manager/service.yaml`.
    pub const SERVICE: &str = include_str!("../../../../../config/manager/service.yaml");
    /// `config/manager/pdb.yaml`.
    pub const POD_DISRUPTION_BUDGET: &str = include_str!("../../../../../config/manager/pdb.yaml");
    /// `config/rbac/role.yaml`.
    pub const CLUSTER_ROLE: &str = include_str!("../../../../../config/rbac/role.yaml");
    /// `config/rbac/metrics_reader_role.yaml`: the ClusterRole for scrapers of `/metrics`.
    pub const METRICS_READER_ROLE: &str =
        include_str!("../../../../../config/rbac/metrics_reader_role.yaml");
    /// `config/rbac/leader_election_role.yaml`.
    pub const LEADER_ELECTION_ROLE: &str =
        include_str!("../../../../../config/rbac/leader_election_role.yaml");
    /// `config/rbac/service_account.yaml`.
    pub const SERVICE_ACCOUNT: &str =
        include_str!("../../../../../config/rbac/service_account.yaml");
    /// `config/samples/training/notebookvalidationjob.yaml`: the `alm-examples`.
    pub const SAMPLE_JOBS: &str =
        include_str!("../../../../../config/samples/training/notebookvalidationjob.yaml");
    /// The package icon.
    pub const ICON_SVG: &str = include_str!("icon.svg");
    /// The CSV's and the package's long description (Markdown).
    pub const DESCRIPTION: &str = include_str!("description.md");
}

/// Why the bundle or catalog cannot be rendered: a source in `config/` is not what the
/// bundle needs. The message names the file to fix.
#[derive(Debug, thiserror::Error)]
pub enum OlmError {
    /// A source is not YAML.
    #[error("{file} is not valid YAML: {source}")]
    Yaml {
        /// The source file.
        file: &'static str,
        /// The parser's error, or the bound it exceeds.
        source: nbv_core::yaml::YamlError,
    },
    /// A source lacks a field the bundle is built from.
    #[error("{file}: {what}")]
    Source {
        /// The source file.
        file: &'static str,
        /// What is missing or wrong.
        what: String,
    },
    /// Writing a file failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One rendered file: its path relative to the output directory, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Path relative to the directory the files are written to.
    pub path: String,
    /// Contents.
    pub text: String,
}

/// Parses the one document of a source file.
pub(crate) fn parse(file: &'static str, text: &str) -> Result<Value, OlmError> {
    nbv_core::yaml::from_str(text).map_err(|source| OlmError::Yaml { file, source })
}

/// Every document of a multi-document source file, empty ones skipped.
pub(crate) fn parse_all(file: &'static str, text: &str) -> Result<Vec<Value>, OlmError> {
    let mut docs = Vec::new();
    for document in nbv_core::yaml::documents(text) {
        let value: Value = document
            .and_then(|d| Ok(serde::Deserialize::deserialize(d)?))
            .map_err(|source| OlmError::Yaml { file, source })?;
        if !value.is_null() {
            docs.push(value);
        }
    }
    Ok(docs)
}

/// YAML text of generated documents, under a header naming their sources.
pub(crate) fn yaml(documents: &[Value], sources: &str) -> String {
    // Serializing plain JSON values to YAML cannot fail.
    let body: Vec<String> = documents
        .iter()
        .map(|d| serde_yaml_ng::to_string(d).unwrap_or_default())
        .collect();
    format!(
        "# Generated from {sources} by `nbv olm`; do not edit. Regenerate with\n\
         # `nbv olm bundle` and `nbv olm catalog` (nbv-operator/tests/olm.rs checks them).\n{}",
        body.join("---\n")
    )
}

/// The package icon, base64-encoded, as OLM's `icon` fields hold it.
pub(crate) fn icon() -> Value {
    use base64::Engine;
    json!([{
        "base64data": base64::engine::general_purpose::STANDARD.encode(sources::ICON_SVG),
        "mediatype": "image/svg+xml",
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_beyond_the_yaml_bounds_are_refused() {
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let error = parse("deep.yaml", &deep).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("nested more than 128 levels deep"),
            "{error}"
        );
        let stream = format!("kind: A\n---\n{deep}\n");
        let error = parse_all("deep.yaml", &stream).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("deep.yaml is not valid YAML: "),
            "{error}"
        );
    }
}
