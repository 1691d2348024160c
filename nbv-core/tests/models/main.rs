//! Model validation's pure core: InferenceServices read from their objects (table
//! tests over `tests/data/models`), and the prediction check's comparison rule, its
//! properties over generated JSON and snapshots of what a mismatch says; the Python
//! twin of the rule the validation Pod runs (`twin`), and the Pod side: its
//! environment, the check run against a local model server, the status (`pod`).

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use nbv_core::api::{ModelValidation, ModelValidationPhase};
use nbv_core::models::{
    DEFAULT_TIMEOUT, DEFAULT_TOLERANCE, InferenceService, MismatchKind, ModelFacts, ModelGate,
    ModelRef, ModelSettings, Platform, Protocol, Readiness, compare_outputs, expected_outputs,
    gate, predict_path, response_outputs,
};
use nbv_core::triggers::TriggerAccess;
use proptest::prelude::*;
use serde_json::{Value, json};

fn object(name: &str) -> Value {
    let path = format!(
        "{}/tests/data/models/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect(&path)
}

/// A file of `tests/data/models` and what is read from it: the Ready and PredictorReady
/// conditions, the protocol, whether the controller's view is current, the
/// cluster-local URL and the version.
type Row = (
    &'static str,
    Option<bool>,
    Option<bool>,
    Protocol,
    bool,
    Option<&'static str>,
    Option<&'static str>,
);

#[test]
fn inference_services_are_read_from_their_objects() {
    // (file, ready, predictor ready, protocol, current generation, address, version)
    let table: [Row; 5] = [
        (
            "ready",
            Some(true),
            Some(true),
            Protocol::V1,
            true,
            Some("http://fraud.serving.svc.cluster.local"),
            Some("fraud-predictor-00003"),
        ),
        (
            "not_ready",
            Some(false),
            Some(false),
            Protocol::V1,
            false,
            None,
            None,
        ),
        (
            "v2",
            Some(true),
            None,
            Protocol::V2,
            true,
            Some("http://x.ml.svc"),
            None,
        ),
        ("old_framework", None, None, Protocol::V2, true, None, None),
        (
            "missing_status",
            None,
            None,
            Protocol::V1,
            false,
            None,
            None,
        ),
    ];
    for (file, ready, predictor, protocol, current, address, version) in table {
        let isvc = InferenceService::from_object(&object(file));
        assert_eq!(isvc.ready.status, ready, "{file}");
        assert_eq!(isvc.predictor_ready.status, predictor, "{file}");
        assert_eq!(isvc.protocol, protocol, "{file}");
        assert_eq!(
            isvc.generation == isvc.observed_generation,
            current,
            "{file}"
        );
        assert_eq!(isvc.address_url.as_deref(), address, "{file}");
        assert_eq!(isvc.version.as_deref(), version, "{file}");
    }
    let failed = InferenceService::from_object(&object("not_ready"));
    assert_eq!(failed.ready.reason.as_deref(), Some("RevisionMissing"));
    assert_eq!(
        failed.ready.message.as_deref(),
        Some("Revision \"fraud-predictor-00004\" failed")
    );
    let ready = InferenceService::from_object(&object("ready"));
    assert_eq!(
        ready.url.as_deref(),
        Some("https://fraud.serving.example.com")
    );
}

/// JSON values as models answer them: numbers (finite), strings, booleans, nulls, and
/// arrays and objects of them.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1.0e6..1.0e6f64).prop_map(|f| json!(f)),
        any::<i32>().prop_map(|i| json!(i)),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every number of `value` moved by `by` (the same direction everywhere).
fn shifted(value: &Value, by: f64) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64().unwrap() + by),
        Value::Array(items) => Value::Array(items.iter().map(|v| shifted(v, by)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shifted(v, by)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn has_number(value: &Value) -> bool {
    match value {
        Value::Number(_) => true,
        Value::Array(items) => items.iter().any(has_number),
        Value::Object(map) => map.values().any(has_number),
        _ => false,
    }
}

proptest! {
    #[test]
    fn every_answer_matches_itself(value in json_value(), tolerance in 0.0..1.0f64) {
        prop_assert_eq!(compare_outputs(&value, &value, tolerance), Ok(()));
    }

    #[test]
    fn matching_is_symmetric(a in json_value(), b in json_value(), tolerance in 0.0..1.0f64) {
        prop_assert_eq!(
            compare_outputs(&a, &b, tolerance).is_ok(),
            compare_outputs(&b, &a, tolerance).is_ok()
        );
    }

    #[test]
    fn numbers_within_the_tolerance_match(value in json_value(), tolerance in 0.001..1.0f64, share in 0.0..0.9f64) {
        // Below the tolerance by a margin, so that rounding of large numbers cannot
        // carry the difference over it.
        prop_assert_eq!(compare_outputs(&value, &shifted(&value, tolerance * share), tolerance), Ok(()));
    }

    #[test]
    fn numbers_beyond_the_tolerance_do_not(value in json_value(), tolerance in 0.0..1.0f64) {
        prop_assume!(has_number(&value));
        let mismatch = compare_outputs(&value, &shifted(&value, tolerance + 1.0), tolerance).unwrap_err();
        prop_assert_eq!(mismatch.kind, MismatchKind::Number);
    }

    #[test]
    fn a_response_body_expects_what_its_outputs_expect(outputs in json_value()) {
        let v1 = json!({"predictions": outputs.clone()});
        prop_assert_eq!(expected_outputs(Protocol::V1, &v1), outputs.clone());
        let v2 = json!({"model_name": "m", "outputs": [{"name": "o", "datatype": "FP64", "shape": [1], "data": outputs.clone()}]});
        prop_assert_eq!(expected_outputs(Protocol::V2, &v2), outputs);
    }
}

#[test]
fn a_mismatch_names_the_path_the_expected_and_the_answer() {
    let expected =
        json!({"predictions": [{"class": "fraud", "score": 0.92}], "model version": "3"});
    let cases = [
        json!({"predictions": [{"class": "fraud", "score": 0.5}], "model version": "3"}),
        json!({"predictions": [{"class": "legit", "score": 0.92}], "model version": "3"}),
        json!({"predictions": [], "model version": "3"}),
        json!({"predictions": [{"class": "fraud"}], "model version": "3"}),
        json!({"predictions": [{"class": "fraud", "score": 0.92}], "model version": 3}),
        json!({"predictions": [{"class": "fraud", "score": null}], "model version": "3"}),
    ];
    let said: Vec<String> = cases
        .iter()
        .map(|actual| {
            compare_outputs(&expected, actual, 0.01)
                .unwrap_err()
                .to_string()
        })
        .collect();
    insta::assert_snapshot!(said.join("\n"), @r#"
    at $.predictions[0].score: expected 0.92, the model answered 0.5 (tolerance 0.01)
    at $.predictions[0].class: expected "fraud", the model answered "legit"
    at $.predictions: expected [{"class":"fraud","score":0.92}], the model answered [] (arrays of different lengths)
    at $.predictions[0]: expected {"class":"fraud","score":0.92}, the model answered {"class":"fraud"} (objects with different keys)
    at $["model version"]: expected "3", the model answered 3
    at $.predictions[0].score: expected 0.92, the model answered null
    "#);
}

#[test]
fn a_tolerance_of_zero_asks_for_equal_numbers() {
    assert!(compare_outputs(&json!([1, 2.5]), &json!([1.0, 2.5]), 0.0).is_ok());
    assert!(compare_outputs(&json!([1]), &json!([1.000001]), 0.0).is_err());
}

#[test]
fn each_protocol_has_its_endpoint_and_its_outputs() {
    assert_eq!(
        predict_path(Protocol::V1, "iris"),
        "/v1/models/iris:predict"
    );
    assert_eq!(predict_path(Protocol::V2, "iris"), "/v2/models/iris/infer");
    let two = json!({"outputs": [{"name": "a", "data": [1]}, {"name": "b", "data": [0.5]}]});
    assert_eq!(
        response_outputs(Protocol::V2, &two),
        Some(json!([[1], [0.5]]))
    );
    assert_eq!(
        response_outputs(Protocol::V2, &json!({"outputs": [{"name": "a"}]})),
        None
    );
    assert_eq!(
        response_outputs(Protocol::V1, &json!({"outputs": []})),
        None
    );
}

/// `spec.modelValidation` from JSON, as a manifest writes it.
fn model_validation(spec: Value) -> ModelValidation {
    serde_json::from_value(spec).expect("a modelValidation block")
}

fn refusal(spec: Value) -> String {
    ModelSettings::resolve(&model_validation(spec), "ml")
        .expect_err("refused")
        .to_string()
}

#[test]
fn every_field_nbv_cannot_use_is_named() {
    let refused = [
        json!({"platform": "vllm", "targetModels": ["m"]}),
        json!({"platform": "custom", "customPlatform": {"apiGroup": "x.io"}}),
        json!({"targetModels": ["fraud", "Bad_Name"]}),
        json!({"targetModels": ["a/b/c"]}),
        json!({"phase": "existing"}),
        json!({"targetModels": ["m"], "timeout": "soon"}),
        json!({"targetModels": ["m"], "predictionValidation": {"expectedOutput": "[1]"}}),
        json!({"targetModels": ["m"], "predictionValidation": {"testData": "{instances", "expectedOutput": "[1]"}}),
        json!({"targetModels": ["m"], "predictionValidation": {"testData": "{}", "expectedOutput": "[1]", "tolerance": "-1"}}),
        json!({"phase": "clean", "predictionValidation": {"testData": "{}", "expectedOutput": "[1]"}}),
    ];
    let said: Vec<String> = refused.into_iter().map(refusal).collect();
    insta::assert_snapshot!(said.join("\n"));
}

#[test]
fn platforms_and_phases_are_named_as_the_spec_writes_them() {
    use nbv_core::api::ModelPlatform::*;
    for platform in [
        Kserve,
        OpenshiftAi,
        Vllm,
        Torchserve,
        TensorflowServing,
        Triton,
        RayServe,
        Seldon,
        Bentoml,
        Custom,
    ] {
        assert_eq!(json!(platform), json!(platform.as_str()));
    }
    for phase in [
        ModelValidationPhase::Clean,
        ModelValidationPhase::Existing,
        ModelValidationPhase::Both,
    ] {
        assert_eq!(json!(phase), json!(phase.as_str()));
    }
}

#[test]
fn only_kserve_and_openshift_ai_are_checked() {
    for platform in [
        "vllm",
        "torchserve",
        "tensorflow-serving",
        "triton",
        "ray-serve",
        "seldon",
        "bentoml",
    ] {
        let message = refusal(json!({"platform": platform, "targetModels": ["m"]}));
        assert!(
            message.starts_with(&format!(
                "spec.modelValidation.platform: {platform} is not implemented"
            )),
            "{message}"
        );
    }
    for platform in ["kserve", "openshift-ai"] {
        let spec = model_validation(json!({"platform": platform, "targetModels": ["m"]}));
        assert!(
            ModelSettings::resolve(&spec, "ml").unwrap().is_some(),
            "{platform}"
        );
    }
}

#[test]
fn defaults_apply_and_switched_off_asks_for_nothing() {
    let spec = model_validation(json!({
        "targetModels": ["fraud", "ml/fraud", " serving/iris "],
        "predictionValidation": {"testData": "{\"instances\": [[1]]}", "expectedOutput": "{\"predictions\": [0]}"}
    }));
    let settings = ModelSettings::resolve(&spec, "ml").unwrap().unwrap();
    assert_eq!(
        settings.targets,
        [
            ModelRef::new("ml", "fraud"),
            ModelRef::new("serving", "iris")
        ]
    );
    assert_eq!(settings.timeout, DEFAULT_TIMEOUT);
    let prediction = settings.prediction.expect("asked for");
    assert_eq!(prediction.tolerance, DEFAULT_TOLERANCE);
    assert_eq!(prediction.expected_output, json!({"predictions": [0]}));
    let off = model_validation(json!({"enabled": false, "platform": "triton"}));
    assert_eq!(ModelSettings::resolve(&off, "ml"), Ok(None));
    let clean = model_validation(json!({"phase": "clean"}));
    assert!(
        ModelSettings::resolve(&clean, "ml")
            .unwrap()
            .unwrap()
            .targets
            .is_empty()
    );
}

proptest! {
    #[test]
    fn any_target_list_resolves_or_names_its_field(names in prop::collection::vec("[a-z/_.-]{0,12}", 0..5)) {
        let spec = model_validation(json!({"phase": "clean", "targetModels": names.clone()}));
        match ModelSettings::resolve(&spec, "ml") {
            Ok(settings) => {
                let settings = settings.unwrap();
                prop_assert!(settings.targets.len() <= names.len());
                let unique: std::collections::BTreeSet<_> = settings.targets.iter().collect();
                prop_assert_eq!(unique.len(), settings.targets.len());
            }
            Err(e) => prop_assert!(e.field().starts_with("spec.modelValidation.targetModels["), "{}", e),
        }
    }
}

/// The shell's answers, as maps.
#[derive(Clone, Debug, Default)]
struct Facts {
    platform: Option<Platform>,
    services: BTreeMap<ModelRef, InferenceService>,
    synced: bool,
    accepts: BTreeMap<String, String>,
}

impl ModelFacts for Facts {
    fn platform(&self) -> Option<Platform> {
        self.platform.clone()
    }
    fn inference_service(&self, model: &ModelRef) -> Option<InferenceService> {
        self.services.get(model).cloned()
    }
    fn synced(&self) -> bool {
        self.synced
    }
    fn namespace_accepts(&self, namespace: &str) -> Option<String> {
        self.accepts.get(namespace).cloned()
    }
}

fn ready_service(ready: bool) -> InferenceService {
    InferenceService {
        generation: Some(1),
        observed_generation: Some(1),
        ready: Readiness {
            status: Some(ready),
            reason: (!ready).then(|| "RevisionMissing".to_owned()),
            message: None,
        },
        address_url: Some("http://m.ns.svc".to_owned()),
        ..Default::default()
    }
}

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
}

/// A cluster of up to three models in `ml` and `serving`, each present and ready or
/// not, some namespaces opting in, the flag allowing some.
fn world() -> impl Strategy<Value = (Vec<ModelRef>, Facts, TriggerAccess, ModelValidationPhase)> {
    let model = (
        prop::sample::select(vec!["ml", "serving"]),
        prop::sample::select(vec!["a", "b", "c"]),
    )
        .prop_map(|(ns, name)| ModelRef::new(ns, name));
    (
        prop::collection::vec(model.clone(), 1..4),
        prop::collection::vec((model, any::<bool>()), 0..6),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![
            ModelValidationPhase::Clean,
            ModelValidationPhase::Existing,
            ModelValidationPhase::Both,
        ]),
    )
        .prop_map(|(targets, services, synced, served, opt_in, flag, phase)| {
            let facts = Facts {
                // Known once listed; a platform that is not served never lists.
                platform: (synced || !served).then_some(Platform {
                    served,
                    unreadable: None,
                }),
                services: services
                    .into_iter()
                    .map(|(m, r)| (m, ready_service(r)))
                    .collect(),
                synced,
                accepts: opt_in
                    .then(|| ("serving".to_owned(), "ml".to_owned()))
                    .into_iter()
                    .collect(),
            };
            let access = if flag {
                TriggerAccess::from_list("serving")
            } else {
                TriggerAccess::default()
            };
            (targets, facts, access, phase)
        })
}

fn settings_of(targets: &[ModelRef], phase: ModelValidationPhase) -> ModelSettings {
    ModelSettings {
        platform: nbv_core::api::ModelPlatform::Kserve,
        phase,
        targets: targets.to_vec(),
        timeout: std::time::Duration::from_secs(300),
        prediction: None,
    }
}

proptest! {
    #[test]
    fn the_pod_starts_only_when_every_model_is_ready_and_allowed(
        (targets, facts, access, phase) in world(), minutes in 0i64..10,
    ) {
        let settings = settings_of(&targets, phase);
        let now = start() + chrono::Duration::minutes(minutes);
        if let ModelGate::Open { models, result } = gate(&settings, "ml", &access, &facts, start(), now) {
            prop_assert!(result.success);
            let allowed = |m: &ModelRef| m.namespace == "ml" || access.allows_namespace(&m.namespace) || facts.accepts.contains_key(&m.namespace);
            prop_assert!(targets.iter().all(allowed));
            if phase != ModelValidationPhase::Clean {
                prop_assert!(facts.synced);
                prop_assert_eq!(models.len(), targets.len());
                for m in &targets {
                    prop_assert!(facts.services.get(m).is_some_and(|s| s.ready.is_ready()));
                }
            }
            prop_assert!(facts.platform.as_ref().is_some_and(|p| p.served));
        }
    }

    #[test]
    fn waiting_ends_at_the_deadline_and_only_then_fails(
        (targets, facts, access, phase) in world(), minutes in 0i64..10,
    ) {
        let settings = settings_of(&targets, phase);
        let now = start() + chrono::Duration::minutes(minutes);
        let deadline = start() + chrono::Duration::minutes(5);
        match gate(&settings, "ml", &access, &facts, start(), now) {
            ModelGate::Wait { until, .. } => {
                prop_assert_eq!(until, deadline);
                prop_assert!(now < deadline);
            }
            ModelGate::Fail { message, .. } if message.starts_with("spec.modelValidation.timeout") => {
                prop_assert!(now >= deadline);
                // Before the deadline the same facts wait.
                let earlier = gate(&settings, "ml", &access, &facts, start(), start());
                let waits = matches!(earlier, ModelGate::Wait { .. });
                prop_assert!(waits);
            }
            _ => {}
        }
    }

    #[test]
    fn an_unknown_platform_neither_opens_nor_fails_before_the_deadline(
        (targets, mut facts, access, phase) in world(),
    ) {
        facts.platform = None;
        let settings = settings_of(&targets, phase);
        match gate(&settings, "ml", &access, &facts, start(), start()) {
            ModelGate::Wait { .. } => {}
            // Only a refused namespace fails at once: it does not depend on the platform.
            ModelGate::Fail { message, .. } => {
                prop_assert!(message.starts_with("spec.modelValidation.targetModels"), "{}", message);
            }
            open => prop_assert!(false, "{:?}", open),
        }
    }

    #[test]
    fn more_access_never_closes_an_open_gate((targets, facts, access, phase) in world()) {
        let settings = settings_of(&targets, phase);
        let open = matches!(gate(&settings, "ml", &access, &facts, start(), start()), ModelGate::Open { .. });
        let mut wider = facts.clone();
        wider.accepts.insert("serving".to_owned(), "*".to_owned());
        let still = matches!(gate(&settings, "ml", &TriggerAccess::from_list("*"), &wider, start(), start()), ModelGate::Open { .. });
        prop_assert!(!open || still);
    }
}

#[test]
fn what_the_gate_records_and_says() {
    let mut facts = Facts {
        platform: Some(Platform {
            served: true,
            unreadable: None,
        }),
        synced: true,
        ..Default::default()
    };
    facts.services.insert(
        ModelRef::new("ml", "fraud"),
        InferenceService {
            version: Some("fraud-predictor-00003".into()),
            ..ready_service(true)
        },
    );
    facts
        .services
        .insert(ModelRef::new("ml", "iris"), ready_service(false));
    let both = settings_of(
        &[ModelRef::new("ml", "fraud"), ModelRef::new("ml", "iris")],
        ModelValidationPhase::Both,
    );
    let access = TriggerAccess::default();
    let waiting = gate(&both, "ml", &access, &facts, start(), start());
    let late = gate(
        &both,
        "ml",
        &access,
        &facts,
        start(),
        start() + chrono::Duration::minutes(5),
    );
    let foreign = settings_of(
        &[ModelRef::new("serving", "fraud")],
        ModelValidationPhase::Existing,
    );
    let refused = gate(&foreign, "ml", &access, &facts, start(), start());
    let ModelGate::Fail { result, .. } = &late else {
        panic!("{late:?}")
    };
    insta::assert_snapshot!(format!(
        "{waiting:?}\n{refused:?}\n{}",
        serde_json::to_string_pretty(result).unwrap()
    ));
    facts
        .services
        .insert(ModelRef::new("ml", "iris"), ready_service(true));
    let ModelGate::Open { models, .. } = gate(&both, "ml", &access, &facts, start(), start())
    else {
        panic!()
    };
    assert_eq!(
        models.iter().map(|m| m.url.as_str()).collect::<Vec<_>>(),
        ["http://m.ns.svc", "http://m.ns.svc"]
    );
}

/// InferenceService-shaped objects: the fields read, with well- and ill-typed values,
/// beside fields that are not read.
fn inference_service_object() -> impl Strategy<Value = Value> {
    let status_text = prop_oneof![
        Just(json!("True")),
        Just(json!("False")),
        Just(json!("Unknown")),
        json_value()
    ];
    let condition_type = prop_oneof![
        Just("Ready"),
        Just("PredictorReady"),
        Just("IngressReady"),
        Just("LatestDeploymentReady")
    ];
    let condition = (condition_type, status_text, json_value()).prop_map(|(kind, status, reason)| {
        json!({"type": kind, "status": status, "reason": reason, "message": "m"})
    });
    let protocol = prop_oneof![
        Just(json!("v1")),
        Just(json!("v2")),
        Just(json!("grpc-v2")),
        json_value()
    ];
    let predictor = (
        prop::option::of(protocol.clone()),
        prop::option::of(protocol),
        json_value(),
    )
        .prop_map(|(model, sklearn, other)| {
            let mut predictor = json!({"minReplicas": 1, "other": other});
            if let Some(p) = model {
                predictor["model"] =
                    json!({"modelFormat": {"name": "sklearn"}, "protocolVersion": p});
            }
            if let Some(p) = sklearn {
                predictor["sklearn"] = json!({"storageUri": "gs://m", "protocolVersion": p});
            }
            predictor
        });
    (
        prop::option::of(any::<i64>()),
        prop::option::of(any::<i64>()),
        prop::collection::vec(condition, 0..5),
        (json_value(), json_value(), json_value()),
        predictor,
    )
        .prop_map(
            |(generation, observed, conditions, (url, address, revision), predictor)| {
                json!({
                    "metadata": {"name": "m", "namespace": "ml", "generation": generation,
                                 "labels": {"a": "b"}},
                    "spec": {"predictor": predictor},
                    "status": {"observedGeneration": observed, "conditions": conditions,
                               "url": url, "address": {"url": address},
                               "components": {"predictor": {"latestReadyRevision": revision,
                                                            "traffic": [{"percent": 100}]}},
                               "modelStatus": {"states": {"activeModelState": "Loaded"}}}
                })
            },
        )
}

proptest! {
    #[test]
    fn the_cached_projection_reads_as_the_object(object in inference_service_object()) {
        let kept = InferenceService::projection(&object);
        prop_assert_eq!(InferenceService::from_object(&kept), InferenceService::from_object(&object));
        prop_assert!(kept.to_string().len() <= object.to_string().len());
    }
}

mod pod;

#[test]
fn a_predictor_that_says_it_is_not_ready_is_waited_for() {
    let mut facts = Facts {
        platform: Some(Platform {
            served: true,
            unreadable: None,
        }),
        synced: true,
        ..Default::default()
    };
    let mut rolling = ready_service(true);
    rolling.predictor_ready = Readiness {
        status: Some(false),
        reason: Some("RevisionMissing".into()),
        message: None,
    };
    facts.services.insert(ModelRef::new("ml", "fraud"), rolling);
    let settings = settings_of(
        &[ModelRef::new("ml", "fraud")],
        ModelValidationPhase::Existing,
    );
    let decision = gate(
        &settings,
        "ml",
        &TriggerAccess::default(),
        &facts,
        start(),
        start(),
    );
    let ModelGate::Wait { message, .. } = decision else {
        panic!("{decision:?}")
    };
    assert_eq!(
        message,
        "waiting for the models: InferenceService ml/fraud is not PredictorReady (RevisionMissing)"
    );
}
