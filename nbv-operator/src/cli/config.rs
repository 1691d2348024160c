//! The flags of `nbv run`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use nbv_core::aggregate::TrackingMethod;
use nbv_core::duration::parse_duration;
use nbv_core::pod::{
    ImagePattern, InvalidPodPolicy, ObjectRule, PlacementField, PodPolicy, parse_secret_rule,
    parse_service_account_rule, parse_volume_source,
};
use nbv_core::triggers::TriggerAccess;

use crate::operator::config::{OperatorConfig, TrackingConfig};
use crate::runtime::telemetry::LogFormat;

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
    /// Address of the /metrics, /healthz and /readyz endpoints (HTTPS, unless
    /// `--insecure-metrics`).
    #[arg(long, env = "NBV_METRICS_ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,
    /// Serve the endpoints over plain HTTP and /metrics to anyone. By default they are
    /// served over HTTPS, and /metrics only to a bearer token whose user may `get` the
    /// URL `/metrics` (TokenReview and SubjectAccessReview; the ClusterRole
    /// `nbv-metrics-reader` grants it).
    #[arg(long, env = "NBV_INSECURE_METRICS")]
    pub insecure_metrics: bool,
    /// Directory holding the endpoints' certificate and key as `tls.crt` and `tls.key`
    /// (a mounted `kubernetes.io/tls` Secret, or OpenShift's service CA's). Without it,
    /// a self-signed certificate made at start.
    #[arg(long, env = "NBV_METRICS_CERT_DIR", value_name = "DIR")]
    pub metrics_cert_dir: Option<PathBuf>,
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
    /// nbv's own image, which the validation Pods' `nbv-tools` and clone containers run
    /// (the operator's image, by digest, or a mirror's copy); wins over the file's
    /// `image`.
    #[arg(long, env = "NBV_IMAGE", value_name = "IMAGE")]
    pub nbv_image: Option<String>,
    /// Removed: the clone runs in nbv's own image (`--nbv-image`). Still read, to refuse
    /// it by name rather than ignore it.
    #[arg(long, env = "NBV_CLONE_IMAGE", value_name = "IMAGE", hide = true)]
    pub clone_image: Option<String>,
    /// The repository images built for jobs are pushed to, `{namespace}` standing for
    /// the job's namespace; a job's `strategyConfig.outputImage` takes its place
    /// (docs/builds.md). The default is OpenShift's internal registry.
    #[arg(
        long,
        env = "NBV_BUILD_REPOSITORY",
        value_name = "REPOSITORY",
        default_value = "image-registry.openshift-image-registry.svc:5000/{namespace}/nbv-notebooks"
    )]
    pub build_repository: String,
    /// The image of the buildah step of Tekton builds.
    #[arg(
        long,
        env = "NBV_BUILDAH_IMAGE",
        value_name = "IMAGE",
        default_value = "quay.io/buildah/stable:v1.38.1"
    )]
    pub buildah_image: String,
    /// The kaniko executor image of `kaniko` builds.
    #[arg(
        long,
        env = "NBV_KANIKO_IMAGE",
        value_name = "IMAGE",
        default_value = "gcr.io/kaniko-project/executor:v1.23.2"
    )]
    pub kaniko_image: String,
    /// How many finished builds of a namespace and strategy are kept.
    #[arg(long, env = "NBV_BUILD_HISTORY", default_value_t = 3)]
    pub build_history: usize,
    /// Images jobs may run and build from: registries or repository prefixes,
    /// comma-separated (`quay.io/ml-team,registry.example.com`); default: any
    /// (docs/rbac.md, "What creating a job grants").
    #[arg(
        long,
        env = "NBV_ALLOWED_IMAGES",
        value_delimiter = ',',
        value_name = "PATTERN"
    )]
    pub allowed_images: Vec<String>,
    /// Service accounts jobs may name besides `default` (`name` or `namespace/name`,
    /// comma-separated; `default` alone allows no other); default: any.
    #[arg(
        long,
        env = "NBV_ALLOWED_SERVICE_ACCOUNTS",
        value_delimiter = ',',
        value_name = "NAME"
    )]
    pub allowed_service_accounts: Vec<String>,
    /// Secrets jobs may reference by name (`name` or `namespace/name`,
    /// comma-separated); default: any Secret of the job's namespace.
    #[arg(
        long,
        env = "NBV_ALLOWED_SECRETS",
        value_delimiter = ',',
        value_name = "NAME"
    )]
    pub allowed_secrets: Vec<String>,
    /// Jobs may reference no Secret by name (not with `--allowed-secrets`).
    #[arg(long, env = "NBV_DENY_SECRETS")]
    pub deny_secrets: bool,
    /// Placement fields of `podConfig` jobs may not set: `nodeSelector`,
    /// `tolerations`, `affinity` (comma-separated); the Pod defaults' placement
    /// applies all the same.
    #[arg(
        long,
        env = "NBV_DENY_JOB_PLACEMENT",
        value_delimiter = ',',
        value_name = "FIELD"
    )]
    pub deny_job_placement: Vec<String>,
    /// Volume sources jobs may use, among those of the restricted Pod Security
    /// profile (comma-separated, e.g. `configMap,emptyDir,persistentVolumeClaim`);
    /// default: all of those. `hostPath` and the others are never allowed.
    #[arg(
        long,
        env = "NBV_ALLOWED_VOLUME_SOURCES",
        value_delimiter = ',',
        value_name = "SOURCE"
    )]
    pub allowed_volume_sources: Vec<String>,
    /// Jobs may not ask for a service account token in their Pod (the annotation
    /// `mlops.dev/automount-service-account-token`, or a projected token volume).
    #[arg(long, env = "NBV_DENY_API_TOKEN")]
    pub deny_api_token: bool,
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

