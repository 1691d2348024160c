//! Tekton's controller, for nbv's PipelineRuns (`tekton.dev/v1`, inline `pipelineSpec`
//! and `taskSpec`).
//!
//! As Tekton does: it marks the run started (`startTime`, `Succeeded=Unknown`
//! `Running`, the TaskRun in `childReferences`), substitutes `$(params.…)`,
//! `$(workspaces.….path)`, `$(results.….path)` and `$(context.…)`, runs each task's
//! steps in order with the pipeline's workspaces and `/tekton/results` mounted in
//! every step, reads the task results from their files and writes the pipeline's
//! `status.results`, then `Succeeded=True` with `completionTime`. A failing step ends
//! it `Failed`, its message the step's exit code and the tail of its output;
//! `timeouts.pipeline` ends it `PipelineRunTimeout`; `spec.status: Cancelled` ends it
//! `Cancelled`.
//!
//! Each step runs for real on this machine as the kubelet runs a container
//! (`container.rs`: `/nbv` is the binary under test), except the step in buildah's
//! image: instead of building and pushing, it "pushes" the prepared Dockerfile, its
//! digest being `container::image_digest` of it, and writes the `IMAGE_DIGEST` and
//! `IMAGE_URL` results as buildah's script does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::{Container, Volume};
use kube::api::{Api, DynamicObject};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::runs::run_each;
use super::status::{succeeded, write};
use super::{Hook, Hooks, go_duration};
use crate::support::container::{Exit, Sandbox, Stopped, image_digest, now};
use crate::support::objects::resource;

/// Where Tekton mounts a step's results.
const RESULTS: &str = "/tekton/results";

/// Watches the PipelineRuns of `namespace` and runs each once.
pub async fn run(client: kube::Client, namespace: String, hooks: Hooks, root: PathBuf) {
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        &namespace,
        &resource("tekton.dev", "v1", "PipelineRun", "pipelineruns"),
    );
    let cancelled = |run: &DynamicObject| {
        matches!(
            run.data["spec"]["status"].as_str(),
            Some("Cancelled" | "CancelledRunFinally" | "StoppedRunFinally")
        )
    };
    run_each(api.clone(), cancelled, |run, cancelled_rx| {
        let hook = hooks.of(run.metadata.labels.as_ref());
        let dir = root.join(run.metadata.uid.as_deref().unwrap_or_default());
        tokio::spawn(pipeline_run(
            client.clone(),
            api.clone(),
            run,
            hook,
            dir,
            cancelled_rx,
        ))
    })
    .await;
}

/// How a run ended.
enum Outcome {
    Succeeded(Vec<Value>),
    Failed(String),
    TimedOut,
    Cancelled,
}

