//! [`PodPolicy::check`]: every field of a job that reaches a Pod nbv creates for it
//! (the validation Pod, and the build's objects), against the policy.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Affinity, Volume};

use crate::api::NotebookValidationJob;
use crate::build::DEFAULT_BASE_IMAGE;

use super::names::names_in;
use super::token::SERVICE_ACCOUNT_TOKEN_ANNOTATION;
use super::{PlacementField, PodPolicy, PolicyRefusal, PolicyRule};

/// The service account of a Pod that names none; always allowed, since every Pod of
/// the namespace that names no other runs as it.
const DEFAULT_SERVICE_ACCOUNT: &str = "default";

impl PodPolicy {
    /// Whether `job` keeps to this policy: `Ok`, or the first field (in the CRD's
    /// order, the token annotation last) that breaks a rule.
    ///
    /// Checked are the images (`containerImage`; with a build, `baseImage`, nbv's
    /// default base image when it is not given, and `strategyConfig.outputImage`), the
    /// service accounts (`serviceAccountName`, the build's `serviceAccount`), every
    /// Secret named (the clone credentials of the notebook and the golden notebook,
    /// `credentials`, `env[].valueFrom.secretKeyRef`, `envFrom[].secretRef`, Secret and
    /// projected volumes, a CSI volume's `nodePublishSecretRef`, the build's
    /// `pushSecret`), placement, volume sources, and any ask for an API token.
    ///
    /// # Errors
    ///
    /// [`PolicyRefusal`] naming the field and the rule; it lists what the rule allows
    /// in the job's namespace only, so a refusal tells nothing of other namespaces.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::pod::{PlacementField, PodPolicy};
    ///
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {
    ///         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "main"}, "path": "t.ipynb"},
    ///         "podConfig": {"containerImage": "quay.io/ml/nb:1",
    ///                       "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}
    ///     }
    /// }))?;
    /// let policy = PodPolicy { denied_placement: [PlacementField::Tolerations].into(), ..PodPolicy::default() };
    /// assert_eq!(policy.check(&job).unwrap_err().field, "spec.podConfig.tolerations");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check(&self, job: &NotebookValidationJob) -> Result<(), PolicyRefusal> {
        let check = Checker {
            policy: self,
            namespace: job.metadata.namespace.as_deref().unwrap_or_default(),
        };
        let spec = &job.spec;
        let config = &spec.pod_config;
        check.secret(
            "spec.notebook.git.credentialsSecret",
            spec.notebook.git.credentials_secret.as_deref(),
        )?;
        // An empty image runs nothing: a build's image replaces it, or the Pod builder
        // refuses it by name (PodSpecError::EmptyImage).
        if !config.container_image.trim().is_empty() {
            check.image("spec.podConfig.containerImage", &config.container_image)?;
        }
        if let Some(build) = config
            .build_config
            .as_ref()
            .filter(|b| b.enabled == Some(true))
        {
            let (base, what) = match build.base_image.as_deref() {
                Some(base) => (base, "image"),
                None => (DEFAULT_BASE_IMAGE, "nbv's default base image"),
            };
            check.image_as("spec.podConfig.buildConfig.baseImage", base, what)?;
            let setting = |key: &str| {
                build
                    .strategy_config
                    .as_ref()
                    .and_then(|s| s.get(key))
                    .map(String::as_str)
            };
            let field = |key: &str| format!("spec.podConfig.buildConfig.strategyConfig.{key}");
            if let Some(output) = setting("outputImage") {
                check.image(&field("outputImage"), output)?;
            }
            check.secret(&field("pushSecret"), setting("pushSecret"))?;
            check.service_account(&field("serviceAccount"), setting("serviceAccount"))?;
        }
        for (index, name) in config.credentials.iter().flatten().enumerate() {
            check.secret(&format!("spec.podConfig.credentials[{index}]"), Some(name))?;
        }
        for (index, var) in config.env.iter().flatten().enumerate() {
            let secret = var
                .value_from
                .as_ref()
                .and_then(|v| v.secret_key_ref.as_ref());
            if let Some(selector) = secret {
                let field = format!("spec.podConfig.env[{index}].valueFrom.secretKeyRef.name");
                check.secret(&field, Some(&selector.name))?;
            }
        }
        for (index, source) in config.env_from.iter().flatten().enumerate() {
            if let Some(secret) = &source.secret_ref {
                let field = format!("spec.podConfig.envFrom[{index}].secretRef.name");
                check.secret(&field, Some(&secret.name))?;
            }
        }
        check.service_account(
            "spec.podConfig.serviceAccountName",
            config.service_account_name.as_deref(),
        )?;
        let set = |field: PlacementField| match field {
            PlacementField::NodeSelector => {
                config.node_selector.as_ref().is_some_and(|m| !m.is_empty())
            }
            PlacementField::Tolerations => {
                config.tolerations.as_ref().is_some_and(|t| !t.is_empty())
            }
            PlacementField::Affinity => config
                .affinity
                .as_ref()
                .is_some_and(|a| *a != Affinity::default()),
        };
        for field in PlacementField::ALL {
            if set(field) {
                check.placement(field)?;
            }
        }
        for (index, volume) in config.volumes.iter().flatten().enumerate() {
            check.volume(index, volume)?;
        }
        if let Some(golden) = &spec.golden_notebook {
            check.secret(
                "spec.goldenNotebook.git.credentialsSecret",
                golden.git.credentials_secret.as_deref(),
            )?;
        }
        let asks_token = job
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(SERVICE_ACCOUNT_TOKEN_ANNOTATION))
            .is_some_and(|value| value == "true");
        if asks_token {
            check.api_token(
                &format!("metadata.annotations[{SERVICE_ACCOUNT_TOKEN_ANNOTATION}]"),
                "the annotation asks for the service account's API token",
            )?;
        }
        Ok(())
    }
}

