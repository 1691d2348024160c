//! Tracking settings of an Argo CD managed by the Argo CD operator (OpenShift GitOps):
//! its `ArgoCD` resource (`argoproj.io/v1beta1`) is the source of `argocd-cm`.
//!
//! The operator (argoproj-labs/argocd-operator, `reconcileArgoConfigMap`) rebuilds the
//! whole `data` of `argocd-cm` from the resource at each reconcile and reverts any other
//! edit. For the three keys nbv reads it writes:
//!
//! - `application.resourceTrackingMethod`: `spec.resourceTrackingMethod` read exactly
//!   (`label`, `annotation`, `annotation+label`; empty means `annotation`); any other
//!   value is written as `annotation`;
//! - `application.instanceLabelKey`: `spec.applicationInstanceLabelKey`, else
//!   `app.kubernetes.io/instance`;
//! - `installationID`: `spec.installationID` when set, else nothing;
//!
//! and then every entry of `spec.extraConfig`, which therefore wins over all three.

use std::collections::BTreeMap;

use serde_json::Value;

use super::parent::{
    INSTALLATION_ID_KEY, INSTANCE_LABEL_KEY, TRACKING_METHOD_KEY, TrackingMethod, TrackingSettings,
};
use crate::annotations::APP_INSTANCE;

/// API group and version of the Argo CD operator's `ArgoCD` resource.
pub const ARGOCD_API_VERSION: &str = "argoproj.io/v1beta1";

/// What the `ArgoCD` resources of Argo CD's namespace say about tracking.
///
/// # Examples
///
/// ```
/// use nbv_core::aggregate::{OperatorTracking, TrackingMethod};
/// use serde_json::json;
///
/// let gitops = json!({"apiVersion": "argoproj.io/v1beta1", "kind": "ArgoCD",
///     "metadata": {"name": "openshift-gitops", "namespace": "openshift-gitops"},
///     "spec": {"resourceTrackingMethod": "label"}});
/// let OperatorTracking::Managed { name, settings, problems } = OperatorTracking::of(&[gitops]) else {
///     panic!("one ArgoCD resource manages argocd-cm");
/// };
/// assert_eq!(name, "openshift-gitops");
/// assert_eq!(settings.method, TrackingMethod::Label);
/// assert!(problems.is_empty());
/// assert_eq!(OperatorTracking::of(&[]), OperatorTracking::NotManaged);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorTracking {
    /// No `ArgoCD` resource: a plain Argo CD, configured by `argocd-cm` itself.
    NotManaged,
    /// One `ArgoCD` resource, which writes `argocd-cm`: the settings it writes there,
    /// with a message for each value the operator or Argo CD does not accept.
    Managed {
        /// The resource's name.
        name: String,
        /// The settings it writes into `argocd-cm`.
        settings: TrackingSettings,
        /// Values not accepted, and what is used instead.
        problems: Vec<String>,
    },
    /// Several `ArgoCD` resources in one namespace, which the operator does not
    /// support: which one `argocd-cm` follows is not known, so `argocd-cm` is read.
    Ambiguous {
        /// Their names.
        names: Vec<String>,
    },
}

impl OperatorTracking {
    /// The tracking settings the `ArgoCD` resources `instances` (as listed in Argo CD's
    /// namespace) write into `argocd-cm`.
    pub fn of(instances: &[Value]) -> OperatorTracking {
        match instances {
            [] => OperatorTracking::NotManaged,
            [instance] => {
                let (settings, problems) = TrackingSettings::from_argocd_resource(instance);
                OperatorTracking::Managed {
                    name: name_of(instance),
                    settings,
                    problems,
                }
            }
            several => OperatorTracking::Ambiguous {
                names: several.iter().map(name_of).collect(),
            },
        }
    }
}

