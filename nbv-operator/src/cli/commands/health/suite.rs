//! A health check test suite in Argo CD's format, as in Argo CD's
//! `resource_customizations/<group>/<Kind>/`:
//!
//! ```text
//! <dir>/health.lua          the health script under test
//! <dir>/health_test.yaml    tests: [{inputPath, healthStatus: {status, message}}]
//! <dir>/testdata/*.yaml     the inputs, one object per file
//! ```
//!
//! `inputPath` is relative to `<dir>` (a leading `/` is ignored, as Go's
//! `filepath.Join` ignores it). An expectation compares both fields exactly, as Argo
//! CD's `assert.Equal(t, &test.HealthStatus, result)` does: a test without `message`
//! expects an empty message, and a test without `healthStatus` expects the empty
//! health (the script returned `nil` or an empty table).

use std::path::{Path, PathBuf};

use nbv_core::health::{HealthStatus, go_json_key_matches};
use nbv_core::yaml;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{SuiteError, health_json, input};

/// The name of the health script of a suite, as in Argo CD's tree.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::suite::{SCRIPT_FILE, TESTS_FILE};
///
/// assert_eq!((SCRIPT_FILE, TESTS_FILE), ("health.lua", "health_test.yaml"));
/// ```
pub const SCRIPT_FILE: &str = "health.lua";
/// The name of the test list of a suite, as in Argo CD's tree.
pub const TESTS_FILE: &str = "health_test.yaml";

/// The content of `health_test.yaml`.
///
/// Read as Argo CD reads it (YAML turned into JSON, then Go's `encoding/json`): keys
/// match the fields `tests`, `inputPath`, `healthStatus`, `status` and `message`
/// case-insensitively (one of Argo CD's own suites spells `inputpath`), a later key
/// overrides an earlier one of the same field, and a `null` anywhere reads as absent.
/// One deliberate difference: a key that matches no field is refused, where Go would
/// ignore it, so that a misspelled `healthStatus` does not silently expect the empty
/// health.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::suite::{ExpectedHealth, TestList};
///
/// let list = TestList::parse(
///     "tests:\n- inputPath: testdata/ok.yaml\n  healthStatus:\n    status: Healthy\n",
/// )?;
/// assert_eq!(list.tests[0].input_path, "testdata/ok.yaml");
/// assert_eq!(list.tests[0].health_status, ExpectedHealth { status: "Healthy".into(), message: String::new() });
/// // Go's case-insensitive keys.
/// let lower = TestList::parse("tests:\n- inputpath: testdata/ok.yaml\n  HEALTHSTATUS: {status: Healthy}\n")?;
/// assert_eq!(lower, list);
/// assert!(TestList::parse("tests:\n- inputPath: x\n  health_status: {}\n").is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestList {
    /// The tests, run in this order.
    #[serde(default, deserialize_with = "null_as_default")]
    pub tests: Vec<TestCase>,
}

impl TestList {
    /// Reads the text of a `health_test.yaml`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<TestList, String> {
        // A YAML value keeps the keys in document order, which decides which of two
        // spellings of a field wins.
        let mut value: serde_yaml_ng::Value = yaml::from_str(text).map_err(|e| e.to_string())?;
        canonical_keys(&mut value, &["tests"]);
        if let Some(tests) = value.get_mut("tests").and_then(|t| t.as_sequence_mut()) {
            for case in tests {
                canonical_keys(case, &["inputPath", "healthStatus"]);
                if let Some(health) = case.get_mut("healthStatus") {
                    canonical_keys(health, &["status", "message"]);
                }
            }
        }
        serde_yaml_ng::from_value(value).map_err(|error| {
            // The value has lost the locations: when the text fails as written too
            // (the problem is not a key's spelling), its error says where.
            match yaml::from_str::<TestList>(text) {
                Err(located) => located.to_string(),
                Ok(_) => error.to_string(),
            }
        })
    }
}

/// Renames the keys of `object` that Go's `encoding/json` would decode into one of
/// `fields` to that field's name, in document order, so that a later key of the same
/// field replaces an earlier one, as in Go. Other keys are left as they are (and
/// refused).
fn canonical_keys(object: &mut serde_yaml_ng::Value, fields: &[&str]) {
    let Some(map) = object.as_mapping_mut() else {
        return;
    };
    let entries = std::mem::take(map);
    for (key, value) in entries {
        let key = match key
            .as_str()
            .and_then(|name| fields.iter().find(|field| go_json_key_matches(name, field)))
        {
            Some(field) => serde_yaml_ng::Value::String((*field).to_owned()),
            None => key,
        };
        map.insert(key, value);
    }
}

