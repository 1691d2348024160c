//! gopher-lua's goto, which Argo CD's built-in checks use.

use super::*;

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
