//! The Lua runner (feature `lua`): the shipped scripts run in an Argo CD-equivalent
//! sandbox agree with the native mapping on arbitrary objects, Argo CD's handling of
//! return values, the sandboxes' libraries, and containment of hostile scripts.
#![cfg(feature = "lua")]

mod health_support;

use std::num::{NonZeroU64, NonZeroUsize};
use std::time::Duration;

use health_support::{Outcome, cases, data_dir, job_object};
use nbv_core::health::{
    EncodeError, EvalOptions, HealthScript, HealthScriptError, HealthStatus, HealthStatusCode,
    INVALID_HEALTH_STATUS, LuaHealthRunner, LuaType, MAX_OBJECT_DEPTH, NumberFormat,
    RuntimeErrorKind, Sandbox, Variant, assess_with,
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

// ---------------------------------------------------------------- differential

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// The native mapping and the shipped scripts, run in both sandboxes, agree on
    /// arbitrary job objects: same health byte for byte, same empty health, or the
    /// same kind of Lua error.
    #[test]
    fn native_mapping_equals_the_scripts(obj in job_object()) {
        for variant in Variant::ALL {
            for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
                prop_assert_eq!(
                    native(&obj, variant, sandbox),
                    lua(&obj, variant, sandbox),
                    "{} in {:?}", variant.name(), sandbox
                );
            }
        }
    }

    /// The VM turns any number into the text gopher-lua gives it, in `..`, `tostring`,
    /// `table.concat` and `print`, in both sandboxes.
    #[test]
    fn the_vm_prints_numbers_as_gopher_lua(n in any::<f64>()) {
        let script = HealthScript::new("number", r#"
            local n = 0 + obj.n
            local parts = {"" .. n, tostring(n), table.concat({n}), n .. ""}
            print(n)
            return {status = "Healthy", message = table.concat(parts, "|")}
        "#);
        // JSON has no NaN or infinity: the number arrives as a string and `0 +`
        // converts it, as gopher-lua would.
        let obj = if n.is_finite() { json!({"n": n}) } else { json!({"n": format!("{n}")}) };
        let expected = NumberFormat::GopherLua.format(n);
        for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
            let evaluation = runner(sandbox).run(&script, &obj).unwrap();
            let message = evaluation.health.unwrap().message;
            prop_assert_eq!(message, [expected.as_str(); 4].join("|"));
            prop_assert_eq!(&evaluation.printed, &format!("{expected}\n"));
        }
    }
}

#[test]
fn truthiness_traps_agree_and_print_as_in_argo_cd() {
    let cases = [
        (
            json!({"phase": "Failed", "message": ""}),
            Variant::Basic,
            "",
        ),
        (
            json!({"phase": "Failed", "message": "", "retryCount": 0}),
            Variant::Basic,
            " (retry 0/3)",
        ),
        (
            json!({"phase": "Failed", "message": "m", "retryCount": 0}),
            Variant::Basic,
            "m (retry 0/3)",
        ),
        (
            json!({"phase": "Succeeded", "completionTime": ""}),
            Variant::Basic,
            "Notebook validation succeeded at ",
        ),
        (
            json!({"phase": "ValidationRunning", "validationPodName": ""}),
            Variant::Basic,
            "Validating notebook",
        ),
        (
            json!({"phase": "Failed", "message": ""}),
            Variant::Advanced,
            "",
        ),
        (
            json!({"phase": "Failed", "results": [{"cellIndex": 0, "status": "Failure", "errorMessage": ""}]}),
            Variant::Advanced,
            "Failed at cell 0: ",
        ),
    ];
    for (status, variant, message) in cases {
        let obj = json!({ "status": status });
        for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
            let lua = lua(&obj, variant, sandbox);
            assert_eq!(lua, native(&obj, variant, sandbox), "{obj}");
            let Outcome::Health(health) = lua else {
                panic!("{obj}: {lua:?}")
            };
            assert_eq!(health.message, message, "{obj}");
        }
    }
}

