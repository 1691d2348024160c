//! `nbv pod run`: the notebook container. Runs the notebook with the image's papermill
//! (through the runner `nbv pod install` put beside this binary), judges the run with
//! nbv-core's rules and writes the report to the termination message.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use nbv_core::pod::{
    RUNNER_FILE, RunError, RunErrorKind, RunReport, RunSettings, RunnerOutcome, Start, before_run,
    judge, prediction_entry, with_predictions,
};
use serde_json::Value;

pub fn run(out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let (report, result) = match RunSettings::from_env(|name| std::env::var(name).ok()) {
        Ok(settings) => (report(&settings, err), settings.result),
        Err(e) => (
            internal("InvalidSettings", &e.to_string()),
            std::env::var("NBV_RESULT").unwrap_or_else(|_| "/dev/termination-log".to_owned()),
        ),
    };
    let text = report.encode();
    let _ = writeln!(out, "nbv result: {text}");
    if let Err(e) = std::fs::write(&result, &text) {
        let _ = writeln!(err, "nbv: cannot write the result to {result}: {e}");
    }
    u8::from(report.error.is_some())
}

fn internal(ename: &str, evalue: &str) -> RunReport {
    failed(error(RunErrorKind::Internal, ename, evalue))
}

/// The report of a run that ended with `error` before anything was judged.
fn failed(error: RunError) -> RunReport {
    RunReport {
        error: Some(error),
        ..RunReport::default()
    }
}

fn error(kind: RunErrorKind, ename: &str, evalue: &str) -> RunError {
    RunError {
        kind,
        cell: None,
        ename: ename.to_owned(),
        evalue: evalue.to_owned(),
    }
}

fn report(settings: &RunSettings, err: &mut dyn Write) -> RunReport {
    // The notebook's home: images run as users whose own home may not be writable.
    if let Some(home) = std::env::var_os("HOME") {
        let _ = std::fs::create_dir_all(home);
    }
    // Read before the notebook runs, so that the run cannot change what it is compared with.
    let golden = settings
        .golden
        .as_ref()
        .map(|golden| read_golden(&golden.path, &golden.name));
    let source = match notebook_path(settings) {
        Ok(source) => source,
        Err(error) => return failed(error),
    };
    let source_json: Option<Value> = std::fs::read(&source)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let probe_cells = match before_run(settings, source_json.as_ref()) {
        Start::Report(report) => return *report,
        Start::Execute { probe_cells } => probe_cells,
    };
    let outcome = match execute(&source, settings, probe_cells.as_deref(), err) {
        Ok(outcome) => outcome,
        Err(error) => return failed(error),
    };
    let executed: Option<Value> = std::fs::read(&settings.output)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let judged = judge(settings, executed.as_ref(), outcome, golden);
    match (&settings.models, judged.ask_models) {
        (Some(request), true) => {
            let entries = ask_models(request);
            with_predictions(judged, entries)
        }
        _ => judged.report,
    }
}

/// The notebook's file, inside the repository (symbolic links resolved).
fn notebook_path(settings: &RunSettings) -> Result<PathBuf, RunError> {
    let missing = |why: String| error(RunErrorKind::Missing, "FileNotFoundError", &why);
    let repository = Path::new(&settings.repository)
        .canonicalize()
        .map_err(|e| missing(format!("the repository {}: {e}", settings.repository)))?;
    let source = repository
        .join(&settings.notebook)
        .canonicalize()
        .map_err(|_| missing(format!("No such file: {}", settings.notebook)))?;
    if !source.starts_with(&repository) {
        return Err(missing(format!(
            "{} is not inside the repository",
            settings.notebook
        )));
    }
    if !source.is_file() {
        return Err(missing(format!("No such file: {}", settings.notebook)));
    }
    Ok(source)
}

/// The golden notebook at `path`, named `name` in messages.
fn read_golden(path: &str, name: &str) -> Result<Value, RunError> {
    let golden = |ename: &str, evalue: String| RunError {
        kind: RunErrorKind::Golden,
        cell: None,
        ename: ename.to_owned(),
        evalue,
    };
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => golden(
            "FileNotFoundError",
            format!("No such golden notebook: {name}"),
        ),
        _ => golden("OSError", format!("{name}: {e}")),
    })?;
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| golden("JSONDecodeError", format!("{name}: {e}")))?;
    if !value.get("cells").is_some_and(Value::is_array) {
        return Err(golden(
            "ValueError",
            format!("{name}: it has no list of cells"),
        ));
    }
    Ok(value)
}

/// Runs the runner with the image's `python3`; what it reported.
fn execute(
    source: &Path,
    settings: &RunSettings,
    probe_cells: Option<&[u64]>,
    err: &mut dyn Write,
) -> Result<RunnerOutcome, RunError> {
    let tools = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_owned))
        .unwrap_or_default();
    let runner = tools.join(RUNNER_FILE);
    if !runner.is_file() {
        return Err(error(
            RunErrorKind::Internal,
            "RunnerMissing",
            &format!(
                "{} is missing: the nbv-tools init container did not install nbv into the Pod",
                runner.display()
            ),
        ));
    }
    let outcome_path = format!("{}.outcome.json", settings.output);
    let _ = std::fs::remove_file(&outcome_path);
    let mut command = Command::new("python3");
    command
        .arg(&runner)
        .arg(source)
        .arg(&settings.output)
        .arg(&outcome_path);
    if let Some(cells) = probe_cells {
        command.arg(serde_json::to_string(cells).unwrap_or_default());
    }
    let status = match command.status() {
        Ok(status) => status,
        Err(e) => {
            return Err(error(
                RunErrorKind::Setup,
                "FileNotFoundError",
                &format!("cannot run python3 (the image needs python3 with papermill): {e}"),
            ));
        }
    };
    let text = std::fs::read_to_string(&outcome_path).unwrap_or_default();
    RunnerOutcome::parse(&text).map_err(|_| {
        let _ = writeln!(err, "nbv: the runner wrote no outcome ({status})");
        error(
            RunErrorKind::Internal,
            "RunnerFailed",
            &format!(
                "python3 {RUNNER_FILE} ended ({status}) without an outcome; see the container's log"
            ),
        )
    })
}

/// Asks every model, in order.
fn ask_models(
    request: &nbv_core::pod::PredictionRequest,
) -> Vec<(nbv_core::models::ReportedPrediction, Option<&'static str>)> {
    let started = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|runtime| Ok((runtime, super::predict::Models::new()?)));
    let (runtime, models) = match started {
        Ok(started) => started,
        Err(e) => {
            let why = format!("cannot start the HTTP client: {e}");
            return request
                .models
                .iter()
                .map(|m| prediction_entry(request, m, Err(why.clone())))
                .collect();
        }
    };
    request
        .models
        .iter()
        .map(|model| {
            let answer = runtime.block_on(models.ask(&model.predict_url(), &request.test_data));
            prediction_entry(request, model, answer)
        })
        .collect()
}
