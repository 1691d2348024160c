//! Configuration of `nbv run`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
use nbv_core::duration::parse_duration;
use nbv_core::pod::{DEFAULT_POD_ADMISSION_TIMEOUT, PodDefaults};
use nbv_core::reconcile::RequeuePolicy;
use nbv_core::triggers::{DEFAULT_ARGOCD_NAMESPACE, TriggerAccess};

use crate::telemetry::LogFormat;

/// Flags of `nbv run`.
#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// Do not run notebooks: only react to phases written by another controller (for
    /// example the upstream operator) and carry out the Argo CD integration.
    #[arg(long, env = "NBV_GITOPS_ONLY")]
    pub gitops_only: bool,
    /// Watch jobs in this namespace only (default: all namespaces).
    #[arg(long, env = "NBV_WATCH_NAMESPACE")]
    pub watch_namespace: Option<String>,
    /// Namespaces where triggers may act besides their job's own (comma-separated;
    /// `*` for any). A namespace can also opt in with the annotation
    /// `mlops.dev/accept-triggers-from`.
    #[arg(long, env = "NBV_TRIGGER_NAMESPACES", value_delimiter = ',')]
    pub trigger_namespaces: Vec<String>,
    /// Namespaces where parent Argo CD Applications are looked up, in order; the job's
    /// own namespace is tried after them (default: Argo CD's namespace).
    #[arg(long, env = "NBV_APPLICATION_NAMESPACES", value_delimiter = ',')]
    pub application_namespaces: Vec<String>,
    /// Argo CD's control-plane namespace: where its `argocd-cm` and AppProjects are, and
    /// where a trigger's Application named without a namespace is (default: the first of
    /// `argocd` and `openshift-gitops` that holds `argocd-cm`, else `argocd`).
    #[arg(long, env = "NBV_ARGOCD_NAMESPACE")]
    pub argocd_namespace: Option<String>,
    /// Argo CD's resource tracking method (`annotation`, `annotation+label` or
    /// `label`); by default read from `argocd-cm` (`application.resourceTrackingMethod`).
    #[arg(long, env = "NBV_TRACKING_METHOD", value_parser = parse_tracking_method)]
    pub tracking_method: Option<TrackingMethod>,
    /// Argo CD's instance label key; by default read from `argocd-cm`
    /// (`application.instanceLabelKey`, else `app.kubernetes.io/instance`).
    #[arg(long, env = "NBV_INSTANCE_LABEL_KEY")]
    pub instance_label_key: Option<String>,
    /// Argo CD's installation id; by default read from `argocd-cm` (`installationID`).
    #[arg(long, env = "NBV_INSTALLATION_ID")]
    pub installation_id: Option<String>,
    /// Do not use the `app.kubernetes.io/part-of` label (nbv's own convention, not Argo
    /// CD tracking) to find a job's parent Application.
    #[arg(long, env = "NBV_NO_PART_OF")]
    pub no_part_of: bool,
    /// Retries of a failed notebook run (backoff 1m, 2m, 4m, …).
    #[arg(long, env = "NBV_MAX_RETRIES", default_value_t = 3, value_parser = parse_max_retries)]
    pub max_retries: u32,
    /// How long a validation Pod that the API server refuses for a reason someone else
    /// can fix (a used-up ResourceQuota, nbv's missing RBAC, an unavailable webhook) is
    /// tried again before its run fails; a job's `mlops.dev/pod-admission-timeout`
    /// overrides it. A duration such as `10m` or `1h30m`.
    #[arg(long, env = "NBV_POD_ADMISSION_TIMEOUT", default_value = "10m", value_parser = parse_pod_admission_timeout)]
    pub pod_admission_timeout: Duration,
    /// Address of the /metrics, /healthz and /readyz endpoints.
    #[arg(long, env = "NBV_METRICS_ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,
    /// Run without leader election (only with a single replica).
    #[arg(long, env = "NBV_NO_LEADER_ELECTION")]
    pub no_leader_election: bool,
    /// Namespace of the leader-election Lease (default: the operator's namespace).
    #[arg(long, env = "NBV_LEASE_NAMESPACE")]
    pub lease_namespace: Option<String>,
    /// Label `notebook_validation_duration_seconds` with the job's `namespace` and
    /// `job_name`, as ADR-049 sketches it: one histogram (17 series) per job and final
    /// phase, removed when the job is deleted. Off by default: the duration is labelled
    /// by `phase` only (docs/operations.md, "Cardinality").
    #[arg(long, env = "NBV_METRICS_JOB_NAME_LABEL")]
    pub metrics_job_name_label: bool,
    /// Log format: `json` or `text`.
    #[arg(long, env = "NBV_LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
    /// YAML or JSON file with the settings of every validation Pod: clone image and
    /// user, requests and limits, image pull secrets, labels, annotations, placement
    /// (docs/configuration.md); checked at start. Without it, nbv's defaults.
    #[arg(long, env = "NBV_POD_DEFAULTS", value_name = "FILE")]
    pub pod_defaults: Option<PathBuf>,
    /// Image of the validation Pods' clone containers (a mirror's copy of the default,
    /// for example); wins over the file's `clone.image`.
    #[arg(long, env = "NBV_CLONE_IMAGE", value_name = "IMAGE")]
    pub clone_image: Option<String>,
}