/// The source fields of `volume` (every field of a `Volume` but `name` is a source;
/// reading the serialized form also finds sources added by later Kubernetes
/// versions).
pub(in crate::pod) fn volume_sources(volume: &Volume) -> Vec<String> {
    match serde_json::to_value(volume) {
        Ok(serde_json::Value::Object(fields)) => {
            fields.keys().filter(|k| *k != "name").cloned().collect()
        }
        _ => Vec::new(),
    }
}

/// The policy, applied to a job of `namespace`.
struct Checker<'a> {
    policy: &'a PodPolicy,
    namespace: &'a str,
}

impl Checker<'_> {
    fn refuse(field: &str, rule: PolicyRule, problem: String) -> Result<(), PolicyRefusal> {
        Err(PolicyRefusal {
            field: field.to_owned(),
            rule,
            problem,
        })
    }

    fn image(&self, field: &str, image: &str) -> Result<(), PolicyRefusal> {
        self.image_as(field, image, "image")
    }

    /// [`Self::image`], the image called `what` in a refusal.
    fn image_as(&self, field: &str, image: &str, what: &str) -> Result<(), PolicyRefusal> {
        let Some(patterns) = &self.policy.images else {
            return Ok(());
        };
        if patterns.iter().any(|p| p.allows(image)) {
            return Ok(());
        }
        let allowed = list(patterns.iter().map(|p| format!("{p}/")));
        Self::refuse(
            field,
            PolicyRule::Images,
            format!(
                "{what} {image:?} is not one this cluster lets jobs run (nbv run \
                 --allowed-images: {allowed}); use an image under one of these, or ask the \
                 cluster admin to allow it"
            ),
        )
    }

    fn service_account(&self, field: &str, name: Option<&str>) -> Result<(), PolicyRefusal> {
        let (Some(rules), Some(name)) = (&self.policy.service_accounts, name) else {
            return Ok(());
        };
        if name == DEFAULT_SERVICE_ACCOUNT || rules.iter().any(|r| r.allows(self.namespace, name)) {
            return Ok(());
        }
        let mut names = names_in(rules, self.namespace);
        names.insert(0, DEFAULT_SERVICE_ACCOUNT.to_owned());
        let allowed = list(names.into_iter());
        Self::refuse(
            field,
            PolicyRule::ServiceAccounts,
            format!(
                "service account {name:?} is not one this cluster lets jobs use in namespace \
                 {:?} (nbv run --allowed-service-accounts: {allowed}); name one of these, or \
                 remove the field to run as {DEFAULT_SERVICE_ACCOUNT:?}",
                self.namespace
            ),
        )
    }

    fn secret(&self, field: &str, name: Option<&str>) -> Result<(), PolicyRefusal> {
        let (Some(rules), Some(name)) = (&self.policy.secrets, name) else {
            return Ok(());
        };
        if rules.iter().any(|r| r.allows(self.namespace, name)) {
            return Ok(());
        }
        let problem = if rules.is_empty() {
            format!(
                "this cluster lets jobs reference no Secret by name (nbv run --deny-secrets), \
                 and this names Secret {name:?}; remove the reference"
            )
        } else {
            format!(
                "Secret {name:?} is not one this cluster lets jobs reference in namespace {:?} \
                 (nbv run --allowed-secrets: {}); reference one of these, or ask the cluster \
                 admin to allow it",
                self.namespace,
                list(names_in(rules, self.namespace).into_iter())
            )
        };
        Self::refuse(field, PolicyRule::Secrets, problem)
    }

    fn placement(&self, field: PlacementField) -> Result<(), PolicyRefusal> {
        if !self.policy.denied_placement.contains(&field) {
            return Ok(());
        }
        Self::refuse(
            &format!("spec.podConfig.{field}"),
            PolicyRule::Placement,
            format!(
                "this cluster does not let jobs set {field} (nbv run --deny-job-placement \
                 {field}); remove it: the placement the cluster admin sets (nbv run \
                 --pod-defaults) applies to every validation Pod"
            ),
        )
    }

    fn volume(&self, index: usize, volume: &Volume) -> Result<(), PolicyRefusal> {
        let at = format!("spec.podConfig.volumes[{index}]");
        let name = &volume.name;
        if let Some(allowed) = &self.policy.volume_sources {
            for source in volume_sources(volume) {
                if !allowed.contains(&source) {
                    let list = list(allowed.iter().cloned());
                    return Self::refuse(
                        &format!("{at}.{source}"),
                        PolicyRule::VolumeSources,
                        format!(
                            "volume {name:?} uses {source}, which this cluster does not let \
                             jobs use (nbv run --allowed-volume-sources: {list}); use one of \
                             these"
                        ),
                    );
                }
            }
        }
        if let Some(secret) = &volume.secret {
            self.secret(
                &format!("{at}.secret.secretName"),
                secret.secret_name.as_deref(),
            )?;
        }
        if let Some(reference) = volume
            .csi
            .as_ref()
            .and_then(|c| c.node_publish_secret_ref.as_ref())
        {
            let field = format!("{at}.csi.nodePublishSecretRef.name");
            self.secret(&field, Some(&reference.name))?;
        }
        let projections = volume.projected.as_ref().and_then(|p| p.sources.as_ref());
        for (source, projection) in projections.into_iter().flatten().enumerate() {
            let at = format!("{at}.projected.sources[{source}]");
            if let Some(secret) = &projection.secret {
                self.secret(&format!("{at}.secret.name"), Some(&secret.name))?;
            }
            if projection.service_account_token.is_some() {
                self.api_token(
                    &format!("{at}.serviceAccountToken"),
                    &format!("volume {name:?} projects a service account token"),
                )?;
            }
        }
        Ok(())
    }

    fn api_token(&self, field: &str, what: &str) -> Result<(), PolicyRefusal> {
        if !self.policy.deny_api_token {
            return Ok(());
        }
        Self::refuse(
            field,
            PolicyRule::ApiToken,
            format!(
                "{what}, and this cluster does not let jobs ask for an API token (nbv run \
                 --deny-api-token); remove it: the validation Pod runs without a token"
            ),
        )
    }
}

/// `items` for a message: comma-separated, or `none`.
fn list(items: impl Iterator<Item = String>) -> String {
    let items: BTreeSet<String> = items.collect();
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.into_iter().collect::<Vec<_>>().join(", ")
    }
}
