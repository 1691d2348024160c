//! `nbv olm bundle` and `nbv olm catalog`: the OLM bundle of this release and the
//! file-based catalog of every release, rendered from the same sources as `config/`
//! (compiled into `nbv`), so that an OLM installation runs exactly what
//! `kubectl apply -k config/default` runs.
//!
//! The bundle (`bundle/`): `manifests/` with the ClusterServiceVersion, the CRD (the
//! output of `nbv crd`), the metrics Service and PodDisruptionBudget of
//! `config/manager` (not its NetworkPolicy: `csv::bundle_objects` says why) and the
//! ClusterRole for metrics scrapers, `config/rbac/metrics_reader_role.yaml`;
//! `metadata/annotations.yaml` with the package, the channel and the OpenShift version
//! range; `bundle.Dockerfile` that builds the bundle image with the same annotations as
//! labels. The CSV's install
//! strategy is `config/manager/deployment.yaml`, its permissions are
//! `config/rbac/leader_election_role.yaml` (the operator's namespace) and its cluster
//! permissions `config/rbac/role.yaml`, rule for rule; its `alm-examples` are the
//! sample jobs of `config/samples`.
//!
//! The catalog (`catalog/`) lists every release, each bundle with the metadata the
//! packageserver lists it by; it is checked by the rules of `opm validate` before it
//! is written, and the bundle by the rules OLM v1 applies to registry+v1 bundles.

mod catalog;
mod csv;
mod fbc;
mod installer;
mod metadata;
mod package;
mod packageserver;
mod registry_v1;
mod release;
mod semver;
mod upgrades;

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::{Value, json};

pub use catalog::{ChainError, catalog_documents, catalog_files, check_chain};
pub use fbc::{FbcError, channel_head, validate as validate_catalog};
pub use installer::{INSTALL_NAMESPACE, INSTALLER, installer_rbac};
pub use metadata::{csv_metadata, owned_gvks};
use package::yaml;
pub use package::{
    CHANNEL, File, MIN_KUBE_VERSION, OPENSHIFT_VERSIONS, OlmError, PACKAGE, VERSION, sources,
};
pub use packageserver::{CsvDescription, PackageChannel, PackageManifest, package_manifests};
pub use registry_v1::{RegistryV1Error, SUPPORTED_KINDS, check_registry_v1};
pub use release::{Release, releases};
pub use semver::{Range, Version};
pub use upgrades::{UpgradeError, upgrade_path};

/// `nbv olm ...`
#[derive(Debug, Subcommand)]
pub enum OlmCommand {
    /// Write this release's OLM bundle (manifests/, metadata/, bundle.Dockerfile).
    Bundle {
        /// Directory to write to (created if missing).
        #[arg(long, short, default_value = "bundle")]
        output: PathBuf,
    },
    /// Write the file-based catalog of every release (olm.package, olm.channel,
    /// olm.bundle).
    Catalog {
        /// Directory to write to (created if missing).
        #[arg(long, short, default_value = "catalog")]
        output: PathBuf,
    },
}

/// Runs an `nbv olm` command: exit 0 when the files were written, 1 otherwise.
pub fn run(command: &OlmCommand, out: &mut impl Write, err: &mut impl Write) -> u8 {
    let (files, output) = match command {
        OlmCommand::Bundle { output } => (bundle_files(), output),
        OlmCommand::Catalog { output } => (catalog_files(), output),
    };
    let written = files.and_then(|files| write_files(output, &files));
    match written {
        Ok(paths) => {
            for path in paths {
                let _ = writeln!(out, "wrote {}", path.display());
            }
            0
        }
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            1
        }
    }
}

fn write_files(dir: &Path, files: &[File]) -> Result<Vec<PathBuf>, OlmError> {
    let mut written = Vec::new();
    for file in files {
        let path = dir.join(&file.path);
        let write = |path: &Path| -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, &file.text)
        };
        write(&path).map_err(|source| OlmError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

/// The bundle's annotations (`metadata/annotations.yaml`, and the labels of the bundle
/// image).
pub fn bundle_annotations() -> Vec<(&'static str, String)> {
    vec![
        (
            "operators.operatorframework.io.bundle.mediatype.v1",
            "registry+v1".to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.manifests.v1",
            "manifests/".to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.metadata.v1",
            "metadata/".to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.package.v1",
            PACKAGE.to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.channels.v1",
            CHANNEL.to_owned(),
        ),
        (
            "operators.operatorframework.io.bundle.channel.default.v1",
            CHANNEL.to_owned(),
        ),
        (
            "com.redhat.openshift.versions",
            OPENSHIFT_VERSIONS.to_owned(),
        ),
    ]
}

/// The files of this release's bundle.
///
/// # Examples
///
/// ```
/// let files = nbv_operator::cli::commands::olm::bundle_files()?;
/// let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
/// assert!(paths.contains(&"manifests/nbv-operator.clusterserviceversion.yaml"));
/// assert!(paths.contains(&"metadata/annotations.yaml"));
/// # Ok::<(), nbv_operator::cli::commands::olm::OlmError>(())
/// ```
///
/// # Errors
///
/// [`OlmError`] when a source in `config/` lacks what the bundle is built from.
pub fn bundle_files() -> Result<Vec<File>, OlmError> {
    let csv = csv::cluster_service_version()?;
    let mut crd = serde_json::to_value(nbv_core::api::crd()).unwrap_or_default();
    strip_status(&mut crd);
    let objects = csv::bundle_objects()?;
    let annotations: serde_json::Map<String, Value> = bundle_annotations()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Value::String(v)))
        .collect();
    let mut dockerfile = String::from(
        "# Generated by `nbv olm bundle`; do not edit. Builds the bundle image:\n\
         #   docker build -f bundle/bundle.Dockerfile -t <registry>/nbv-operator-bundle:v<version> bundle\n\
         FROM scratch\n",
    );
    for (key, value) in bundle_annotations() {
        dockerfile.push_str(&format!("LABEL {key}={value}\n"));
    }
    dockerfile.push_str("COPY manifests /manifests/\nCOPY metadata /metadata/\n");
    let mut manifests = vec![csv.clone(), crd.clone()];
    manifests.extend(objects.iter().map(|o| o.object.clone()));
    let problems = check_registry_v1(&manifests, &Value::Object(annotations.clone()), &[]);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
        return Err(OlmError::Source {
            file: "nbv-operator/src/cli/commands/olm/csv.rs",
            what: format!(
                "the bundle would not install with OLM v1: {}",
                list.join("; ")
            ),
        });
    }
    let mut files = vec![
        File {
            path: format!("manifests/{PACKAGE}.clusterserviceversion.yaml"),
            text: yaml(
                &[csv],
                "config/manager/deployment.yaml, config/rbac/ and config/samples/training/",
            ),
        },
        File {
            path: "manifests/mlops.mlops.dev_notebookvalidationjobs.yaml".to_owned(),
            text: yaml(&[crd], "the CRD of `nbv crd`"),
        },
    ];
    files.extend(objects.into_iter().map(|o| File {
        path: o.manifest_path(),
        text: yaml(&[o.object], o.file),
    }));
    files.extend([
        File {
            path: "metadata/annotations.yaml".to_owned(),
            text: yaml(
                &[json!({ "annotations": annotations })],
                "the package and channel of nbv",
            ),
        },
        File {
            path: "bundle.Dockerfile".to_owned(),
            text: dockerfile,
        },
    ]);
    Ok(files)
}

/// Drops a `status` the CRD's serialization may carry: a bundle holds desired state.
fn strip_status(object: &mut Value) {
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
}
