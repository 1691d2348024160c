//! `nbv health eval` and `nbv health test`, run through their `run` functions.
//!
//! The suites nbv ships (`config/argocd/tests`) and the example suites
//! (`examples/health`) must pass in both sandboxes; their `health.lua` files must be
//! the scripts nbv-core ships; a suite with a wrong expectation must fail with the
//! expected report.

use std::collections::BTreeSet;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use clap::Parser;
use nbv_core::api::Phase;
use nbv_core::health::{
    ADVANCED_SCRIPT, BASIC_SCRIPT, EvalOptions, GUIDE_SCRIPT, HealthStatus, Sandbox, Semantics,
    Variant, assess_with,
};
use nbv_operator::cli::{Cli, Command};
use nbv_operator::commands::health::eval::{self, Check, EvalArgs, ObjectSource, ScriptSource};
use nbv_operator::commands::health::harness::{self, TestArgs};
use nbv_operator::commands::health::suite::{Suite, TestList};
use nbv_operator::commands::health::{self, HealthCommand};
use proptest::prelude::*;
use serde_json::{Value, json};

const NVJ_SUITE: &str = "config/argocd/tests/mlops.mlops.dev/NotebookValidationJob";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A fresh, empty directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("nbv-health-cli-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        TempDir(dir)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `nbv health eval` with `args` on `stdin`: exit code, stdout, stderr.
fn eval_with(args: &EvalArgs, stdin: &str) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = eval::run(args, &mut stdin.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn lua_args(variant: Variant, sandbox: Sandbox) -> EvalArgs {
    EvalArgs {
        objects: ObjectSource::Stdin,
        check: Check::Lua(ScriptSource::Shipped(variant)),
        options: EvalOptions {
            sandbox,
            ..EvalOptions::default()
        },
    }
}

/// Parses a command line and runs it as `nbv` would: exit code, stdout, stderr.
fn nbv(args: &[&str], stdin: &str) -> (u8, String, String) {
    let cli = Cli::try_parse_from(std::iter::once("nbv").chain(args.iter().copied()))
        .unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
    let Command::Health(command) = cli.command else {
        panic!("{args:?} is not `nbv health`");
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = health::run(command, &mut stdin.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn run_tests(dirs: Vec<PathBuf>, sandbox: Sandbox) -> (u8, String) {
    let args = TestArgs {
        dirs,
        options: EvalOptions {
            sandbox,
            ..EvalOptions::default()
        },
    };
    let mut out = Vec::new();
    let code = harness::run(&args, &mut out);
    (code, String::from_utf8(out).unwrap())
}

/// How many tests the suites under `dir` list, read independently of the harness.
fn listed_tests(dir: &Path) -> usize {
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            count += listed_tests(&path);
        } else if path.file_name() == Some("health_test.yaml".as_ref()) {
            let list: TestList = TestList::parse(&read(&path)).unwrap();
            count += list.tests.len();
        }
    }
    count
}

/// The objects of the basic NotebookValidationJob suite, as one YAML stream, in the
/// order of its test list.
fn suite_stream() -> (Vec<String>, String) {
    let suite = Suite::load(&root().join(NVJ_SUITE)).unwrap();
    let names = suite.tests.iter().map(|t| t.input_path.clone()).collect();
    let docs: Vec<String> = suite
        .tests
        .iter()
        .map(|t| read(&suite.input_path(t)))
        .collect();
    (names, docs.join("---\n"))
}

// ---------------------------------------------------------------------------------
// nbv health eval
// ---------------------------------------------------------------------------------

#[test]
fn eval_prints_one_line_per_object_of_a_yaml_stream_in_order() {
    let (names, stream) = suite_stream();
    let dir = TempDir::new("stream");
    let file = dir.write("jobs.yaml", &stream);
    let file = file.to_str().unwrap();

    let (code, out, err) = nbv(&["health", "eval", "--object", file], "");
    assert_eq!((code, err.as_str()), (0, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), names.len());

    // Each line is what the same object alone gives: nothing is reordered or mixed.
    let suite = Suite::load(&root().join(NVJ_SUITE)).unwrap();
    for (line, case) in lines.iter().zip(&suite.tests) {
        let single = read(&suite.input_path(case));
        let (_, alone, _) = eval_with(&lua_args(Variant::Basic, Sandbox::Production), &single);
        assert_eq!(format!("{line}\n"), alone, "{}", case.input_path);
    }
    let report: Vec<String> = names
        .iter()
        .zip(&lines)
        .map(|(name, line)| format!("{name:<48} {line}"))
        .collect();
    insta::assert_snapshot!("eval_basic_on_the_suite_objects", report.join("\n"));

    let (code, out, _) = nbv(&["health", "eval", "--object", file, "--advanced"], "");
    assert_eq!(code, 0);
    let report: Vec<String> = names
        .iter()
        .zip(out.lines())
        .map(|(name, line)| format!("{name:<48} {line}"))
        .collect();
    insta::assert_snapshot!("eval_advanced_on_the_suite_objects", report.join("\n"));
}

#[test]
fn eval_reads_json_values_and_keeps_an_array_whole() {
    let stream = concat!(
        r#"{"kind": "NotebookValidationJob", "status": {"phase": "Succeeded", "completionTime": ""}}"#,
        "\n",
        r#"{"status": {"phase": "Failed", "message": "OOMKilled", "retryCount": 2}}{"status": null}"#,
        "\n",
        r#"[{"status": {"phase": "Failed"}}, {"status": {"phase": "Failed"}}]"#,
        "\n",
    );
    let (code, out, err) = nbv(&["health", "eval", "--object", "-"], stream);
    assert_eq!((code, err.as_str()), (0, ""));
    // Four values, four lines; the array is one object (the script sees no status).
    insta::assert_snapshot!("eval_json_stream", out);
}

#[test]
fn eval_reads_standard_input_through_the_given_reader() {
    let stdin = "status: {phase: ValidationRunning, validationPodName: ''}\n---\n---\nstatus: {phase: Archived}\n";
    let (code, out, _) = eval_with(&lua_args(Variant::Basic, Sandbox::Production), stdin);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\"status\":\"Progressing\",\"message\":\"Validating notebook\"}\n\
         {\"status\":\"Progressing\",\"message\":\"Phase: Archived\"}\n"
    );
    // Nothing on standard input: no object, no line, success.
    assert_eq!(
        eval_with(&lua_args(Variant::Basic, Sandbox::Production), ""),
        (0, String::new(), String::new())
    );
}

#[test]
fn the_empty_health_prints_empty_fields() {
    let dir = TempDir::new("empty");
    let script = dir.write(
        "nil.lua",
        "if obj.status == nil then return nil end\nreturn {}\n",
    );
    let args = EvalArgs {
        objects: ObjectSource::Stdin,
        check: Check::Lua(ScriptSource::File(script)),
        options: EvalOptions::default(),
    };
    let (code, out, _) = eval_with(&args, "kind: A\n---\nstatus: {}\n");
    assert_eq!(code, 0);
    assert_eq!(out, "{\"status\":\"\",\"message\":\"\"}\n".repeat(2));
}

#[test]
fn a_script_error_is_reported_on_its_line_and_every_object_is_still_evaluated() {
    let stream = "\
kind: NotebookValidationJob
metadata: {name: first, namespace: ml}
status: {phase: Succeeded}
---
kind: NotebookValidationJob
metadata: {name: broken, namespace: ml}
status: {phase: Failed, message: Boom, retryCount: true}
---
status: {phase: Failed, retryCount: {}}
---
kind: NotebookValidationJob
metadata: {name: last, namespace: ml}
status: {phase: Building}
";
    let (code, out, err) = eval_with(&lua_args(Variant::Basic, Sandbox::Production), stream);
    assert_eq!(code, 1, "an error line makes the exit code 1");
    assert_eq!(err, "");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1]["script"], "basic");
    assert_eq!(lines[1]["document"], 2);
    assert_eq!(lines[1]["object"], "NotebookValidationJob ml/broken");
    assert_eq!(lines[2]["document"], 3);
    assert!(
        lines[2].get("object").is_none(),
        "no kind, no name: the index names it"
    );
    assert_eq!(lines[3]["message"], "Building validation environment");
    insta::assert_snapshot!("eval_script_errors", out);

    // The native mapping reports the same objects as errors.
    let native = EvalArgs {
        check: Check::Native(Variant::Basic),
        ..lua_args(Variant::Basic, Sandbox::Production)
    };
    let (code, out, _) = eval_with(&native, stream);
    assert_eq!(code, 1);
    insta::assert_snapshot!("eval_native_script_errors", out);
}

