//! The clone and notebook scripts, run for real when the tools exist here.

use super::*;

// ---------------------------------------------------------------------------------------
// The scripts, run for real (when the tools exist here)
// ---------------------------------------------------------------------------------------

/// Makes sure `tool` runs here (`tool -c exit` for shells, `tool --version`
/// otherwise): a machine without it fails the tests that need it rather than passing
/// them unrun.
fn require(tool: &str) {
    let args: &[&str] = if tool == "sh" {
        &["-c", "exit 0"]
    } else {
        &["--version"]
    };
    let found = Command::new(tool)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "{tool} does not run here: install it to run the Pod's scripts"
    );
}

fn script(pod: &Pod, name: &str) -> String {
    container(pod, name).command.as_ref().expect("command")[2].clone()
}

fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nbv-pod-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// Runs the clone script of the pod with the clone container's environment, redirected
/// to `dir`; returns whether it succeeded and its stderr.
fn run_clone(pod: &Pod, dir: &Path, extra: &[(&str, &str)]) -> (bool, String) {
    let clone = container(pod, CLONE_CONTAINER);
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script(pod, CLONE_CONTAINER))
        .env_clear();
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    for var in clone.env.iter().flatten() {
        if let Some(value) = &var.value {
            command.env(&var.name, value);
        }
    }
    command.env("NBV_WORKSPACE", dir.join("workspace"));
    command.env("HOME", dir);
    // The local test repository is a path, a transport the Pod does not allow.
    command.env_remove("GIT_ALLOW_PROTOCOL");
    for (name, value) in extra {
        command.env(name, value);
    }
    let output = command.output().expect("sh runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_clone_script_checks_out_the_ref_and_never_runs_a_value() {
    require("git");
    require("sh");
    let dir = temp_dir("clone");
    let origin = dir.join("origin");
    std::fs::create_dir_all(origin.join("notebooks")).expect("dir");
    std::fs::write(origin.join("notebooks/train.ipynb"), "{}").expect("write");
    git(&origin, &["init", "--quiet", "--initial-branch=main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "notebook"]);
    git(&origin, &["tag", "v1"]);
    let url = origin.to_string_lossy().into_owned();

    for git_ref in ["main", "v1"] {
        let _ = std::fs::remove_dir_all(dir.join("workspace"));
        let pod = pod_of(&job_with(
            json!({"notebook": {"git": {"url": "https://x/r.git", "ref": git_ref}}}),
        ));
        let (ok, stderr) = run_clone(&pod, &dir, &[("NBV_GIT_URL", &url)]);
        assert!(ok, "{git_ref}: {stderr}");
        assert!(
            dir.join("workspace/repo/notebooks/train.ipynb").is_file(),
            "{git_ref}"
        );
        // The notebook runs as another user: it writes its home and next to itself.
        for writable in [
            "workspace/home",
            "workspace/repo/notebooks",
            "workspace/repo/notebooks/train.ipynb",
        ] {
            let mode = std::fs::metadata(dir.join(writable))
                .expect("exists")
                .permissions()
                .mode();
            assert_eq!(
                mode & 0o002,
                0o002,
                "{writable} is not writable by others: {mode:o}"
            );
        }
    }

    let pwned = dir.join("pwned");
    let pwned_text = pwned.to_string_lossy().into_owned();
    for hostile in [
        format!("main; touch {pwned_text}"),
        format!("$(touch {pwned_text})"),
        format!("`touch {pwned_text}`"),
        format!("main\" && touch \"{pwned_text}"),
        format!("--upload-pack=touch {pwned_text}"),
    ] {
        let _ = std::fs::remove_dir_all(dir.join("workspace"));
        let mut job = job_with(json!({}));
        job.spec.notebook.git.git_ref = "main".to_owned();
        let pod = pod_of(&job);
        let (ok, _) = run_clone(
            &pod,
            &dir,
            &[("NBV_GIT_URL", &url), ("NBV_GIT_REF", &hostile)],
        );
        assert!(!ok, "{hostile} was fetched");
        assert!(!pwned.exists(), "{hostile} ran a command");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_credential_helper_answers_from_the_environment_only() {
    require("git");
    require("sh");
    let dir = temp_dir("helper");
    let origin = dir.join("origin");
    std::fs::create_dir_all(&origin).expect("dir");
    std::fs::write(origin.join("README"), "x").expect("write");
    git(&origin, &["init", "--quiet", "--initial-branch=main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "x"]);
    let pod = pod_of(&job_with(
        json!({"notebook": {"git": {"credentialsSecret": "git-creds"}}}),
    ));
    let token = "ghp_n0t\\a'real\"t0ken";
    let (ok, stderr) = run_clone(
        &pod,
        &dir,
        &[
            ("NBV_GIT_URL", &origin.to_string_lossy()),
            ("NBV_GIT_TOKEN", token),
        ],
    );
    assert!(ok, "{stderr}");
    let repo = dir.join("workspace/repo");
    let config = std::fs::read_to_string(repo.join(".git/config")).expect("config");
    assert!(!config.contains("ghp_"), "the token is not written down");

    let ask = |vars: &[(&str, &str)]| {
        let mut command = Command::new("git");
        command
            .args(["credential", "fill"])
            .current_dir(&repo)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (name, value) in vars {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("git runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"protocol=https\nhost=example.com\n\n")
            .expect("write");
        String::from_utf8(child.wait_with_output().expect("output").stdout).expect("UTF-8")
    };
    let answer = ask(&[("NBV_GIT_TOKEN", token)]);
    assert!(answer.contains("username=x-access-token\n"), "{answer}");
    assert!(answer.contains(&format!("password={token}\n")), "{answer}");
    let answer = ask(&[
        ("NBV_GIT_USERNAME", "bot"),
        ("NBV_GIT_PASSWORD", "pw"),
        ("NBV_GIT_TOKEN", token),
    ]);
    assert!(answer.contains("username=bot\npassword=pw\n"), "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the notebook script with `env`; returns its exit code and the result it wrote.
fn run_notebook_script(pod: &Pod, dir: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let result = dir.join("termination-log");
    let mut command = Command::new("python3");
    command.arg("-c").arg(script(pod, NOTEBOOK_CONTAINER));
    command
        .env("NBV_RESULT", &result)
        .env("NBV_OUTPUT", dir.join("out.ipynb"));
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("python3 runs");
    (
        output.status.code().unwrap_or(-1),
        std::fs::read_to_string(&result).unwrap_or_default(),
    )
}

#[test]
fn the_notebook_script_reports_a_missing_notebook_and_a_missing_papermill() {
    require("python3");
    let dir = temp_dir("script");
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).expect("dir");
    std::fs::write(
        repo.join("t.ipynb"),
        r#"{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#,
    )
    .expect("write");
    let pod = pod_of(&job_with(json!({})));
    let repo_text = repo.to_string_lossy().into_owned();

    let (code, result) = run_notebook_script(
        &pod,
        &dir,
        &[
            ("NBV_REPOSITORY", &repo_text),
            ("NBV_NOTEBOOK", "nope.ipynb"),
        ],
    );
    assert_eq!(code, 1);
    let report = RunReport::parse(&result).expect("a report");
    assert_eq!(
        report.error.as_ref().map(|e| e.kind),
        Some(RunErrorKind::Missing)
    );

    let (code, result) = run_notebook_script(
        &pod,
        &dir,
        &[
            ("NBV_REPOSITORY", &repo_text),
            ("NBV_NOTEBOOK", "../../etc/passwd"),
        ],
    );
    assert_eq!(code, 1);
    assert!(result.contains("is not inside the repository"), "{result}");

    let has_papermill = Command::new("python3")
        .args(["-c", "import papermill"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_papermill {
        let (code, result) = run_notebook_script(
            &pod,
            &dir,
            &[("NBV_REPOSITORY", &repo_text), ("NBV_NOTEBOOK", "t.ipynb")],
        );
        assert_eq!(code, 1);
        let report = RunReport::parse(&result).expect("a report");
        let error = report.error.expect("an error");
        assert_eq!(error.kind, RunErrorKind::Setup);
        assert!(error.evalue.contains("'papermill'"), "{}", error.evalue);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Calls a function of the notebook script with JSON arguments, once per line of
/// `inputs`; returns one JSON-encoded result per line.
fn call_script(function: &str, inputs: &[Value]) -> Vec<String> {
    let pod = pod_of(&job_with(json!({})));
    let driver = format!(
        "import json\ndef twin(*args):\n    out = {function}(*args)\n    \
         return out if isinstance(out, str) else json.dumps(out)\n"
    );
    nbv_testkit::python::call_twin(&script(&pod, NOTEBOOK_CONTAINER), &driver, inputs, &[])
}

#[test]
fn the_python_writer_and_rust_encode_agree_byte_for_byte() {
    require("python3");
    let mut runner = TestRunner::deterministic();
    let strategy = arbitrary_report();
    let reports: Vec<RunReport> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("a report").current())
        .collect();
    let inputs: Vec<Value> = reports
        .iter()
        .map(|r| {
            let findings = r.chk.as_ref().map(|c| &c.findings);
            json!([r.cells, r.error, r.cmp, findings, r.mdl])
        })
        .collect();
    let python = call_script("encode", &inputs);
    assert_eq!(python.len(), reports.len());
    for (report, python) in reports.iter().zip(python) {
        assert_eq!(report.encode(), python, "for {report:?}");
    }
}

#[test]
fn the_python_reader_indexes_cells_as_in_the_source_notebook() {
    require("python3");
    // A notebook as papermill leaves it after cell 3 (the second code cell) raised:
    // an error banner on top, an anchor before the failing cell, timings in metadata.
    let executed = json!({"cells": [
        {"cell_type": "markdown", "metadata": {"tags": ["papermill-error-cell-tag"]}, "source": "banner"},
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
        {"cell_type": "code", "execution_count": 1, "metadata": {"papermill": {"duration": 1.234, "status": "completed"}}, "outputs": []},
        {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ""},
        {"cell_type": "markdown", "metadata": {"tags": ["papermill-error-cell-tag"]}, "source": "anchor"},
        {"cell_type": "code", "execution_count": 2, "metadata": {"papermill": {"duration": 0.5, "status": "failed"}},
         "outputs": [{"output_type": "error", "ename": "KeyError", "evalue": "'x'", "traceback": []}]},
        {"cell_type": "code", "execution_count": null, "metadata": {"papermill": {"status": "pending"}}, "outputs": []},
        {"cell_type": "code", "execution_count": 3, "metadata": {"execution": {
            "iopub.execute_input": "2026-01-24T22:00:00.000000Z", "shell.execute_reply": "2026-01-24T22:00:02.500000Z"}},
         "outputs": [{"output_type": "error", "ename": "SystemExit", "evalue": "0"}]},
        {"cell_type": "code", "execution_count": null, "metadata": {"papermill": {"status": "completed", "start_time": null}}, "outputs": []},
        {"cell_type": "code", "execution_count": null, "metadata": {"papermill": {"status": "completed", "start_time": "2026-01-24T22:00:03Z", "duration": 0.0}}, "outputs": [], "source": ""}
    ]});
    let cells = call_script("read_cells", &[json!([executed])]);
    let cells: Value = serde_json::from_str(&cells[0]).expect("JSON");
    assert_eq!(
        cells,
        json!([
            {"i": 1, "s": "ok", "t": 1.23},
            {"i": 2, "s": "skip"},
            {"i": 3, "s": "err", "t": 0.5, "e": "KeyError: 'x'"},
            {"i": 4, "s": "skip"},
            {"i": 5, "s": "ok", "t": 2.5},
            {"i": 6, "s": "skip"},
            {"i": 7, "s": "ok", "t": 0.0}
        ])
    );
}

// ---------------------------------------------------------------------------------------
// The checks of spec.validationConfig: the Python twin and the probe, run for real
// ---------------------------------------------------------------------------------------

fn arb_expectation() -> impl Strategy<Value = Expectation> {
    let decimal = prop_oneof![
        (-1000i32..1000).prop_map(|n| n.to_string()),
        (-1000i32..1000, 0u32..1000).prop_map(|(i, f)| format!("{i}.{f}")),
        (1u32..9, -5i32..5).prop_map(|(m, e)| format!("{m}e{e}")),
    ];
    let types = prop::sample::select(vec![
        "float",
        "int",
        "pandas.DataFrame",
        "numpy.ndarray",
        "list",
        "object",
    ]);
    (
        proptest::option::of(types),
        proptest::option::of(proptest::collection::vec(-1i64..4, 1..3)),
        proptest::option::of(decimal.clone()),
        proptest::option::of(decimal),
        any::<bool>(),
    )
        .prop_map(|(output_type, shape, min, max, not_empty)| Expectation {
            cell: 3,
            output_type: output_type.map(str::to_owned),
            shape,
            min,
            max,
            not_empty,
        })
}

fn arb_observation() -> impl Strategy<Value = Observation> {
    let types = prop::sample::select(vec![
        vec!["float", "object"],
        vec!["int", "object"],
        vec!["numpy.float64", "numpy.floating", "float", "object"],
        vec![
            "pandas.core.frame.DataFrame",
            "pandas.core.generic.NDFrame",
            "object",
        ],
        vec!["numpy.ndarray", "object"],
        vec!["list", "object"],
        vec!["NoneType", "object"],
        vec![],
    ]);
    let number = prop_oneof![
        Just(f64::NAN),
        (-2000i32..2000).prop_map(f64::from),
        (-2000i32..2000).prop_map(|n| f64::from(n) / 7.0),
    ];
    (
        types,
        "[a-z0-9 ().,]{0,20}",
        any::<[bool; 3]>(),
        proptest::option::of(proptest::collection::vec(0u64..4, 0..3)),
        proptest::option::of(number),
    )
        .prop_map(
            |(types, repr, [none, nan, empty], shape, number)| Observation {
                types: types.into_iter().map(str::to_owned).collect(),
                repr,
                none,
                nan: nan || number.is_some_and(f64::is_nan),
                empty,
                shape,
                real: number.is_some(),
                num: number.filter(|n| n.is_finite()),
            },
        )
}

fn arb_policy() -> impl Strategy<Value = CheckPolicy> {
    let flag = || prop_oneof![Just(None), Just(Some(false)), Just(Some(true))];
    let level = prop::sample::select(vec![
        ValidationLevel::Learning,
        ValidationLevel::Development,
        ValidationLevel::Staging,
        ValidationLevel::Production,
    ]);
    (level, flag(), flag(), flag()).prop_map(|(level, strict, silent, types)| {
        nbv_core::checks::resolve(&ValidationConfig {
            level: Some(level),
            strict_mode: strict,
            detect_silent_failures: silent,
            check_output_types: types.filter(|t| !t),
            ..ValidationConfig::default()
        })
        .expect("valid")
    })
}

#[test]
fn the_python_checks_and_rust_evaluate_agree() {
    require("python3");
    let mut runner = TestRunner::deterministic();
    let strategy = (
        proptest::option::of(arb_expectation()),
        arb_observation(),
        arb_policy(),
    );
    let cases: Vec<_> = (0..600)
        .map(|_| strategy.new_tree(&mut runner).expect("a case").current())
        .collect();
    let inputs: Vec<Value> = cases.iter().map(|(e, o, p)| json!([3, e, o, p])).collect();
    let python = call_script("evaluate", &inputs);
    assert_eq!(python.len(), cases.len());
    for ((expectation, observation, policy), python) in cases.iter().zip(python) {
        let rust = evaluate(3, expectation.as_ref(), observation, policy);
        let python: Value = serde_json::from_str(&python).expect("JSON");
        assert_eq!(
            serde_json::to_value(&rust).expect("JSON"),
            python,
            "for {expectation:?} {observation:?} {:?}",
            policy.checks
        );
    }
}

#[test]
fn the_python_findings_and_rust_capped_agree_byte_for_byte() {
    require("python3");
    let mut runner = TestRunner::deterministic();
    let strategy = arbitrary_report();
    let reports: Vec<RunReport> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("a report").current())
        .filter(|r| r.chk.is_some())
        .collect();
    assert!(reports.len() > 50);
    let inputs: Vec<Value> = reports
        .iter()
        .map(|r| json!([r.chk.as_ref().map(|c| &c.findings)]))
        .collect();
    let python = call_script("encode_checks", &inputs);
    for (report, python) in reports.iter().zip(python) {
        // Byte for byte in the whole document (above); here, the same findings kept.
        let rust = report.chk.as_ref().map(CheckReport::capped);
        let python: Value = serde_json::from_str(&python).expect("JSON");
        assert_eq!(serde_json::to_value(&rust).expect("JSON"), python);
    }
}

/// The python of the papermill virtualenv (`NBV_E2E_PYTHON`, by default the one
/// `scripts/control-plane install` makes), which must have papermill and pandas: the
/// tests that need it are ignored unless asked for, and then fail without it.
fn papermill_python() -> PathBuf {
    let python = std::env::var_os("NBV_E2E_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/nbv/papermill/bin/python3"));
    let found = Command::new(&python)
        .args(["-c", "import papermill, pandas"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "{} has no papermill and pandas: run `scripts/control-plane install`, or set \
         NBV_E2E_PYTHON to a python that has them",
        python.display()
    );
    python
}

fn notebook(sources: &[&str]) -> Value {
    let cells: Vec<Value> = sources
        .iter()
        .enumerate()
        .map(|(i, source)| match source.strip_prefix("# md ") {
            Some(text) => json!({"cell_type": "markdown", "id": format!("c{i}"), "metadata": {}, "source": text}),
            None => json!({"cell_type": "code", "id": format!("c{i}"), "execution_count": null,
                           "metadata": {}, "outputs": [], "source": source}),
        })
        .collect();
    json!({"cells": cells, "nbformat": 4, "nbformat_minor": 5,
           "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}})
}

/// Runs the Pod's notebook script with the papermill python on `source`; returns the
/// report and the executed notebook.
fn run_checked(python: &Path, dir: &Path, pod: &Pod, source: &Value) -> (i32, RunReport, Value) {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).expect("dir");
    std::fs::write(repo.join("t.ipynb"), source.to_string()).expect("write");
    let _ = std::fs::remove_file(dir.join("out.ipynb"));
    let notebook = container(pod, NOTEBOOK_CONTAINER);
    let mut command = Command::new(python);
    command.arg("-c").arg(script(pod, NOTEBOOK_CONTAINER));
    for var in notebook.env.iter().flatten() {
        if let Some(value) = &var.value {
            command.env(&var.name, value);
        }
    }
    let result = dir.join("termination-log");
    let output = dir.join("out.ipynb");
    command
        .env("HOME", dir)
        .env("NBV_REPOSITORY", &repo)
        .env("NBV_NOTEBOOK", "t.ipynb")
        .env("NBV_RESULT", &result)
        .env("NBV_OUTPUT", &output)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let code = command.status().expect("python runs").code().unwrap_or(-1);
    let report =
        RunReport::parse(&std::fs::read_to_string(&result).unwrap_or_default()).expect("a report");
    let executed = std::fs::read_to_string(&output)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (code, report, executed)
}

/// What the executed notebook shows, without the metadata papermill and nbclient
/// write anyway (times, durations) and with the kernel's process id, which warnings
/// quote (`/tmp/ipykernel_<pid>/...`), made the same for every run.
fn visible(executed: &Value) -> String {
    let cells = executed["cells"].as_array().cloned().unwrap_or_default();
    let cells: Vec<Value> = cells
        .iter()
        .map(|c| json!({"source": c["source"], "execution_count": c["execution_count"], "outputs": c["outputs"]}))
        .collect();
    let text = serde_json::to_string_pretty(&cells).expect("JSON");
    let mut parts = text.split("ipykernel_");
    let mut out = parts.next().unwrap_or_default().to_owned();
    for part in parts {
        out.push_str("ipykernel_PID");
        out.push_str(part.trim_start_matches(|c: char| c.is_ascii_digit()));
    }
    out
}

#[test]
#[ignore = "needs papermill and pandas: `scripts/control-plane install` puts them in /var/cache/nbv/papermill; .ci/run runs these with --ignored after it"]
fn the_probe_leaves_no_trace_in_the_notebook_and_finds_what_is_wrong() {
    let python = papermill_python();
    let source = notebook(&[
        "import sys, warnings\nimport pandas as pd",
        "# md Data",
        "df = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})\ndf",
        "warnings.warn('the old API')\nprint('loading', file=sys.stderr)\n0.25",
        "float('nan')",
        "[row for row in df.itertuples() if row.a > 9]",
        "result = None\nresult",
        "!exit 3",
        "assert len(df) == 3",
        // What the notebook can see of itself: its names, In, Out and _.
        "(sorted(k for k in globals() if not k.startswith('_')), len(In), sorted(Out), repr(_), _i)",
    ]);
    let dir = temp_dir("probe");
    let plain = pod_of(&job_with(json!({})));
    let (code, report, without) = run_checked(&python, &dir.join("plain"), &plain, &source);
    assert_eq!(code, 0, "{report:?}");
    assert_eq!(report.chk, None);

    let checked = pod_of(&job_with(json!({"validationConfig": {
        "level": "learning",
        "failOnWarnings": true,
        "requireExplicitExitCodes": true,
        "expectedOutputs": [
            {"cell": 2, "type": "pandas.DataFrame", "shape": "-1,3"},
            {"cell": 3, "type": "float", "minValue": "0", "maxValue": "0.5"},
            {"cell": 5, "notEmpty": true},
            {"cell": 6, "type": "int"}
        ]
    }})));
    let (code, report, with) = run_checked(&python, &dir.join("checked"), &checked, &source);
    assert_eq!(
        visible(&with),
        visible(&without),
        "the probe changed what the notebook shows"
    );
    assert_eq!(code, 1, "{report:?}");
    let chk = report.chk.clone().expect("findings");
    let found: Vec<String> = chk
        .findings
        .iter()
        .map(|f| format!("{:?} {f}", f.outcome))
        .collect();
    insta::assert_snapshot!(found.join("\n"), @r"
    Fail cell 3 raised UserWarning: the old API (warning)
    Fail cell 7: shell command exit 3 exited with code 3 (exitCode)
    Warn cell 2: expected shape -1,3, got 3,2 (shape)
    Warn cell 4: the value is NaN (nan)
    Warn cell 5: the list is empty (notEmpty)
    Warn cell 6 has no value (None) where one is expected (none)
    ");
    let error = report.error.expect("the run failed");
    assert_eq!(error.kind, RunErrorKind::Check);
    assert_eq!(error.cell, Some(3));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs papermill and pandas: `scripts/control-plane install` puts them in /var/cache/nbv/papermill; .ci/run runs these with --ignored after it"]
fn an_expectation_of_a_cell_the_notebook_does_not_have_fails_before_the_run() {
    let python = papermill_python();
    let dir = temp_dir("missing-cell");
    let pod = pod_of(&job_with(json!({"validationConfig": {
        "level": "learning", "expectedOutputs": [{"cell": 0}, {"cell": 9}]
    }})));
    let source = notebook(&["# md Title", "1 + 1"]);
    let (code, report, executed) = run_checked(&python, &dir, &pod, &source);
    assert_eq!(code, 1);
    assert_eq!(executed, Value::Null, "the notebook did not run");
    let messages: Vec<String> = report
        .chk
        .expect("findings")
        .findings
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(messages.join("\n"), @r"
    spec.validationConfig.expectedOutputs[0].cell: cell 0 is not a code cell of the notebook (cells count from 0, markdown cells included) (cell)
    spec.validationConfig.expectedOutputs[1].cell: cell 9 is not a code cell of the notebook (cells count from 0, markdown cells included) (cell)
    ");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The notebook container runs the script files joined into one program, so a name one
/// file defines at top level and another defines again would silently replace the
/// first: every top-level function and class is defined once, and a constant defined
/// twice has the same value.
#[test]
fn the_joined_script_files_define_each_name_once() {
    require("python3");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pod/scripts");
    let checker = r#"
import ast, sys
seen, clashes = {}, []
for path in sys.argv[1:]:
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names, value = [node.name], None
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            value = ast.dump(node.value)
        else:
            continue
        for name in names:
            if name in seen and (value is None or seen[name][1] != value):
                clashes.append("%s: %s and %s" % (name, seen[name][0], path))
            seen[name] = (path, value)
print("\n".join(clashes))
"#;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the scripts directory")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "{files:?}");
    let output = Command::new("python3")
        .arg("-c")
        .arg(checker)
        .args(&files)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let clashes = String::from_utf8_lossy(&output.stdout);
    assert!(clashes.trim().is_empty(), "names defined twice:\n{clashes}");
}

/// A local repository with one commit, as a clone URL.
fn local_origin(dir: &Path) -> String {
    let origin = dir.join("origin");
    std::fs::create_dir_all(&origin).expect("dir");
    std::fs::write(origin.join("README"), "x").expect("write");
    git(&origin, &["init", "--quiet", "--initial-branch=main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "x"]);
    origin.to_string_lossy().into_owned()
}

#[test]
fn an_ssh_clone_as_an_unknown_user_adds_it_to_a_writable_passwd_or_says_what_to_set() {
    require("git");
    require("sh");
    let dir = temp_dir("passwd");
    let url = local_origin(&dir);
    let ssh = dir.join("ssh");
    std::fs::create_dir_all(&ssh).expect("dir");
    std::fs::write(ssh.join("ssh-privatekey"), "key").expect("write");
    let uid = String::from_utf8(
        Command::new("id")
            .arg("-u")
            .output()
            .expect("id runs")
            .stdout,
    )
    .expect("UTF-8")
    .trim()
    .to_owned();
    let pod = pod_of(&job_with(json!({"notebook": {"git": {
        "url": "git@example.com:org/repo.git", "credentialsSecret": "ssh-key"
    }}})));
    let ssh_text = ssh.to_string_lossy().into_owned();

    // A user database without this user, that the user may write: the entry is added
    // (the OpenShift arbitrary-user image pattern), and the clone goes on.
    let passwd = dir.join("passwd");
    let other = if uid == "4242" { "4343" } else { "4242" };
    std::fs::write(&passwd, format!("someone:x:{other}:{other}::/:/bin/sh\n")).expect("write");
    let passwd_text = passwd.to_string_lossy().into_owned();
    let vars = |passwd: &str| {
        vec![
            ("NBV_GIT_URL", url.clone()),
            ("NBV_SSH_DIR", ssh_text.clone()),
            ("NBV_PASSWD_FILE", passwd.to_owned()),
        ]
    };
    let run = |vars: Vec<(&'static str, String)>| {
        let _ = std::fs::remove_dir_all(dir.join("workspace"));
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run_clone(&pod, &dir, &pairs)
    };
    let (ok, stderr) = run(vars(&passwd_text));
    assert!(ok, "{stderr}");
    let entries = std::fs::read_to_string(&passwd).expect("read");
    assert!(
        entries
            .lines()
            .any(|l| l.starts_with(&format!("nbv:x:{uid}:"))),
        "{entries}"
    );
    // Known now: nothing is added twice.
    let (ok, stderr) = run(vars(&passwd_text));
    assert!(ok, "{stderr}");
    assert_eq!(std::fs::read_to_string(&passwd).expect("read"), entries);

    // One it cannot write (here: absent): the SSH clone stops and says what to set.
    let missing = dir
        .join("no-such-dir/passwd")
        .to_string_lossy()
        .into_owned();
    let (ok, stderr) = run(vars(&missing));
    assert!(!ok);
    assert!(stderr.contains("cannot clone over SSH"), "{stderr}");
    assert!(stderr.contains(&format!("user id {uid}")), "{stderr}");
    assert!(
        stderr.contains("clone.image") && stderr.contains("clone.user"),
        "{stderr}"
    );

    // HTTPS needs no entry at all.
    let https = pod_of(&job_with(json!({})));
    let _ = std::fs::remove_dir_all(dir.join("workspace"));
    let (ok, stderr) = run_clone(
        &https,
        &dir,
        &[("NBV_GIT_URL", &url), ("NBV_PASSWD_FILE", &missing)],
    );
    assert!(ok, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
