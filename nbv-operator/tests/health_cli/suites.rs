//! `nbv health test`: the shipped and example suites, Argo CD's script lookup, failures
//! that say what differs.

use super::*;

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

/// A suite from a pull request runs no command and touches no file unless the flag says
/// it may: the harness is closed to the machine by default.
#[test]
fn a_suite_reaches_the_machine_only_with_allow_host_access() {
    let tmp = TempDir::new("host-access");
    let marker = tmp.0.join("written-by-the-suite");
    let script = format!(
        "local f = assert(io.open({marker:?}, \"w\"))\n\
         f:write(os.getenv(\"PATH\") or \"\")\n\
         f:close()\n\
         return {{status = \"Healthy\"}}\n",
        marker = marker.display().to_string()
    );
    tmp.write("s/health.lua", &script);
    tmp.write(
        "s/health_test.yaml",
        "tests:\n- inputPath: o.yaml\n  healthStatus: {status: Healthy}\n",
    );
    tmp.write("s/o.yaml", "kind: Job\n");
    let dir = tmp.0.to_str().unwrap();

    let (code, out, _) = nbv(&["health", "test", dir], "");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "io.open is not available: nbv's test harness closes it because it reaches the \
             machine that runs the check; for a suite you trust, run `nbv health` with \
             --allow-host-access"
        ),
        "{out}"
    );
    assert!(!marker.exists());

    let (code, out, _) = nbv(&["health", "test", "--allow-host-access", dir], "");
    assert_eq!((code, out.as_str()), (0, "1 passed, 0 failed\n"));
    assert!(marker.exists());

    // The flag is for the test harness; the production sandbox has nothing to open.
    let refused = Cli::try_parse_from([
        "nbv",
        "health",
        "test",
        "--allow-host-access",
        "--production-sandbox",
        dir,
    ]);
    assert!(refused.is_err());
}

/// Argo CD's own suites (its `resource_customizations/`) pass in the closed test harness
/// as they pass with host access: its checks use `os.date` and `os.time`, nothing that
/// reaches the machine.
#[test]
#[ignore = "needs a copy of Argo CD's resource_customizations/: set NBV_ARGOCD_CUSTOMIZATIONS to its path"]
fn argo_cds_own_suites_pass_in_the_closed_test_harness() {
    let dir = PathBuf::from(
        std::env::var_os("NBV_ARGOCD_CUSTOMIZATIONS")
            .expect("NBV_ARGOCD_CUSTOMIZATIONS: the path of argo-cd's resource_customizations/"),
    );
    let run = |host_access| {
        let args = TestArgs {
            dirs: vec![dir.clone()],
            options: EvalOptions {
                sandbox: Sandbox::TestHarness,
                host_access,
                ..EvalOptions::default()
            },
        };
        let mut out = Vec::new();
        let code = harness::run(&args, &mut out);
        (code, String::from_utf8(out).unwrap())
    };
    let (code, closed) = run(false);
    assert_eq!(closed, run(true).1);
    assert_eq!(code, 0, "{closed}");
    assert!(closed.ends_with(" passed, 0 failed\n"), "{closed}");
}

#[test]
fn the_help_names_the_flag_that_opens_the_machine() {
    use clap::CommandFactory;
    let mut command = Cli::command();
    for sub in ["test", "eval"] {
        let help = command
            .find_subcommand_mut("health")
            .unwrap()
            .find_subcommand_mut(sub)
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("--allow-host-access"), "{sub}: {help}");
        assert!(help.contains("Only for scripts you trust"), "{sub}: {help}");
    }
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

    // Checks with open libraries are closed to the machine unless the flag opens it.
    let host = tmp.write(
        "host-cm.yaml",
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.health.widgets.example.com_Widget: |
    return {status = "Healthy", message = type(os.getenv("PATH"))}
  resource.customizations.useOpenLibs.widgets.example.com_Widget: "true"
"#,
    );
    let host_arg = host.to_str().unwrap();
    let (_, lines) = eval(&["--argocd-cm", host_arg]);
    assert!(
        lines[0].contains("os.getenv is not available") && lines[0].contains("--allow-host-access"),
        "{}",
        lines[0]
    );
    let (_, lines) = eval(&["--argocd-cm", host_arg, "--allow-host-access"]);
    assert_eq!(lines[0], r#"{"status":"Healthy","message":"string"}"#);

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