#[test]
fn an_unparsable_document_ends_the_stream_with_an_error_line() {
    let stream = "status: {phase: Succeeded}\n---\nstatus: {phase: [Failed\n---\nstatus: {}\n";
    let (code, out, _) = eval_with(&lua_args(Variant::Basic, Sandbox::Production), stream);
    assert_eq!(code, 1);
    insta::assert_snapshot!("eval_unparsable_document", out);
}

#[test]
fn a_runaway_script_is_stopped_and_reported() {
    let dir = TempDir::new("runaway");
    // Catching the stop does not help: the runner's guard stays tripped.
    let script = dir.write(
        "loop.lua",
        "if obj.loop then\n  while true do pcall(function() while true do end end) end\nend\nreturn {status = \"Healthy\"}\n",
    );
    let args = EvalArgs {
        objects: ObjectSource::Stdin,
        check: Check::Lua(ScriptSource::File(script.clone())),
        options: EvalOptions {
            instruction_budget: NonZeroU64::new(200_000).unwrap(),
            // Only the deterministic budget: the report does not depend on the machine.
            timeout: None,
            ..EvalOptions::default()
        },
    };
    let (code, out, _) = eval_with(&args, "loop: true\n---\nloop: false\n");
    assert_eq!(code, 1);
    let out = out.replace(script.to_str().unwrap(), "[dir]/loop.lua");
    insta::assert_snapshot!("eval_runaway_script", out);

    // With the default limits (Argo CD's 1 s timeout among them) it is stopped too.
    let default = EvalArgs {
        options: EvalOptions::default(),
        ..args
    };
    let started = std::time::Instant::now();
    let (code, out, _) = eval_with(&default, "loop: true\n");
    assert_eq!(code, 1);
    assert!(out.contains("was stopped after"), "{out}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn what_the_script_prints_goes_to_standard_error() {
    let dir = TempDir::new("print");
    let script = dir.write(
        "print.lua",
        "print(\"phase\", obj.status.phase)\nreturn {status = \"Healthy\"}\n",
    );
    let args = EvalArgs {
        objects: ObjectSource::Stdin,
        check: Check::Lua(ScriptSource::File(script)),
        options: EvalOptions::default(),
    };
    let (code, out, err) = eval_with(&args, "status: {phase: A}\n---\nstatus: {phase: B}\n");
    assert_eq!(code, 0);
    assert_eq!(out, "{\"status\":\"Healthy\",\"message\":\"\"}\n".repeat(2));
    assert_eq!(err, "document 1: phase\tA\ndocument 2: phase\tB\n");
}

#[test]
fn the_sandbox_decides_what_a_script_may_use() {
    let dir = TempDir::new("sandbox");
    let script = dir.write(
        "upper.lua",
        "return {status = \"Healthy\", message = string.upper(obj.metadata.name)}\n",
    );
    let script = script.to_str().unwrap();
    // eval defaults to the production VM, where `string` does not exist.
    let (code, out, _) = nbv(
        &["health", "eval", "--object", "-", "--script", script],
        "metadata: {name: x}\n",
    );
    assert_eq!(code, 1);
    assert!(
        out.contains("attempt to index global 'string' (a nil value)"),
        "{out}"
    );
    let (code, out, _) = nbv(
        &[
            "health",
            "eval",
            "--object",
            "-",
            "--script",
            script,
            "--test-harness",
        ],
        "metadata: {name: x}\n",
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "{\"status\":\"Healthy\",\"message\":\"X\"}\n")
    );
}