async fn pipeline_run(
    client: kube::Client,
    api: Api<DynamicObject>,
    run: DynamicObject,
    hook: Option<Hook>,
    dir: PathBuf,
    mut cancelled: watch::Receiver<bool>,
) {
    let name = run.metadata.name.clone().unwrap_or_default();
    let namespace = run.metadata.namespace.clone().unwrap_or_default();
    let spec = &run.data["spec"];
    let pipeline = &spec["pipelineSpec"];
    let tasks: Vec<Value> = pipeline["tasks"].as_array().cloned().unwrap_or_default();
    let children: Vec<Value> = tasks
        .iter()
        .map(|t| {
            let task = t["name"].as_str().unwrap_or_default();
            json!({"apiVersion": "tekton.dev/v1", "kind": "TaskRun",
                   "name": format!("{name}-{task}"), "pipelineTaskName": task})
        })
        .collect();
    let started = now();
    write(
        &api,
        &name,
        json!({"startTime": started, "childReferences": children,
               "conditions": succeeded("Unknown", "Running",
                   &format!("Tasks Completed: 0 (Failed: 0, Cancelled 0), Incomplete: {}, Skipped: 0", tasks.len()))}),
    )
    .await;

    let timeout = spec["timeouts"]["pipeline"]
        .as_str()
        .and_then(go_duration)
        .filter(|t| !t.is_zero());
    let deadline = match hook {
        // Held: past any timeout of its own, until cancelled.
        Some(Hook::Hold) => None,
        _ => timeout.map(|t| tokio::time::Instant::now() + t),
    };
    let outcome = if *cancelled.borrow() {
        Outcome::Cancelled
    } else if hook == Some(Hook::Hold) {
        let _ = cancelled.wait_for(|c| *c).await;
        Outcome::Cancelled
    } else {
        run_tasks(
            &client,
            &run,
            &tasks,
            &namespace,
            &dir,
            &hook,
            deadline,
            &mut cancelled,
        )
        .await
    };
    let total = tasks.len();
    let (condition, results) = match outcome {
        Outcome::Succeeded(results) => (
            succeeded(
                "True",
                "Succeeded",
                &format!("Tasks Completed: {total} (Failed: 0, Cancelled 0), Skipped: 0"),
            ),
            Some(results),
        ),
        Outcome::Failed(message) => (succeeded("False", "Failed", &message), None),
        Outcome::TimedOut => {
            let within = spec["timeouts"]["pipeline"].as_str().unwrap_or_default();
            let message = format!("PipelineRun \"{name}\" failed to finish within \"{within}\"");
            (succeeded("False", "PipelineRunTimeout", &message), None)
        }
        Outcome::Cancelled => {
            let message = format!(
                "PipelineRun \"{name}\" was cancelled: Tasks Completed: 0 (Failed: 0, Cancelled {total}), Skipped: 0"
            );
            (succeeded("False", "Cancelled", &message), None)
        }
    };
    let mut status = json!({"conditions": condition, "completionTime": now()});
    if let Some(results) = results {
        status["results"] = json!(results);
    }
    write(&api, &name, status).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the tasks in order; the pipeline's results on success.
#[allow(clippy::too_many_arguments)]
async fn run_tasks(
    client: &kube::Client,
    run: &DynamicObject,
    tasks: &[Value],
    namespace: &str,
    dir: &Path,
    hook: &Option<Hook>,
    deadline: Option<tokio::time::Instant>,
    cancelled: &mut watch::Receiver<bool>,
) -> Outcome {
    let name = run.metadata.name.clone().unwrap_or_default();
    let spec = &run.data["spec"];
    let pipeline = &spec["pipelineSpec"];
    let pipeline_params = params(&pipeline["params"], &spec["params"], &BTreeMap::new());
    let mut task_results: BTreeMap<String, String> = BTreeMap::new();
    for task in tasks {
        let task_name = task["name"].as_str().unwrap_or_default();
        let task_spec = &task["taskSpec"];
        let context = BTreeMap::from([
            ("context.pipelineRun.name".to_owned(), name.clone()),
            (
                "context.pipelineRun.namespace".to_owned(),
                namespace.to_owned(),
            ),
            (
                "context.taskRun.name".to_owned(),
                format!("{name}-{task_name}"),
            ),
        ]);
        let mut vars = context.clone();
        for (k, v) in &pipeline_params {
            vars.insert(format!("params.{k}"), v.clone());
        }
        let mut task_vars = context;
        for (k, v) in params(&task_spec["params"], &task["params"], &vars) {
            task_vars.insert(format!("params.{k}"), v);
        }
        // The pipeline's workspaces, one directory each (the volumeClaimTemplate's
        // claim), mounted where the task's workspaces say.
        let results_dir = dir.join(task_name).join("results");
        let mut mounts = vec![(RESULTS.to_owned(), results_dir.clone())];
        // A script's paths are not mapped as arguments are: its variables name the
        // directories here.
        let mut script_vars = BTreeMap::new();
        for ws in task_spec["workspaces"].as_array().into_iter().flatten() {
            let ws_name = ws["name"].as_str().unwrap_or_default();
            let bound = task["workspaces"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|b| b["name"] == ws_name)
                .and_then(|b| b["workspace"].as_str())
                .unwrap_or(ws_name);
            let path = ws["mountPath"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("/workspace/{ws_name}"));
            task_vars.insert(format!("workspaces.{ws_name}.path"), path.clone());
            let host = dir.join("workspaces").join(bound);
            script_vars.insert(
                format!("workspaces.{ws_name}.path"),
                host.display().to_string(),
            );
            mounts.push((path, host));
        }
        for result in task_spec["results"].as_array().into_iter().flatten() {
            let r = result["name"].as_str().unwrap_or_default();
            task_vars.insert(format!("results.{r}.path"), format!("{RESULTS}/{r}"));
            script_vars.insert(
                format!("results.{r}.path"),
                results_dir.join(r).display().to_string(),
            );
        }
        for (k, v) in &task_vars {
            script_vars.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let steps: Vec<Value> = task_spec["steps"].as_array().cloned().unwrap_or_default();
        let volumes: Vec<Volume> =
            serde_json::from_value(task_spec["volumes"].clone()).unwrap_or_default();
        let task_dir = dir.join(task_name);
        let containers: Vec<Container> = steps
            .iter()
            .map(|s| {
                let vars = (&task_vars, &script_vars);
                step_container(s, &task_spec["stepTemplate"], vars, &task_dir)
            })
            .collect();
        let mut sandbox =
            match Sandbox::prepare(client, namespace, &volumes, &containers, &task_dir).await {
                Ok(s) => s,
                Err(e) => return Outcome::Failed(format!("the task's volumes: {e}")),
            };
        for (path, host) in &mounts {
            if let Err(e) = sandbox.mount_everywhere(path, host) {
                return Outcome::Failed(format!("the workspace at {path}: {e}"));
            }
        }
        for (step, container) in steps.iter().zip(&containers) {
            let image = step["image"].as_str().unwrap_or_default();
            let exit = if image.contains("buildah") {
                if *hook == Some(Hook::Stall) {
                    stall(deadline, cancelled).await
                } else {
                    Ok(push(&sandbox, container))
                }
            } else {
                sandbox
                    .run(container, &run.metadata, deadline, cancelled)
                    .await
            };
            match exit {
                Ok(exit) if exit.code == 0 => {}
                Ok(exit) => {
                    return Outcome::Failed(format!(
                        "\"step-{}\" exited with code {}: {}",
                        container.name, exit.code, exit.log
                    ));
                }
                Err(Stopped::Deadline) => return Outcome::TimedOut,
                Err(Stopped::Deleted) => return Outcome::Cancelled,
            }
        }
        for result in task_spec["results"].as_array().into_iter().flatten() {
            let r = result["name"].as_str().unwrap_or_default();
            let file = task_dir.join("results").join(r);
            if let Ok(value) = std::fs::read_to_string(file) {
                task_results.insert(format!("tasks.{task_name}.results.{r}"), value);
            }
        }
    }
    let results = pipeline["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let value = substitute(r["value"].as_str().unwrap_or_default(), &task_results);
            json!({"name": r["name"], "value": value})
        })
        .collect();
    Outcome::Succeeded(results)
}

/// Declared parameters with their defaults, overridden by `given` (`[{name, value}]`),
/// whose values have `vars` substituted.
fn params(
    declared: &Value,
    given: &Value,
    vars: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let mut out = BTreeMap::new();
    for p in declared.as_array().into_iter().flatten() {
        if let Some(name) = p["name"].as_str() {
            out.insert(name.to_owned(), text(&p["default"]));
        }
    }
    for p in given.as_array().into_iter().flatten() {
        if let Some(name) = p["name"].as_str() {
            out.insert(name.to_owned(), substitute(&text(&p["value"]), vars));
        }
    }
    out
}

/// `text` with each `$(name)` of `vars` replaced.
fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_owned();
    for (name, value) in vars {
        out = out.replace(&format!("$({name})"), value);
    }
    out
}

