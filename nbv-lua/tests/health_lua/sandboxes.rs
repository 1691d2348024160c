//! The sandboxes: which libraries a script gets, how modules and chunks load, print.

use super::*;

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
