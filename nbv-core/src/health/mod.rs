//! The Argo CD health of a `NotebookValidationJob` (feature 1): the Lua health checks
//! nbv ships for `argocd-cm`, and the same mapping as native Rust.
//!
//! | phase | Argo CD health | message ([`BASIC_SCRIPT`]) |
//! |---|---|---|
//! | any, while `status.observedGeneration` < `metadata.generation` (not [`GUIDE_SCRIPT`]) | Progressing | `Waiting for the new spec to run (generation <g>, status of generation <o>)` |
//! | no status or no phase | Progressing | `Initializing notebook validation` |
//! | `Succeeded` | Healthy | `Notebook validation succeeded[ at <completionTime>]` |
//! | `Failed` | Degraded | `<message or "Notebook validation failed">[ (retry <n>/3)]` |
//! | `ValidationRunning` | Progressing | `Validating notebook[ (pod: <name>)]` |
//! | `Building` | Progressing | `Building validation environment` |
//! | `BuildComplete` | Progressing | `Build complete, preparing validation` |
//! | `Initializing`, `Pending`, `Running` | Progressing | `Initializing notebook validation` |
//! | anything else | Progressing | `Phase: <phase>` |
//!
//! The native functions ([`assess`], [`assess_advanced`], [`assess_with`]) take the
//! object as JSON, exactly what Argo CD's VM receives, and reproduce the scripts' output
//! byte for byte with Lua's semantics: `""` and `0` are true, so an empty message is
//! kept and a retry count of 0 prints `(retry 0/3)`; numbers are float64 and print as
//! the VM prints them ([`NumberFormat`]); a wrongly typed field makes the script raise
//! the same error ([`ScriptError`]) or produce the same empty health as in Argo CD.
//!
//! Running a script is the job of the workspace crate nbv-lua: its `LuaHealthRunner`
//! runs any health script in an embedded Lua 5.1 set up like Argo CD's production VM
//! (or its open-libraries mode), with an instruction budget, a timeout and a memory
//! limit; its property tests prove that the native functions and the shipped scripts
//! agree. It is a crate of its own because that VM is C, and nbv-core compiles none.
//!
//! # Examples
//!
//! ```
//! use nbv_core::health::{HealthStatus, HealthStatusCode, assess};
//! use serde_json::json;
//!
//! let obj = json!({"status": {"phase": "Succeeded", "completionTime": "2026-01-24T22:30:00Z"}});
//! assert_eq!(
//!     assess(&obj)?,
//!     Some(HealthStatus::new(HealthStatusCode::Healthy, "Notebook validation succeeded at 2026-01-24T22:30:00Z"))
//! );
//! # Ok::<(), nbv_core::health::ScriptError>(())
//! ```

pub mod actions;
mod argocd;
mod error;
mod literal;
mod native;
mod number;
mod scripts;
mod status;
mod view;

pub use argocd::go_json_key_matches;
pub use error::{LuaType, RuntimeErrorKind, ScriptError};
pub use native::{Semantics, assess, assess_advanced, assess_job, assess_with};
pub use number::NumberFormat;
pub use scripts::{
    ADVANCED_SCRIPT, BASIC_SCRIPT, GENERATION_CHECK, GUIDE_SCRIPT, HEALTH_KEY, HealthScript,
    Variant, render_argocd_health_check, render_health_configmap,
};
pub use status::{HealthStatus, HealthStatusCode, UnknownHealthStatusCode};
