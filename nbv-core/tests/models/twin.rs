//! The Python twin the validation Pod runs (`models.py`) judges answers as the core
//! does, byte for byte: the same outputs, the same first mismatch, the same message,
//! on generated and hand-written answers; and its capping of the reported answers is
//! the core's.

use nbv_core::models::{ReportedPrediction, capped_predictions};
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use super::*;

pub(super) use nbv_testkit::python::require_python;

/// Runs `driver` (Python defining `twin`, with the notebook script's functions in
/// scope; the script is the same for every job) once per line of `inputs`, under
/// `env`; returns what it printed, one line per input.
pub(super) fn call_script(driver: &str, inputs: &[Value], env: &[(&str, &str)]) -> Vec<String> {
    let job = nbv_testkit::fixtures::JobBuilder::new("ml", "train")
        .typed()
        .expect("a job");
    nbv_testkit::python::call_twin(
        &nbv_testkit::python::notebook_script(&job),
        driver,
        inputs,
        env,
    )
}

/// Numbers whose texts differ between Python's and serde_json's defaults: integral
/// floats, exponents both ways, the edges of the plain notation, 64-bit integers.
fn number() -> impl Strategy<Value = Value> {
    let edges = [
        0.0,
        -0.0,
        1.0,
        0.5,
        1e-7,
        1.5e-7,
        1e-5,
        1e-4,
        0.1,
        1e15,
        1e16,
        1.5e16,
        1e21,
        1e300,
        5e-324,
        123456.789,
        -2.5,
        0.30000000000000004,
    ];
    prop_oneof![
        prop::sample::select(edges.to_vec()).prop_map(|f| json!(f)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        (-1.0e3..1.0e3f64).prop_map(|f| json!(f)),
        any::<i64>().prop_map(|i| json!(i)),
        any::<u64>().prop_map(|u| json!(u)),
        (-3i64..3).prop_map(|i| json!(i)),
    ]
}

/// Answers: the numbers above, strings that need escaping, booleans, nulls, and
/// arrays and objects of them with keys that are and are not plain identifiers.
fn answer() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        "[a-z]{0,4}".prop_map(Value::String),
        "[\\x00-\\x1f\"\\\\é\u{2028}a]{0,5}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-c_][a-c0-9_]{0,2}|[ a.\"\\-é0-9]{0,3}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A case: the protocol, `expectedOutput`, the model's response body, the tolerance.
type Case = (Protocol, Value, Value, f64);

fn case() -> impl Strategy<Value = Case> {
    let protocol = prop_oneof![Just(Protocol::V1), Just(Protocol::V2)];
    let tolerance = prop::sample::select(vec![0.0, 0.01, 0.5, 1e-7, 2.0, 1e21]);
    (
        protocol,
        answer(),
        tolerance,
        0..6usize,
        0..4usize,
        any::<bool>(),
    )
        .prop_flat_map(|(protocol, expected, tolerance, answered, body, wrapped)| {
            let actual = match answered {
                0 => Just(expected.clone()).boxed(),
                1 => Just(shifted(&expected, tolerance / 2.0)).boxed(),
                2 => Just(shifted(&expected, tolerance * 2.0 + 0.001)).boxed(),
                _ => answer().boxed(),
            };
            let expected_text = if wrapped {
                as_response(protocol, &expected, 0)
            } else {
                expected
            };
            actual.prop_map(move |actual| {
                let body = as_response(protocol, &actual, body);
                (protocol, expected_text.clone(), body, tolerance)
            })
        })
}

/// `outputs` as a response body of `protocol`: V1's predictions, V2 with one output
/// or two, or (`form` 3) the outputs themselves, which is no response.
fn as_response(protocol: Protocol, outputs: &Value, form: usize) -> Value {
    match (protocol, form) {
        (_, 3) => outputs.clone(),
        (Protocol::V1, _) => json!({"predictions": outputs}),
        (Protocol::V2, 2) => {
            json!({"outputs": [{"name": "a", "data": outputs}, {"name": "b", "data": [1]}]})
        }
        (Protocol::V2, _) => {
            json!({"model_name": "m", "outputs": [{"name": "o", "datatype": "FP64", "shape": [1], "data": outputs}]})
        }
    }
}

fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::V1 => "v1",
        Protocol::V2 => "v2",
    }
}

/// What the core makes of a case, as the driver prints it.
fn core_verdict((protocol, expected, body, tolerance): &Case) -> Value {
    let outputs = response_outputs(*protocol, body);
    let expected = expected_outputs(*protocol, expected);
    let mismatch = outputs
        .as_ref()
        .and_then(|actual| compare_outputs(&expected, actual, *tolerance).err());
    json!([
        predict_path(*protocol, "fraud-v2"),
        outputs.map(|o| o.to_string()),
        expected.to_string(),
        mismatch.map(|m| {
            let kind = format!("{:?}", m.kind).to_lowercase();
            json!([m.path, m.expected, m.actual, kind, m.to_string()])
        }),
    ])
}

