//! The resources nbv addresses without typed bindings (Argo CD's, KServe's), defined
//! once.

use kube::core::{ApiResource, GroupVersionKind};

/// Argo CD's Application resource (`argoproj.io/v1alpha1`, `applications`).
///
/// # Examples
///
/// ```
/// let resource = nbv_operator::operator::resources::application_resource();
/// assert_eq!((resource.group.as_str(), resource.plural.as_str()), ("argoproj.io", "applications"));
/// ```
pub fn application_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Application"),
        "applications",
    )
}

/// Argo CD's AppProject resource (`argoproj.io/v1alpha1`, `appprojects`).
///
/// # Examples
///
/// ```
/// let resource = nbv_operator::operator::resources::appproject_resource();
/// assert_eq!((resource.kind.as_str(), resource.plural.as_str()), ("AppProject", "appprojects"));
/// ```
pub fn appproject_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "AppProject"),
        "appprojects",
    )
}

/// KServe's InferenceService resource (`serving.kserve.io/v1beta1`,
/// `inferenceservices`), which OpenShift AI serves too.
///
/// # Examples
///
/// ```
/// let resource = nbv_operator::operator::resources::inference_service_resource();
/// assert_eq!(resource.api_version, "serving.kserve.io/v1beta1");
/// ```
pub fn inference_service_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("serving.kserve.io", "v1beta1", "InferenceService"),
        "inferenceservices",
    )
}
