//! A job's `buildConfig` read as a plan: what is built, by which strategy, and where
//! the image goes.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde_json::json;

use super::{BuildKey, SourceConfig, SourceError, candidates};
use crate::api::{BuildStrategy, FallbackStrategy, GitSource, NotebookValidationJob};
use crate::duration::parse_duration;
use crate::kube_names::is_dns_subdomain;
use crate::phase::{Failure, FailureCause};
use crate::pod::image_problem;

/// The base image when `baseImage` is not set (upstream's default).
pub const DEFAULT_BASE_IMAGE: &str = "quay.io/jupyter/minimal-notebook:latest";

/// How long a build may run when `buildConfig.timeout` is not set (upstream's default).
pub const DEFAULT_BUILD_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The longest `buildConfig.timeout` nbv accepts: a day.
const MAX_BUILD_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The build system that builds an image.
///
/// # Examples
///
/// ```
/// use nbv_core::build::Strategy;
///
/// assert_eq!(Strategy::Tekton.as_str(), "tekton");
/// assert_eq!(Strategy::Tekton.api_version(), "tekton.dev/v1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Strategy {
    /// A Tekton PipelineRun (`tekton.dev/v1`) with a buildah step.
    Tekton,
    /// A Shipwright Build and BuildRun (`shipwright.io/v1beta1`).
    Shipwright,
    /// OpenShift's Source-to-Image: a BuildConfig and a Build (`build.openshift.io/v1`).
    S2i,
    /// A Pod running the kaniko executor.
    Kaniko,
}

impl Strategy {
    /// The name `buildConfig.strategy` gives it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Strategy::Tekton => "tekton",
            Strategy::Shipwright => "shipwright",
            Strategy::S2i => "s2i",
            Strategy::Kaniko => "kaniko",
        }
    }

    /// The API whose objects it creates; a cluster that does not serve it cannot build
    /// with this strategy.
    pub const fn api_version(self) -> &'static str {
        match self {
            Strategy::Tekton => "tekton.dev/v1",
            Strategy::Shipwright => "shipwright.io/v1beta1",
            Strategy::S2i => "build.openshift.io/v1",
            Strategy::Kaniko => "v1",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the operator builds, whatever the job: where images go and which tools build.
///
/// # Examples
///
/// ```
/// use nbv_core::build::BuildDefaults;
///
/// let defaults = BuildDefaults::default();
/// assert_eq!(defaults.repository_for("ml"), "image-registry.openshift-image-registry.svc:5000/ml/nbv-notebooks");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BuildDefaults {
    /// The repository built images are pushed to, `{namespace}` standing for the job's
    /// namespace (`strategyConfig.outputImage` takes its place for one job).
    pub repository: String,
    /// The image of Tekton's build step.
    pub buildah_image: String,
    /// The image of the kaniko executor.
    pub kaniko_image: String,
    /// Shipwright's cluster build strategy when `strategyConfig` names none.
    pub shipwright_strategy: String,
    /// The size of each Tekton build's own workspace volume.
    pub workspace_size: String,
    /// How many finished build objects of a namespace and strategy are kept.
    pub history: usize,
}

impl Default for BuildDefaults {
    fn default() -> Self {
        BuildDefaults {
            repository:
                "image-registry.openshift-image-registry.svc:5000/{namespace}/nbv-notebooks"
                    .to_owned(),
            buildah_image: "quay.io/buildah/stable:v1.38.1".to_owned(),
            kaniko_image: "gcr.io/kaniko-project/executor:v1.23.2".to_owned(),
            shipwright_strategy: "buildah".to_owned(),
            workspace_size: "1Gi".to_owned(),
            history: 3,
        }
    }
}

impl BuildDefaults {
    /// The repository of the images built for jobs in `namespace`.
    pub fn repository_for(&self, namespace: &str) -> String {
        self.repository.replace("{namespace}", namespace)
    }
}

/// A Shipwright build strategy by kind and name.
///
/// # Examples
///
/// ```
/// use nbv_core::build::ShipwrightStrategy;
///
/// let strategy = ShipwrightStrategy { cluster: true, name: "buildah".into() };
/// assert_eq!(strategy.kind(), "ClusterBuildStrategy");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShipwrightStrategy {
    /// A `ClusterBuildStrategy` (else a namespaced `BuildStrategy`).
    pub cluster: bool,
    /// Its name.
    pub name: String,
}

impl ShipwrightStrategy {
    /// Its kind.
    pub fn kind(&self) -> &'static str {
        if self.cluster {
            "ClusterBuildStrategy"
        } else {
            "BuildStrategy"
        }
    }
}

