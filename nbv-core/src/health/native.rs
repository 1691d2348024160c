//! The shipped scripts, computed natively: same input, same output, byte for byte.
//!
//! Each function below mirrors its script statement by statement, with Lua's rules
//! for `nil`, truthiness, indexing, `#`, `ipairs` and `..` (see [`LuaView`]), and then
//! applies what Argo CD does with the returned table (see [`super::argocd`]).

use serde_json::Value;

use super::view::{LuaView, concat};
use super::{HealthStatus, HealthStatusCode, NumberFormat, ScriptError, Variant};
use crate::api::NotebookValidationJob;

/// The Lua VM a native assessment imitates.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{NumberFormat, Semantics, Variant, assess_with};
/// use serde_json::json;
///
/// let obj = json!({"status": {"phase": "Failed", "message": "OOMKilled", "retryCount": 1e15}});
/// let argo_cd = assess_with(&obj, Variant::Basic, Semantics::ARGO_CD)?.unwrap();
/// assert_eq!(argo_cd.message, "OOMKilled (retry 1000000000000000/3)");
/// let lua51 = Semantics { numbers: NumberFormat::Lua51, ..Semantics::ARGO_CD };
/// assert_eq!(assess_with(&obj, Variant::Basic, lua51)?.unwrap().message, "OOMKilled (retry 1e+15/3)");
/// # Ok::<(), nbv_core::health::ScriptError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Semantics {
    /// How a concatenated number is printed.
    pub numbers: NumberFormat,
    /// Whether the standard libraries are open. Argo CD opens them only for a kind whose
    /// `resource.customizations.useOpenLibs.<group>_<kind>` is `"true"`; with them open,
    /// indexing a string looks into the `string` table (so `obj.status.phase` with a
    /// string status is `nil`) instead of raising an error.
    pub open_libs: bool,
}

impl Semantics {
    /// Argo CD's production VM: gopher-lua, standard libraries closed.
    pub const ARGO_CD: Semantics = Semantics {
        numbers: NumberFormat::GopherLua,
        open_libs: false,
    };
}

impl Default for Semantics {
    fn default() -> Self {
        Semantics::ARGO_CD
    }
}

/// What Argo CD shows for `obj` (the object as JSON, exactly as its VM receives it)
/// with [`BASIC_SCRIPT`](super::BASIC_SCRIPT) installed.
///
/// - `Ok(Some(health))`: the script's health.
/// - `Ok(None)`: Argo CD records an *empty* health status, because the script's
///   message is not a string (a numeric `status.message` of a failed job without
///   `retryCount`, for instance).
/// - `Err(error)`: the script raises a Lua error; Argo CD shows the resource as
///   `Unknown` with the error text and adds a `ComparisonError` condition to the
///   Application.
///
/// Working on JSON rather than on a typed job is deliberate: it is what the script
/// sees, wrong types and unknown phases included. See [`assess_job`] for typed jobs.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatus, HealthStatusCode, assess};
/// use serde_json::json;
///
/// // Lua's truthiness: "" is true, so an empty message is kept, and 0 is printed.
/// let obj = json!({"status": {"phase": "Failed", "message": "", "retryCount": 0}});
/// assert_eq!(assess(&obj)?, Some(HealthStatus::new(HealthStatusCode::Degraded, " (retry 0/3)")));
/// # Ok::<(), nbv_core::health::ScriptError>(())
/// ```
pub fn assess(obj: &Value) -> Result<Option<HealthStatus>, ScriptError> {
    assess_with(obj, Variant::Basic, Semantics::ARGO_CD)
}

/// Like [`assess`], for [`ADVANCED_SCRIPT`](super::ADVANCED_SCRIPT).
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatusCode, assess_advanced};
/// use serde_json::json;
///
/// let obj = json!({"status": {"phase": "Failed", "results": [
///     {"cellIndex": 0, "status": "Success"},
///     {"cellIndex": 1, "status": "Failure", "errorMessage": "NameError: name 'df' is not defined"}
/// ]}});
/// let health = assess_advanced(&obj)?.unwrap();
/// assert_eq!(health.status, HealthStatusCode::Degraded);
/// assert_eq!(health.message, "Failed at cell 1: NameError: name 'df' is not defined");
/// # Ok::<(), nbv_core::health::ScriptError>(())
/// ```
pub fn assess_advanced(obj: &Value) -> Result<Option<HealthStatus>, ScriptError> {
    assess_with(obj, Variant::Advanced, Semantics::ARGO_CD)
}