#[test]
fn unusable_arguments_and_inputs_exit_2_and_say_why() {
    for args in [
        [
            "health", "eval", "--object", "o.yaml", "--native", "--script", "h.lua",
        ]
        .as_slice(),
        &[
            "health",
            "eval",
            "--object",
            "o.yaml",
            "--advanced",
            "--script",
            "h.lua",
        ],
        &[
            "health",
            "eval",
            "--object",
            "o.yaml",
            "--production-sandbox",
            "--test-harness",
        ],
        &["health", "eval"],
        &["health", "test"],
    ] {
        let error = Cli::try_parse_from(std::iter::once("nbv").chain(args.iter().copied()))
            .expect_err(&format!("{args:?} must be refused"));
        assert_eq!(error.exit_code(), 2, "{args:?}");
    }

    let (code, out, err) = nbv(
        &["health", "eval", "--object", "/nonexistent/jobs.yaml"],
        "",
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with("error: cannot read the objects: cannot read /nonexistent/jobs.yaml: "),
        "{err}"
    );

    let (code, out, err) = nbv(
        &[
            "health",
            "eval",
            "--object",
            "-",
            "--script",
            "/nonexistent/health.lua",
        ],
        "a: 1\n",
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.starts_with(
            "error: cannot load the health script: cannot read /nonexistent/health.lua: "
        ),
        "{err}"
    );

    let (code, _, err) = eval_with(&lua_args(Variant::Basic, Sandbox::Production), "");
    assert_eq!((code, err.as_str()), (0, ""));
    let mut invalid_utf8: &[u8] = b"status: \xff\n";
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = eval::run(
        &lua_args(Variant::Basic, Sandbox::Production),
        &mut invalid_utf8,
        &mut out,
        &mut err,
    );
    assert_eq!(code, 2);
    assert_eq!(
        String::from_utf8(err).unwrap(),
        "error: cannot read the objects: standard input is not UTF-8 text; save it as UTF-8\n"
    );
}

