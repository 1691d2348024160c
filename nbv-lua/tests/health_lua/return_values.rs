//! Return values are read, converted and refused as Argo CD reads them.

use super::*;

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
