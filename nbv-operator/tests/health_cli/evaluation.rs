//! `nbv health eval`: one line per object, errors on their line, the sandbox, native
//! against Lua.

use super::*;

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
    assert!(out.contains("was stopped"), "{out}");
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