#[test]
fn testdata_table_lua() {
    let cases = cases();
    assert!(cases.len() >= 40);
    for (name, case) in &cases {
        for variant in Variant::ALL {
            let actual = lua(&case.object, variant, Sandbox::Production);
            assert_eq!(
                &actual,
                case.expected(variant),
                "{name} ({})",
                variant.name()
            );
        }
    }
}

/// The guide's own advanced script, run on what the CRD writes, never names the failed
/// cell and counts no completed cell; the shipped variant does both.
#[test]
fn the_guides_advanced_script_misses_the_crds_cells() {
    let guide = std::fs::read_to_string(data_dir().join("guide/advanced.yaml")).unwrap();
    let guide: Value = serde_yaml_ng::from_str(&guide).unwrap();
    let guide = HealthScript::new(
        "guide-advanced",
        guide[nbv_core::health::HEALTH_KEY].as_str().unwrap(),
    );
    let runner = runner(Sandbox::Production);
    let cells = json!([
        {"cellIndex": 0, "status": "Success"},
        {"cellIndex": 1, "status": "Failure", "errorMessage": "ZeroDivisionError: division by zero"}
    ]);

    let failed =
        json!({"status": {"phase": "Failed", "message": "1 cell failed", "results": cells}});
    let message = |script: &HealthScript<'_>, obj: &Value| {
        runner.evaluate(script, obj).unwrap().unwrap().message
    };
    assert_eq!(message(&guide, &failed), "1 cell failed");
    assert_eq!(
        message(&Variant::Advanced.health_script(), &failed),
        "Failed at cell 1: ZeroDivisionError: division by zero"
    );

    let running = json!({"status": {"phase": "ValidationRunning", "results": cells}});
    assert_eq!(
        message(&guide, &running),
        "Executing notebook (0 cells completed)"
    );
    assert_eq!(
        message(&Variant::Advanced.health_script(), &running),
        "Executing notebook (1 cells completed)"
    );
}

// ---------------------------------------------------------------- return values

