//! The Lua health checks nbv ships for Argo CD, and the `argocd-cm` and `ArgoCD`
//! (OpenShift GitOps) patches that install them, with the resource actions of
//! [`super::actions`].

use super::actions::{ACTIONS_KEY, render_actions};
use super::literal::{literal_block_header, push_literal_block};

/// The `argocd-cm` key under which Argo CD looks up the health check of
/// `NotebookValidationJob` (`resource.customizations.health.<group>_<kind>`).
///
/// # Examples
///
/// ```
/// use nbv_core::{api, health::HEALTH_KEY};
///
/// assert_eq!(HEALTH_KEY, format!("resource.customizations.health.{}_{}", api::GROUP, api::KIND));
/// ```
pub const HEALTH_KEY: &str = "resource.customizations.health.mlops.mlops.dev_NotebookValidationJob";

/// The health check of the Argo CD integration guide ("Step 1"), byte for byte, comments
/// included: phase to status, plus the completion time, the failure message with the
/// retry count, or the validation Pod's name.
///
/// It judges a job by its status alone, so after a spec edit it shows the previous
/// run's outcome until the new run starts: [`BASIC_SCRIPT`] adds the generation check
/// that prevents it. Shipped as [`Variant::Guide`] for those who want the guide's
/// script exactly.
///
/// # Examples
///
/// ```
/// use nbv_core::health::GUIDE_SCRIPT;
///
/// assert!(GUIDE_SCRIPT.starts_with("hs = {}\n\n-- Handle missing status\n"));
/// assert!(GUIDE_SCRIPT.contains(r#"hs.message = hs.message .. " (retry " .. obj.status.retryCount .. "/3)""#));
/// assert!(GUIDE_SCRIPT.ends_with("return hs\n"));
/// ```
pub const GUIDE_SCRIPT: &str = concat!("hs = {}\n\n", include_str!("guide_mapping.lua"));

/// The statement [`BASIC_SCRIPT`] and [`ADVANCED_SCRIPT`] start with (after `hs = {}`):
/// while both `metadata.generation` and `status.observedGeneration` are numbers and
/// the status is of an older generation, the job is `Progressing`, `Waiting for the
/// new spec to run (generation <g>, status of generation <o>)`.
///
/// This is Argo CD's own advice for the health of custom resources: after a spec edit
/// the status still describes the previous run until nbv starts the new one, and
/// without the check Argo CD would move the next sync wave on a stale `Succeeded`
/// (Healthy) or fail the sync on a stale `Failed` (Degraded).
///
/// # Examples
///
/// ```
/// use nbv_core::health::{BASIC_SCRIPT, GENERATION_CHECK, GUIDE_SCRIPT};
///
/// assert_eq!(BASIC_SCRIPT, GUIDE_SCRIPT.replacen("hs = {}\n\n", &format!("hs = {{}}\n\n{GENERATION_CHECK}"), 1));
/// ```
pub const GENERATION_CHECK: &str = include_str!("generation.lua");

/// nbv's health check: [`GENERATION_CHECK`], then the guide's mapping
/// ([`GUIDE_SCRIPT`]) unchanged.
///
/// [`assess`](super::assess) computes the same result natively.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{BASIC_SCRIPT, GENERATION_CHECK};
///
/// assert!(BASIC_SCRIPT.starts_with("hs = {}\n\n-- A status of an older spec"));
/// assert!(BASIC_SCRIPT.contains(GENERATION_CHECK));
/// assert!(BASIC_SCRIPT.ends_with("return hs\n"));
/// ```
pub const BASIC_SCRIPT: &str = concat!(
    "hs = {}\n\n",
    include_str!("generation.lua"),
    include_str!("guide_mapping.lua")
);