/// One test: an input object and the health expected for it.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::health::suite::TestCase;
///
/// let case: TestCase = serde_yaml_ng::from_str("inputPath: testdata/empty.yaml")?;
/// assert!(case.health_status.is_empty());
/// # Ok::<(), serde_yaml_ng::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestCase {
    /// The input, relative to the suite's directory.
    #[serde(rename = "inputPath")]
    pub input_path: String,
    /// The expected health; absent means the empty health.
    #[serde(rename = "healthStatus", default, deserialize_with = "null_as_default")]
    pub health_status: ExpectedHealth,
}

/// An expected health, compared field by field with the script's.
///
/// `status` is any text, not only one of the six codes: a test may expect what a
/// script really returns, and a script that returns `"healthy"` gets `Unknown` (as in
/// Argo CD), so an expectation of `healthy` can never pass.
///
/// # Examples
///
/// ```
/// use nbv_core::health::{HealthStatus, HealthStatusCode};
/// use nbv_operator::cli::commands::health::suite::ExpectedHealth;
///
/// let expected = ExpectedHealth { status: "Healthy".into(), message: String::new() };
/// assert!(expected.matches(Some(&HealthStatus::new(HealthStatusCode::Healthy, ""))));
/// // No message in the test means an empty message, as in Argo CD.
/// assert!(!expected.matches(Some(&HealthStatus::new(HealthStatusCode::Healthy, "ready"))));
/// assert!(ExpectedHealth::default().matches(None));
/// assert_eq!(expected.to_json(), r#"{"status":"Healthy","message":""}"#);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedHealth {
    /// The expected status code.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: String,
    /// The expected message.
    #[serde(default, deserialize_with = "null_as_default")]
    pub message: String,
}

impl ExpectedHealth {
    /// Whether this is the empty health (no status, no message).
    pub fn is_empty(&self) -> bool {
        self.status.is_empty() && self.message.is_empty()
    }

    /// Whether `got` (`None`: the empty health) is exactly this health.
    pub fn matches(&self, got: Option<&HealthStatus>) -> bool {
        match got {
            Some(health) => self.status == health.status.as_str() && self.message == health.message,
            None => self.is_empty(),
        }
    }

    /// The JSON line `nbv health eval` would print for this health.
    pub fn to_json(&self) -> String {
        if self.is_empty() {
            return health_json(None);
        }
        #[derive(serde::Serialize)]
        struct Line<'a> {
            status: &'a str,
            message: &'a str,
        }
        // Two strings: serializing cannot fail.
        serde_json::to_string(&Line {
            status: &self.status,
            message: &self.message,
        })
        .unwrap_or_default()
    }
}

/// `null` reads as the default, as Go leaves a field untouched when it decodes `null`.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// A suite ready to run: its script and its tests.
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use nbv_core::health::BASIC_SCRIPT;
/// use nbv_operator::cli::commands::health::suite::Suite;
///
/// let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
///     .join("../config/argocd/tests/mlops.mlops.dev/NotebookValidationJob");
/// let suite = Suite::load(&dir)?;
/// assert_eq!(suite.script, BASIC_SCRIPT);
/// assert!(!suite.tests.is_empty());
/// let first = suite.input(&suite.tests[0])?;
/// assert!(first.is_object());
/// # Ok::<(), nbv_operator::cli::commands::health::SuiteError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    /// The suite's directory.
    pub dir: PathBuf,
    /// The text of `health.lua`.
    pub script: String,
    /// The tests of `health_test.yaml`.
    pub tests: Vec<TestCase>,
}

impl Suite {
    /// Reads the suite in `dir`: both files must exist and `health_test.yaml` must be
    /// in Argo CD's format. Inputs are read later, one by one ([`Suite::input`]), so
    /// that a missing input fails its test only.
    pub fn load(dir: &Path) -> Result<Suite, SuiteError> {
        let script_path = dir.join(SCRIPT_FILE);
        let tests_path = dir.join(TESTS_FILE);
        if !script_path.is_file() {
            return Err(SuiteError::MissingScript { path: script_path });
        }
        if !tests_path.is_file() {
            return Err(SuiteError::MissingTests { path: tests_path });
        }
        let script = input::read_file(&script_path)?;
        let list = TestList::parse(&input::read_file(&tests_path)?).map_err(|message| {
            SuiteError::InvalidTests {
                path: tests_path,
                message,
            }
        })?;
        Ok(Suite {
            dir: dir.to_owned(),
            script,
            tests: list.tests,
        })
    }

    /// Where the input of `case` is: `inputPath` joined to the suite's directory as Go's
    /// `filepath.Join` joins it (a leading `/` does not make it absolute).
    pub fn input_path(&self, case: &TestCase) -> PathBuf {
        self.dir.join(case.input_path.trim_start_matches('/'))
    }

