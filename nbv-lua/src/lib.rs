//! Argo CD's Lua health-check sandbox: a health script run the way Argo CD's
//! application controller runs it, in nbv's embedded Lua 5.1 — C Lua 5.1.5 with
//! gopher-lua's `goto` and labels and gopher-lua's conversion of numbers to text
//! (`nbv-lua/lua/README.md`). `nbv health` runs scripts with it, and its tests prove
//! that nbv-core's native mapping ([`nbv_core::health::assess_with`]) and the shipped
//! scripts agree.
//!
//! This is the workspace's only C: `build.rs` compiles `lua/` with the `cc` crate and
//! mlua links to it, so that nbv-core stays free of C and of a C compiler.
//!
//! One evaluation is one fresh VM, like Argo CD's `runLua`: the libraries of the
//! [`Sandbox`], the object as the global `obj` (converted as Argo CD's `decodeValue`
//! does), the script run as a chunk, and its last return value read as
//! `ExecuteHealthLua` reads it:
//!
//! | the script returns | Argo CD | here |
//! |---|---|---|
//! | a table `{status, message}` | that health | `Ok(Some(health))` |
//! | a table whose status is not one of the six codes | `Unknown`, [`INVALID_HEALTH_STATUS`] | the same, `Ok(Some(…))` |
//! | `nil`, nothing, an empty table, an array, or a non-string `status`/`message` | an empty health status | `Ok(None)` |
//! | a number, string, boolean or function | error `expect table output from Lua script, not <type>` | [`HealthScriptError::NotATable`] |
//! | a table gopher-json cannot encode | the encoder's error | [`HealthScriptError::Encode`] |
//! | (raises an error) | the error | [`HealthScriptError::Runtime`] |
//!
//! Hostile scripts are contained: a budget of VM instructions (and optionally a
//! timeout, Argo CD's is 1 s) stops endless loops even when they catch errors, and
//! counts the work of library functions written in C too (pattern matching,
//! `string.rep`, `table.sort`, …), so that no single call runs past it; a memory limit
//! stops runaway allocation. Neither sandbox reaches the machine: production has
//! neither `io` nor `os` beyond `time` and `date`, the test harness `os` beyond the
//! clock only with [`EvalOptions::host_access`], and neither reads files.
//!
//! The embedded VM prints numbers as gopher-lua does
//! ([`NumberFormat::GopherLua`]), accepts `goto` and labels where gopher-lua does, and
//! words errors as Lua 5.1 does; [`Sandbox::semantics`] gives the native [`Semantics`]
//! that match it exactly.
//!
//! # Examples
//!
//! ```
//! use nbv_core::health::{HealthStatusCode, Variant, assess_with};
//! use nbv_lua::{LuaHealthRunner, Sandbox};
//! use serde_json::json;
//!
//! let obj = json!({"status": {"phase": "ValidationRunning", "podName": "nb-1"}});
//! let script = Variant::Basic.health_script();
//! let health = LuaHealthRunner::default().evaluate(&script, &obj)?.unwrap();
//! assert_eq!(health.status, HealthStatusCode::Progressing);
//! // The shipped script in the VM and the native mapping agree.
//! let native = assess_with(&obj, Variant::Basic, Sandbox::Production.semantics());
//! assert_eq!(native, Ok(Some(health)));
//! # Ok::<(), nbv_lua::HealthScriptError>(())
//! ```

// Denied rather than forbidden: the number-format hook (`numbers`) and the VM with
// every library (`sandbox`) are the places that need it.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod action;
mod argocd;
mod encode;
mod error;
mod guard;
mod numbers;
mod object;
mod outcome;
mod sandbox;

use std::num::{NonZeroU64, NonZeroUsize};
use std::rc::Rc;
use std::time::Duration;

use mlua::chunk::ChunkMode;
use serde_json::Value;

pub use action::{
    ActionParam, ActionScriptError, ImpactedResource, LuaActionRunner, Operation, ResourceAction,
    merge_patch,
};
pub use argocd::INVALID_HEALTH_STATUS;
pub use error::{EncodeError, HealthScriptError};
pub use object::MAX_OBJECT_DEPTH;

use guard::{Guard, Stop};
use nbv_core::health::{HealthScript, HealthStatus, NumberFormat, RuntimeErrorKind, Semantics};
use object::ConversionError;
use outcome::Unreadable;

