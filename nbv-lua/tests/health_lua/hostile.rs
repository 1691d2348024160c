//! Errors and hostile scripts: messages, endless loops, timeouts, memory, depth, isolation.

use super::*;

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

/// `stopped`, on a thread: a script that is not stopped within `limit` fails the test
/// instead of hanging it.
fn stopped_within(source: &str, options: EvalOptions, limit: Duration) -> HealthScriptError {
    let (send, receive) = std::sync::mpsc::channel();
    let owned = source.to_owned();
    std::thread::spawn(move || {
        let _ = send.send(stopped(&owned, options));
    });
    receive
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("not stopped within {limit:?}: {source}"))
}

/// Scripts whose work is done inside library calls, one call at a time or few VM
/// instructions per call: backtracking patterns, plain search, copies, sorts; and inside
/// single instructions: strings of 16 MiB read as numbers or compared.
const WORK_IN_LIBRARY_CALLS: [&str; 19] = [
    r#"local f = ("%c"):rep(2e5) while true do os.date(f) end"#,
    r#"local s = "1" for i = 1, 24 do s = s .. s end while true do local _ = s + 0 end"#,
    r#"local s = "1" for i = 1, 24 do s = s .. s end while true do tonumber(s) end"#,
    r#"local s = "1" for i = 1, 24 do s = s .. s end local u = s .. "2" while true do local _ = s < u end"#,
    r#"string.find(("a"):rep(30000), ("a*"):rep(30) .. "b")"#,
    r#"string.match(("a"):rep(40), ("a?"):rep(40) .. ("a"):rep(40))"#,
    r#"for _ in string.gmatch(("a"):rep(30000), ("a*"):rep(30) .. "b") do end"#,
    r#"string.gsub(("a"):rep(30000), ("a*"):rep(30) .. "b", "")"#,
    r#"string.find(("a"):rep(30000), "%f[" .. ("b"):rep(1e6) .. "]a*" .. ("b*"):rep(20) .. "c")"#,
    r#"string.find(("a"):rep(1e6), ("a"):rep(1e5) .. "b", 1, true)"#,
    r#"string.gsub(("a"):rep(1e5), "", ("%0"):rep(1e4))"#,
    r#"string.rep("", 2^31 - 1)"#,
    r#"local s = ("x"):rep(1e6) while true do s:upper() end"#,
    r#"local s = ("x"):rep(1e6) while true do local _ = s .. s end"#,
    r#"local t = {} for i = 1, 1e5 do t[i] = -i end while true do table.sort(t) end"#,
    r#"local t = {} for i = 1, 1e5 do t[i] = "x" end while true do table.concat(t) end"#,
    r#"local t = {} for i = 1, 1e5 do t[i] = i end while true do table.foreachi(t, math.randomseed) end"#,
    r#"local t = {} for i = 1, 1e5 do t[i] = {} end while true do collectgarbage() end"#,
    r#"local src = ("a = 1 "):rep(1e5) while true do loadstring(src) end"#,
];

#[test]
fn work_inside_library_calls_spends_the_instruction_budget() {
    // The default budget, no timeout: the budget alone must stop every one.
    let budget = options(Sandbox::TestHarness);
    for source in WORK_IN_LIBRARY_CALLS {
        let error = stopped_within(source, budget.clone(), Duration::from_secs(60));
        assert!(
            matches!(
                error,
                HealthScriptError::InstructionBudget {
                    budget: 10_000_000,
                    ..
                }
            ),
            "{source}: {error}"
        );
        assert!(
            error.to_string().contains("spent its budget"),
            "{source}: {error}"
        );
    }
}

#[test]
fn a_timeout_stops_a_backtracking_pattern_in_the_middle_of_the_call() {
    let timed = EvalOptions {
        instruction_budget: NonZeroU64::MAX,
        timeout: Some(Duration::from_millis(100)),
        ..options(Sandbox::TestHarness)
    };
    let started = std::time::Instant::now();
    let error = stopped_within(
        r#"string.find(("a"):rep(30000), ("a*"):rep(30) .. "b")"#,
        timed,
        Duration::from_secs(60),
    );
    assert!(
        matches!(error, HealthScriptError::Timeout { .. }),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn patterns_nest_at_most_200_levels_deep() {
    // C Lua 5.1 recursed once per item of the pattern, without a limit: a long pattern
    // overflowed the stack of the thread. Lua 5.2 and later refuse it, and so does nbv.
    let source = r#"string.find(("a"):rep(30000), ("a?"):rep(30000) .. ("a"):rep(30000))"#;
    let error = stopped_within(
        source,
        options(Sandbox::TestHarness),
        Duration::from_secs(60),
    );
    assert!(
        matches!(&error, HealthScriptError::Runtime { message, .. } if message.contains("pattern too complex")),
        "{error}"
    );
    let fine = r#"return {status = "Healthy", message = tostring(string.find(("a"):rep(150), ("a?"):rep(150) .. "$"))}"#;
    assert_eq!(
        runner(Sandbox::TestHarness)
            .evaluate(&HealthScript::new("fine", fine), &json!({}))
            .unwrap()
            .unwrap()
            .message,
        "1"
    );
}