/// What one job's build is: everything the build objects are made of.
///
/// # Examples
///
/// ```
/// use nbv_core::build::{BuildDefaults, BuildPlan, Strategy};
/// use nbv_core::api::NotebookValidationJob;
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "uid": "u1", "generation": 2},
///     "spec": {
///         "notebook": {"git": {"url": "https://example.com/m.git", "ref": "0123456789abcdef0123456789abcdef01234567"},
///                      "path": "notebooks/tier2/train.ipynb"},
///         "podConfig": {"containerImage": "img", "buildConfig": {"enabled": true, "strategy": "tekton"}}
///     }
/// }))?;
/// let plan = BuildPlan::resolve(&job, &BuildDefaults::default())?.expect("a build is asked for");
/// assert_eq!(plan.strategy, Strategy::Tekton);
/// assert_eq!(plan.name, format!("nbv-build-{}", plan.key.short()));
/// assert!(plan.image.ends_with(&format!("/ml/nbv-notebooks:{}", plan.key)));
/// assert!(plan.shared, "a commit names the sources: other jobs may share the build");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BuildPlan {
    /// The build system.
    pub strategy: Strategy,
    /// The content hash of the build's inputs.
    pub key: BuildKey,
    /// The build objects' name: `nbv-build-` and the key's first digits.
    pub name: String,
    /// The job's namespace, where the build runs.
    pub namespace: String,
    /// The job's name.
    pub job: String,
    /// The job's uid (the build objects' owner).
    pub job_uid: String,
    /// The repository and ref the image is built from (`spec.notebook.git`).
    pub git: GitSource,
    /// What decides the Dockerfile, inside the build.
    pub source: SourceConfig,
    /// Where the image is pushed, without a tag.
    pub repository: String,
    /// The image pushed: the repository tagged with the key.
    pub image: String,
    /// `strategyConfig.pushSecret`: a Secret of the namespace with the registry's
    /// credentials (a `.dockerconfigjson`); referenced, never copied.
    pub push_secret: Option<String>,
    /// `strategyConfig.serviceAccount`: the build's service account.
    pub service_account: Option<String>,
    /// Shipwright's build strategy (`strategyConfig.clusterBuildStrategy` or
    /// `buildStrategy`).
    pub shipwright: ShipwrightStrategy,
    /// How long the build may run.
    pub timeout: Duration,
    /// Whether other jobs may share the build: the ref is a commit, so equal inputs
    /// mean equal sources. A branch or tag may move: its build is the run's own.
    pub shared: bool,
}

/// Why a `buildConfig` cannot be carried out as written.
///
/// # Examples
///
/// ```
/// use nbv_core::build::PlanError;
///
/// let error = PlanError::Field { field: "spec.podConfig.buildConfig.timeout".into(), problem: "\"soon\" is not a duration".into() };
/// assert_eq!(error.failure().reason.as_str(), "BuildConfigInvalid");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// `strategy: custom`, whose semantics nbv does not define.
    #[error(
        "spec.podConfig.buildConfig.strategy: custom is not supported; use tekton, shipwright, s2i or kaniko"
    )]
    Custom,
    /// A field that cannot be carried out.
    #[error("{field}: {problem}")]
    Field {
        /// The field, from `spec`.
        field: String,
        /// What is wrong and what to write instead.
        problem: String,
    },
    /// A path of the build's sources that cannot be used.
    #[error(transparent)]
    Source(#[from] SourceError),
}

impl PlanError {
    /// The field that cannot be carried out, from `spec`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::build::PlanError;
    ///
    /// assert_eq!(PlanError::Custom.field(), "spec.podConfig.buildConfig.strategy");
    /// ```
    pub fn field(&self) -> String {
        match self {
            PlanError::Custom => "spec.podConfig.buildConfig.strategy".to_owned(),
            PlanError::Field { field, .. } => field.clone(),
            PlanError::Source(error) => error.field(),
        }
    }

    /// The run's failure: permanent, naming the field.
    pub fn failure(&self) -> Failure {
        let cause = match self {
            PlanError::Custom => FailureCause::BuildNotSupported,
            PlanError::Field { .. } | PlanError::Source(_) => FailureCause::BuildConfigInvalid,
        };
        cause.failure(self.to_string())
    }
}

/// The keys `strategyConfig` may hold.
const CONFIG_KEYS: [&str; 5] = [
    "pushSecret",
    "outputImage",
    "serviceAccount",
    "clusterBuildStrategy",
    "buildStrategy",
];