fn name_of(instance: &Value) -> String {
    instance["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

impl TrackingSettings {
    /// The settings the Argo CD operator writes into `argocd-cm` from the `ArgoCD`
    /// resource `argocd` (`spec.resourceTrackingMethod`,
    /// `spec.applicationInstanceLabelKey` and `spec.installationID`, then
    /// `spec.extraConfig`, which wins), as Argo CD then reads them, with a message for
    /// each value that is not accepted.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
    /// use serde_json::json;
    ///
    /// let argocd = json!({"metadata": {"name": "openshift-gitops"}, "spec": {
    ///     "resourceTrackingMethod": "annotation+label",
    ///     "applicationInstanceLabelKey": "argocd.argoproj.io/instance",
    ///     "installationID": "cluster-a",
    /// }});
    /// let (settings, problems) = TrackingSettings::from_argocd_resource(&argocd);
    /// assert_eq!(settings.method, TrackingMethod::AnnotationAndLabel);
    /// assert_eq!(settings.instance_label_key, "argocd.argoproj.io/instance");
    /// assert_eq!(settings.installation_id, "cluster-a");
    /// assert!(problems.is_empty());
    ///
    /// // A value the operator does not know: it writes `annotation`.
    /// let odd = json!({"metadata": {"name": "gitops"}, "spec": {"resourceTrackingMethod": "Label"}});
    /// let (settings, problems) = TrackingSettings::from_argocd_resource(&odd);
    /// assert_eq!(settings.method, TrackingMethod::Annotation);
    /// assert!(problems[0].contains("\"Label\""));
    /// ```
    pub fn from_argocd_resource(argocd: &Value) -> (TrackingSettings, Vec<String>) {
        let (data, mut problems) = argocd_cm_data(argocd);
        let (settings, cm_problems) = TrackingSettings::from_argocd_cm(&data);
        problems.extend(cm_problems.into_iter().map(|problem| {
            format!(
                "ArgoCD {} spec.extraConfig writes it: {problem}",
                name_of(argocd)
            )
        }));
        (settings, problems)
    }
}

/// The tracking keys of `argocd-cm` as the operator writes them from `argocd`.
fn argocd_cm_data(argocd: &Value) -> (BTreeMap<String, String>, Vec<String>) {
    let spec = &argocd["spec"];
    let text = |field: &str| spec[field].as_str().unwrap_or_default();
    let mut problems = Vec::new();
    let mut data = BTreeMap::new();

    // The operator compares the value as it is: no trimming, no case folding.
    let method = text("resourceTrackingMethod");
    let written = method.parse::<TrackingMethod>().unwrap_or_else(|_| {
        problems.push(format!(
            "ArgoCD {} spec.resourceTrackingMethod {method:?} is not one of \"annotation\", \
             \"annotation+label\" or \"label\"; the Argo CD operator writes \"annotation\" \
             into argocd-cm, and nbv tracks by annotation too",
            name_of(argocd)
        ));
        TrackingMethod::Annotation
    });
    data.insert(TRACKING_METHOD_KEY.to_owned(), written.as_str().to_owned());
    let label_key = Some(text("applicationInstanceLabelKey"))
        .filter(|key| !key.is_empty())
        .unwrap_or(APP_INSTANCE);
    data.insert(INSTANCE_LABEL_KEY.to_owned(), label_key.to_owned());
    let installation_id = text("installationID");
    if !installation_id.is_empty() {
        data.insert(INSTALLATION_ID_KEY.to_owned(), installation_id.to_owned());
    }
    // `extraConfig` is applied last and overrides the dedicated fields.
    if let Some(extra) = spec["extraConfig"].as_object() {
        for key in [TRACKING_METHOD_KEY, INSTANCE_LABEL_KEY, INSTALLATION_ID_KEY] {
            if let Some(value) = extra.get(key).and_then(Value::as_str) {
                data.insert(key.to_owned(), value.to_owned());
                // The dedicated field's problem no longer applies.
                if key == TRACKING_METHOD_KEY {
                    problems.clear();
                }
            }
        }
    }
    (data, problems)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn settings(spec: Value) -> (TrackingSettings, Vec<String>) {
        TrackingSettings::from_argocd_resource(
            &json!({"metadata": {"name": "gitops"}, "spec": spec}),
        )
    }

    #[test]
    fn an_empty_spec_is_the_operators_defaults() {
        let (settings, problems) = settings(json!({}));
        assert_eq!(
            settings,
            TrackingSettings {
                method: TrackingMethod::Annotation,
                instance_label_key: APP_INSTANCE.to_owned(),
                installation_id: String::new(),
                part_of: true,
            }
        );
        assert!(problems.is_empty());
    }

    #[test]
    fn each_method_maps_as_the_operator_writes_it() {
        for (value, method) in [
            ("", TrackingMethod::Annotation),
            ("annotation", TrackingMethod::Annotation),
            ("annotation+label", TrackingMethod::AnnotationAndLabel),
            ("label", TrackingMethod::Label),
        ] {
            let (settings, problems) = settings(json!({"resourceTrackingMethod": value}));
            assert_eq!(settings.method, method, "{value:?}");
            assert!(problems.is_empty(), "{value:?}: {problems:?}");
        }
    }

    #[test]
    fn an_unknown_method_is_annotation_and_named() {
        for value in ["labels", " label", "LABEL", "annotation + label"] {
            let (settings, problems) = settings(json!({"resourceTrackingMethod": value}));
            assert_eq!(settings.method, TrackingMethod::Annotation, "{value:?}");
            assert_eq!(problems.len(), 1, "{value:?}");
            assert!(problems[0].contains(&format!("{value:?}")), "{problems:?}");
            assert!(problems[0].contains("ArgoCD gitops"), "{problems:?}");
        }
    }

    #[test]
    fn extra_config_wins_over_the_dedicated_fields() {
        let (settings, problems) = settings(json!({
            "resourceTrackingMethod": "bogus",
            "applicationInstanceLabelKey": "team/app",
            "installationID": "a",
            "extraConfig": {
                "application.resourceTrackingMethod": "label",
                "application.instanceLabelKey": "extra/app",
                "installationID": "b",
                "admin.enabled": "false",
            },
        }));
        assert_eq!(settings.method, TrackingMethod::Label);
        assert_eq!(settings.instance_label_key, "extra/app");
        assert_eq!(settings.installation_id, "b");
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn an_invalid_extra_config_method_is_reported_as_argocd_reads_it() {
        let (settings, problems) =
            settings(json!({"extraConfig": {"application.resourceTrackingMethod": "labels"}}));
        assert_eq!(settings.method, TrackingMethod::Annotation);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("spec.extraConfig"), "{problems:?}");
        assert!(problems[0].contains("\"labels\""), "{problems:?}");
    }

    #[test]
    fn several_instances_are_ambiguous() {
        let a = json!({"metadata": {"name": "a"}});
        let b = json!({"metadata": {"name": "b"}});
        assert_eq!(
            OperatorTracking::of(&[a, b]),
            OperatorTracking::Ambiguous {
                names: vec!["a".into(), "b".into()]
            }
        );
    }

    proptest! {
        /// Whatever the resource holds, the result is what `argocd-cm` would hold after
        /// the operator wrote it: the same as reading that ConfigMap.
        #[test]
        fn the_resource_reads_as_the_argocd_cm_it_writes(
            method in prop::option::of("[a-z+ ]{0,18}|label|annotation|annotation\\+label"),
            label in prop::option::of("[a-z./]{0,12}"),
            id in prop::option::of("[a-z0-9-]{0,8}"),
            extra_method in prop::option::of("label|annotation|bogus"),
        ) {
            let mut spec = json!({});
            if let Some(m) = &method { spec["resourceTrackingMethod"] = json!(m); }
            if let Some(l) = &label { spec["applicationInstanceLabelKey"] = json!(l); }
            if let Some(i) = &id { spec["installationID"] = json!(i); }
            if let Some(e) = &extra_method {
                spec["extraConfig"] = json!({"application.resourceTrackingMethod": e});
            }
            let argocd = json!({"metadata": {"name": "x"}, "spec": spec});
            let (data, _) = argocd_cm_data(&argocd);
            let (from_resource, problems) = TrackingSettings::from_argocd_resource(&argocd);
            prop_assert_eq!(&from_resource, &TrackingSettings::from_argocd_cm(&data).0);
            // The instance label is never empty, and a method problem is always named.
            prop_assert!(!from_resource.instance_label_key.is_empty());
            let accepted = |m: &str| m.parse::<TrackingMethod>().is_ok();
            let bad = match &extra_method {
                Some(e) => !accepted(e),
                None => method.as_deref().is_some_and(|m| !accepted(m)),
            };
            prop_assert_eq!(bad, !problems.is_empty());
        }
    }
}
