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
fn the_test_harness_with_host_access_opens_every_library_of_gopher_lua() {
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
    let health = LuaHealthRunner::new(EvalOptions {
        host_access: true,
        ..options(Sandbox::TestHarness)
    })
    .evaluate(&HealthScript::new("test", source), &json!({}))
    .unwrap()
    .unwrap();
    insta::assert_snapshot!(health.message);
}

/// Calls of what reaches the machine, each a Lua expression that works with host access
/// (the temporary files are created and removed by the calls themselves).
const HOST_CALLS: [(&str, &str); 16] = [
    ("io.open", r#"assert(io.open(TMP, "w")):close()"#),
    ("io.lines", r#"for _ in io.lines(TMP) do end"#),
    ("io.input", r#"io.input(TMP)"#),
    ("io.output", r#"io.output(TMP)"#),
    ("io.write", r#"io.write("")"#),
    ("io.flush", r#"io.flush()"#),
    ("io.popen", r#"assert(io.popen("true")):close()"#),
    ("io.type", r#"io.type(42)"#),
    ("io.tmpfile", r#"assert(io.tmpfile()):close()"#),
    ("io.stdout", r#"io.stdout:flush()"#),
    ("os.execute", r#"os.execute()"#),
    ("os.getenv", r#"os.getenv("PATH")"#),
    ("os.tmpname", r#"os.remove(os.tmpname())"#),
    ("os.remove", r#"assert(os.remove(TMP))"#),
    (
        "os.rename",
        r#"local to = TMP .. ".moved" assert(os.rename(TMP, to)) os.remove(to)"#,
    ),
    ("os.setlocale", r#"os.setlocale()"#),
];

/// Runs `call` with `TMP` the name of a file that exists: `nil`, or the error.
fn host_call(call: &str, host_access: bool) -> Result<Option<HealthStatus>, HealthScriptError> {
    let tmp = std::env::temp_dir().join(format!("nbv-lua-host-{}", std::process::id()));
    std::fs::write(&tmp, "line\n").unwrap();
    let source = format!(
        "local TMP = {:?}\n{call}\nreturn nil",
        tmp.display().to_string()
    );
    let result = LuaHealthRunner::new(EvalOptions {
        host_access,
        ..options(Sandbox::TestHarness)
    })
    .evaluate(&HealthScript::new("host", &source), &json!({}));
    let _ = std::fs::remove_file(&tmp);
    result
}

#[test]
fn the_test_harness_closes_what_reaches_the_machine_unless_asked() {
    for (name, call) in HOST_CALLS {
        let error = host_call(call, false).expect_err(name);
        let HealthScriptError::Runtime { message, .. } = &error else {
            panic!("{name}: {error}");
        };
        let expected = format!(
            "{name} is not available: nbv's test harness closes it because it reaches the \
             machine that runs the check; for a suite you trust, run `nbv health` with \
             --allow-host-access"
        );
        assert!(message.contains(&expected), "{name}: {message}");
        assert_eq!(host_call(call, true), Ok(None), "{name} with host access");
    }
}

#[test]
fn the_closed_test_harness_keeps_what_argo_cds_scripts_use() {
    let source = r#"
        local os2 = require("os")
        local parts = {
            os.date("!%Y-%m-%dT%H:%M:%SZ", 0),
            tostring(os.time({year = 2024, month = 1, day = 1, hour = 12}) > 0),
            type(os.clock()),
            tostring(os.difftime(10, 4)),
            tostring(os2 == os and require("io") == io),
            string.format("%s-%d", ("ab"):upper(), math.floor(2.5)),
            tostring(coroutine.wrap(function() coroutine.yield(7) end)()),
            type(debug.traceback()),
            table.concat({"a", "b"}, ","),
        }
        return {status = "Healthy", message = table.concat(parts, " ")}
    "#;
    let health = runner(Sandbox::TestHarness)
        .evaluate(&HealthScript::new("test", source), &json!({}))
        .unwrap()
        .unwrap();
    assert_eq!(
        health.message,
        "1970-01-01T00:00:00Z true number 6 true AB-2 7 string a,b"
    );
}

#[test]
fn file_loading_fails_in_every_sandbox_whatever_the_options() {
    for sandbox in [Sandbox::Production, Sandbox::TestHarness] {
        for host_access in [false, true] {
            let runner = LuaHealthRunner::new(EvalOptions {
                host_access,
                ..options(sandbox)
            });
            for (name, call) in [
                ("dofile", r#"dofile("/etc/hostname")"#),
                ("loadfile", r#"loadfile("/etc/hostname")"#),
                (
                    "package.loadlib",
                    r#"package.loadlib("libc.so.6", "system")"#,
                ),
            ] {
                let error = runner
                    .evaluate(&HealthScript::new("files", call), &json!({}))
                    .unwrap_err();
                assert!(
                    error.to_string().contains(&format!(
                        "{name} is not available: nbv's Lua reads no files and loads no C code"
                    )),
                    "{sandbox:?} {host_access}: {error}"
                );
            }
        }
    }
}

#[test]
fn modules_come_from_preload_only() {
    for module in ["io", "string", "debug", "nbv_missing_module"] {
        let source = format!(r#"require("{module}") return {{status = "Healthy"}}"#);
        let error = run(&source, &json!({})).unwrap_err();
        assert!(
            matches!(&error, HealthScriptError::Runtime { message, .. }
                if message.contains("not found")
                    && message.contains("no file searched: nbv's Lua loads preloaded modules only")),
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