/// Every string in `value` with `vars` substituted.
fn substitute_all(value: &mut Value, vars: &BTreeMap<String, String>) {
    match value {
        Value::String(s) => *s = substitute(s, vars),
        Value::Array(items) => items.iter_mut().for_each(|v| substitute_all(v, vars)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute_all(v, vars)),
        _ => {}
    }
}

/// A step as the container Tekton runs: the step template's fields under the step's,
/// variables substituted, a `script` written to a file and run.
fn step_container(
    step: &Value,
    template: &Value,
    (vars, script_vars): (&BTreeMap<String, String>, &BTreeMap<String, String>),
    dir: &Path,
) -> Container {
    let mut merged = template.as_object().cloned().unwrap_or_default();
    let template_env = merged.remove("env");
    for (k, v) in step.as_object().into_iter().flatten() {
        merged.insert(k.clone(), v.clone());
    }
    if let Some(Value::Array(template_env)) = template_env {
        let mut env = template_env;
        let own = merged
            .get("env")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        env.retain(|e| !own.iter().any(|o| o["name"] == e["name"]));
        env.extend(own);
        merged.insert("env".into(), json!(env));
    }
    let script = merged
        .remove("script")
        .and_then(|s| s.as_str().map(|s| substitute(s, script_vars)));
    let mut value = Value::Object(merged);
    substitute_all(&mut value, vars);
    let mut container: Container = serde_json::from_value(value).unwrap_or_default();
    if let Some(script) = script {
        // nbv's image has nbv at /nbv: here, the binary under test.
        let script = script.replace("/nbv ", &format!("{} ", env!("CARGO_BIN_EXE_nbv")));
        let file = dir.join("scripts").join(&container.name);
        let _ = std::fs::create_dir_all(dir.join("scripts"));
        let _ = std::fs::write(&file, &script);
        let file = file.display().to_string();
        container.command = Some(if script.starts_with("#!") {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755));
            vec![file]
        } else {
            vec!["/bin/sh".into(), "-e".into(), file]
        });
        container.args = None;
    }
    container
}