/// What the controller needs to know, resolved from [`RunArgs`].
#[derive(Clone, Debug, PartialEq)]
pub struct OperatorConfig {
    /// See [`RunArgs::gitops_only`].
    pub gitops_only: bool,
    /// See [`RunArgs::watch_namespace`].
    pub watch_namespace: Option<String>,
    /// Where triggers may act.
    pub trigger_access: TriggerAccess,
    /// See [`RunArgs::application_namespaces`]; empty until Argo CD's namespace is
    /// known when the flag was not given ([`OperatorConfig::with_argocd_namespace`]).
    pub application_namespaces: Vec<String>,
    /// See [`RunArgs::argocd_namespace`]; `argocd` until discovered when
    /// [`OperatorConfig::discover_argocd_namespace`].
    pub argocd_namespace: String,
    /// Whether Argo CD's namespace is still to be found at start (no
    /// `--argocd-namespace`): [`crate::argocd::namespace::discover`].
    pub discover_argocd_namespace: bool,
    /// How jobs are tracked to their Application: flags given, and whether `argocd-cm`
    /// is still to be read for the rest.
    pub tracking: TrackingConfig,
    /// See [`RunArgs::max_retries`].
    pub max_retries: u32,
    /// When jobs are looked at again: after a deferred trigger, a failed reconcile,
    /// and to catch what watches missed.
    pub requeue: RequeuePolicy,
    /// See [`RunArgs::pod_admission_timeout`].
    pub pod_admission_timeout: Duration,
    /// The settings of every validation Pod ([`crate::pod_settings::load`]); the
    /// platform is detected when the controller starts.
    pub pod_defaults: PodDefaults,
}

/// The tracking settings given by flags; what they leave open comes from `argocd-cm`.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::TrackingMethod;
/// use nbv_operator::config::TrackingConfig;
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
    /// use nbv_operator::config::TrackingConfig;
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

/// `--max-retries`: `status.retryCount` is an int32, so a run retries at most
/// `i32::MAX` times. Out of range is an error at start-up, not another limit.
fn parse_max_retries(value: &str) -> Result<u32, String> {
    let range = format!("use 0 to {}", i32::MAX);
    let retries: u64 = value
        .trim()
        .parse()
        .map_err(|_| format!("{value:?} is not a whole number of retries; {range}"))?;
    u32::try_from(retries)
        .ok()
        .filter(|&n| i32::try_from(n).is_ok())
        .ok_or_else(|| format!("{retries} retries do not fit status.retryCount (int32); {range}"))
}

/// `--pod-admission-timeout`: a duration as in `spec.timeout` (the one parser nbv has).
fn parse_pod_admission_timeout(value: &str) -> Result<Duration, String> {
    parse_duration(value.trim()).map_err(|e| e.to_string())
}

fn parse_tracking_method(value: &str) -> Result<TrackingMethod, String> {
    value
        .parse()
        .map_err(|e: nbv_core::aggregate::InvalidTrackingMethod| e.to_string())
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
        }
    }
}

impl RunArgs {
    /// What the metrics expose, from these flags.
    pub fn metrics_options(&self) -> crate::metrics::MetricsOptions {
        crate::metrics::MetricsOptions {
            job_name_label: self.metrics_job_name_label,
        }
    }