/// The libraries a script gets.
///
/// # Examples
///
/// ```
/// use nbv_core::health::NumberFormat;
/// use nbv_lua::Sandbox;
///
/// assert!(!Sandbox::Production.semantics().open_libs);
/// assert!(Sandbox::TestHarness.semantics().open_libs);
/// assert_eq!(Sandbox::TestHarness.semantics().numbers, NumberFormat::GopherLua);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Sandbox {
    /// Argo CD's production VM: `base`, `table`, `package`, and `require("os")` with
    /// `time` and `date` only; no global `os`, no `string`, no `math`.
    #[default]
    Production,
    /// Argo CD's `UseOpenLibs` (its `health_test` harness, a customization with
    /// `useOpenLibs: true`, and its built-in scripts), closed to the machine: `string`,
    /// `math`, `table`, `coroutine`, `debug` (gopher-lua's functions), `os` with
    /// `time`, `date`, `clock` and `difftime`; every function of `io` and the rest of
    /// `os` raise an error that names them, unless [`EvalOptions::host_access`] opens
    /// them as Argo CD's harness has them (see the differences in
    /// `docs/health-checks.md`).
    TestHarness,
}

impl Sandbox {
    /// The native [`Semantics`] that reproduce this sandbox exactly.
    pub const fn semantics(self) -> Semantics {
        Semantics {
            numbers: NumberFormat::GopherLua,
            open_libs: matches!(self, Sandbox::TestHarness),
        }
    }
}

/// Limits and sandbox of an evaluation.
///
/// # Examples
///
/// ```
/// use std::num::NonZeroU64;
/// use nbv_lua::{EvalOptions, Sandbox};
///
/// let options = EvalOptions {
///     sandbox: Sandbox::TestHarness,
///     instruction_budget: NonZeroU64::new(1_000_000).unwrap(),
///     timeout: None,
///     ..EvalOptions::default()
/// };
/// assert_eq!(options.memory_limit.get(), 64 << 20);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalOptions {
    /// The libraries available.
    pub sandbox: Sandbox,
    /// In [`Sandbox::TestHarness`], give scripts `io` and the whole `os` as Argo CD's
    /// harness does, so that they can read and write files, read the environment and
    /// run commands. Only for scripts one trusts. Default: `false`. The production
    /// sandbox has neither library, whatever this says.
    pub host_access: bool,
    /// VM instructions after which the script is stopped, counted in steps of 1000.
    /// The work inside calls counts as instructions too (a call 20, a step of the
    /// pattern matcher 1, 64 bytes copied 1, …; see `docs/health.md`), so that the
    /// budget bounds the whole evaluation. Deterministic, unlike a timeout. Default: 10
    /// million, a small fraction of a second.
    pub instruction_budget: NonZeroU64,
    /// Wall-clock time after which the script is stopped. Default: 1 s, Argo CD's limit.
    /// `None` for results that do not depend on the machine.
    pub timeout: Option<Duration>,
    /// Bytes of Lua memory the VM may use, the object included. Default: 64 MiB.
    pub memory_limit: NonZeroUsize,
    /// Bytes of `print` output kept. Default: 64 KiB.
    pub max_printed_bytes: usize,
}

/// Default of [`EvalOptions::instruction_budget`].
const DEFAULT_INSTRUCTION_BUDGET: NonZeroU64 = NonZeroU64::new(10_000_000).unwrap();
/// Default of [`EvalOptions::memory_limit`].
const DEFAULT_MEMORY_LIMIT: NonZeroUsize = NonZeroUsize::new(64 << 20).unwrap();

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            sandbox: Sandbox::Production,
            host_access: false,
            instruction_budget: DEFAULT_INSTRUCTION_BUDGET,
            timeout: Some(Duration::from_secs(1)),
            memory_limit: DEFAULT_MEMORY_LIMIT,
            max_printed_bytes: 64 << 10,
        }
    }
}

/// Everything an evaluation produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The health Argo CD derives; `None` is its empty health status.
    pub health: Option<HealthStatus>,
    /// What the script printed (invalid UTF-8 replaced).
    pub printed: String,
    /// Whether `printed` was cut at [`EvalOptions::max_printed_bytes`].
    pub printed_truncated: bool,
    /// VM instructions run, and work inside calls counted as instructions, in steps
    /// of 1000.
    pub instructions: u64,
}

