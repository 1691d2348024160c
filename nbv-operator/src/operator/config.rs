//! What the controller runs with, resolved from `nbv run`'s flags
//! ([`crate::cli::config::RunArgs`]).

use std::time::Duration;

use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
use nbv_core::pod::{DEFAULT_POD_ADMISSION_TIMEOUT, PodDefaults};
use nbv_core::reconcile::RequeuePolicy;
use nbv_core::triggers::{DEFAULT_ARGOCD_NAMESPACE, TriggerAccess};

/// What the controller needs to know, resolved from [`RunArgs`](crate::cli::config::RunArgs).
#[derive(Clone, Debug, PartialEq)]
pub struct OperatorConfig {
    /// See [`RunArgs::gitops_only`](crate::cli::config::RunArgs::gitops_only).
    pub gitops_only: bool,
    /// See [`RunArgs::watch_namespace`](crate::cli::config::RunArgs::watch_namespace).
    pub watch_namespace: Option<String>,
    /// Where triggers may act.
    pub trigger_access: TriggerAccess,
    /// See [`RunArgs::application_namespaces`](crate::cli::config::RunArgs::application_namespaces); empty until Argo CD's namespace is
    /// known when the flag was not given ([`OperatorConfig::with_argocd_namespace`]).
    pub application_namespaces: Vec<String>,
    /// See [`RunArgs::argocd_namespace`](crate::cli::config::RunArgs::argocd_namespace); `argocd` until discovered when
    /// [`OperatorConfig::discover_argocd_namespace`].
    pub argocd_namespace: String,
    /// Whether Argo CD's namespace is still to be found at start (no
    /// `--argocd-namespace`): [`crate::operator::argocd::namespace::discover`].
    pub discover_argocd_namespace: bool,
    /// How jobs are tracked to their Application: flags given, and whether `argocd-cm`
    /// is still to be read for the rest.
    pub tracking: TrackingConfig,
    /// See [`RunArgs::max_retries`](crate::cli::config::RunArgs::max_retries).
    pub max_retries: u32,
    /// When jobs are looked at again: after a deferred trigger, a failed reconcile,
    /// and to catch what watches missed.
    pub requeue: RequeuePolicy,
    /// See [`RunArgs::pod_admission_timeout`](crate::cli::config::RunArgs::pod_admission_timeout).
    pub pod_admission_timeout: Duration,
    /// The settings of every validation Pod ([`crate::operator::pod_settings::load`]); the
    /// platform is detected when the controller starts.
    pub pod_defaults: PodDefaults,
    /// How images are built: the `--build-*` flags.
    pub build: nbv_core::build::BuildDefaults,
}

/// The tracking settings given by flags; what they leave open comes from `argocd-cm`.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::TrackingMethod;
/// use nbv_operator::operator::config::TrackingConfig;
///
/// let flags = TrackingConfig { method: Some(TrackingMethod::Label), ..TrackingConfig::default() };
/// assert!(flags.needs_argocd_cm());
/// let cm = BTreeMap::from([("application.instanceLabelKey".to_string(), "team".to_string())]);
/// let (settings, _) = flags.resolve(Some(&cm));
/// assert_eq!((settings.method, settings.instance_label_key.as_str()), (TrackingMethod::Label, "team"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackingConfig {
    /// `--tracking-method`.
    pub method: Option<TrackingMethod>,
    /// `--instance-label-key`.
    pub instance_label_key: Option<String>,
    /// `--installation-id`.
    pub installation_id: Option<String>,
    /// Not `--no-part-of`.
    pub part_of: bool,
}

impl Default for TrackingConfig {
    fn default() -> Self {
        TrackingConfig {
            method: None,
            instance_label_key: None,
            installation_id: None,
            part_of: true,
        }
    }
}

impl TrackingConfig {
    /// Whether a flag is missing, so that `argocd-cm` must be read.
    pub fn needs_argocd_cm(&self) -> bool {
        self.method.is_none() || self.instance_label_key.is_none() || self.installation_id.is_none()
    }

    /// The settings: the flags, then `argocd-cm`'s data (when read), then Argo CD's
    /// defaults; with the problems found in `argocd-cm`.
    pub fn resolve(
        &self,
        argocd_cm: Option<&std::collections::BTreeMap<String, String>>,
    ) -> (TrackingSettings, Vec<String>) {
        let (settings, problems) = match argocd_cm {
            Some(data) => TrackingSettings::from_argocd_cm(data),
            None => (TrackingSettings::default(), Vec::new()),
        };
        (self.apply(settings), problems)
    }

    /// `settings` (read from Argo CD) with the flags given put over them: a flag always
    /// wins.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
    /// use nbv_operator::operator::config::TrackingConfig;
    ///
    /// let read = TrackingSettings { method: TrackingMethod::Label, ..TrackingSettings::default() };
    /// let flags = TrackingConfig { installation_id: Some("a".into()), part_of: false, ..TrackingConfig::default() };
    /// let settings = flags.apply(read);
    /// assert_eq!((settings.method, settings.installation_id.as_str(), settings.part_of), (TrackingMethod::Label, "a", false));
    /// ```
    pub fn apply(&self, mut settings: TrackingSettings) -> TrackingSettings {
        if let Some(method) = self.method {
            settings.method = method;
        }
        if let Some(key) = &self.instance_label_key {
            settings.instance_label_key = key.clone();
        }
        if let Some(id) = &self.installation_id {
            settings.installation_id = id.clone();
        }
        settings.part_of = self.part_of;
        settings
    }
}

impl Default for OperatorConfig {
    fn default() -> Self {
        OperatorConfig {
            gitops_only: false,
            watch_namespace: None,
            trigger_access: TriggerAccess::default(),
            application_namespaces: vec![DEFAULT_ARGOCD_NAMESPACE.to_owned()],
            argocd_namespace: DEFAULT_ARGOCD_NAMESPACE.to_owned(),
            discover_argocd_namespace: false,
            tracking: TrackingConfig::default(),
            max_retries: 3,
            requeue: RequeuePolicy::default(),
            pod_admission_timeout: DEFAULT_POD_ADMISSION_TIMEOUT,
            pod_defaults: PodDefaults::default(),
            build: nbv_core::build::BuildDefaults::default(),
        }
    }
}

impl OperatorConfig {
    /// This configuration with Argo CD's namespace known: `namespace`, which the
    /// Application namespaces follow unless `--application-namespaces` gave them.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_operator::operator::config::OperatorConfig;
    ///
    /// let config = OperatorConfig { application_namespaces: vec![], ..OperatorConfig::default() };
    /// let config = config.with_argocd_namespace("openshift-gitops");
    /// assert_eq!(config.argocd_namespace, "openshift-gitops");
    /// assert_eq!(config.application_namespaces, ["openshift-gitops"]);
    /// assert!(!config.discover_argocd_namespace);
    /// ```
    #[must_use]
    pub fn with_argocd_namespace(mut self, namespace: &str) -> Self {
        self.argocd_namespace = namespace.to_owned();
        if self.application_namespaces.is_empty() {
            self.application_namespaces = vec![namespace.to_owned()];
        }
        self.discover_argocd_namespace = false;
        self
    }
}
