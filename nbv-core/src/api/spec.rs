//! `spec` of a NotebookValidationJob, field for field compatible with the upstream CRD.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, EnvFromSource, EnvVar, ResourceRequirements, Toleration, Volume, VolumeMount,
};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::NotebookValidationJobStatus;

/// What to validate and how: the notebook, the Pod that runs it, and optional
/// comparison with a golden notebook and model-serving checks.
///
/// The derive generates [`NotebookValidationJob`], the resource itself.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "mlops.mlops.dev",
    version = "v1alpha1",
    kind = "NotebookValidationJob",
    plural = "notebookvalidationjobs",
    singular = "notebookvalidationjob",
    shortname = "nvj",
    shortname = "nvjob",
    namespaced,
    status = "NotebookValidationJobStatus",
    derive = "PartialEq",
    doc = "NotebookValidationJob is the Schema for the notebookvalidationjobs API",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Notebook","type":"string","jsonPath":".spec.notebook.path"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name":"Message","type":"string","jsonPath":".status.message","priority":1}"#
)]
#[serde(rename_all = "camelCase")]
pub struct NotebookValidationJobSpec {
    /// The notebook to validate.
    pub notebook: NotebookSource,
    /// The Pod that runs the notebook.
    pub pod_config: PodConfig,
    /// A golden notebook whose outputs the run is compared with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golden_notebook: Option<NotebookSource>,
    /// How outputs are compared with the golden notebook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison_config: Option<ComparisonConfig>,
    /// Checks against model-serving platforms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_validation: Option<ModelValidation>,
    /// What makes a run pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_config: Option<ValidationConfig>,
    /// Maximum duration of a run, e.g. `30m` or `1h30m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"), extend("default" = "30m"))]
    pub timeout: Option<String>,
    /// Fields this version does not know, kept so that reading and writing a manifest
    /// loses nothing. The API server prunes them under this CRD, as under upstream's;
    /// tools such as `nbv` lint report them.
    #[serde(flatten)]
    #[schemars(skip)]
    pub unknown_fields: BTreeMap<String, serde_json::Value>,
}

/// A notebook in a Git repository.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotebookSource {
    /// Where the repository is.
    pub git: GitSource,
    /// Path of the `.ipynb` file inside the repository.
    #[schemars(regex(pattern = r"^.*\.ipynb$"))]
    pub path: String,
}

/// A Git repository at a reference.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitSource {
    /// Clone URL (`https://`, `http://`, `git://`, `ssh://` or `git@host:path`).
    #[schemars(regex(pattern = r"^((https?|git|ssh)://|git@).*$"))]
    pub url: String,
    /// Branch, tag or commit.
    #[serde(rename = "ref")]
    pub git_ref: String,
    /// Secret with HTTPS (`username`/`password`) or SSH (`ssh-privatekey`) credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials_secret: Option<String>,
}

/// The Pod that runs the notebook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodConfig {
    /// Image with Python and papermill.
    pub container_image: String,
    /// Build a custom image before validating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_config: Option<BuildConfig>,
    /// Secrets exposed as environment (shorthand for `envFrom[].secretRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<Vec<String>>,
    /// Environment variables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<EnvVar>>,
    /// Environment from ConfigMaps and Secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_from: Option<Vec<EnvFromSource>>,
    /// Compute resources of the executor container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Service account of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "default"))]
    pub service_account_name: Option<String>,
    /// Node selector of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Tolerations of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerations: Option<Vec<Toleration>>,
    /// Affinity of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    /// Volumes of the Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<Vec<Volume>>,
    /// Volume mounts of the executor container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mounts: Option<Vec<VolumeMount>>,
}

/// Image build settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildConfig {
    /// Build an image before validating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub enabled: Option<bool>,
    /// Build strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "s2i"))]
    pub strategy: Option<BuildStrategy>,
    /// Base image of the build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "quay.io/jupyter/minimal-notebook:latest"))]
    pub base_image: Option<String>,
    /// Generate `requirements.txt` from the notebook's imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub auto_generate_requirements: Option<bool>,
    /// Path of a requirements file in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements_file: Option<String>,
    /// Files that list requirements, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements_sources: Option<Vec<String>>,
    /// Path of a Dockerfile in the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[a-zA-Z0-9._/-]+$"))]
    pub dockerfile: Option<String>,
    /// Prefer the Dockerfile over generated requirements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub prefer_dockerfile: Option<bool>,
    /// What to do when the build cannot be done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "warn"))]
    pub fallback_strategy: Option<FallbackStrategy>,
    /// Strategy-specific settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy_config: Option<BTreeMap<String, String>>,
    /// Maximum duration of the build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "15m"))]
    pub timeout: Option<String>,
}

/// How an image is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuildStrategy {
    /// OpenShift Source-to-Image.
    S2i,
    /// A Tekton pipeline.
    Tekton,
    /// Kaniko.
    Kaniko,
    /// Shipwright.
    Shipwright,
    /// A custom strategy.
    Custom,
}

/// What to do when a requested build cannot be done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FallbackStrategy {
    /// Warn and validate with the container image.
    Warn,
    /// Fail the job.
    Fail,
    /// Choose automatically.
    Auto,
}