/// The result of `variant`'s script on `obj` in the VM described by `semantics`; see
/// [`assess`] for the meaning of the result.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{RuntimeErrorKind, Semantics, Variant, assess_with};
/// use serde_json::json;
///
/// // Argo CD's production VM has no string library: indexing a string is an error.
/// let obj = json!({"status": "Succeeded"});
/// let error = assess_with(&obj, Variant::Basic, Semantics::ARGO_CD).unwrap_err();
/// assert_eq!(error.kind(), RuntimeErrorKind::Index);
/// // With `useOpenLibs`, the same lookup yields nil.
/// let open = Semantics { open_libs: true, ..Semantics::ARGO_CD };
/// let health = assess_with(&obj, Variant::Basic, open)?.unwrap();
/// assert_eq!(health.message, "Initializing notebook validation");
/// # Ok::<(), nbv_core::health::ScriptError>(())
/// ```
pub fn assess_with(
    obj: &Value,
    variant: Variant,
    semantics: Semantics,
) -> Result<Option<HealthStatus>, ScriptError> {
    let obj = LuaView::of(obj);
    let stale = if variant.checks_generation() {
        stale_generation(&obj, semantics)?
    } else {
        None
    };
    let returned = match (stale, variant) {
        (Some(stale), _) => stale,
        (None, Variant::Basic | Variant::Guide) => basic(&obj, semantics)?,
        (None, Variant::Advanced) => advanced(&obj, semantics)?,
    };
    Ok(returned.into_argo_cd_health())
}

/// What Argo CD shows for a typed job with `variant` installed.
///
/// Every field of a typed job has the type the scripts expect, so the scripts neither
/// fail nor return a non-string message: the result is always the script's own health.
///
/// # Examples
///
/// ```
/// use nbv_core::api::{NotebookValidationJob, NotebookValidationJobStatus, Phase};
/// use nbv_core::health::{HealthStatusCode, Variant, assess_job};
///
/// let mut job = NotebookValidationJob::new("train", Default::default());
/// job.status = Some(NotebookValidationJobStatus {
///     phase: Some(Phase::ValidationRunning),
///     validation_pod_name: Some("train-validation-abc123".to_owned()),
///     ..Default::default()
/// });
/// let health = assess_job(&job, Variant::Basic);
/// assert_eq!(health.status, HealthStatusCode::Progressing);
/// assert_eq!(health.message, "Validating notebook (pod: train-validation-abc123)");
/// ```
pub fn assess_job(job: &NotebookValidationJob, variant: Variant) -> HealthStatus {
    // The scripts read `status` and `metadata.generation` only. Serializing the status
    // cannot fail: every map in it has string keys.
    let status = serde_json::to_value(&job.status).unwrap_or(Value::Null);
    let obj = serde_json::json!({
        "metadata": {"generation": job.metadata.generation},
        "status": status,
    });
    match assess_with(&obj, variant, Semantics::ARGO_CD) {
        Ok(Some(health)) => health,
        // Not reachable for a typed job (tests check it); answered rather than panicking.
        Ok(None) => HealthStatus::new(
            HealthStatusCode::Unknown,
            "the health check returned no status",
        ),
        Err(error) => error.unknown_health(),
    }
}

/// The `hs` table a script returns: a literal status and whatever the message became.
struct Returned<'a> {
    status: HealthStatusCode,
    message: LuaView<'a>,
}

impl<'a> Returned<'a> {
    fn new(status: HealthStatusCode, message: impl Into<LuaView<'a>>) -> Self {
        Returned {
            status,
            message: message.into(),
        }
    }

    /// What Argo CD makes of `{status = …, message = …}`. The status is always one
    /// of the six codes here: the scripts only assign literals.
    fn into_argo_cd_health(self) -> Option<HealthStatus> {
        match self.message {
            // A string from JSON or built from such strings is valid UTF-8, so Go's JSON
            // round trip leaves it unchanged.
            LuaView::String(message) => Some(HealthStatus::new(self.status, message.into_owned())),
            LuaView::Nil => Some(HealthStatus::new(self.status, "")),
            // A number, boolean or table decodes into the string field with a type
            // error, which Argo CD answers with an empty health status. (A function is
            // never a message: no key the scripts read names a string-library function.)
            LuaView::Number(_) | LuaView::Boolean(_) | LuaView::Table(_) | LuaView::Function => {
                None
            }
        }
    }
}

