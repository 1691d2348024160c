//! `status` of a NotebookValidationJob: upstream's fields plus nbv's effect ledger.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Phase;

/// Observed state of a job.
///
/// Every upstream field is here with its upstream name and type. nbv adds
/// [`observed_generation`](Self::observed_generation), [`effects`](Self::effects) and
/// [`rerun`](Self::rerun).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotebookValidationJobStatus {
    /// Current phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Standard conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
    /// When the current run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<DateTime<Utc>>,
    /// When the current run ended; set exactly when the phase is terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<DateTime<Utc>>,
    /// Human-readable summary of the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Retries made in the current run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_count: Option<i32>,
    /// When the last retry was scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_retry_time: Option<DateTime<Utc>>,
    /// Name of the Pod that runs (or ran) the notebook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_pod_name: Option<String>,
    /// Per-cell outcomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<CellResult>>,
    /// Image build progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_status: Option<BuildStatus>,
    /// Outcome of the comparison with the golden notebook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison_result: Option<ComparisonResult>,
    /// Outcome of model validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_validation_result: Option<ModelValidationResult>,
    /// The `metadata.generation` this status describes (nbv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// What nbv has carried out for the current run (nbv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<EffectLedger>,
    /// The request to run the job again that the current run answers (nbv).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<RerunRecord>,
}

/// The request to run the job again (annotation `mlops.dev/rerun`) that the current
/// run answers, and how many reruns its generation has had.
///
/// A run ends; a rerun request whose value differs from [`request`](Self::request)
/// starts one new run of the same generation, once: the new run records the value.
///
/// # Examples
///
/// ```
/// use nbv_core::api::RerunRecord;
///
/// let record = RerunRecord { request: "2".to_owned(), count: 2 };
/// assert_eq!(serde_json::to_value(&record)?, serde_json::json!({"request": "2", "count": 2}));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    description = "The request to run the job again (annotation mlops.dev/rerun) that the current run answers."
)]
pub struct RerunRecord {
    /// The annotation's value the run answers (a digest of it when it is long); empty
    /// (and not written) when the generation's first run started without one.
    // Skipped when empty so that the schema has no `default: ''`, which kube-apiserver
    // 1.20 refuses in a CRD as a null.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request: String,
    /// Reruns of the current generation before and including this run (not written
    /// for 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub count: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The record of effects carried out for one run, kept in `status.effects` so that a
/// re-reconcile, a conflict or an operator restart neither repeats nor loses an effect.
///
/// # Examples
///
/// ```
/// use nbv_core::api::EffectLedger;
///
/// let mut ledger = EffectLedger::for_run("g3/2026-01-24T22:30:00Z");
/// ledger.done.insert("wave".to_owned());
/// assert!(ledger.is_done("wave"));
/// assert!(!ledger.is_done("event"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(
    description = "What nbv has carried out for the current run, so that no effect is repeated or lost."
)]
pub struct EffectLedger {
    /// The run these records belong to; records of another run are void.
    pub run: String,
    /// Keys of the effects carried out for this run.
    #[serde(default)]
    pub done: BTreeSet<String>,
    /// Effects that failed, with how often and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<EffectFailure>,
}

impl EffectLedger {
    /// An empty ledger for `run`.
    pub fn for_run(run: impl Into<String>) -> Self {
        EffectLedger {
            run: run.into(),
            ..EffectLedger::default()
        }
    }

    /// Whether the effect with `key` has been carried out for this run.
    pub fn is_done(&self, key: &str) -> bool {
        self.done.contains(key)
    }

    /// The failure record of `key`, if it has failed.
    pub fn failure(&self, key: &str) -> Option<&EffectFailure> {
        self.failed.iter().find(|f| f.key == key)
    }
}

/// An effect that failed at least once in the current run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectFailure {
    /// Key of the effect.
    pub key: String,
    /// Attempts made so far.
    pub attempts: u32,
    /// The error of the last attempt.
    pub last_error: String,
    /// When the last attempt was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempt: Option<DateTime<Utc>>,
    /// `true` once nbv has stopped retrying.
    #[serde(default)]
    pub gave_up: bool,
}