/// The guide's "Advanced Health Check (With Cell-Level Details)", corrected so that it
/// reads the results the CRD actually writes.
///
/// The guide's version compares a cell's `status` with `"error"` and `"success"` and
/// reads `errorType`, but the CRD's cell status is `Success`, `Failure` or `Skipped` and
/// the error is in `errorMessage`. Against real jobs, the guide's version therefore never
/// names the failed cell and always reports `0 cells completed`. This variant starts
/// with [`GENERATION_CHECK`] and otherwise differs from the guide's in exactly three
/// places, all backward compatible:
///
/// - a failed cell is one whose status is `"Failure"` **or** `"error"`;
/// - its error is `errorMessage`, else `errorType`, else `"Error"`;
/// - a completed cell is one whose status is `"Success"` **or** `"success"`;
///
/// plus a five-line comment at the top saying so. Every message keeps the guide's
/// format (`Failed at cell 4: …`, `Executing notebook (2 cells completed)`, …), and the
/// legacy `Running` phase still reads `Phase: Running`, as in the guide.
///
/// [`assess_advanced`](super::assess_advanced) computes the same result natively.
///
/// # Examples
///
/// ```
/// use nbv_core::health::ADVANCED_SCRIPT;
///
/// assert!(ADVANCED_SCRIPT.contains(r#"if result.status == "Failure" or result.status == "error" then"#));
/// assert!(ADVANCED_SCRIPT.contains(r#"(result.errorMessage or result.errorType or "Error")"#));
/// ```
pub const ADVANCED_SCRIPT: &str = concat!(
    include_str!("advanced_header.lua"),
    "hs = {}\n\n",
    include_str!("generation.lua"),
    include_str!("advanced_mapping.lua")
);

/// Which of the shipped health checks.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{ADVANCED_SCRIPT, Variant};
///
/// assert_eq!(Variant::Advanced.source(), ADVANCED_SCRIPT);
/// assert_eq!(Variant::Advanced.health_script().name(), "advanced");
/// assert!(Variant::Basic.checks_generation() && !Variant::Guide.checks_generation());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// [`BASIC_SCRIPT`]: the guide's mapping, after the generation check. The default.
    Basic,
    /// [`ADVANCED_SCRIPT`]: cell-level details, after the generation check.
    Advanced,
    /// [`GUIDE_SCRIPT`]: the integration guide's script exactly, without the
    /// generation check.
    Guide,
}

impl Variant {
    /// Every variant.
    pub const ALL: [Variant; 3] = [Variant::Basic, Variant::Advanced, Variant::Guide];

    /// Short name, also used as the script's name in error messages.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Basic => "basic",
            Variant::Advanced => "advanced",
            Variant::Guide => "guide",
        }
    }

    /// The Lua source.
    pub const fn source(self) -> &'static str {
        match self {
            Variant::Basic => BASIC_SCRIPT,
            Variant::Advanced => ADVANCED_SCRIPT,
            Variant::Guide => GUIDE_SCRIPT,
        }
    }

    /// Whether the check starts with [`GENERATION_CHECK`].
    pub const fn checks_generation(self) -> bool {
        !matches!(self, Variant::Guide)
    }

    /// The source with its name.
    pub const fn health_script(self) -> HealthScript<'static> {
        HealthScript::new(self.name(), self.source())
    }

    const fn description(self) -> &'static str {
        match self {
            Variant::Basic => {
                "phase-level health (the integration guide's mapping, Progressing while the status is of an older generation)"
            }
            Variant::Advanced => {
                "cell-level health (failed cell, completed cells; Progressing while the status is of an older generation)"
            }
            Variant::Guide => {
                "phase-level health, the integration guide's script exactly (no generation check)"
            }
        }
    }
}

/// A Lua health script and the name it is reported under.
///
/// # Examples
///
/// ```
/// use nbv_core::health::HealthScript;
///
/// let script = HealthScript::new("always-healthy", r#"return {status = "Healthy"}"#);
/// assert_eq!(script.name(), "always-healthy");
/// assert!(script.source().starts_with("return"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HealthScript<'a> {
    name: &'a str,
    source: &'a str,
}

impl<'a> HealthScript<'a> {
    /// A script named `name` (a file name, a ConfigMap key, …) with its Lua `source`.
    pub const fn new(name: &'a str, source: &'a str) -> Self {
        HealthScript { name, source }
    }

    /// The name errors are reported under.
    pub const fn name(&self) -> &'a str {
        self.name
    }

    /// The Lua source.
    pub const fn source(&self) -> &'a str {
        self.source
    }
}

