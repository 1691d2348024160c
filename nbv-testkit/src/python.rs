//! The validation Pod's Python, run on this machine, for the twin tests: the notebook
//! container's script is loaded and its functions called with the inputs the Rust
//! implementation of the same rule gets, so that a test can demand identical answers.
//!
//! # Examples
//!
//! ```
//! use nbv_testkit::fixtures::JobBuilder;
//! use nbv_testkit::python::{call_twin, notebook_script, require_python};
//! use serde_json::json;
//!
//! require_python();
//! let script = notebook_script(&JobBuilder::new("ml", "train").typed()?);
//! let lines = call_twin(&script, "def twin(text, limit):\n    return clean(text, limit)\n",
//!                       &[json!(["a\u{1}b", 16])], &[]);
//! assert_eq!(lines, ["a b"]);
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::io::Write;
use std::process::{Command, Stdio};

use nbv_core::api::NotebookValidationJob;
use nbv_core::phase::Attempt;
use nbv_core::pod::{NOTEBOOK_CONTAINER, PodDefaults, validation_pod};
use serde_json::Value;

use crate::fixtures::served_models;

/// Makes sure `python3` runs here: the twin tests need it, and a machine without it
/// fails them rather than passing them unrun.
///
/// # Panics
///
/// When `python3 --version` does not run.
///
/// # Examples
///
/// ```
/// nbv_testkit::python::require_python();
/// ```
pub fn require_python() {
    let found = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "python3 does not run here: the twin tests run the validation Pod's Python; \
         install CPython 3 (any 3.x with its standard library)"
    );
}

/// The script the notebook container of `job`'s first attempt runs, its Pod built as
/// after the model gate opened for every model it names (and, for a job that has none
/// yet, with the uid the API server would assign).
///
/// # Panics
///
/// When the job cannot become a Pod: a test's job is meant to.
///
/// # Examples
///
/// ```
/// use nbv_testkit::fixtures::JobBuilder;
///
/// let script = nbv_testkit::python::notebook_script(&JobBuilder::new("ml", "train").typed()?);
/// assert!(script.contains("def main():"));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn notebook_script(job: &NotebookValidationJob) -> String {
    let mut job = job.clone();
    job.metadata
        .uid
        .get_or_insert_with(|| "uid-of-the-job".to_owned());
    let job = &job;
    let models = served_models(job);
    let attempt = Attempt {
        generation: 1,
        retry: 0,
    };
    let pod = validation_pod(
        job,
        attempt,
        None,
        models.as_deref(),
        &PodDefaults::default(),
    )
    .expect("the job becomes a Pod");
    let spec = pod.spec.expect("a Pod spec");
    let container = spec
        .containers
        .iter()
        .find(|c| c.name == NOTEBOOK_CONTAINER)
        .expect("the notebook container");
    container.command.as_ref().expect("a command")[2].clone()
}

/// Runs `driver` (Python that defines `twin`, with `script`'s functions in scope) once
/// per entry of `inputs`, each a JSON array of `twin`'s arguments, with `env` added to
/// the environment; returns what `twin` returned, one line per input.
///
/// No proxy of the environment is used, so that a test may point the script at a
/// server on loopback.
///
/// # Panics
///
/// When `python3` does not run or the driver fails.
///
/// # Examples
///
/// See the [module](self).
pub fn call_twin(
    script: &str,
    driver: &str,
    inputs: &[Value],
    env: &[(&str, &str)],
) -> Vec<String> {
    let program = format!(
        "import json, sys\nscope = {{'__name__': 'nbv_script'}}\nexec(json.loads(sys.stdin.readline()), scope)\n\
         exec({driver:?}, scope)\nfor line in sys.stdin:\n    print(scope['twin'](*json.loads(line)))\n"
    );
    let mut command = Command::new("python3");
    command
        .args(["-c", &program])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    for proxy in [
        "http_proxy",
        "HTTP_PROXY",
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
    ] {
        command.env_remove(proxy);
    }
    command
        .env("no_proxy", "*")
        .env("PYTHONIOENCODING", "utf-8");
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("python3 runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut input = serde_json::to_string(script).expect("JSON") + "\n";
    for args in inputs {
        input.push_str(&serde_json::to_string(args).expect("JSON"));
        input.push('\n');
    }
    // Written from another thread: a large input would otherwise fill the pipe while
    // python3 waits for its output to be read.
    std::thread::spawn(move || stdin.write_all(input.as_bytes()).expect("write"));
    let output = child.wait_with_output().expect("output");
    assert!(output.status.success(), "the twin driver failed");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}
