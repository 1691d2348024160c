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

pub use phase::{JobPhase, Phase, UnknownPhase};
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
/// applying ours over upstream's changes nothing but what nbv adds. Descriptions inside
/// the embedded Kubernetes types (volumes, affinity, environment, …) are left out:
/// they are the Pod API's own, found with `kubectl explain pod.spec`, and with them
/// the definition would approach the 256 KiB that `kubectl apply` can store.
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
    for version in &mut crd.spec.versions {
        let pod_config = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
            .and_then(|s| s.properties.as_mut())
            .and_then(|p| p.get_mut("spec"))
            .and_then(|s| s.properties.as_mut())
            .and_then(|p| p.get_mut("podConfig"))
            .and_then(|s| s.properties.as_mut());
        for (name, field) in pod_config.into_iter().flatten() {
            if EMBEDDED_POD_FIELDS.contains(&name.as_str()) {
                strip_nested_descriptions(field);
            }
        }
    }
    crd
}

/// Fields of `spec.podConfig` whose schema is a Kubernetes core type.
const EMBEDDED_POD_FIELDS: [&str; 6] = [
    "affinity",
    "env",
    "envFrom",
    "resources",
    "tolerations",
    "volumes",
];

type JsonSchemaProps =
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;

/// Removes the descriptions below `schema`, keeping its own.
fn strip_nested_descriptions(schema: &mut JsonSchemaProps) {
    fn strip(schema: &mut JsonSchemaProps) {
        schema.description = None;
        children(schema);
    }
    fn children(schema: &mut JsonSchemaProps) {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
            JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
        };
        for p in schema.properties.iter_mut().flat_map(|p| p.values_mut()) {
            strip(p);
        }
        match schema.items.as_mut() {
            Some(JSONSchemaPropsOrArray::Schema(s)) => strip(s),
            Some(JSONSchemaPropsOrArray::Schemas(ss)) => ss.iter_mut().for_each(strip),
            None => {}
        }
        if let Some(JSONSchemaPropsOrBool::Schema(s)) = schema.additional_properties.as_mut() {
            strip(s);
        }
        for s in [
            schema.all_of.as_mut(),
            schema.any_of.as_mut(),
            schema.one_of.as_mut(),
        ]
        .into_iter()
        .flatten()
        .flatten()
        {
            strip(s);
        }
    }
    children(schema);
}
