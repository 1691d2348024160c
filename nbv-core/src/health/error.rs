//! What can go wrong while a health script runs, in terms both VMs share.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{HealthStatus, HealthStatusCode};

/// The type of a Lua value, named as Lua's `type()` names it.
///
/// # Examples
///
/// ```
/// use nbv_core::health::LuaType;
///
/// assert_eq!(LuaType::Boolean.to_string(), "boolean");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LuaType {
    /// `nil`: an absent field or a JSON `null`.
    Nil,
    /// `true` or `false`.
    Boolean,
    /// Every JSON number (a float64).
    Number,
    /// A string.
    String,
    /// A JSON object or array.
    Table,
    /// A function.
    Function,
    /// A userdata (or light userdata).
    Userdata,
    /// A coroutine.
    Thread,
}

impl LuaType {
    /// The name `type()` returns.
    pub const fn as_str(self) -> &'static str {
        match self {
            LuaType::Nil => "nil",
            LuaType::Boolean => "boolean",
            LuaType::Number => "number",
            LuaType::String => "string",
            LuaType::Table => "table",
            LuaType::Function => "function",
            LuaType::Userdata => "userdata",
            LuaType::Thread => "thread",
        }
    }
}

impl fmt::Display for LuaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a Lua runtime error, independent of how a VM words it.
///
/// C Lua 5.1 says `attempt to concatenate field 'retryCount' (a boolean value)` where
/// gopher-lua says `cannot perform concat operation between string and boolean`; both
/// are [`Concatenate`](RuntimeErrorKind::Concatenate). Comparing kinds is how the native
/// mapping is checked against a real VM.
///
/// # Examples
///
/// ```
/// use nbv_core::health::RuntimeErrorKind;
///
/// let lua51 = "basic:27: attempt to concatenate field 'retryCount' (a boolean value)";
/// let gopher = "<string>:27: cannot perform concat operation between string and boolean";
/// assert_eq!(RuntimeErrorKind::classify(lua51), RuntimeErrorKind::Concatenate);
/// assert_eq!(RuntimeErrorKind::classify(gopher), RuntimeErrorKind::Concatenate);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RuntimeErrorKind {
    /// Indexing a value that is not a table (`obj.status.phase` with a string status).
    Index,
    /// Concatenating `nil`, a boolean or a table.
    Concatenate,
    /// `#` applied to something other than a string or a table.
    Length,
    /// A library function rejected an argument (`ipairs` of a string).
    BadArgument,
    /// Arithmetic on a non-number.
    Arithmetic,
    /// An invalid comparison (`<` between a number and a string).
    Compare,
    /// Calling a value that is not a function.
    Call,
    /// Anything else, including the script's own `error(...)`.
    Other,
}

impl RuntimeErrorKind {
    /// The kind of an error message of C Lua 5.1 or gopher-lua.
    pub fn classify(message: &str) -> RuntimeErrorKind {
        let rules: [(&[&str], RuntimeErrorKind); 7] = [
            (&["attempt to index"], RuntimeErrorKind::Index),
            (
                &["attempt to concatenate", "cannot perform concat operation"],
                RuntimeErrorKind::Concatenate,
            ),
            (&["attempt to get length"], RuntimeErrorKind::Length),
            (&["bad argument"], RuntimeErrorKind::BadArgument),
            (
                &["attempt to perform arithmetic", "cannot perform"],
                RuntimeErrorKind::Arithmetic,
            ),
            (&["attempt to compare"], RuntimeErrorKind::Compare),
            (&["attempt to call"], RuntimeErrorKind::Call),
        ];
        rules
            .into_iter()
            .find(|(needles, _)| needles.iter().any(|needle| message.contains(needle)))
            .map_or(RuntimeErrorKind::Other, |(_, kind)| kind)
    }
}

impl fmt::Display for RuntimeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The Lua runtime error a shipped script raises on an object, as computed by the
/// native mapping.
///
/// Argo CD turns a script error into health `Unknown` whose message is the VM's error
/// text (`<string>:27: cannot perform concat operation between string and boolean`),
/// and adds a `ComparisonError` condition naming the resource to the Application.
/// This type carries the same facts in nbv's words.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatusCode, LuaType, RuntimeErrorKind, assess};
/// use serde_json::json;
///
/// let obj = json!({"status": {"phase": "Failed", "retryCount": true}});
/// let error = assess(&obj).unwrap_err();
/// assert_eq!(error.kind(), RuntimeErrorKind::Concatenate);
/// assert_eq!(error.found(), LuaType::Boolean);
/// assert_eq!(error.to_string(), "attempt to concatenate obj.status.retryCount (a boolean value)");
/// assert_eq!(error.unknown_health().status, HealthStatusCode::Unknown);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ScriptError {
    kind: RuntimeErrorKind,
    subject: &'static str,
    found: LuaType,
}

impl ScriptError {
    pub(crate) const fn new(kind: RuntimeErrorKind, subject: &'static str, found: LuaType) -> Self {
        ScriptError {
            kind,
            subject,
            found,
        }
    }

    /// The kind of error.
    pub const fn kind(&self) -> RuntimeErrorKind {
        self.kind
    }

    /// The Lua expression whose value was wrong, such as `obj.status.retryCount`.
    pub const fn subject(&self) -> &'static str {
        self.subject
    }

    /// The type of that value.
    pub const fn found(&self) -> LuaType {
        self.found
    }

    /// What Argo CD shows for the resource: `Unknown`, with this error as the message
    /// (Argo CD's own message is gopher-lua's wording of the same error).
    pub fn unknown_health(&self) -> HealthStatus {
        HealthStatus::new(HealthStatusCode::Unknown, self.to_string())
    }

    fn describe(&self) -> String {
        let (subject, found) = (self.subject, self.found);
        match self.kind {
            RuntimeErrorKind::Concatenate => {
                format!("attempt to concatenate {subject} (a {found} value)")
            }
            RuntimeErrorKind::Length => {
                format!("attempt to get length of {subject} (a {found} value)")
            }
            RuntimeErrorKind::BadArgument => {
                format!("bad argument #1 to 'ipairs' ({subject}: table expected, got {found})")
            }
            RuntimeErrorKind::Index => format!("attempt to index {subject} (a {found} value)"),
            other => format!("{other} error on {subject} (a {found} value)"),
        }
    }
}