/// buildah's step, as far as its outcome goes: the image "pushed" is the prepared
/// Dockerfile (`DOCKERFILE`, relative to `CONTEXT`), its digest `image_digest` of it,
/// written with `IMAGE` to the results as buildah's script does.
fn push(sandbox: &Sandbox, container: &Container) -> Exit {
    let var = |name: &str| {
        container
            .env
            .iter()
            .flatten()
            .find(|e| e.name == name)
            .and_then(|e| e.value.clone())
    };
    let started = now();
    let context = var("CONTEXT")
        .or_else(|| container.working_dir.clone())
        .unwrap_or_default();
    let dockerfile = match var("DOCKERFILE") {
        Some(d) if d.starts_with('/') => d,
        Some(d) => format!("{context}/{d}"),
        None => format!("{context}/.nbv-build/Dockerfile"),
    };
    let dockerfile = PathBuf::from(sandbox.path_in(container, &dockerfile));
    let image = var("IMAGE").unwrap_or_default();
    let outcome = image_digest(&dockerfile)
        .map_err(|e| format!("Error: no Dockerfile at {}: {e}", dockerfile.display()))
        .and_then(|digest| {
            for (result, value) in [("IMAGE_DIGEST", &digest), ("IMAGE_URL", &image)] {
                let file = sandbox.path_in(container, &format!("{RESULTS}/{result}"));
                std::fs::write(file, value).map_err(|e| e.to_string())?;
            }
            Ok(format!("Pushed {image}@{digest}"))
        });
    let (code, log) = match outcome {
        Ok(log) => (0, log),
        Err(log) => (1, log),
    };
    Exit {
        code,
        message: String::new(),
        log,
        started,
        finished: now(),
    }
}

/// A build step that never ends: until the deadline or a cancel.
async fn stall(
    deadline: Option<tokio::time::Instant>,
    cancelled: &mut watch::Receiver<bool>,
) -> Result<Exit, Stopped> {
    let until = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = until => Err(Stopped::Deadline),
        _ = async { let _ = cancelled.wait_for(|c| *c).await; } => Err(Stopped::Deleted),
    }
}
