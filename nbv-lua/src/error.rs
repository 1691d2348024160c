//! Why a health script produced no health.

use std::time::Duration;

use nbv_core::health::{LuaType, RuntimeErrorKind};

/// Why Argo CD cannot turn the table a script returned into JSON (gopher-json's
/// `Encode`); Argo CD then reports the resource as `Unknown` with the error.
///
/// # Examples
///
/// ```
/// use nbv_lua::EncodeError;
///
/// assert_eq!(EncodeError::SparseArray.to_string(), "cannot encode sparse array");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A table mixes string and number keys, or has keys of another type.
    #[error("cannot encode mixed or invalid key types (a table has a {found} key)")]
    InvalidKeys {
        /// The type of the offending key.
        found: LuaType,
    },
    /// A table with number keys only is not a sequence `1..n`.
    #[error("cannot encode sparse array")]
    SparseArray,
    /// A table appears twice (gopher-json rejects any table it meets a second time,
    /// not only cycles).
    #[error("cannot encode recursively nested tables to JSON")]
    Nested,
    /// A value that has no JSON form.
    #[error("cannot encode {found} to JSON")]
    Unsupported {
        /// Its type.
        found: LuaType,
    },
    /// NaN or an infinity, which Go's `json.Marshal` rejects.
    #[error("json: unsupported value: a NaN or infinite number")]
    NonFiniteNumber,
    /// Tables nested deeper than [`MAX_OBJECT_DEPTH`](crate::MAX_OBJECT_DEPTH), which Go's
    /// JSON scanner rejects.
    #[error("exceeded max depth")]
    TooDeep,
}

/// Why running a health script gave no health: the script's name, and what went wrong.
///
/// In Argo CD, every one of these makes the resource's health `Unknown` with the error
/// as its message, and adds a `ComparisonError` condition to the Application.
///
/// # Examples
///
/// ```
/// use nbv_core::health::HealthScript;
/// use nbv_lua::{EvalOptions, HealthScriptError, evaluate};
///
/// let script = HealthScript::new("typo", "return 1");
/// let error = evaluate(&script, &serde_json::json!({}), &EvalOptions::default()).unwrap_err();
/// assert_eq!(error.script(), "typo");
/// assert!(matches!(error, HealthScriptError::NotATable { .. }));
/// assert!(error.to_string().contains("expect table output from Lua script, not number"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HealthScriptError {
    /// The script does not compile.
    #[error("Lua script {script:?} does not compile: {message}")]
    Syntax {
        /// The script's name.
        script: String,
        /// The compiler's message.
        message: String,
    },
    /// The script raised a Lua error.
    #[error("Lua script {script:?} failed ({kind} error): {message}")]
    Runtime {
        /// The script's name.
        script: String,
        /// The kind of error, comparable with [`ScriptError::kind`](nbv_core::health::ScriptError::kind).
        kind: RuntimeErrorKind,
        /// Lua's message, with the script's name and line.
        message: String,
    },
    /// The script ran more VM instructions than allowed; the work of library calls
    /// (pattern matching, `string.rep`, `table.sort`, …) counts as instructions too.
    #[error(
        "Lua script {script:?} spent its budget of about {budget} VM instructions and was \
         stopped (the work inside library calls such as pattern matching counts too); look \
         for a loop that never ends or a pattern that backtracks (Argo CD stops a script \
         after 1 s)"
    )]
    InstructionBudget {
        /// The script's name.
        script: String,
        /// The budget it exceeded.
        budget: u64,
    },
    /// The script ran longer than allowed.
    #[error("Lua script {script:?} was stopped after {timeout:?} (Argo CD allows 1 s)")]
    Timeout {
        /// The script's name.
        script: String,
        /// The limit it exceeded.
        timeout: Duration,
    },
    /// The script, or the object it was given, needed more memory than allowed.
    #[error("Lua script {script:?} needed more than {limit} bytes of Lua memory and was stopped")]
    MemoryLimit {
        /// The script's name.
        script: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The script returned something other than a table or `nil`.
    #[error(
        "Lua script {script:?} returned a {found}; Argo CD reports \"expect table output from \
         Lua script, not {found}\". Return a table such as {{status = \"Healthy\", message = \"...\"}}"
    )]
    NotATable {
        /// The script's name.
        script: String,
        /// The type it returned.
        found: LuaType,
    },
    /// The returned table cannot be encoded to JSON.
    #[error("Lua script {script:?} returned a table Argo CD cannot encode to JSON: {reason}")]
    Encode {
        /// The script's name.
        script: String,
        /// What gopher-json objects to.
        reason: EncodeError,
    },
    /// The object is nested too deeply to be handed to the script.
    #[error(
        "the object given to Lua script {script:?} is nested deeper than {max} levels, which \
         Go's JSON decoder (and so Argo CD) rejects"
    )]
    ObjectTooDeep {
        /// The script's name.
        script: String,
        /// The deepest nesting accepted.
        max: usize,
    },
    /// The Lua VM could not be prepared (an internal failure, not the script's fault).
    #[error("the Lua VM for script {script:?} could not be prepared: {message}")]
    Vm {
        /// The script's name.
        script: String,
        /// What failed.
        message: String,
    },
}

impl HealthScriptError {
    /// The name of the script the error is about.
    pub fn script(&self) -> &str {
        match self {
            HealthScriptError::Syntax { script, .. }
            | HealthScriptError::Runtime { script, .. }
            | HealthScriptError::InstructionBudget { script, .. }
            | HealthScriptError::Timeout { script, .. }
            | HealthScriptError::MemoryLimit { script, .. }
            | HealthScriptError::NotATable { script, .. }
            | HealthScriptError::Encode { script, .. }
            | HealthScriptError::ObjectTooDeep { script, .. }
            | HealthScriptError::Vm { script, .. } => script,
        }
    }

    /// The kind of a [`Runtime`](HealthScriptError::Runtime) error; `None` for the others.
    pub fn runtime_kind(&self) -> Option<RuntimeErrorKind> {
        match self {
            HealthScriptError::Runtime { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}