/// A string literal as a `..` operand. A literal never causes a concatenation error,
/// so the empty subject it is paired with is never shown.
fn literal(text: &'static str) -> LuaView<'static> {
    LuaView::text(text)
}

/// [`GENERATION_CHECK`](super::GENERATION_CHECK), statement by statement: `Some` when
/// the status is of an older generation. The `type()` tests come first, so nothing
/// but indexing a non-table `obj` can fail.
fn stale_generation<'a>(
    obj: &LuaView<'a>,
    semantics: Semantics,
) -> Result<Option<Returned<'a>>, ScriptError> {
    let libs = semantics.open_libs;
    let metadata = obj.index("metadata", "obj", libs)?;
    if !matches!(metadata, LuaView::Table(_)) {
        return Ok(None);
    }
    let status = obj.index("status", "obj", libs)?;
    if !matches!(status, LuaView::Table(_)) {
        return Ok(None);
    }
    let generation = metadata.index("generation", "obj.metadata", libs)?;
    let observed = status.index("observedGeneration", "obj.status", libs)?;
    match (&generation, &observed) {
        (LuaView::Number(g), LuaView::Number(o)) if o < g => {
            let text = concat(
                &[
                    (&literal("Waiting for the new spec to run (generation "), ""),
                    (&generation, "obj.metadata.generation"),
                    (&literal(", status of generation "), ""),
                    (&observed, "obj.status.observedGeneration"),
                    (&literal(")"), ""),
                ],
                semantics.numbers,
            )?;
            Ok(Some(Returned::new(HealthStatusCode::Progressing, text)))
        }
        _ => Ok(None),
    }
}

/// [`GUIDE_SCRIPT`](super::GUIDE_SCRIPT) (the rest of
/// [`BASIC_SCRIPT`](super::BASIC_SCRIPT)), statement by statement.
fn basic<'a>(obj: &LuaView<'a>, semantics: Semantics) -> Result<Returned<'a>, ScriptError> {
    use HealthStatusCode::{Degraded, Healthy, Progressing};
    let libs = semantics.open_libs;

    // if obj.status == nil or obj.status.phase == nil then
    let status = obj.index("status", "obj", libs)?;
    if status.is_nil() || status.index("phase", "obj.status", libs)?.is_nil() {
        return Ok(Returned::new(
            Progressing,
            "Initializing notebook validation",
        ));
    }
    let phase = status.index("phase", "obj.status", libs)?;

    if phase.equals("Succeeded") {
        let mut message = LuaView::text("Notebook validation succeeded");
        let completion = status.index("completionTime", "obj.status", libs)?;
        if !completion.is_nil() {
            let text = concat(
                &[
                    (&message, "hs.message"),
                    (&literal(" at "), ""),
                    (&completion, "obj.status.completionTime"),
                ],
                semantics.numbers,
            )?;
            message = text.into();
        }
        Ok(Returned::new(Healthy, message))
    } else if phase.equals("Failed") {
        // hs.message = obj.status.message or "Notebook validation failed"
        let own = status.index("message", "obj.status", libs)?;
        let mut message = if own.is_truthy() {
            own
        } else {
            literal("Notebook validation failed")
        };
        let retries = status.index("retryCount", "obj.status", libs)?;
        if !retries.is_nil() {
            let text = concat(
                &[
                    (&message, "hs.message"),
                    (&literal(" (retry "), ""),
                    (&retries, "obj.status.retryCount"),
                    (&literal("/3)"), ""),
                ],
                semantics.numbers,
            )?;
            message = text.into();
        }
        Ok(Returned::new(Degraded, message))
    } else if phase.equals("ValidationRunning") {
        let mut message = LuaView::text("Validating notebook");
        let pod = status.index("validationPodName", "obj.status", libs)?;
        if !pod.is_nil() && !pod.equals("") {
            let text = concat(
                &[
                    (&message, "hs.message"),
                    (&literal(" (pod: "), ""),
                    (&pod, "obj.status.validationPodName"),
                    (&literal(")"), ""),
                ],
                semantics.numbers,
            )?;
            message = text.into();
        }
        Ok(Returned::new(Progressing, message))
    } else if phase.equals("Building") {
        Ok(Returned::new(
            Progressing,
            "Building validation environment",
        ))
    } else if phase.equals("BuildComplete") {
        Ok(Returned::new(
            Progressing,
            "Build complete, preparing validation",
        ))
    } else if phase.equals("Initializing") || phase.equals("Pending") || phase.equals("Running") {
        Ok(Returned::new(
            Progressing,
            "Initializing notebook validation",
        ))
    } else {
        let text = concat(
            &[(&literal("Phase: "), ""), (&phase, "phase")],
            semantics.numbers,
        )?;
        Ok(Returned::new(Progressing, text))
    }
}