const VERDICT_DRIVER: &str = "def twin(protocol, expected, body, tolerance):\n    \
    found, outputs = response_outputs(protocol, body)\n    \
    expected = expected_outputs(protocol, expected)\n    \
    m = compare_outputs(expected, outputs, tolerance) if found else None\n    \
    verdict = None if m is None else [m['path'], m['expected'], m['actual'], m['kind'], mismatch_message(m)]\n    \
    return json.dumps([predict_path(protocol, 'fraud-v2'), json_text(outputs) if found else None, json_text(expected), verdict], ensure_ascii=False)\n";

fn check_cases(cases: &[Case]) -> usize {
    let inputs: Vec<Value> = cases
        .iter()
        .map(|(protocol, expected, body, tolerance)| {
            json!([protocol_name(*protocol), expected, body, tolerance])
        })
        .collect();
    let python = call_script(VERDICT_DRIVER, &inputs, &[]);
    assert_eq!(python.len(), cases.len());
    let mut mismatches = 0;
    for (case, line) in cases.iter().zip(&python) {
        let python: Value = serde_json::from_str(line).expect("JSON");
        let core = core_verdict(case);
        mismatches += usize::from(!core[3].is_null());
        assert_eq!(python, core, "for {case:?}");
    }
    mismatches
}

#[test]
fn the_python_twin_judges_answers_as_the_core_does() {
    require_python();
    let mut runner = TestRunner::deterministic();
    let strategy = case();
    let cases: Vec<Case> = (0..600)
        .map(|_| strategy.new_tree(&mut runner).expect("a case").current())
        .collect();
    let mismatches = check_cases(&cases);
    // The generated answers exercise both outcomes.
    assert!(
        mismatches > 100 && mismatches < 500,
        "{mismatches} of 600 differ"
    );
}

#[test]
fn the_python_twin_writes_numbers_and_keys_as_serde_json_does() {
    require_python();
    let v1 = |expected: Value, actual: Value, tolerance| {
        (
            Protocol::V1,
            expected,
            json!({ "predictions": actual }),
            tolerance,
        )
    };
    let cases = [
        v1(json!([1.0, 2]), json!([1, 2.5]), 0.01),
        v1(json!([0.5]), json!([1e-7]), 1e-7),
        v1(json!([1e16]), json!([1e15]), 0.0),
        v1(json!([1e21]), json!([1.5e300]), 1e21),
        v1(json!([u64::MAX]), json!([i64::MIN]), 0.5),
        v1(
            json!({"a b": 1, "ok": [true]}),
            json!({"a b": 2, "ok": [true]}),
            0.1,
        ),
        v1(json!({"é": "x"}), json!({"é": "y\n\"z\""}), 0.1),
        v1(json!({"score": 1}), json!({"scores": 1}), 0.1),
        v1(json!([1, 2]), json!([1]), 0.1),
        v1(json!(null), json!(false), 0.1),
        v1(json!(1), json!(true), 0.1),
        (
            Protocol::V2,
            json!({"outputs": [{"data": [0.25]}]}),
            json!({"outputs": [{"data": [0.75]}]}),
            0.001,
        ),
        (
            Protocol::V2,
            json!([0.25]),
            json!({"outputs": [{"data": [0.25]}, {"data": [1]}]}),
            0.0,
        ),
        (
            Protocol::V2,
            json!([0.25]),
            json!({"outputs": [{"name": "no data"}]}),
            0.0,
        ),
    ];
    let mismatches = check_cases(&cases);
    assert_eq!(
        mismatches,
        cases.len() - 1,
        "all but the absent data differ"
    );
}

#[test]
fn the_python_twin_caps_the_reported_answers_as_the_core_does() {
    require_python();
    let mut runner = TestRunner::deterministic();
    let text = prop_oneof!["\\PC{0,300}", "[\\x00-\\x1f\"\\\\]{0,400}", "é{0,200}"];
    let prediction = (
        prop_oneof!["[a-z]{1,20}/[a-z0-9-]{1,40}".boxed(), text.clone().boxed()],
        any::<bool>(),
        proptest::option::of(text.clone()),
        proptest::option::of(text),
    )
        .prop_map(|(model, ok, detail, actual)| ReportedPrediction {
            model,
            ok,
            detail,
            actual,
        });
    let strategy = prop::collection::vec(prediction, 0..20);
    let reports: Vec<Vec<ReportedPrediction>> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("reports").current())
        .collect();
    let inputs: Vec<Value> = reports.iter().map(|r| json!([r])).collect();
    let python = call_script(
        "def twin(entries):\n    return dumps(cap_predictions(entries))\n",
        &inputs,
        &[],
    );
    assert_eq!(python.len(), reports.len());
    for (report, line) in reports.iter().zip(python) {
        let capped = serde_json::to_string(&capped_predictions(report)).expect("JSON");
        assert!(capped.len() <= nbv_core::models::MAX_MDL_BYTES);
        assert_eq!(capped, line, "for {report:?}");
    }
}