    /// The input object of `case`, read as Argo CD reads it: one YAML (or JSON)
    /// document holding a mapping; an empty file is the empty object.
    pub fn input(&self, case: &TestCase) -> Result<Value, SuiteError> {
        let path = self.input_path(case);
        let text = input::read_file(&path)?;
        read_object(&path, &text)
    }
}

/// The single object of a test input.
fn read_object(path: &Path, text: &str) -> Result<Value, SuiteError> {
    let mut objects = Vec::new();
    for document in yaml::documents(text) {
        match document.and_then(|d| Ok(Value::deserialize(d)?)) {
            Ok(Value::Null) => {}
            Ok(value) => objects.push(value),
            Err(error) => {
                return Err(SuiteError::InvalidInput {
                    path: path.to_owned(),
                    message: error.to_string(),
                });
            }
        }
    }
    if objects.len() > 1 {
        return Err(SuiteError::MultipleDocuments {
            path: path.to_owned(),
            count: objects.len(),
        });
    }
    // Go's yaml.Unmarshal of an empty file leaves the map empty.
    let object = objects
        .pop()
        .unwrap_or_else(|| Value::Object(Default::default()));
    let found = match &object {
        Value::Object(_) => return Ok(object),
        Value::Array(_) => "sequence",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
    };
    Err(SuiteError::NotAnObject {
        path: path.to_owned(),
        found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(text: &str) -> Result<Value, SuiteError> {
        read_object(Path::new("in.yaml"), text)
    }

    #[test]
    fn an_input_is_one_mapping() {
        assert_eq!(object("kind: Job\n").unwrap(), json!({"kind": "Job"}));
        assert_eq!(
            object("---\nkind: Job\n---\n").unwrap(),
            json!({"kind": "Job"})
        );
        assert_eq!(object("").unwrap(), json!({}));
        assert!(matches!(
            object("a: 1\n---\nb: 2\n"),
            Err(SuiteError::MultipleDocuments { count: 2, .. })
        ));
        assert!(matches!(
            object("- a\n"),
            Err(SuiteError::NotAnObject {
                found: "sequence",
                ..
            })
        ));
        assert!(matches!(
            object("a: [\n"),
            Err(SuiteError::InvalidInput { .. })
        ));
    }

    #[test]
    fn nulls_read_as_absent_and_misspelled_keys_are_refused() {
        let list = TestList::parse(
            "tests:\n- inputPath: a.yaml\n  healthStatus:\n- inputPath: b.yaml\n  healthStatus: {status: Degraded, message: null}\n",
        )
        .unwrap();
        assert!(list.tests[0].health_status.is_empty());
        assert_eq!(list.tests[1].health_status.status, "Degraded");
        assert_eq!(list.tests[1].health_status.message, "");
        assert_eq!(TestList::parse("tests:\n").unwrap(), TestList::default());
        // A number where Go expects a string is refused, as Go's decoder refuses it.
        assert!(
            TestList::parse(
                "tests:\n- inputPath: a.yaml\n  healthStatus: {status: Healthy, message: 3}\n"
            )
            .is_err()
        );

        for text in [
            "test: []\n",
            "tests:\n- input_path: a.yaml\n",
            "tests:\n- inputPath: a.yaml\n  healthStatus: {state: Healthy}\n",
            "tests:\n- healthStatus: {status: Healthy}\n",
        ] {
            assert!(TestList::parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn keys_match_case_insensitively_and_the_last_one_wins_as_in_go() {
        let list = TestList::parse(
            "TESTS:\n- inputpath: a.yaml\n  InputPath: b.yaml\n  healthstatus: {STATUS: Degraded, Message: m, \u{17F}tatus: Healthy}\n",
        )
        .unwrap();
        assert_eq!(list.tests[0].input_path, "b.yaml");
        assert_eq!(
            list.tests[0].health_status,
            ExpectedHealth {
                status: "Healthy".into(),
                message: "m".into()
            }
        );
    }

    #[test]
    fn input_paths_join_like_go() {
        let suite = Suite {
            dir: PathBuf::from("suites/apps/Deployment"),
            script: String::new(),
            tests: Vec::new(),
        };
        let case = |input: &str| TestCase {
            input_path: input.to_owned(),
            health_status: ExpectedHealth::default(),
        };
        assert_eq!(
            suite.input_path(&case("testdata/a.yaml")),
            Path::new("suites/apps/Deployment/testdata/a.yaml")
        );
        assert_eq!(
            suite.input_path(&case("/testdata/a.yaml")),
            Path::new("suites/apps/Deployment/testdata/a.yaml")
        );
    }
}