    /// The controller configuration these flags describe. Without
    /// `--argocd-namespace`, Argo CD's namespace (and the Application namespaces, unless
    /// given) are found at start.
    pub fn operator_config(&self) -> OperatorConfig {
        let allowed: BTreeSet<String> = self
            .trigger_namespaces
            .iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        let argocd_namespace = self
            .argocd_namespace
            .as_deref()
            .map(str::trim)
            .filter(|ns| !ns.is_empty());
        let config = OperatorConfig {
            gitops_only: self.gitops_only,
            watch_namespace: self.watch_namespace.clone(),
            trigger_access: TriggerAccess {
                allowed_namespaces: allowed,
            },
            application_namespaces: self
                .application_namespaces
                .iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            discover_argocd_namespace: argocd_namespace.is_none(),
            tracking: TrackingConfig {
                method: self.tracking_method,
                instance_label_key: self.instance_label_key.clone(),
                installation_id: self.installation_id.clone(),
                part_of: !self.no_part_of,
            },
            max_retries: self.max_retries,
            pod_admission_timeout: self.pod_admission_timeout,
            ..OperatorConfig::default()
        };
        match argocd_namespace {
            Some(namespace) => config.with_argocd_namespace(namespace),
            None => config,
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
    /// use nbv_operator::config::OperatorConfig;
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};

    fn max_retries(value: &str) -> Result<u32, String> {
        let cli = Cli::try_parse_from(["nbv", "run", "--max-retries", value])
            .map_err(|e| e.to_string())?;
        let Command::Run(run) = cli.command else {
            panic!("`nbv run` parses as the run command");
        };
        Ok(run.max_retries)
    }

    fn run_args(args: &[&str]) -> crate::config::RunArgs {
        let cli = Cli::try_parse_from(["nbv", "run"].iter().chain(args))
            .unwrap_or_else(|e| panic!("{e}"));
        let Command::Run(run) = cli.command else {
            panic!("`nbv run` parses as the run command");
        };
        run
    }

    #[test]
    fn without_the_flag_argocds_namespace_is_found_at_start() {
        let config = run_args(&[]).operator_config();
        assert!(config.discover_argocd_namespace);
        assert!(config.application_namespaces.is_empty());
        let found = config.with_argocd_namespace("openshift-gitops");
        assert_eq!(found.application_namespaces, ["openshift-gitops"]);
        assert_eq!(found.argocd_namespace, "openshift-gitops");
    }

    #[test]
    fn the_flag_wins_and_the_application_namespaces_follow_it() {
        let config = run_args(&["--argocd-namespace", " gitops "]).operator_config();
        assert!(!config.discover_argocd_namespace);
        assert_eq!(config.argocd_namespace, "gitops");
        assert_eq!(config.application_namespaces, ["gitops"]);
        let config = run_args(&[
            "--argocd-namespace",
            "gitops",
            "--application-namespaces",
            "apps,team-a",
        ])
        .operator_config();
        assert_eq!(config.application_namespaces, ["apps", "team-a"]);
        let empty = run_args(&["--argocd-namespace", " "]).operator_config();
        assert!(empty.discover_argocd_namespace, "an empty flag is no flag");
    }

    #[test]
    fn max_retries_accepts_what_status_retry_count_holds() {
        assert_eq!(max_retries("0"), Ok(0));
        assert_eq!(max_retries("5"), Ok(5));
        assert_eq!(max_retries("2147483647"), Ok(2_147_483_647));
    }

    #[test]
    fn the_pod_admission_timeout_is_a_duration_defaulting_to_ten_minutes() {
        let run = |args: &[&str]| {
            let cli =
                Cli::try_parse_from([&["nbv", "run"], args].concat()).map_err(|e| e.to_string())?;
            let Command::Run(run) = cli.command else {
                panic!("`nbv run` parses as the run command");
            };
            Ok::<_, String>(run.pod_admission_timeout)
        };
        assert_eq!(run(&[]), Ok(std::time::Duration::from_secs(600)));
        assert_eq!(
            run(&["--pod-admission-timeout", "1h30m"]),
            Ok(std::time::Duration::from_secs(5400))
        );
        let error = run(&["--pod-admission-timeout", "10 minutes"]).unwrap_err();
        assert!(error.contains("invalid duration"), "{error}");
    }

    #[test]
    fn max_retries_out_of_range_is_an_error_that_names_the_range() {
        for value in [
            "2147483648",
            "4294967295",
            "4294967296",
            "99999999999999999999",
        ] {
            let error = max_retries(value).expect_err(value);
            assert!(error.contains("use 0 to 2147483647"), "{value}: {error}");
        }
        let error = max_retries("three").unwrap_err();
        assert!(
            error.contains("\"three\" is not a whole number of retries"),
            "{error}"
        );
    }
}