/// The entries of a list flag, trimmed, empty ones dropped.
fn entries(values: &[String]) -> impl Iterator<Item = &str> {
    values.iter().map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// Why the policy flags of `nbv run` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum InvalidPolicyFlags {
    /// An entry is not valid.
    #[error(transparent)]
    Entry(#[from] InvalidPodPolicy),
    /// `--allowed-secrets` and `--deny-secrets` contradict each other.
    #[error(
        "--allowed-secrets (NBV_ALLOWED_SECRETS) and --deny-secrets (NBV_DENY_SECRETS) are both \
         given; keep the one you mean"
    )]
    SecretsContradict,
}

impl RunArgs {
    /// The policy the pod policy flags describe: what jobs may put in their validation
    /// Pods. Without any of them, everything a job can express.
    ///
    /// # Errors
    ///
    /// [`InvalidPolicyFlags`] naming the flag and entry nbv cannot use.
    ///
    /// # Examples
    ///
    /// ```
    /// use clap::Parser;
    /// use nbv_operator::cli::{Cli, Command};
    ///
    /// let cli = Cli::try_parse_from(["nbv", "run", "--allowed-images", "quay.io/ml, ", "--deny-api-token"])?;
    /// let Command::Run(run) = cli.command else { unreachable!() };
    /// let policy = run.pod_policy()?;
    /// assert_eq!(policy.images.map(|p| p.len()), Some(1));
    /// assert!(policy.deny_api_token && policy.secrets.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pod_policy(&self) -> Result<PodPolicy, InvalidPolicyFlags> {
        let images: Vec<ImagePattern> = entries(&self.allowed_images)
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        let service_accounts: BTreeSet<ObjectRule> = entries(&self.allowed_service_accounts)
            .map(parse_service_account_rule)
            .collect::<Result<_, _>>()?;
        let secrets: BTreeSet<ObjectRule> = entries(&self.allowed_secrets)
            .map(parse_secret_rule)
            .collect::<Result<_, _>>()?;
        if self.deny_secrets && !secrets.is_empty() {
            return Err(InvalidPolicyFlags::SecretsContradict);
        }
        let denied_placement: BTreeSet<PlacementField> = entries(&self.deny_job_placement)
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        let volume_sources: BTreeSet<String> = entries(&self.allowed_volume_sources)
            .map(parse_volume_source)
            .collect::<Result<_, _>>()?;
        Ok(PodPolicy {
            images: (!images.is_empty()).then_some(images),
            service_accounts: (!service_accounts.is_empty()).then_some(service_accounts),
            secrets: (self.deny_secrets || !secrets.is_empty()).then_some(secrets),
            denied_placement,
            volume_sources: (!volume_sources.is_empty()).then_some(volume_sources),
            deny_api_token: self.deny_api_token,
        })
    }

    /// What the metrics expose, from these flags.
    pub fn metrics_options(&self) -> crate::operator::metrics::MetricsOptions {
        crate::operator::metrics::MetricsOptions {
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
            build: nbv_core::build::BuildDefaults {
                repository: self.build_repository.clone(),
                buildah_image: self.buildah_image.clone(),
                kaniko_image: self.kaniko_image.clone(),
                history: self.build_history,
                ..nbv_core::build::BuildDefaults::default()
            },
            ..OperatorConfig::default()
        };
        match argocd_namespace {
            Some(namespace) => config.with_argocd_namespace(namespace),
            None => config,
        }
    }
}
