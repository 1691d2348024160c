//! The tracking settings at start: the flags, then the Argo CD operator's `ArgoCD`
//! resource when one manages the instance (OpenShift GitOps), else `argocd-cm`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::GroupVersionKind;
use nbv_core::aggregate::{OperatorTracking, TrackingSettings};

use super::access::AccessWatch;
use super::namespace::ARGOCD_CM;
use crate::operator::config::TrackingConfig;
use crate::runtime::api_error::{ApiErrorClass, classify};

/// The Argo CD operator's `ArgoCD` resource (`argoproj.io/v1beta1`, plural `argocds`).
///
/// # Examples
///
/// ```
/// let resource = nbv_operator::operator::argocd::argocd_resource();
/// assert_eq!((resource.api_version.as_str(), resource.plural.as_str()), ("argoproj.io/v1beta1", "argocds"));
/// ```
pub fn argocd_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("argoproj.io", "v1beta1", "ArgoCD"),
        "argocds",
    )
}

/// The tracking settings: the flags, and for what they leave open the `ArgoCD` resource
/// of Argo CD's `namespace` when the Argo CD operator manages it (one LIST), else its
/// `argocd-cm` (`argocd_cm` when already read, else one GET unless `access` knows it is
/// refused). A ConfigMap that cannot be read leaves Argo CD's defaults, with a warning:
/// nbv then tracks as a default Argo CD 3 does. What was refused is recorded in
/// `access`.
pub async fn tracking_settings(
    client: &kube::Client,
    namespace: &str,
    flags: &TrackingConfig,
    argocd_cm: Option<BTreeMap<String, String>>,
    access: &AccessWatch,
) -> TrackingSettings {
    if !flags.needs_argocd_cm() {
        return log(flags.resolve(None).0);
    }
    if let Some((name, settings, problems)) = managed(client, namespace).await {
        for problem in problems {
            tracing::warn!(%problem, "Argo CD tracking setting ignored");
        }
        tracing::info!(%namespace, argocd = %name, "tracking settings read from the Argo CD operator's ArgoCD resource, which writes argocd-cm");
        return log(flags.apply(settings));
    }
    let data = match argocd_cm {
        Some(data) => Some(data),
        // Refused during the search: the missing Role's warning says so.
        None if access.config_map_refused() => None,
        None => read_argocd_cm(client, namespace, access).await,
    };
    let (settings, problems) = flags.resolve(data.as_ref());
    for problem in problems {
        tracing::warn!(%problem, "Argo CD tracking setting ignored");
    }
    log(settings)
}

fn log(settings: TrackingSettings) -> TrackingSettings {
    tracing::info!(method = %settings.method, instance_label = %settings.instance_label_key, installation_id = %settings.installation_id, part_of = settings.part_of, "tracking jobs to Applications");
    settings
}

/// The settings of the `ArgoCD` resource that manages `argocd-cm` in `namespace`, if
/// one does. Without the CRD (plain Argo CD) or without the right to list it, `None`,
/// logged at debug level only: that is the plain Argo CD case, not a problem.
async fn managed(
    client: &kube::Client,
    namespace: &str,
) -> Option<(String, TrackingSettings, Vec<String>)> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &argocd_resource());
    let instances = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        Err(error) => {
            tracing::debug!(%namespace, %error, "no ArgoCD resource read (plain Argo CD, or no right to list argocds); reading argocd-cm");
            return None;
        }
    };
    let instances: Vec<serde_json::Value> = instances
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect();
    match OperatorTracking::of(&instances) {
        OperatorTracking::NotManaged => None,
        OperatorTracking::Managed {
            name,
            settings,
            problems,
        } => Some((name, settings, problems)),
        OperatorTracking::Ambiguous { names } => {
            tracing::warn!(%namespace, ?names, "several ArgoCD resources in Argo CD's namespace; reading argocd-cm instead");
            None
        }
    }
}

async fn read_argocd_cm(
    client: &kube::Client,
    namespace: &str,
    access: &AccessWatch,
) -> Option<BTreeMap<String, String>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    match api.get_opt(ARGOCD_CM).await {
        Ok(Some(cm)) => {
            access.config_map_read(true);
            Some(cm.data.unwrap_or_default())
        }
        Ok(None) => {
            tracing::warn!(%namespace, "ConfigMap {ARGOCD_CM} not found; using Argo CD's default tracking settings");
            None
        }
        Err(error) => {
            if classify(&error) == ApiErrorClass::Forbidden {
                access.config_map_read(false);
            }
            tracing::warn!(%namespace, %error, "reading ConfigMap {ARGOCD_CM} failed; using Argo CD's default tracking settings");
            None
        }
    }
}