/// One JSON line per object, with only the facts both engines share: the health, or
/// that the check failed.
fn comparable(line: &str) -> Value {
    let value: Value = serde_json::from_str(line).unwrap();
    if value.get("error").is_some() {
        json!({"error": true, "script": value["script"], "document": value["document"]})
    } else {
        value
    }
}

#[test]
fn native_equals_lua_on_the_core_samples() {
    let dir = root().join("nbv-core/tests/data/health");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension() == Some("yaml".as_ref()))
        .collect();
    files.sort();
    assert!(files.len() > 30, "only {} samples", files.len());

    let samples: Vec<Value> = files
        .iter()
        .map(|f| serde_yaml_ng::from_str(&read(f)).unwrap())
        .collect();
    // The samples as one JSON stream: one object per sample, in file order.
    let stream: String = samples
        .iter()
        .map(|s| format!("{}\n", s["object"]))
        .collect();

    let mut compared = 0;
    for variant in Variant::ALL {
        for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
            let lua = lua_args(variant, sandbox);
            let native = EvalArgs {
                check: Check::Native(variant),
                ..lua.clone()
            };
            let (_, lua_out, _) = eval_with(&lua, &stream);
            let (_, native_out, _) = eval_with(&native, &stream);
            let lua_lines: Vec<&str> = lua_out.lines().collect();
            let native_lines: Vec<&str> = native_out.lines().collect();
            assert_eq!(lua_lines.len(), samples.len());
            assert_eq!(native_lines.len(), samples.len());
            for i in 0..samples.len() {
                let name = files[i].file_name().unwrap().to_string_lossy();
                // nbv's VM prints numbers as gopher-lua does, so Lua and native agree
                // on every sample, numbers beyond 10^14 included.
                assert_eq!(
                    comparable(native_lines[i]),
                    comparable(lua_lines[i]),
                    "{name}, {variant:?}, {sandbox:?}"
                );
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 2 * Variant::ALL.len() * samples.len());
}