/// How executed outputs are compared with a golden notebook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonConfig {
    /// Comparison strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "normalized"))]
    pub strategy: Option<ComparisonStrategy>,
    /// Relative tolerance for floating-point values, as a decimal string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r"^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"),
        extend("default" = "0.0001")
    )]
    pub floating_point_tolerance: Option<String>,
    /// Ignore timestamps in outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub ignore_timestamps: Option<bool>,
    /// Ignore execution counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub ignore_execution_count: Option<bool>,
    /// Output MIME types to ignore.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_output_types: Option<Vec<String>>,
    /// Extra timestamp regular expressions to normalise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_timestamp_patterns: Option<Vec<String>>,
}

/// Comparison strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ComparisonStrategy {
    /// Byte-for-byte equality.
    Exact,
    /// Equality after normalising timestamps, counts and floats.
    Normalized,
}

/// Checks against a model-serving platform.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelValidation {
    /// Run model validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub enabled: Option<bool>,
    /// Serving platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "kserve"))]
    pub platform: Option<ModelPlatform>,
    /// Which environment checks to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "both"))]
    pub phase: Option<ModelValidationPhase>,
    /// Models the notebook is validated against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_models: Option<Vec<String>>,
    /// Prediction checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_validation: Option<PredictionValidation>,
    /// A platform not in the list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_platform: Option<CustomPlatform>,
    /// Maximum duration of model validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"), extend("default" = "5m"))]
    pub timeout: Option<String>,
}

/// Model-serving platforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModelPlatform {
    /// KServe.
    Kserve,
    /// Red Hat OpenShift AI.
    OpenshiftAi,
    /// vLLM.
    Vllm,
    /// TorchServe.
    Torchserve,
    /// TensorFlow Serving.
    TensorflowServing,
    /// NVIDIA Triton.
    Triton,
    /// Ray Serve.
    RayServe,
    /// Seldon.
    Seldon,
    /// BentoML.
    Bentoml,
    /// See [`ModelValidation::custom_platform`].
    Custom,
}

impl ModelPlatform {
    /// The value as the spec writes it (`kserve`, `openshift-ai`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::ModelPlatform;
    /// assert_eq!(ModelPlatform::TensorflowServing.as_str(), "tensorflow-serving");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ModelPlatform::Kserve => "kserve",
            ModelPlatform::OpenshiftAi => "openshift-ai",
            ModelPlatform::Vllm => "vllm",
            ModelPlatform::Torchserve => "torchserve",
            ModelPlatform::TensorflowServing => "tensorflow-serving",
            ModelPlatform::Triton => "triton",
            ModelPlatform::RayServe => "ray-serve",
            ModelPlatform::Seldon => "seldon",
            ModelPlatform::Bentoml => "bentoml",
            ModelPlatform::Custom => "custom",
        }
    }
}

/// Which environments model validation checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModelValidationPhase {
    /// A clean environment only.
    Clean,
    /// Existing deployments only.
    Existing,
    /// Both.
    Both,
}

impl ModelValidationPhase {
    /// The value as the spec writes it (`clean`, `existing`, `both`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::api::ModelValidationPhase;
    /// assert_eq!(ModelValidationPhase::Both.as_str(), "both");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            ModelValidationPhase::Clean => "clean",
            ModelValidationPhase::Existing => "existing",
            ModelValidationPhase::Both => "both",
        }
    }
}

/// Prediction checks against a served model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredictionValidation {
    /// Run prediction checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub enabled: Option<bool>,
    /// Request body sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_data: Option<String>,
    /// Expected response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<String>,
    /// Tolerance as a decimal string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        regex(pattern = r"^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"),
        extend("default" = "0.01")
    )]
    pub tolerance: Option<String>,
}

/// A serving platform described by its API group and endpoints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomPlatform {
    /// API group of the serving resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    /// Resource type (plural).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// Health endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check_endpoint: Option<String>,
    /// Prediction endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_endpoint: Option<String>,
}

/// What makes a run pass.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationConfig {
    /// Validation level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "development"))]
    pub level: Option<ValidationLevel>,
    /// Enable every check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub strict_mode: Option<bool>,
    /// Fail when a cell warns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub fail_on_warnings: Option<bool>,
    /// Fail when a cell writes to stderr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub fail_on_stderr: Option<bool>,
    /// Detect cells that fail without raising.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub detect_silent_failures: Option<bool>,
    /// Check that assertions ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub verify_assertions: Option<bool>,
    /// Require explicit exit codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub require_explicit_exit_codes: Option<bool>,
    /// Check the types of outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub check_output_types: Option<bool>,
    /// Expected outputs per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_outputs: Option<Vec<ExpectedOutput>>,
}

/// Validation levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ValidationLevel {
    /// Learning material.
    Learning,
    /// Development.
    Development,
    /// Staging.
    Staging,
    /// Production.
    Production,
}

/// An expectation about one cell's output.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedOutput {
    /// Index of the cell.
    #[schemars(range(min = 0))]
    pub cell: i64,
    /// Expected output type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub output_type: Option<String>,
    /// Expected shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// Lower bound, as a decimal string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"))]
    pub min_value: Option<String>,
    /// Upper bound, as a decimal string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"))]
    pub max_value: Option<String>,
    /// The output must not be empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub not_empty: Option<bool>,
}
