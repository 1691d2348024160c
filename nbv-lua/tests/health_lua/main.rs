//! The Lua runner: the shipped scripts run in an Argo CD-equivalent sandbox agree with
//! nbv-core's native mapping on arbitrary objects, Argo CD's handling of return values,
//! the sandboxes' libraries, and containment of hostile scripts.

// nbv-core's table of cases and generators of objects, which its native tests use too.
#[path = "../../../nbv-core/tests/health_support/mod.rs"]
mod health_support;

use std::num::{NonZeroU64, NonZeroUsize};
use std::time::Duration;

use health_support::{Outcome, cases, data_dir, job_object};
use nbv_core::health::{
    HealthScript, HealthStatus, HealthStatusCode, LuaType, NumberFormat, RuntimeErrorKind, Variant,
    assess_with,
};
use nbv_lua::{
    EncodeError, EvalOptions, HealthScriptError, INVALID_HEALTH_STATUS, LuaHealthRunner,
    MAX_OBJECT_DEPTH, Sandbox,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Deterministic options: an instruction budget and no wall-clock limit.
fn options(sandbox: Sandbox) -> EvalOptions {
    EvalOptions {
        sandbox,
        timeout: None,
        ..EvalOptions::default()
    }
}

fn runner(sandbox: Sandbox) -> LuaHealthRunner {
    LuaHealthRunner::new(options(sandbox))
}

/// The outcome of the runner; errors other than a Lua runtime error fail the test.
fn lua(obj: &Value, variant: Variant, sandbox: Sandbox) -> Outcome {
    let result = runner(sandbox).evaluate(&variant.health_script(), obj);
    Outcome::of(result.map_err(|error| {
        error
            .runtime_kind()
            .unwrap_or_else(|| panic!("not a Lua runtime error: {error}"))
    }))
}

fn native(obj: &Value, variant: Variant, sandbox: Sandbox) -> Outcome {
    Outcome::of(assess_with(obj, variant, sandbox.semantics()).map_err(|error| error.kind()))
}

fn run(source: &str, obj: &Value) -> Result<Option<HealthStatus>, HealthScriptError> {
    runner(Sandbox::Production).evaluate(&HealthScript::new("test", source), obj)
}

fn health(status: HealthStatusCode, message: &str) -> Option<HealthStatus> {
    Some(HealthStatus::new(status, message))
}

mod differential;
mod goto;
mod hostile;
mod return_values;
mod sandboxes;