/// Job statuses of every shape the checks branch on.
fn job() -> impl Strategy<Value = Value> {
    let phase = prop_oneof![
        prop::sample::select(Phase::ALL.map(Phase::as_str).to_vec()).prop_map(Value::from),
        "[A-Za-z]{0,10}".prop_map(Value::from),
        Just(Value::Null),
    ];
    let text = prop_oneof![Just(Value::Null), "[ -~]{0,12}".prop_map(Value::from)];
    let count = prop_oneof![Just(Value::Null), (0..5i64).prop_map(Value::from)];
    let cell = (0..20i64, prop::sample::select(vec!["Success", "Failure", "Skipped", "error", "success"]), text.clone())
        .prop_map(|(index, status, error)| json!({"cellIndex": index, "status": status, "errorMessage": error}));
    let results = prop_oneof![
        Just(Value::Null),
        prop::collection::vec(cell, 0..4).prop_map(Value::from)
    ];
    (
        phase,
        text.clone(),
        count,
        text.clone(),
        text,
        results,
        any::<bool>(),
    )
        .prop_map(
            |(phase, message, retry, pod, completion, results, has_status)| {
                if !has_status {
                    return json!({"kind": "NotebookValidationJob"});
                }
                json!({"kind": "NotebookValidationJob", "status": {
                    "phase": phase, "message": message, "retryCount": retry,
                    "validationPodName": pod, "completionTime": completion, "results": results,
                }})
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the jobs, eval prints exactly one line per job, in order, and each line
    /// is the job's health as nbv-core's native mapping computes it for that VM.
    #[test]
    fn eval_prints_each_objects_health_in_order(
        jobs in prop::collection::vec(job(), 0..6),
        advanced in any::<bool>(),
        as_yaml in any::<bool>(),
    ) {
        let variant = if advanced { Variant::Advanced } else { Variant::Basic };
        let stream = if as_yaml {
            jobs.iter().map(|j| serde_yaml_ng::to_string(j).unwrap()).collect::<Vec<_>>().join("---\n")
        } else {
            jobs.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
        };
        let (code, out, _) = eval_with(&lua_args(variant, Sandbox::Production), &stream);
        let lines: Vec<&str> = out.lines().collect();
        prop_assert_eq!(lines.len(), jobs.len());
        let semantics = Sandbox::Production.semantics();
        let mut any_error = false;
        for (line, job) in lines.iter().zip(&jobs) {
            let line: Value = serde_json::from_str(line).unwrap();
            match assess_with(job, variant, semantics) {
                Ok(health) => {
                    let (status, message) = health
                        .map_or((String::new(), String::new()), |h: HealthStatus| (h.status.to_string(), h.message));
                    prop_assert_eq!(line, json!({"status": status, "message": message}));
                }
                Err(_) => {
                    any_error = true;
                    prop_assert!(line.get("error").is_some(), "{}", line);
                }
            }
        }
        prop_assert_eq!(code, u8::from(any_error));
    }
}

// ---------------------------------------------------------------------------------
// nbv health test
// ---------------------------------------------------------------------------------

#[test]
fn the_shipped_health_lua_files_are_the_core_scripts() {
    assert_eq!(
        read(&root().join(NVJ_SUITE).join("health.lua")),
        BASIC_SCRIPT
    );
    assert_eq!(
        read(&root().join(NVJ_SUITE).join("advanced/health.lua")),
        ADVANCED_SCRIPT
    );
    assert_eq!(
        read(&root().join(NVJ_SUITE).join("guide/health.lua")),
        GUIDE_SCRIPT
    );
}

#[test]
fn the_shipped_suites_pass_in_both_sandboxes() {
    let dir = root().join("config/argocd/tests");
    let expected = format!("{} passed, 0 failed\n", listed_tests(&dir));
    for sandbox in [Sandbox::TestHarness, Sandbox::Production] {
        assert_eq!(
            run_tests(vec![dir.clone()], sandbox),
            (0, expected.clone()),
            "{sandbox:?}"
        );
    }
    // As the command line runs them.
    let (code, out, _) = nbv(&["health", "test", dir.to_str().unwrap()], "");
    assert_eq!((code, out), (0, expected));
}

#[test]
fn the_shipped_suites_cover_every_phase_and_every_lua_trap() {
    let suite = Suite::load(&root().join(NVJ_SUITE)).unwrap();
    let statuses: Vec<Value> = suite
        .tests
        .iter()
        .map(|t| suite.input(t).unwrap()["status"].clone())
        .collect();
    let phases: BTreeSet<String> = statuses
        .iter()
        .filter_map(|s| s["phase"].as_str().map(str::to_owned))
        .collect();
    for phase in Phase::ALL {
        assert!(
            phases.contains(phase.as_str()),
            "no test for phase {phase:?}"
        );
    }
    assert!(
        phases.iter().any(|p| p.parse::<Phase>().is_err()),
        "no unknown phase"
    );
    let has = |predicate: &dyn Fn(&Value) -> bool| statuses.iter().any(predicate);
    assert!(has(&|s| s.is_null()), "no job without status");
    assert!(
        has(&|s| s.is_object() && s["phase"].is_null()),
        "no status without phase"
    );
    assert!(
        has(&|s| s["phase"] == "Failed" && s["message"] == ""),
        "message \"\""
    );
    assert!(
        has(&|s| s["phase"] == "Failed" && s["retryCount"] == 0),
        "retryCount 0"
    );
    assert!(
        has(&|s| s["phase"] == "Succeeded" && s["completionTime"] == ""),
        "completionTime \"\""
    );
    assert!(
        has(&|s| s["phase"] == "ValidationRunning" && s["validationPodName"] == ""),
        "validationPodName \"\""
    );

    // A status of an older generation, and one of the current generation.
    let objects: Vec<Value> = suite
        .tests
        .iter()
        .map(|t| suite.input(t).unwrap())
        .collect();
    let observed = |o: &Value| o["status"]["observedGeneration"].as_i64();
    let generation = |o: &Value| o["metadata"]["generation"].as_i64();
    assert!(
        objects
            .iter()
            .any(|o| observed(o) < generation(o) && observed(o).is_some())
    );
    assert!(
        objects
            .iter()
            .any(|o| observed(o) == generation(o) && observed(o).is_some())
    );

    // The advanced and guide suites run the very same inputs.
    let inputs = |s: &Suite| -> Vec<PathBuf> {
        s.tests
            .iter()
            .map(|t| std::fs::canonicalize(s.input_path(t)).unwrap())
            .collect()
    };
    for variant in ["advanced", "guide"] {
        let other = Suite::load(&root().join(NVJ_SUITE).join(variant)).unwrap();
        assert_eq!(inputs(&other), inputs(&suite), "{variant}");
    }
}

#[test]
fn the_shipped_expectations_are_what_the_native_mapping_computes() {
    for (dir, variant) in [
        (NVJ_SUITE.to_owned(), Variant::Basic),
        (format!("{NVJ_SUITE}/advanced"), Variant::Advanced),
        (format!("{NVJ_SUITE}/guide"), Variant::Guide),
    ] {
        let suite = Suite::load(&root().join(dir)).unwrap();
        for case in &suite.tests {
            let object = suite.input(case).unwrap();
            let health = assess_with(&object, variant, Semantics::ARGO_CD).unwrap();
            assert!(
                case.health_status.matches(health.as_ref()),
                "{}: {health:?}",
                case.input_path
            );
        }
    }
}

#[test]
fn the_example_suites_pass_in_both_sandboxes() {
    let dir = root().join("examples/health");
    let expected = format!("{} passed, 0 failed\n", listed_tests(&dir));
    for sandbox in [Sandbox::TestHarness, Sandbox::Production] {
        assert_eq!(
            run_tests(vec![dir.clone()], sandbox),
            (0, expected.clone()),
            "{sandbox:?}"
        );
    }
    for kind in [
        "apps/Deployment",
        "batch/Job",
        "cert-manager.io/Certificate",
        "_.example.com/_",
        "gadgets.example.com/Gadget",
    ] {
        assert!(listed_tests(&dir.join(kind)) >= 5, "{kind}: too few tests");
    }
}

/// In a tree laid out like Argo CD's, each input runs the check Argo CD would pick for
/// its group and kind: the wildcard suite's Gadget passes only because the exact
/// `gadgets.example.com/Gadget` directory is found. Given on its own, the wildcard
/// suite runs its own script on every input, and the Gadget's test fails.
#[test]
fn suites_in_an_argo_cd_tree_run_the_script_argo_cd_picks() {
    let tree = root().join("examples/health");
    let wildcard = tree.join("_.example.com/_");
    let (code, out) = run_tests(vec![tree.clone()], Sandbox::Production);
    assert_eq!(
        (code, out),
        (0, format!("{} passed, 0 failed\n", listed_tests(&tree)))
    );

    let (code, out) = run_tests(vec![wildcard.clone()], Sandbox::Production);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!(
            "FAIL {}: testdata/gadget-running.yaml\n  \
             expected: {{\"status\":\"Healthy\",\"message\":\"Gadget running 2 instances\"}}\n  \
             got:      {{\"status\":\"Healthy\",\"message\":\"Ready\"}}\n\
             {} passed, 1 failed\n",
            wildcard.display(),
            listed_tests(&wildcard) - 1
        )
    );

    // An exact directory wins even over a wildcard that matches everything.
    let tmp = TempDir::new("resolution");
    copy_tree(&tree, &tmp.0);
    copy_tree(&wildcard, &tmp.0.join("_/_"));
    let (code, out) = run_tests(vec![tmp.0.clone()], Sandbox::Production);
    assert_eq!(
        (code, out),
        (0, format!("{} passed, 0 failed\n", listed_tests(&tmp.0)))
    );
}

#[test]
fn a_wrong_expectation_fails_with_the_expected_and_the_actual_health() {
    let tmp = TempDir::new("wrong");
    copy_tree(&root().join("examples/health"), &tmp.0);
    let tests = tmp.0.join("batch/Job/health_test.yaml");
    let original = read(&tests);
    let changed = original.replacen(
        "message: \"BackoffLimitExceeded: Job has reached the specified backoff limit\"",
        "message: \"BackoffLimitExceeded\"",
        1,
    );
    assert_ne!(changed, original);
    std::fs::write(&tests, changed).unwrap();

    let total = listed_tests(&tmp.0);
    let (code, out) = run_tests(vec![tmp.0.clone()], Sandbox::TestHarness);
    assert_eq!(code, 1);
    assert_eq!(
        out.lines().last(),
        Some(format!("{} passed, 1 failed", total - 1).as_str())
    );
    insta::assert_snapshot!(
        "test_wrong_expectation",
        out.replace(tmp.0.to_str().unwrap(), "[dir]")
    );
}

#[test]
fn a_broken_suite_reports_every_problem_and_runs_the_rest() {
    let tmp = TempDir::new("broken");
    let dir = &tmp.0;
    // A good suite with one failing and one passing test.
    tmp.write(
        "good/health.lua",
        "return {status = obj.want, message = obj.say}\n",
    );
    tmp.write(
        "good/health_test.yaml",
        "tests:\n\
         - inputPath: ok.yaml\n  healthStatus: {status: Healthy, message: fine}\n\
         - inputPath: ok.yaml\n  healthStatus: {status: Healthy}\n\
         - inputPath: empty.yaml\n\
         - inputPath: invalid.yaml\n  healthStatus: {status: healthy}\n\
         - inputPath: testdata/missing.yaml\n  healthStatus: {status: Healthy}\n\
         - inputPath: two.yaml\n\
         - inputPath: list.yaml\n\
         - inputPath: unparsable.yaml\n",
    );
    tmp.write("good/ok.yaml", "want: Healthy\nsay: fine\n");
    tmp.write("good/empty.yaml", "kind: Nothing\n");
    tmp.write("good/invalid.yaml", "want: healthy\n");
    tmp.write("good/two.yaml", "want: Healthy\n---\nwant: Degraded\n");
    tmp.write("good/list.yaml", "- want: Healthy\n");
    tmp.write("good/unparsable.yaml", "want: [Healthy\n");
    // No script.
    tmp.write("no-script/health_test.yaml", "tests: []\n");
    // No test list.
    tmp.write("no-tests/health.lua", "return nil\n");
    // A test list in another format.
    tmp.write("wrong-format/health.lua", "return nil\n");
    tmp.write(
        "wrong-format/health_test.yaml",
        "tests:\n- input: a.yaml\n  healthStatus: {status: Healthy}\n",
    );
    // A script that does not compile, and one that never ends.
    tmp.write("syntax/health.lua", "return {status = \n");
    tmp.write("syntax/health_test.yaml", "tests:\n- inputPath: o.yaml\n");
    tmp.write("syntax/o.yaml", "kind: X\n");
    tmp.write("loop/health.lua", "while true do end\n");
    tmp.write(
        "loop/health_test.yaml",
        "tests:\n- inputPath: o.yaml\n  healthStatus: {status: Healthy}\n",
    );
    tmp.write("loop/o.yaml", "kind: X\n");
    let empty = TempDir::new("no-suites");

    let args = TestArgs {
        dirs: vec![dir.clone(), empty.0.clone(), dir.join("does-not-exist")],
        options: EvalOptions {
            sandbox: Sandbox::TestHarness,
            instruction_budget: NonZeroU64::new(100_000).unwrap(),
            timeout: None,
            ..EvalOptions::default()
        },
    };
    let mut out = Vec::new();
    let code = harness::run(&args, &mut out);
    let out = String::from_utf8(out)
        .unwrap()
        .replace(empty.0.to_str().unwrap(), "[empty]")
        .replace(dir.to_str().unwrap(), "[dir]");
    assert_eq!(code, 1);
    // ok.yaml passes once and the empty health once; every other test and suite fails.
    assert_eq!(out.lines().last(), Some("2 passed, 13 failed"));
    assert_eq!(out.lines().filter(|l| l.starts_with("FAIL ")).count(), 13);
    insta::assert_snapshot!("test_broken_suites", out);
}

#[test]
fn the_command_line_runs_suites_with_the_chosen_sandbox() {
    let tmp = TempDir::new("cli-sandbox");
    tmp.write(
        "s/health.lua",
        "return {status = \"Healthy\", message = string.lower(obj.kind)}\n",
    );
    tmp.write(
        "s/health_test.yaml",
        "tests:\n- inputPath: o.yaml\n  healthStatus: {status: Healthy, message: job}\n",
    );
    tmp.write("s/o.yaml", "kind: Job\n");
    let dir = tmp.0.to_str().unwrap();
    assert_eq!(nbv(&["health", "test", dir], "").0, 0);
    let (code, out, _) = nbv(&["health", "test", "--production-sandbox", dir], "");
    assert_eq!(code, 1);
    assert!(
        out.contains("attempt to index global 'string' (a nil value)"),
        "{out}"
    );
    assert!(out.ends_with("\n0 passed, 1 failed\n"), "{out}");
}

#[test]
fn the_command_is_wired_into_nbv() {
    let cli = Cli::try_parse_from(["nbv", "health", "test", "a", "b"]).unwrap();
    assert!(
        matches!(cli.command, Command::Health(HealthCommand::Test(ref t)) if t.dirs.len() == 2)
    );
}

/// `nbv health eval --argocd-cm --customizations`: each object gets the check Argo CD
/// would run on it, with the libraries that check runs with: a customization's own
/// `useOpenLibs`, and open libraries for checks of the tree.
#[test]
fn eval_runs_the_check_argo_cd_picks_with_its_libraries() {
    let tmp = TempDir::new("eval-resolved");
    let cm = tmp.write(
        "argocd-cm.yaml",
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.health.widgets.example.com_Widget: |
    return {status = "Suspended", message = string.upper("from argocd-cm")}
  resource.customizations.useOpenLibs.widgets.example.com_Widget: "true"
  resource.customizations.health.gadgets.example.com_Gadget: |
    return {status = "Suspended", message = string.upper("closed libraries")}
"#,
    );
    let tree = root().join("examples/health");
    let objects = [
        "apiVersion: widgets.example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
        "apiVersion: gadgets.example.com/v1\nkind: Gadget\nmetadata: {name: g}\nstatus: {phase: Running, instances: 2}\n",
        "apiVersion: sprockets.example.com/v1\nkind: Sprocket\nmetadata: {name: s}\nstatus:\n  throughput: 1234567.5\n  conditions: [{type: Ready, status: \"True\"}]\n",
        "apiVersion: other.io/v1\nkind: Thing\nmetadata: {name: t}\n",
    ]
    .join("---\n");
    let tree_arg = tree.to_str().unwrap();
    let cm_arg = cm.to_str().unwrap();
    let eval = |extra: &[&str]| -> (u8, Vec<String>) {
        let mut args = vec!["health", "eval", "--object", "-"];
        args.extend_from_slice(extra);
        let (code, out, _) = nbv(&args, &objects);
        (code, out.lines().map(str::to_owned).collect())
    };

    // The tree alone: the Gadget's exact directory, the Sprocket's wildcard one.
    let (code, lines) = eval(&["--customizations", tree_arg]);
    assert_eq!(code, 1);
    assert_eq!(
        lines[1],
        r#"{"status":"Healthy","message":"Gadget running 2 instances"}"#
    );
    assert_eq!(
        lines[2],
        r#"{"status":"Healthy","message":"Ready at 1.2345675e+06 requests/s"}"#
    );
    assert!(
        lines[3].contains("no health check for other.io/Thing under"),
        "{}",
        lines[3]
    );

    // argocd-cm first: the Widget's check opens the libraries, the Gadget's does not.
    let (code, lines) = eval(&["--customizations", tree_arg, "--argocd-cm", cm_arg]);
    assert_eq!(code, 1);
    assert_eq!(
        lines[0],
        r#"{"status":"Suspended","message":"FROM ARGOCD-CM"}"#
    );
    assert!(
        lines[1].contains("attempt to index global 'string'"),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        r#"{"status":"Healthy","message":"Ready at 1.2345675e+06 requests/s"}"#
    );

    // A sandbox given on the command line applies to every check.
    let (_, lines) = eval(&["--argocd-cm", cm_arg, "--test-harness"]);
    assert_eq!(
        lines[1],
        r#"{"status":"Suspended","message":"CLOSED LIBRARIES"}"#
    );

    // An argocd-cm that is not one is refused before any object is evaluated.
    let bad = tmp.write("bad.yaml", "kind: ConfigMap\n");
    let (code, out, err) = nbv(
        &[
            "health",
            "eval",
            "--object",
            "-",
            "--argocd-cm",
            bad.to_str().unwrap(),
        ],
        &objects,
    );
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("no `data` mapping"), "{err}");
}