/// Runs health scripts with fixed [`EvalOptions`].
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatusCode, Variant};
/// use nbv_lua::LuaHealthRunner;
/// use serde_json::json;
///
/// let runner = LuaHealthRunner::default();
/// let obj = json!({"status": {"phase": "Building"}});
/// let health = runner.evaluate(&Variant::Basic.health_script(), &obj)?.unwrap();
/// assert_eq!(health.status, HealthStatusCode::Progressing);
/// assert_eq!(health.message, "Building validation environment");
/// # Ok::<(), nbv_lua::HealthScriptError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LuaHealthRunner {
    options: EvalOptions,
}

impl LuaHealthRunner {
    /// A runner with `options`.
    pub fn new(options: EvalOptions) -> Self {
        LuaHealthRunner { options }
    }

    /// The options.
    pub fn options(&self) -> &EvalOptions {
        &self.options
    }

    /// The health Argo CD derives from running `script` on `obj`.
    pub fn evaluate(
        &self,
        script: &HealthScript<'_>,
        obj: &Value,
    ) -> Result<Option<HealthStatus>, HealthScriptError> {
        self.run(script, obj).map(|evaluation| evaluation.health)
    }

    /// Runs `script` on `obj` and reports everything it produced.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::health::HealthScript;
    /// use nbv_lua::LuaHealthRunner;
    ///
    /// let script = HealthScript::new("chatty", r#"print("phase", obj.status.phase) return nil"#);
    /// let obj = serde_json::json!({"status": {"phase": "Failed"}});
    /// let evaluation = LuaHealthRunner::default().run(&script, &obj)?;
    /// assert_eq!(evaluation.printed, "phase\tFailed\n");
    /// assert_eq!(evaluation.health, None);
    /// # Ok::<(), nbv_lua::HealthScriptError>(())
    /// ```
    pub fn run(
        &self,
        script: &HealthScript<'_>,
        obj: &Value,
    ) -> Result<Evaluation, HealthScriptError> {
        let name = script.name();
        let run = execute(
            &self.options,
            name,
            script.source(),
            obj,
            None,
            |lua, last| {
                outcome::read(lua, last).map_err(|unreadable| match unreadable {
                    Unreadable::NotATable(found) => Failed::Script(HealthScriptError::NotATable {
                        script: name.to_owned(),
                        found,
                    }),
                    Unreadable::Encode(reason) => Failed::Script(HealthScriptError::Encode {
                        script: name.to_owned(),
                        reason,
                    }),
                    Unreadable::Lua(error) => Failed::Vm(error),
                })
            },
        )?;
        Ok(Evaluation {
            health: run.value,
            printed: run.printed,
            printed_truncated: run.printed_truncated,
            instructions: run.instructions,
        })
    }
}

/// What a script's run produced: the value read from its result, and what it printed.
pub(crate) struct Run<T> {
    value: T,
    printed: String,
    printed_truncated: bool,
    instructions: u64,
}

/// Why reading a script's result failed: a verdict on the script, or a failure of the
/// VM while it was read (out of memory, stopped), which [`classify`] words.
pub(crate) enum Failed {
    Script(HealthScriptError),
    Vm(mlua::Error),
}

