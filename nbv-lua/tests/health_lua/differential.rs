//! Differential: the shipped scripts in the Lua runner agree with the native mapping.

use super::*;

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