/// Outcome of one notebook cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CellResult {
    /// Index of the cell in the notebook.
    #[schemars(range(min = 0))]
    pub cell_index: i64,
    /// Outcome.
    pub status: CellStatus,
    /// Duration, e.g. `1.2s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time: Option<String>,
    /// Output, possibly truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Error of a failed cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// Outcome of a cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CellStatus {
    /// The cell ran without error.
    #[default]
    Success,
    /// The cell raised or failed a check.
    Failure,
    /// The cell did not run.
    Skipped,
}

/// Image build progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuildStatus {
    /// Build phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<BuildPhase>,
    /// Build message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Name of the build object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_name: Option<String>,
    /// Strategy used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// The built image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_reference: Option<String>,
    /// A suggested image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended_image: Option<String>,
    /// When the build started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<DateTime<Utc>>,
    /// When the build ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<DateTime<Utc>>,
    /// Build duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Images available on the platform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_images: Option<Vec<AvailableImage>>,
}

/// Phases of an image build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BuildPhase {
    /// Not started.
    Pending,
    /// In progress.
    Running,
    /// Done.
    Complete,
    /// Failed.
    Failed,
}

/// An image the platform offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AvailableImage {
    /// Short name.
    pub name: String,
    /// Display name.
    pub display_name: String,
    /// Description.
    pub description: String,
    /// Image reference.
    pub image_ref: String,
    /// Whether the image supports Source-to-Image.
    #[serde(rename = "s2iEnabled")]
    pub s2i_enabled: bool,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

/// Outcome of the comparison with a golden notebook.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ComparisonResult {
    /// Strategy used.
    pub strategy: String,
    /// `matched`, `failed` or `skipped`.
    pub result: String,
    /// Cells compared.
    #[schemars(range(min = 0))]
    pub total_cells: i64,
    /// Cells that matched.
    #[schemars(range(min = 0))]
    pub matched_cells: i64,
    /// Cells that did not match.
    #[schemars(range(min = 0))]
    pub mismatched_cells: i64,
    /// Differences found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diffs: Option<Vec<CellDiff>>,
}

/// A difference between a cell and its golden counterpart.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CellDiff {
    /// Index of the cell.
    #[schemars(range(min = 0))]
    pub cell_index: i64,
    /// `code` or `markdown`.
    pub cell_type: String,
    /// Kind of difference.
    pub diff_type: String,
    /// `minor`, `major` or `critical`.
    pub severity: String,
    /// Expected output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// Actual output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// A readable diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// Outcome of model validation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelValidationResult {
    /// Whether validation passed.
    pub success: bool,
    /// Platform validated against.
    pub platform: String,
    /// Whether the platform was found.
    pub platform_detected: bool,
    /// Which checks ran.
    pub phase: String,
    /// Summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Clean-environment check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clean_environment_check: Option<CleanEnvironmentCheck>,
    /// Existing-environment check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_environment_check: Option<ExistingEnvironmentCheck>,
}

/// Whether a clean environment can serve models.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CleanEnvironmentCheck {
    /// Whether every check passed.
    pub success: bool,
    /// Whether the platform is installed.
    pub platform_available: bool,
    /// Whether the Pod has the permissions it needs.
    pub rbac_permissions: bool,
    /// Whether the platform can be reached.
    pub network_connectivity: bool,
    /// CRDs found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crds_installed: Option<Vec<String>>,
    /// Python libraries required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_libraries: Option<Vec<String>>,
    /// Summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Whether deployed models are healthy and answer as expected.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExistingEnvironmentCheck {
    /// Whether every check passed.
    pub success: bool,
    /// Models checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models_checked: Option<Vec<ModelCheck>>,
    /// Prediction check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_validation: Option<PredictionCheck>,
    /// Summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The state of one served model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCheck {
    /// Model name.
    pub model_name: String,
    /// Whether the model exists.
    pub available: bool,
    /// Whether the model is ready.
    pub healthy: bool,
    /// Model version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Resource usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_status: Option<ModelResourceStatus>,
}

/// Resource usage of a served model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelResourceStatus {
    /// CPU usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_usage: Option<String>,
    /// Memory usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_usage: Option<String>,
    /// GPU usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_usage: Option<String>,
}

/// Outcome of a prediction check.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PredictionCheck {
    /// Whether the prediction matched.
    pub success: bool,
    /// Expected output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_output: Option<String>,
    /// Actual output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_output: Option<String>,
    /// Difference found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<String>,
    /// Detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