#[test]
fn return_values_are_read_as_argo_cd_reads_them() {
    use HealthStatusCode::*;
    let obj = json!({"metadata": {"name": "x"}});
    let cases: [(&str, Option<HealthStatus>); 14] = [
        (
            r#"return {status = "Healthy", message = "ok"}"#,
            health(Healthy, "ok"),
        ),
        (
            r#"hs = {} hs.status = "Suspended" return hs"#,
            health(Suspended, ""),
        ),
        // Extra fields are ignored.
        (
            r#"return {status = "Missing", message = "m", extra = {1, 2}}"#,
            health(Missing, "m"),
        ),
        // nil, nothing, and the empty table (encoded as []) give the empty health status.
        ("return nil", None),
        ("local x = 1", None),
        ("return {}", None),
        // A non-empty array is a JSON array: the same type error.
        (r#"return {"Healthy", "ok"}"#, None),
        // A message that is not a string is a type error: the empty health status.
        (r#"return {status = "Healthy", message = 42}"#, None),
        (r#"return {status = true}"#, None),
        // A status outside the six codes (case matters).
        (
            r#"return {status = "healthy", message = "x"}"#,
            health(Unknown, INVALID_HEALTH_STATUS),
        ),
        (
            r#"return {message = "no status"}"#,
            health(Unknown, INVALID_HEALTH_STATUS),
        ),
        // Go matches JSON keys case-insensitively, with Unicode simple folding.
        (
            r#"return {STATUS = "Degraded", Message = "case"}"#,
            health(Degraded, "case"),
        ),
        (
            "return {[\"\u{17F}tatus\"] = \"Progressing\"}",
            health(Progressing, ""),
        ),
        // Invalid UTF-8 becomes U+FFFD, one per byte, on the way through JSON.
        (
            r#"return {status = "Healthy", message = "a\255\254b"}"#,
            health(Healthy, "a\u{FFFD}\u{FFFD}b"),
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(run(source, &obj), Ok(expected), "{source}");
    }
}

#[test]
fn the_last_returned_value_counts() {
    let obj = json!({});
    assert_eq!(
        run(r#"return 1, {status = "Healthy"}"#, &obj),
        Ok(health(HealthStatusCode::Healthy, ""))
    );
    assert!(matches!(
        run(r#"return {status = "Healthy"}, 1"#, &obj),
        Err(HealthScriptError::NotATable {
            found: LuaType::Number,
            ..
        })
    ));
}

#[test]
fn a_return_value_that_is_not_a_table_is_an_error() {
    let obj = json!({});
    for (source, found) in [
        ("return 1", LuaType::Number),
        ("return 'Healthy'", LuaType::String),
        ("return true", LuaType::Boolean),
        ("return print", LuaType::Function),
    ] {
        let error = run(source, &obj).unwrap_err();
        assert_eq!(
            error,
            HealthScriptError::NotATable {
                script: "test".to_owned(),
                found
            }
        );
        assert!(
            error
                .to_string()
                .contains(&format!("expect table output from Lua script, not {found}"))
        );
    }
}

#[test]
fn tables_gopher_json_cannot_encode_are_errors() {
    let obj = json!({});
    let cases = [
        (
            r#"return {status = "Healthy", f = print}"#,
            EncodeError::Unsupported {
                found: LuaType::Function,
            },
        ),
        (
            r#"local t = {} return {status = "Healthy", a = t, b = t}"#,
            EncodeError::Nested,
        ),
        (r#"local t = {} t.self = t return t"#, EncodeError::Nested),
        (
            r#"return {status = "Healthy", x = {[1] = 1, [3] = 3}}"#,
            EncodeError::SparseArray,
        ),
        (
            r#"return {status = "Healthy", x = {[0.5] = 1}}"#,
            EncodeError::SparseArray,
        ),
        (
            r#"return {status = "Healthy", x = {1, a = 2}}"#,
            EncodeError::InvalidKeys {
                found: LuaType::Number,
            },
        ),
        (
            r#"return {status = "Healthy", x = {[true] = 1}}"#,
            EncodeError::InvalidKeys {
                found: LuaType::Boolean,
            },
        ),
        (
            r#"return {status = "Healthy", x = 0/0}"#,
            EncodeError::NonFiniteNumber,
        ),
    ];
    for (source, reason) in &cases {
        assert_eq!(
            run(source, &obj),
            Err(HealthScriptError::Encode {
                script: "test".to_owned(),
                reason: reason.clone()
            }),
            "{source}"
        );
    }
}

#[test]
fn json_is_converted_as_argo_cd_converts_it() {
    let obj = json!({
        "s": "text", "n": 3, "f": 1.5, "t": true, "null": null,
        "arr": [1, null, "two", null], "obj": {"k": "v", "gone": null}, "empty": {}
    });
    let source = r#"
        local parts = {
            type(obj.s), type(obj.n), obj.n .. "", obj.f .. "", tostring(obj.t),
            tostring(obj.null), tostring(#obj.arr), obj.arr[2], obj.obj.k, tostring(obj.obj.gone),
            tostring(#obj.empty), type(obj.empty)
        }
        return {status = "Healthy", message = table.concat(parts, ",")}
    "#;
    assert_eq!(
        run(source, &obj).unwrap().unwrap().message,
        "string,number,3,1.5,true,nil,2,two,v,nil,0,table"
    );
}

// ---------------------------------------------------------------- sandboxes

#[test]
fn the_production_sandbox_has_argo_cds_libraries() {
    let source = r#"
        local present = {}
        for _, name in ipairs({"os", "io", "string", "math", "coroutine", "debug", "dofile", "loadfile",
                                "table", "package", "require", "pcall", "xpcall", "print", "loadstring", "newproxy"}) do
            present[#present + 1] = name .. "=" .. type(_G[name])
        end
        local os = require("os")
        present[#present + 1] = "require(os).time=" .. type(os.time)
        present[#present + 1] = "require(os).date=" .. type(os.date)
        present[#present + 1] = "require(os).execute=" .. type(os.execute)
        present[#present + 1] = "require(os).getenv=" .. type(os.getenv)
        present[#present + 1] = "loadlib=" .. type(package.loadlib)
        return {status = "Healthy", message = table.concat(present, " ")}
    "#;
    insta::assert_snapshot!(run(source, &json!({})).unwrap().unwrap().message);
}

#[test]
fn the_test_harness_opens_every_library_of_gopher_lua() {
    let source = r#"
        local present = {}
        for _, name in ipairs({"os", "io", "string", "math", "coroutine", "debug", "dofile", "loadfile"}) do
            present[#present + 1] = name .. "=" .. type(_G[name])
        end
        for _, name in ipairs({"time", "date", "clock", "difftime", "execute", "getenv", "remove", "exit"}) do
            present[#present + 1] = "os." .. name .. "=" .. type(os[name])
        end
        for _, name in ipairs({"open", "read", "write", "lines", "popen"}) do
            present[#present + 1] = "io." .. name .. "=" .. type(io[name])
        end
        local debug_names = {}
        for name in pairs(debug) do debug_names[#debug_names + 1] = name end
        table.sort(debug_names)
        present[#present + 1] = "debug=" .. table.concat(debug_names, ",")
        present[#present + 1] = "require(os)==os:" .. tostring(require("os") == os)
        present[#present + 1] = "exit:" .. tostring(select(2, pcall(os.exit, 1)))
        present[#present + 1] = "upvalues-of-C:" .. select('#', debug.getupvalue(print, 1))
        present[#present + 1] = ("x"):rep(3)
        return {status = "Healthy", message = table.concat(present, " ")}
    "#;
    let health = runner(Sandbox::TestHarness)
        .evaluate(&HealthScript::new("test", source), &json!({}))
        .unwrap()
        .unwrap();
    insta::assert_snapshot!(health.message);
}

#[test]
fn modules_come_from_preload_only() {
    for module in ["io", "string", "debug", "nbv_missing_module"] {
        let source = format!(r#"require("{module}") return {{status = "Healthy"}}"#);
        let error = run(&source, &json!({})).unwrap_err();
        assert!(
            matches!(&error, HealthScriptError::Runtime { message, .. } if message.contains("not found")),
            "{module}: {error}"
        );
    }
}

#[test]
fn precompiled_chunks_are_refused() {
    let error = run("\x1bLua\x51\x00", &json!({})).unwrap_err();
    assert!(matches!(error, HealthScriptError::Syntax { .. }), "{error}");
    // From inside a script too: loadstring returns nil and a message.
    let source = r#"
        local f, err = loadstring("\27Lua\81\0\1\4\8\4\8\0")
        local g = loadstring("return 40 + 2")
        return {status = "Healthy", message = tostring(f) .. "|" .. err .. "|" .. g()}
    "#;
    assert_eq!(
        run(source, &json!({})).unwrap().unwrap().message,
        "nil|precompiled chunks are not accepted|42"
    );
}

#[test]
fn load_reads_text_from_a_reader_function() {
    let source = r#"
        local pieces = {"return ", "'from", " reader'"}
        local i = 0
        local f = load(function() i = i + 1 return pieces[i] end)
        return {status = "Healthy", message = f()}
    "#;
    assert_eq!(
        run(source, &json!({})).unwrap().unwrap().message,
        "from reader"
    );
}

#[test]
fn print_is_captured_and_bounded() {
    let runner = LuaHealthRunner::new(EvalOptions {
        max_printed_bytes: 16,
        ..options(Sandbox::Production)
    });
    let script = HealthScript::new(
        "chatty",
        r#"print("phase", obj.status.phase, 3) print(("x"):rep(40))"#,
    );
    // No string library in production: the second print's argument fails.
    let error = runner
        .run(&script, &json!({"status": {"phase": "Failed"}}))
        .unwrap_err();
    assert_eq!(error.runtime_kind(), Some(RuntimeErrorKind::Index));

    let script = HealthScript::new(
        "chatty",
        r#"print("phase", obj.status.phase, 3) for i = 1, 10 do print(i) end"#,
    );
    let evaluation = runner
        .run(&script, &json!({"status": {"phase": "Failed"}}))
        .unwrap();
    // The first 16 bytes: the first line (15 bytes) and the "1" of the second.
    assert_eq!(evaluation.printed, "phase\tFailed\t3\n1");
    assert!(evaluation.printed_truncated);
    assert_eq!(evaluation.health, None);
}

// ---------------------------------------------------------------- errors and hostile scripts

#[test]
fn error_messages() {
    let obj = json!({"status": {"phase": "Failed", "retryCount": true}});
    let basic = runner(Sandbox::Production)
        .evaluate(&Variant::Basic.health_script(), &obj)
        .unwrap_err();
    let messages = [
        basic.to_string(),
        run("return {", &obj).unwrap_err().to_string(),
        run("error('custom failure')", &obj)
            .unwrap_err()
            .to_string(),
        run("return obj.status.phase.name.first", &obj)
            .unwrap_err()
            .to_string(),
        run("return 42", &obj).unwrap_err().to_string(),
        run(
            "local t = {} return {status = 'Healthy', a = t, b = t}",
            &obj,
        )
        .unwrap_err()
        .to_string(),
    ];
    insta::assert_snapshot!(messages.join("\n"));
}

fn stopped(source: &str, options: EvalOptions) -> HealthScriptError {
    LuaHealthRunner::new(options)
        .evaluate(&HealthScript::new("hostile", source), &json!({}))
        .unwrap_err()
}

#[test]
fn endless_loops_are_stopped_even_when_they_catch_errors() {
    let budget = EvalOptions {
        instruction_budget: NonZeroU64::new(200_000).unwrap(),
        ..options(Sandbox::TestHarness)
    };
    for source in [
        "while true do end",
        "local function f() return f() end f()",
        "while true do pcall(function() while true do end end) end",
        "while true do xpcall(function() while true do end end, function() while true do end end) end",
        "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
        "coroutine.wrap(function() while true do end end)()",
        "local ok repeat ok = pcall(error, 'x') until false",
    ] {
        let error = stopped(source, budget.clone());
        assert!(
            matches!(
                error,
                HealthScriptError::InstructionBudget {
                    budget: 200_000,
                    ..
                }
            ),
            "{source}: {error}"
        );
    }
}

#[test]
fn a_timeout_stops_a_script_like_argo_cds_one_second() {
    let timed = EvalOptions {
        instruction_budget: NonZeroU64::MAX,
        timeout: Some(Duration::from_millis(50)),
        ..options(Sandbox::Production)
    };
    let started = std::time::Instant::now();
    let error = stopped("while true do end", timed);
    assert!(
        matches!(error, HealthScriptError::Timeout { .. }),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn work_inside_library_functions_is_stopped_by_the_timeout() {
    let timed = EvalOptions {
        instruction_budget: NonZeroU64::MAX,
        timeout: Some(Duration::from_millis(100)),
        ..options(Sandbox::Production)
    };
    let started = std::time::Instant::now();
    let error = stopped(
        "local t = {} for i = 1, 2e5 do t[i] = -i end while true do table.sort(t) end",
        timed,
    );
    assert!(
        matches!(error, HealthScriptError::Timeout { .. }),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn xpcall_calls_its_handler_after_the_error() {
    let source = r#"
        local ok1, a = xpcall(function() return "fine" end, print)
        local ok2, b = xpcall(function() error("boom", 0) end, function(e) return "handled " .. e end)
        local ok3, c = xpcall(function() error("boom", 0) end, function(e) error("again") end)
        local ok4, d = xpcall(function() error("boom", 0) end, 42)
        local parts = {tostring(ok1), a, tostring(ok2), b, tostring(ok3), c, tostring(ok4), d}
        return {status = "Healthy", message = table.concat(parts, "|")}
    "#;
    assert_eq!(
        run(source, &json!({})).unwrap().unwrap().message,
        "true|fine|false|handled boom|false|error in error handling|false|error in error handling"
    );
}

#[test]
fn memory_is_limited() {
    let small = EvalOptions {
        memory_limit: NonZeroUsize::new(4 << 20).unwrap(),
        instruction_budget: NonZeroU64::new(1_000_000_000).unwrap(),
        ..options(Sandbox::TestHarness)
    };
    for source in [
        "local t = {} for i = 1, 1e9 do t[i] = i end",
        "local s = 'x' while true do s = s .. s end",
        "return {status = 'Healthy', message = ('x'):rep(1e9)}",
    ] {
        let error = stopped(source, small.clone());
        assert!(
            matches!(error, HealthScriptError::MemoryLimit { limit, .. } if limit == 4 << 20),
            "{source}: {error}"
        );
    }
    // An allocation failure caught by pcall does not let the script run on: it ends on
    // the budget, or on the memory limit once the VM itself can no longer allocate.
    let error = stopped(
        "local t = {} while true do pcall(function() t[#t + 1] = {} end) end",
        EvalOptions {
            instruction_budget: NonZeroU64::new(3_000_000).unwrap(),
            ..small
        },
    );
    assert!(
        matches!(
            error,
            HealthScriptError::InstructionBudget { .. } | HealthScriptError::MemoryLimit { .. }
        ),
        "{error}"
    );
}

#[test]
fn an_object_bigger_than_the_memory_limit_is_refused() {
    let small = EvalOptions {
        memory_limit: NonZeroUsize::new(1 << 20).unwrap(),
        ..options(Sandbox::Production)
    };
    // Distinct strings: Lua stores equal strings once.
    let results: Vec<String> = (0..20_000).map(|i| format!("{i:0>100}")).collect();
    let obj = json!({"status": {"results": results}});
    let error = LuaHealthRunner::new(small)
        .evaluate(&Variant::Basic.health_script(), &obj)
        .unwrap_err();
    assert!(
        matches!(error, HealthScriptError::MemoryLimit { .. }),
        "{error}"
    );
}

#[test]
fn objects_nested_deeper_than_go_accepts_are_refused() {
    // Deep values are built and dropped on a thread with room for their recursion.
    let outcome = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(|| {
            // `json!` would copy `inner` at each level: build by moving instead.
            let nest = |depth: usize| {
                (1..depth).fold(json!({}), |inner, _| {
                    Value::Object(serde_json::Map::from_iter([("a".to_owned(), inner)]))
                })
            };
            let run = |obj: &Value| {
                LuaHealthRunner::new(options(Sandbox::Production))
                    .evaluate(&HealthScript::new("deep", "return nil"), obj)
            };
            (
                run(&nest(MAX_OBJECT_DEPTH)),
                run(&nest(MAX_OBJECT_DEPTH + 1)),
            )
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(outcome.0, Ok(None));
    assert!(matches!(
        outcome.1,
        Err(HealthScriptError::ObjectTooDeep {
            max: MAX_OBJECT_DEPTH,
            ..
        })
    ));
}

#[test]
fn evaluations_do_not_share_state() {
    let runner = runner(Sandbox::Production);
    let script = HealthScript::new(
        "counter",
        r#"count = (count or 0) + 1 return {status = "Healthy", message = "" .. count}"#,
    );
    for _ in 0..3 {
        assert_eq!(
            runner
                .evaluate(&script, &json!({}))
                .unwrap()
                .unwrap()
                .message,
            "1"
        );
    }
}

// ---------------------------------------------------------------- gopher-lua's goto

/// The shape of Argo CD's own built-in checks (Gateway API's HTTPRoute, 3scale's
/// resources): `goto continue` to skip to the end of a loop body.
#[test]
fn goto_continue_as_argo_cds_built_in_checks_use_it() {
    let source = r#"
        local hs = {status = "Healthy", message = ""}
        local seen = {}
        if obj.status ~= nil and obj.status.parents ~= nil then
          for _, parent in ipairs(obj.status.parents) do
            if parent.conditions == nil then
              goto continue
            end
            for _, condition in ipairs(parent.conditions) do
              if condition.status == "True" then
                goto continue
              end
              hs.status = "Degraded"
              seen[#seen + 1] = condition.type
            end
            ::continue::
          end
        end
        hs.message = table.concat(seen, ",")
        return hs
    "#;
    let obj = json!({"status": {"parents": [
        {"name": "a"},
        {"conditions": [{"type": "Accepted", "status": "True"}, {"type": "Late", "status": "False"}]},
        {"conditions": [{"type": "ResolvedRefs", "status": "False"}, {"type": "Programmed", "status": "False"}]}
    ]}});
    for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
        let health = runner(sandbox)
            .evaluate(&HealthScript::new("httproute", source), &obj)
            .unwrap();
        assert_eq!(
            health,
            Some(HealthStatus::new(
                HealthStatusCode::Degraded,
                "ResolvedRefs,Programmed"
            ))
        );
    }
}

#[test]
fn goto_runs_as_in_gopher_lua() {
    let cases = [
        // Backward: a loop made of a label and a goto.
        (
            "local n = 0 ::top:: n = n + 1 if n < 3 then goto top end return n",
            "3",
        ),
        // Out of nested loops.
        (
            "for i = 1, 3 do for j = 1, 3 do if i * j == 4 then goto done end end end ::done:: return 'out'",
            "out",
        ),
        // `continue` in while and numeric for loops.
        (
            "local t, k = {}, 0 while k < 4 do k = k + 1 if k == 2 then goto c end t[#t+1] = k ::c:: end return table.concat(t, ',')",
            "1,3,4",
        ),
        (
            "local t = {} for i = 1, 5 do local x = i * i if x % 2 == 0 then goto c end t[#t+1] = x ::c:: end return table.concat(t, ',')",
            "1,9,25",
        ),
        // A label at the end of the chunk is outside every local, so the goto may
        // jump past a local declaration to it.
        ("goto f local a ::f::", "nil"),
        // Labels of an enclosing block are visible; `;` between labels is no statement.
        (
            "do goto x end do return 'skipped' end ::x:: ; ::y:: return 'x'",
            "x",
        ),
        // gopher-lua closes every open upvalue of the function on a goto that leaves
        // no block with captured locals: `inc` then updates a closed copy of `x`.
        (
            "local x = 0 local function inc() x = x + 1 end goto skip ::skip:: inc() return x",
            "0",
        ),
        // ... but lowers the level when the goto leaves a block with captured locals,
        // so the enclosing function's `y` stays shared.
        (
            "local y = 0 local function inc() y = y + 1 end do local z = 1 local g = function() return z end goto out end ::out:: inc() return y",
            "1",
        ),
    ];
    for (body, expected) in cases {
        let source = format!(
            "local function f() {body} end return {{status = 'Healthy', message = tostring((f()))}}"
        );
        for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
            let health = runner(sandbox).evaluate(&HealthScript::new("goto", &source), &json!({}));
            assert_eq!(
                health,
                Ok(Some(HealthStatus::new(HealthStatusCode::Healthy, expected))),
                "{body}"
            );
        }
    }
}

#[test]
fn goto_is_refused_where_gopher_lua_refuses_it() {
    let cases = [
        (
            "goto nowhere",
            "no visible label 'nowhere' for <goto> at line 1",
        ),
        (
            "do goto l end local a ::l:: print(a)",
            "<goto l> at line 1 jumps into the scope of local 'a'",
        ),
        // Not at the end of its block: `until` still sees the block's locals.
        (
            "repeat goto f; local a ::f:: until a",
            "<goto f> at line 1 jumps into the scope of local 'a'",
        ),
        ("::a:: ::a::", "label 'a' already defined on line 1"),
        // A label of a nested block is not visible outside it.
        (
            "do ::a:: end goto a",
            "no visible label 'a' for <goto> at line 1",
        ),
        // Nor across functions.
        (
            "::a:: local function f() goto a end",
            "no visible label 'a' for <goto> at line 1",
        ),
        // `goto` is a reserved word, as in gopher-lua.
        ("local goto = 1", "'<name>' expected near 'goto'"),
    ];
    for (source, message) in cases {
        match run(source, &json!({})) {
            Err(HealthScriptError::Syntax { message: got, .. }) => {
                assert!(got.contains(message), "{source}: {got}")
            }
            other => panic!("{source}: {other:?}"),
        }
    }
}