/// The `argocd-cm` patch that installs `variant`: the content of
/// `config/argocd/health-check-configmap.yaml` for [`Variant::Basic`].
///
/// It is a ConfigMap named `argocd-cm` in namespace `argocd` with the standard labels
/// (Argo CD only watches ConfigMaps labelled `app.kubernetes.io/part-of: argocd`) and one
/// data key, [`HEALTH_KEY`], holding the script as a YAML literal block, so that the
/// script survives byte for byte. Merging it leaves the other keys of `argocd-cm` alone.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{BASIC_SCRIPT, HEALTH_KEY, Variant, render_health_configmap};
///
/// let yaml = render_health_configmap(Variant::Basic);
/// let parsed: serde_json::Value = serde_yaml_ng::from_str(&yaml)?;
/// assert_eq!(parsed["metadata"]["name"], "argocd-cm");
/// assert_eq!(parsed["data"][HEALTH_KEY], BASIC_SCRIPT);
/// # Ok::<(), serde_yaml_ng::Error>(())
/// ```
pub fn render_health_configmap(variant: Variant) -> String {
    let mut out = format!(
        "# Argo CD health check for NotebookValidationJob (mlops.mlops.dev/v1alpha1):\n\
         # {description}.\n\
         # With it, the resource action \"rerun\" (Run again), {ACTIONS_KEY}.\n\
         # Merge it into argocd-cm; the other keys of argocd-cm are left alone:\n\
         #   kubectl -n argocd patch configmap argocd-cm --type merge --patch-file <this file>\n\
         apiVersion: v1\n\
         kind: ConfigMap\n\
         metadata:\n\
         \x20 name: argocd-cm\n\
         \x20 namespace: argocd\n\
         \x20 labels:\n\
         \x20   app.kubernetes.io/name: argocd-cm\n\
         \x20   app.kubernetes.io/part-of: argocd\n\
         data:\n\
         \x20 {HEALTH_KEY}: {header}\n",
        description = variant.description(),
        header = literal_block_header(variant.source()),
    );
    push_literal_block(&mut out, variant.source(), "    ");
    let actions = render_actions();
    out.push_str(&format!(
        "  {ACTIONS_KEY}: {}\n",
        literal_block_header(&actions)
    ));
    push_literal_block(&mut out, &actions, "    ");
    out
}

/// The `ArgoCD` resource patch that installs `variant` in an Argo CD managed by the Argo
/// CD operator (OpenShift GitOps): the content of
/// `config/openshift-gitops/argocd-health-check.yaml` for [`Variant::Basic`].
///
/// The operator owns `argocd-cm` and reverts edits to it; it writes each entry of
/// `spec.resourceHealthChecks` (`group`, `kind`, `check`) into `argocd-cm` as
/// `resource.customizations.health.<group>_<kind>`, which is [`HEALTH_KEY`]. The script
/// is the same source as [`render_health_configmap`]'s, byte for byte.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{BASIC_SCRIPT, Variant, render_argocd_health_check};
///
/// let yaml = render_argocd_health_check(Variant::Basic);
/// let parsed: serde_json::Value = serde_yaml_ng::from_str(&yaml)?;
/// assert_eq!(parsed["kind"], "ArgoCD");
/// let check = &parsed["spec"]["resourceHealthChecks"][0];
/// assert_eq!((check["group"].as_str(), check["kind"].as_str()), (Some("mlops.mlops.dev"), Some("NotebookValidationJob")));
/// assert_eq!(check["check"], BASIC_SCRIPT);
/// # Ok::<(), serde_yaml_ng::Error>(())
/// ```
pub fn render_argocd_health_check(variant: Variant) -> String {
    let mut out = format!(
        "# Argo CD health check for NotebookValidationJob (mlops.mlops.dev/v1alpha1), for an\n\
         # Argo CD managed by the Argo CD operator (OpenShift GitOps), which owns argocd-cm:\n\
         # {description}.\n\
         # A partial ArgoCD resource: kubectl apply merges it into the existing one, and the\n\
         # operator writes the entries into argocd-cm as the keys\n\
         # {HEALTH_KEY} and\n\
         # {ACTIONS_KEY} (the action \"rerun\").\n\
         # spec.resourceHealthChecks and spec.resourceActions are replaced as a whole: if\n\
         # your ArgoCD already has entries, add these to them instead\n\
         # (docs/openshift-gitops.md).\n\
         apiVersion: argoproj.io/v1beta1\n\
         kind: ArgoCD\n\
         metadata:\n\
         \x20 name: openshift-gitops\n\
         \x20 namespace: openshift-gitops\n\
         spec:\n\
         \x20 resourceHealthChecks:\n\
         \x20   - group: {group}\n\
         \x20     kind: {kind}\n\
         \x20     check: {header}\n",
        description = variant.description(),
        group = crate::api::GROUP,
        kind = crate::api::KIND,
        header = literal_block_header(variant.source()),
    );
    push_literal_block(&mut out, variant.source(), "        ");
    let actions = render_actions();
    out.push_str(&format!(
        "  resourceActions:\n    - group: {group}\n      kind: {kind}\n      action: {header}\n",
        group = crate::api::GROUP,
        kind = crate::api::KIND,
        header = literal_block_header(&actions),
    ));
    push_literal_block(&mut out, &actions, "        ");
    out
}