/// Runs the Lua chunk `source` (named `name`) on `obj` in a fresh VM as Argo CD's
/// `runLua` does, with `params` as the global `actionParams` when given, and reads its
/// last return value with `read`.
pub(crate) fn execute<T>(
    options: &EvalOptions,
    name: &str,
    source: &str,
    obj: &Value,
    params: Option<&std::collections::BTreeMap<String, String>>,
    read: impl FnOnce(&mlua::Lua, mlua::Value) -> Result<T, Failed>,
) -> Result<Run<T>, HealthScriptError> {
    let fail = |error: mlua::Error, guard: &Guard| classify(name, error, guard, options);

    if source.as_bytes().first() == Some(&0x1b) {
        return Err(HealthScriptError::Syntax {
            script: name.to_owned(),
            message:
                "precompiled Lua chunks are not accepted; Argo CD's VM cannot load them either"
                    .to_owned(),
        });
    }
    let guard = Rc::new(Guard::new(
        options.instruction_budget.get(),
        options.timeout,
    ));
    let vm = sandbox::build(options, &guard).map_err(|error| match error {
        mlua::Error::MemoryError(_) => fail(error, &guard),
        other => HealthScriptError::Vm {
            script: name.to_owned(),
            message: other.to_string(),
        },
    })?;
    let object = object::to_lua(&vm.lua, obj).map_err(|error| match error {
        ConversionError::TooDeep => HealthScriptError::ObjectTooDeep {
            script: name.to_owned(),
            max: MAX_OBJECT_DEPTH,
        },
        ConversionError::Lua(error) => fail(error, &guard),
    })?;
    vm.lua
        .globals()
        .raw_set("obj", object)
        .map_err(|error| fail(error, &guard))?;
    if let Some(params) = params {
        let table = vm
            .lua
            .create_table_from(params.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .map_err(|error| fail(error, &guard))?;
        vm.lua
            .globals()
            .raw_set("actionParams", table)
            .map_err(|error| fail(error, &guard))?;
    }

    let chunk = vm
        .lua
        .load(source)
        .set_name(format!("={name}"))
        .set_mode(ChunkMode::Text)
        .into_function()
        .map_err(|error| fail(error, &guard))?;
    let returned: mlua::MultiValue = chunk.call(()).map_err(|error| fail(error, &guard))?;
    // Argo CD reads the top of the stack: the last value returned.
    let last = returned.into_iter().last().unwrap_or(mlua::Value::Nil);
    let value = read(&vm.lua, last).map_err(|failed| match failed {
        Failed::Script(error) => error,
        Failed::Vm(error) => fail(error, &guard),
    })?;
    let (printed, printed_truncated) = vm.printed.borrow_mut().take();
    Ok(Run {
        value,
        printed,
        printed_truncated,
        instructions: guard.executed(),
    })
}

/// Runs `script` on `obj` with `options`: the health Argo CD derives, or why there is
/// none. See [`LuaHealthRunner`] to run several scripts with the same options.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatus, HealthStatusCode, Variant};
/// use nbv_lua::{EvalOptions, evaluate};
/// use serde_json::json;
///
/// let obj = json!({"status": {"phase": "Failed", "message": "", "retryCount": 0}});
/// let health = evaluate(&Variant::Basic.health_script(), &obj, &EvalOptions::default())?;
/// assert_eq!(health, Some(HealthStatus::new(HealthStatusCode::Degraded, " (retry 0/3)")));
/// # Ok::<(), nbv_lua::HealthScriptError>(())
/// ```
pub fn evaluate(
    script: &HealthScript<'_>,
    obj: &Value,
    options: &EvalOptions,
) -> Result<Option<HealthStatus>, HealthScriptError> {
    LuaHealthRunner::new(options.clone()).evaluate(script, obj)
}

/// The error to report for a failure of the VM while it ran `script`.
fn classify(
    script: &str,
    error: mlua::Error,
    guard: &Guard,
    options: &EvalOptions,
) -> HealthScriptError {
    let script = script.to_owned();
    // A stopped script may have caught and rethrown the stop in any form: the guard knows.
    match guard.stopped() {
        Some(Stop::Instructions) => {
            return HealthScriptError::InstructionBudget {
                script,
                budget: options.instruction_budget.get(),
            };
        }
        Some(Stop::Timeout) => {
            return HealthScriptError::Timeout {
                script,
                timeout: options.timeout.unwrap_or_default(),
            };
        }
        None => {}
    }
    let mut cause = &error;
    loop {
        cause = match cause {
            mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
                cause
            }
            _ => break,
        };
    }
    match cause {
        mlua::Error::MemoryError(_) => HealthScriptError::MemoryLimit {
            script,
            limit: options.memory_limit.get(),
        },
        mlua::Error::SyntaxError { message, .. } => HealthScriptError::Syntax {
            script,
            message: message.clone(),
        },
        mlua::Error::RuntimeError(message) => {
            // mlua appends a traceback; Lua's own message is what precedes it.
            let message = message
                .split("\nstack traceback:")
                .next()
                .unwrap_or(message)
                .to_owned();
            HealthScriptError::Runtime {
                script,
                kind: RuntimeErrorKind::classify(&message),
                message,
            }
        }
        other => {
            let message = other.to_string();
            HealthScriptError::Runtime {
                script,
                kind: RuntimeErrorKind::classify(&message),
                message,
            }
        }
    }
}