/// [`ADVANCED_SCRIPT`](super::ADVANCED_SCRIPT), statement by statement.
fn advanced<'a>(obj: &LuaView<'a>, semantics: Semantics) -> Result<Returned<'a>, ScriptError> {
    use HealthStatusCode::{Degraded, Healthy, Progressing};
    let libs = semantics.open_libs;

    let status = obj.index("status", "obj", libs)?;
    if status.is_nil() || status.index("phase", "obj.status", libs)?.is_nil() {
        return Ok(Returned::new(Progressing, "Initializing"));
    }
    let phase = status.index("phase", "obj.status", libs)?;

    if phase.equals("Succeeded") {
        let results = status.index("results", "obj.status", libs)?;
        if results.is_nil() {
            return Ok(Returned::new(Healthy, "Notebook validation succeeded"));
        }
        let total = LuaView::Number(results.length("obj.status.results")? as f64);
        let text = concat(
            &[
                (&literal("Succeeded - Executed "), ""),
                (&total, "totalCells"),
                (&literal(" cells"), ""),
            ],
            semantics.numbers,
        )?;
        Ok(Returned::new(Healthy, text))
    } else if phase.equals("Failed") {
        let results = status.index("results", "obj.status", libs)?;
        if !results.is_nil() {
            for result in results.ipairs("obj.status.results")? {
                let cell_status = result.index("status", "result", libs)?;
                if cell_status.equals("Failure") || cell_status.equals("error") {
                    let cell = result.index("cellIndex", "result", libs)?;
                    // (result.errorMessage or result.errorType or "Error")
                    let error_message = result.index("errorMessage", "result", libs)?;
                    let detail = if error_message.is_truthy() {
                        error_message
                    } else {
                        let error_type = result.index("errorType", "result", libs)?;
                        if error_type.is_truthy() {
                            error_type
                        } else {
                            literal("Error")
                        }
                    };
                    let text = concat(
                        &[
                            (&literal("Failed at cell "), ""),
                            (&cell, "result.cellIndex"),
                            (&literal(": "), ""),
                            (
                                &detail,
                                "(result.errorMessage or result.errorType or \"Error\")",
                            ),
                        ],
                        semantics.numbers,
                    )?;
                    return Ok(Returned::new(Degraded, text));
                }
            }
        }
        let own = status.index("message", "obj.status", libs)?;
        let message = if own.is_truthy() {
            own
        } else {
            literal("Validation failed")
        };
        Ok(Returned::new(Degraded, message))
    } else if phase.equals("ValidationRunning") {
        let results = status.index("results", "obj.status", libs)?;
        if results.is_nil() {
            return Ok(Returned::new(Progressing, "Validating notebook"));
        }
        let mut completed = 0_u64;
        for result in results.ipairs("obj.status.results")? {
            let cell_status = result.index("status", "result", libs)?;
            if cell_status.equals("Success") || cell_status.equals("success") {
                completed = completed.saturating_add(1);
            }
        }
        let completed = LuaView::Number(completed as f64);
        let text = concat(
            &[
                (&literal("Executing notebook ("), ""),
                (&completed, "completedCells"),
                (&literal(" cells completed)"), ""),
            ],
            semantics.numbers,
        )?;
        Ok(Returned::new(Progressing, text))
    } else {
        let text = concat(
            &[(&literal("Phase: "), ""), (&phase, "phase")],
            semantics.numbers,
        )?;
        Ok(Returned::new(Progressing, text))
    }
}
