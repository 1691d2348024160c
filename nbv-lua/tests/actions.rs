//! Resource actions as argocd-server runs them: discovery decoded as Go decodes it,
//! results cleaned and turned into merge patches, bad scripts refused with a reason.

use std::collections::BTreeMap;

use nbv_core::health::actions::{DISCOVERY_SCRIPT, RERUN_SCRIPT};
use nbv_lua::{ActionScriptError, LuaActionRunner, Operation, merge_patch};
use serde_json::{Value, json};

fn run(source: &str, obj: &Value) -> Result<Vec<nbv_lua::ImpactedResource>, ActionScriptError> {
    LuaActionRunner::default().run("a", source, obj, &BTreeMap::new())
}

fn job(phase: &str, annotation: Option<&str>, request: Option<&str>) -> Value {
    let mut job = json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "labels": {}},
        "spec": {"podConfig": {"resources": {}}},
        "status": {"phase": phase, "results": []}
    });
    if let Some(value) = annotation {
        job["metadata"]["annotations"] = json!({"mlops.dev/rerun": value});
    }
    if let Some(request) = request {
        job["status"]["rerun"] = json!({"request": request, "count": 1});
    }
    job
}

/// The value `rerun` writes, from the patch argocd-server would send.
fn rerun_value(job: &Value) -> Value {
    let returned = run(RERUN_SCRIPT, job).expect("the action runs");
    assert_eq!(returned.len(), 1);
    assert_eq!(returned[0].operation, Operation::Patch);
    let patch = merge_patch(job, &returned[0].object);
    let keys: Vec<_> = patch
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["metadata"], "only the annotation changes: {patch}");
    patch["metadata"]["annotations"]["mlops.dev/rerun"].clone()
}

#[test]
fn rerun_writes_a_value_no_request_has_had() {
    assert_eq!(rerun_value(&job("Succeeded", None, None)), "1");
    assert_eq!(rerun_value(&job("Failed", Some("1"), Some("1"))), "2");
    // Answered a higher number than the annotation holds now.
    assert_eq!(rerun_value(&job("Failed", Some("3"), Some("7"))), "8");
    // Values written by hand are not numbers; fractions, negatives and huge numbers
    // are not counted either.
    for odd in ["after the refresh", "2.5", "-4", "1e300", ""] {
        let value = rerun_value(&job("Succeeded", Some(odd), Some(odd)));
        assert_eq!(value, "1", "{odd:?}");
    }
    // Up to 10^15, which is still written without an exponent.
    assert_eq!(
        rerun_value(&job("Succeeded", Some("999999999999999"), None)),
        "1000000000000000"
    );
    assert_eq!(
        rerun_value(&job("Succeeded", Some("1000000000000000"), None)),
        "1"
    );
}

#[test]
fn discovery_offers_rerun_once_the_run_ended() {
    let runner = LuaActionRunner::default();
    for (phase, disabled) in [
        ("Succeeded", false),
        ("Failed", false),
        ("ValidationRunning", true),
        ("Building", true),
        ("Initializing", true),
    ] {
        let actions = runner
            .discover("discovery.lua", DISCOVERY_SCRIPT, &job(phase, None, None))
            .expect("discovery runs");
        assert_eq!(actions.len(), 1);
        assert_eq!(
            (actions[0].name.as_str(), actions[0].disabled),
            ("rerun", disabled),
            "{phase}"
        );
        assert_eq!(actions[0].display_name.as_deref(), Some("Run again"));
    }
    let no_status = json!({"metadata": {"name": "train"}});
    let actions = runner
        .discover("d", DISCOVERY_SCRIPT, &no_status)
        .expect("discovery runs");
    assert!(actions[0].disabled);
}

#[test]
fn discovery_is_decoded_as_argo_cd_decodes_it() {
    let runner = LuaActionRunner::default();
    let obj = json!({});
    let actions = runner
        .discover(
            "d",
            r#"return {b = {}, a = {DISABLED = true, params = {{name = "replicas", default = "3"}}}}"#,
            &obj,
        )
        .expect("discovery runs");
    assert_eq!(
        actions.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    assert!(actions[0].disabled, "keys match case-insensitively");
    assert_eq!(actions[0].params[0].default.as_deref(), Some("3"));
    assert!(!actions[1].disabled);

    for (script, wanted) in [
        ("return {}", "cannot unmarshal array"),
        (
            r#"return {a = {disabled = "yes"}}"#,
            "cannot unmarshal string",
        ),
        (
            "return 1",
            "expect table output from Lua script, not number",
        ),
        ("return {a = print}", "cannot encode function"),
    ] {
        let error = runner
            .discover("d", script, &obj)
            .expect_err(script)
            .to_string();
        assert!(error.contains(wanted), "{script}: {error}");
    }
}

#[test]
fn action_results_are_cleaned_and_checked() {
    let obj = json!({"metadata": {"name": "a", "labels": {}}, "spec": {"list": [], "map": {}}});
    // An empty map that Lua returns as an empty table is the map again; an emptied
    // list stays a list.
    let returned = run("return obj", &obj).expect("runs");
    assert_eq!(returned[0].object, obj);
    assert_eq!(merge_patch(&obj, &returned[0].object), json!({}));

    // The newer form: several resources, patched or created.
    let returned = run(
        r#"local new = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "b"}}
           obj.spec.x = 1
           return {{operation = "patch", resource = obj}, {operation = "create", resource = new}}"#,
        &obj,
    )
    .expect("runs");
    assert_eq!(returned.len(), 2);
    assert_eq!(
        merge_patch(&obj, &returned[0].object),
        json!({"spec": {"x": 1}})
    );
    assert_eq!(returned[1].operation, Operation::Create);

    for (script, wanted) in [
        ("return 'x'", "not string"),
        ("return {}", "not a valid json object or array"),
        (
            r#"return {{operation = "delete", resource = obj}}"#,
            "unsupported operation",
        ),
        ("return {1, nil, 3}", "cannot encode sparse array"),
        ("error('no')", "no"),
        ("while true do end", "budget"),
    ] {
        let error = run(script, &obj).expect_err(script).to_string();
        assert!(error.contains(wanted), "{script}: {error}");
    }
}

#[test]
fn parameters_reach_the_script_as_action_params() {
    let obj = json!({"spec": {"replicas": 1}});
    let params = BTreeMap::from([("replicas".to_owned(), "6".to_owned())]);
    let returned = LuaActionRunner::default()
        .run(
            "scale",
            "obj.spec.replicas = tonumber(actionParams.replicas) return obj",
            &obj,
            &params,
        )
        .expect("runs");
    assert_eq!(returned[0].object["spec"]["replicas"], 6);
}

#[test]
fn a_deeply_nested_result_is_refused_not_a_crash() {
    let script = "local t = {} local top = t for i = 1, 500 do t.x = {} t = t.x end return top";
    let error = run(script, &json!({})).expect_err("too deep").to_string();
    assert!(error.contains("exceeded max depth"), "{error}");
}