impl BuildPlan {
    /// The build `job` asks for in the first run of its generation, or `None` when
    /// `buildConfig.enabled` is not `true`; [`resolve_rerun`](Self::resolve_rerun)
    /// for a rerun.
    ///
    /// # Errors
    ///
    /// [`PlanError`] naming the field that cannot be carried out: the `custom`
    /// strategy, an unknown `strategyConfig` key, a Secret or service account that is
    /// not a name, an image that is not a reference, an invalid `timeout`, or a job
    /// without its identity.
    pub fn resolve(
        job: &NotebookValidationJob,
        defaults: &BuildDefaults,
    ) -> Result<Option<BuildPlan>, PlanError> {
        Self::resolve_rerun(job, defaults, 0)
    }

    /// The build `job` asks for in its generation's run number `rerun` (0 for the
    /// first, see [`crate::phase::RerunRequest`]). A source pinned to a commit builds
    /// the same image in every run, which is reused; a branch or tag may have moved
    /// since the last run, so each rerun builds its own.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::build::{BuildDefaults, BuildPlan};
    ///
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
    ///     "metadata": {"name": "train", "namespace": "ml", "uid": "u-1", "generation": 2},
    ///     "spec": {"notebook": {"git": {"url": "https://git.example.com/m.git", "ref": "main"},
    ///              "path": "train.ipynb"},
    ///              "podConfig": {"containerImage": "img", "buildConfig": {"enabled": true}}}
    /// }))?;
    /// let defaults = BuildDefaults::default();
    /// let first = BuildPlan::resolve(&job, &defaults)?.unwrap();
    /// let again = BuildPlan::resolve_rerun(&job, &defaults, 1)?.unwrap();
    /// assert_ne!(first.key, again.key, "a branch builds again in a rerun");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`resolve`](Self::resolve).
    pub fn resolve_rerun(
        job: &NotebookValidationJob,
        defaults: &BuildDefaults,
        rerun: u32,
    ) -> Result<Option<BuildPlan>, PlanError> {
        let Some(config) = job.spec.pod_config.build_config.as_ref() else {
            return Ok(None);
        };
        if config.enabled != Some(true) {
            return Ok(None);
        }
        let field = |name: &str, problem: String| PlanError::Field {
            field: format!("spec.podConfig.buildConfig.{name}"),
            problem,
        };
        let strategy = match config.strategy.unwrap_or(BuildStrategy::S2i) {
            BuildStrategy::Tekton => Strategy::Tekton,
            BuildStrategy::Shipwright => Strategy::Shipwright,
            BuildStrategy::S2i => Strategy::S2i,
            BuildStrategy::Kaniko => Strategy::Kaniko,
            BuildStrategy::Custom => return Err(PlanError::Custom),
        };
        let identity = |name: Option<&String>, what: &str| {
            name.filter(|n| !n.is_empty())
                .cloned()
                .ok_or_else(|| PlanError::Field {
                    field: format!("metadata.{what}"),
                    problem: "the job has none".to_owned(),
                })
        };
        let namespace = identity(job.metadata.namespace.as_ref(), "namespace")?;
        let job_name = identity(job.metadata.name.as_ref(), "name")?;
        let job_uid = identity(job.metadata.uid.as_ref(), "uid")?;

        let settings = config.strategy_config.clone().unwrap_or_default();
        if let Some(unknown) = settings.keys().find(|k| !CONFIG_KEYS.contains(&k.as_str())) {
            return Err(field(
                &format!("strategyConfig.{unknown}"),
                format!("unknown key; nbv reads {}", CONFIG_KEYS.join(", ")),
            ));
        }
        let name_of = |key: &str| -> Result<Option<String>, PlanError> {
            match settings.get(key) {
                None => Ok(None),
                Some(value) if is_dns_subdomain(value) => Ok(Some(value.clone())),
                Some(value) => Err(field(
                    &format!("strategyConfig.{key}"),
                    format!("{value:?} is not the name of an object of the namespace"),
                )),
            }
        };
        let push_secret = name_of("pushSecret")?;
        let service_account = name_of("serviceAccount")?;
        let shipwright = match (name_of("clusterBuildStrategy")?, name_of("buildStrategy")?) {
            (Some(_), Some(_)) => {
                return Err(field(
                    "strategyConfig.buildStrategy",
                    "name either clusterBuildStrategy or buildStrategy, not both".to_owned(),
                ));
            }
            (_, Some(name)) => ShipwrightStrategy {
                cluster: false,
                name,
            },
            (Some(name), None) => ShipwrightStrategy {
                cluster: true,
                name,
            },
            (None, None) => ShipwrightStrategy {
                cluster: true,
                name: defaults.shipwright_strategy.clone(),
            },
        };
        let repository = match settings.get("outputImage") {
            Some(image) => repository_of(image)
                .map_err(|problem| field("strategyConfig.outputImage", problem))?,
            None => repository_of(&defaults.repository_for(&namespace))
                .map_err(|problem| field("strategyConfig.outputImage", problem))?,
        };
        let base_image = config
            .base_image
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_IMAGE.to_owned());
        if let Some(problem) = image_problem(&base_image) {
            return Err(field("baseImage", problem));
        }
        let timeout = match config.timeout.as_deref() {
            None => DEFAULT_BUILD_TIMEOUT,
            Some(text) => match parse_duration(text) {
                Ok(t) if !t.is_zero() && t <= MAX_BUILD_TIMEOUT => t,
                Ok(_) => {
                    return Err(field(
                        "timeout",
                        format!("{text:?} is out of range: more than 0 and at most 24h"),
                    ));
                }
                Err(error) => return Err(field("timeout", error.to_string())),
            },
        };
        let source = SourceConfig {
            notebook_path: job.spec.notebook.path.clone(),
            base_image,
            requirements_file: config.requirements_file.clone(),
            requirements_sources: config.requirements_sources.clone(),
            auto_generate: config.auto_generate_requirements.unwrap_or(true),
            dockerfile: config.dockerfile.clone(),
            prefer_dockerfile: config.prefer_dockerfile.unwrap_or(false),
            fallback: config.fallback_strategy.unwrap_or(FallbackStrategy::Warn),
        };
        // Paths that leave the repository fail now, naming the field, not in the build.
        candidates(&source)?;
        let git = job.spec.notebook.git.clone();
        let shared = is_commit(&git.git_ref);
        let key = BuildKey::of(&key_inputs(
            strategy,
            &source,
            &git,
            &repository,
            push_secret.as_deref(),
            &shipwright,
            (!shared).then(|| {
                (
                    job_uid.as_str(),
                    job.metadata.generation.unwrap_or(0),
                    rerun,
                )
            }),
        ));
        Ok(Some(BuildPlan {
            strategy,
            name: format!("nbv-build-{}", key.short()),
            image: format!("{repository}:{key}"),
            key,
            namespace,
            job: job_name,
            job_uid,
            git,
            source,
            repository,
            push_secret,
            service_account,
            shipwright,
            timeout,
            shared,
        }))
    }
}

