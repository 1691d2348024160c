//! The `NotebookValidationJob` resource (`mlops.mlops.dev/v1alpha1`).
//!
//! These types accept every manifest written for the upstream Go operator's CRD: field
//! names, types and defaults follow it, and fields nbv does not know are kept in
//! [`NotebookValidationJobSpec::unknown_fields`] rather than dropped, so reading and
//! writing a manifest never loses what its author wrote. nbv adds to the status (see
//! [`EffectLedger`]) but never removes or retypes an upstream field.
//!
//! # Examples
//!
//! ```
//! use nbv_core::api::NotebookValidationJob;
//!
//! let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "mlops.mlops.dev/v1alpha1",
//!     "kind": "NotebookValidationJob",
//!     "metadata": {"name": "train", "namespace": "ml"},
//!     "spec": {
//!         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
//!         "podConfig": {"containerImage": "quay.io/jupyter/minimal-notebook:latest"}
//!     }
//! }))?;
//! assert_eq!(job.spec.notebook.path, "t.ipynb");
//! assert!(job.status.is_none());
//! # Ok::<(), serde_json::Error>(())
//! ```

mod phase;
mod spec;
mod status;

pub use phase::{Phase, UnknownPhase};
pub use spec::*;
pub use status::*;

/// API group of the resource.
pub const GROUP: &str = "mlops.mlops.dev";
/// API version of the resource within [`GROUP`].
pub const VERSION: &str = "v1alpha1";
/// Kind of the resource.
pub const KIND: &str = "NotebookValidationJob";
/// `apiVersion` as written in manifests.
pub const API_VERSION: &str = "mlops.mlops.dev/v1alpha1";

/// The CustomResourceDefinition of [`NotebookValidationJob`], as `nbv crd` prints it.
///
/// It is the derived definition with `listKind` spelled out, as upstream's is, so that
/// applying ours over upstream's changes nothing but what nbv adds.
///
/// # Examples
///
/// ```
/// let crd = nbv_core::api::crd();
/// assert_eq!(crd.metadata.name.as_deref(), Some("notebookvalidationjobs.mlops.mlops.dev"));
/// assert_eq!(crd.spec.names.short_names, Some(vec!["nvj".to_owned(), "nvjob".to_owned()]));
/// ```
pub fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    use kube::core::CustomResourceExt;
    let mut crd = NotebookValidationJob::crd();
    crd.spec.names.list_kind = Some(format!("{KIND}List"));
    crd
}
