//! The clone and notebook scripts, run for real when the tools exist here.

use super::*;

// ---------------------------------------------------------------------------------------
// The scripts, run for real (when the tools exist here)
// ---------------------------------------------------------------------------------------

/// Whether `tool` runs here (`tool -c exit` for shells, `tool --version` otherwise);
/// the tests that need it are skipped, loudly, where it does not.
fn have(tool: &str) -> bool {
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
    if !found {
        eprintln!("{tool} is not installed: skipping");
    }
    found
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
    if !have("git") || !have("sh") {
        return;
    }
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
    if !have("git") || !have("sh") {
        return;
    }
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
    if !have("python3") {
        return;
    }
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
        "import json, sys\nsource = sys.stdin.readline()\nscope = {{'__name__': 'nbv_script'}}\n\
         exec(json.loads(source), scope)\nfor line in sys.stdin:\n    args = json.loads(line)\n    \
         out = scope['{function}'](*args)\n    print(out if isinstance(out, str) else json.dumps(out))\n"
    );
    let mut child = Command::new("python3")
        .args(["-c", &driver])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut input = serde_json::to_string(&script(&pod, NOTEBOOK_CONTAINER)).expect("JSON") + "\n";
    for args in inputs {
        input.push_str(&serde_json::to_string(args).expect("JSON"));
        input.push('\n');
    }
    std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).expect("write");
    });
    let output = child.wait_with_output().expect("output");
    assert!(output.status.success(), "the script's {function} failed");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_python_writer_and_rust_encode_agree_byte_for_byte() {
    if !have("python3") {
        return;
    }
    let mut runner = TestRunner::deterministic();
    let strategy = arbitrary_report();
    let reports: Vec<RunReport> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("a report").current())
        .collect();
    let inputs: Vec<Value> = reports
        .iter()
        .map(|r| json!([r.cells, r.error, r.cmp]))
        .collect();
    let python = call_script("encode", &inputs);
    assert_eq!(python.len(), reports.len());
    for (report, python) in reports.iter().zip(python) {
        assert_eq!(report.encode(), python, "for {report:?}");
    }
}

#[test]
fn the_python_reader_indexes_cells_as_in_the_source_notebook() {
    if !have("python3") {
        return;
    }
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