/// What the key hashes: everything that decides the image's contents, in one
/// canonical object. The notebook's own file matters only when its imports are the
/// requirements (`fallbackStrategy: auto`); otherwise its directory, where the search
/// starts. nbv's version is in it: another version may generate another Dockerfile.
fn key_inputs(
    strategy: Strategy,
    source: &SourceConfig,
    git: &GitSource,
    repository: &str,
    push_secret: Option<&str>,
    shipwright: &ShipwrightStrategy,
    run: Option<(&str, i64, u32)>,
) -> serde_json::Value {
    let notebook = if source.fallback == FallbackStrategy::Auto {
        source.notebook_path.clone()
    } else {
        match source.notebook_path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => String::new(),
        }
    };
    let mut inputs = BTreeMap::from([
        ("nbv", json!(env!("CARGO_PKG_VERSION"))),
        ("strategy", json!(strategy.as_str())),
        ("baseImage", json!(source.base_image)),
        ("requirementsFile", json!(source.requirements_file)),
        ("requirementsSources", json!(source.requirements_sources)),
        ("autoGenerate", json!(source.auto_generate)),
        ("dockerfile", json!(source.dockerfile)),
        ("preferDockerfile", json!(source.prefer_dockerfile)),
        ("fallback", json!(source.fallback)),
        ("notebook", json!(notebook)),
        ("url", json!(git.url)),
        ("ref", json!(git.git_ref)),
        ("repository", json!(repository)),
        ("pushSecret", json!(push_secret)),
    ]);
    if strategy == Strategy::Shipwright {
        inputs.insert("shipwright", json!([shipwright.kind(), shipwright.name]));
    }
    // A first run's key is as it was before reruns existed.
    match run {
        Some((uid, generation, 0)) => inputs.insert("run", json!([uid, generation])),
        Some((uid, generation, rerun)) => inputs.insert("run", json!([uid, generation, rerun])),
        None => None,
    };
    json!(inputs)
}

/// Whether `git_ref` is a commit id (SHA-1 or SHA-256), which never moves.
fn is_commit(git_ref: &str) -> bool {
    matches!(git_ref.len(), 40 | 64) && git_ref.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `image` as a repository to push to: a valid reference without tag or digest.
fn repository_of(image: &str) -> Result<String, String> {
    if let Some(problem) = image_problem(image) {
        return Err(problem);
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    if image.contains('@') || last.contains(':') {
        return Err(format!(
            "{image:?} has a tag or digest; name the repository only: nbv tags each image with its build key"
        ));
    }
    Ok(image.to_owned())
}
