//! Shipwright: a Build, which Shipwright clones and builds with a build strategy, and
//! the BuildRun that runs it once.
//!
//! Shipwright reads `cloneSecret` itself: the job's `credentialsSecret` must be a Secret
//! it understands (`kubernetes.io/basic-auth` or `kubernetes.io/ssh-auth`), not only the
//! `username`/`password`/`token` keys nbv's own clone reads.

use serde_json::{Value, json};

use super::context::{Named, named};
use super::{Route, S2I_STRATEGY, meta};
use crate::build::{BuildPlan, PlanError};

/// The Build and the BuildRun of `plan` by `route` ([`Route::Shipwright`] or
/// [`Route::ShipwrightS2i`]).
pub(super) fn objects(plan: &BuildPlan, route: Route) -> Result<Vec<Value>, PlanError> {
    let input = named(plan, route)?;
    // Source-to-Image builds from a requirements file; a named Dockerfile is built by
    // the plan's Dockerfile strategy, as OpenShift's dockerStrategy would.
    let (kind, name, params) = match (&input, route) {
        (Named::Dockerfile(path), _) => (
            plan.shipwright.kind(),
            plan.shipwright.name.as_str(),
            vec![json!({"name": "dockerfile", "value": path})],
        ),
        (Named::Requirements { .. }, Route::ShipwrightS2i) => (
            "ClusterBuildStrategy",
            S2I_STRATEGY,
            vec![json!({"name": "builder-image", "value": plan.source.base_image})],
        ),
        (Named::Requirements { .. }, _) => (
            plan.shipwright.kind(),
            plan.shipwright.name.as_str(),
            vec![],
        ),
    };
    let mut git = json!({"url": plan.git.url, "revision": plan.git.git_ref});
    if let Some(secret) = plan
        .git
        .credentials_secret
        .as_ref()
        .filter(|s| !s.is_empty())
    {
        git["cloneSecret"] = json!(secret);
    }
    let mut source = json!({"type": "Git", "git": git});
    if let Some(dir) = input.context_dir() {
        source["contextDir"] = json!(dir);
    }
    let mut output = json!({"image": plan.image});
    if let Some(secret) = &plan.push_secret {
        output["pushSecret"] = json!(secret);
    }
    let mut spec = json!({
        "source": source,
        "strategy": {"kind": kind, "name": name},
        "output": output,
        "timeout": format!("{}s", plan.timeout.as_secs()),
    });
    if !params.is_empty() {
        spec["paramValues"] = json!(params);
    }
    let build = json!({
        "apiVersion": route.api(),
        "kind": "Build",
        "metadata": meta::metadata(plan, route, &plan.name, &[], &[]),
        "spec": spec,
    });
    let mut run_spec = json!({"build": {"name": plan.name}});
    if let Some(account) = &plan.service_account {
        run_spec["serviceAccount"] = json!(account);
    }
    let run = json!({
        "apiVersion": route.api(),
        "kind": "BuildRun",
        "metadata": meta::metadata(plan, route, &plan.name, &[], &[]),
        "spec": run_spec,
    });
    Ok(vec![build, run])
}
