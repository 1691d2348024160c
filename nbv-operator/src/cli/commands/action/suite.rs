//! Action test suites in Argo CD's format, as in Argo CD's
//! `resource_customizations/<group>/<Kind>/actions/`:
//!
//! ```text
//! actions/discovery.lua          lists the actions of an object
//! actions/<name>/action.lua      one script per action
//! actions/action_test.yaml       discoveryTests and actionTests
//! actions/testdata/*.yaml        the inputs and expected outputs
//! ```
//!
//! The tests are judged as Argo CD's `TestLuaResourceActionsScript` judges them:
//! discovery runs with every library open and each action it offers must be among
//! `result`; an action runs in the production VM and each resource it returns must
//! match the expected object (fields the expected object leaves out are not compared,
//! as in Argo CD's diff), or its error must contain `expectedErrorMessage`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use nbv_core::yaml;
use nbv_lua::{ActionParam, EvalOptions, LuaActionRunner, ResourceAction, Sandbox};
use serde::Deserialize;
use serde_json::Value;

use crate::cli::commands::health::read_file;

/// The name of a suite's test list, as in Argo CD's tree.
pub const TESTS_FILE: &str = "action_test.yaml";

/// The deepest level searched below a directory given on the command line.
const MAX_DEPTH: usize = 32;

/// The content of `action_test.yaml`.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::action::TestList;
///
/// let list: TestList = serde_yaml_ng::from_str(
///     "actionTests:\n- action: rerun\n  inputPath: testdata/a.yaml\n  expectedOutputPath: testdata/b.yaml\n",
/// )?;
/// assert_eq!(list.action_tests[0].action, "rerun");
/// assert!(list.discovery_tests.is_empty());
/// # Ok::<(), serde_yaml_ng::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestList {
    /// Inputs and the actions discovery must offer for them.
    #[serde(default)]
    pub discovery_tests: Vec<DiscoveryTest>,
    /// Actions run on inputs, with their expected outputs.
    #[serde(default)]
    pub action_tests: Vec<ActionTest>,
}

/// One discovery test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiscoveryTest {
    /// The input object, relative to the suite.
    pub input_path: String,
    /// Every action discovery may offer.
    #[serde(default)]
    pub result: Vec<ExpectedAction>,
}

/// An action as `result` lists it (Argo CD's `ResourceAction`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectedAction {
    /// Its name.
    pub name: String,
    /// Whether it is disabled.
    #[serde(default)]
    pub disabled: bool,
    /// Its display name.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Its icon class.
    #[serde(default)]
    pub icon_class: Option<String>,
    /// Its parameters.
    #[serde(default)]
    pub params: Vec<ExpectedParam>,
}

/// A parameter as `result` lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedParam {
    /// Its name.
    pub name: String,
    /// Its value.
    #[serde(default)]
    pub value: Option<String>,
    /// Its type.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// Its default.
    #[serde(default)]
    pub default: Option<String>,
}

impl From<ExpectedAction> for ResourceAction {
    fn from(expected: ExpectedAction) -> Self {
        ResourceAction {
            name: expected.name,
            disabled: expected.disabled,
            display_name: expected.display_name,
            icon_class: expected.icon_class,
            params: expected
                .params
                .into_iter()
                .map(|p| ActionParam {
                    name: p.name,
                    value: p.value,
                    type_: p.type_,
                    default: p.default,
                })
                .collect(),
        }
    }
}

/// One action test.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ActionTest {
    /// The action's name.
    pub action: String,
    /// The input object, relative to the suite.
    pub input_path: String,
    /// The expected output: one object, or a list of `{unstructuredObj: ...}`.
    #[serde(default)]
    pub expected_output_path: Option<String>,
    /// Text the action's error must contain, when it is expected to fail.
    #[serde(default)]
    pub expected_error_message: Option<String>,
    /// `actionParams`.
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
}

/// The outcome of the suites: how many tests passed, and each failure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Tests that passed.
    pub passed: usize,
    /// Each failure, naming the suite, the test and what differed.
    pub failures: Vec<String>,
}

/// Runs every suite under `dirs`.
///
/// # Examples
///
/// ```
/// use std::path::PathBuf;
/// use nbv_operator::cli::commands::action::run_suites;
///
/// let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../config/argocd/tests"));
/// let report = run_suites(&[dir]);
/// assert!(report.failures.is_empty(), "{:?}", report.failures);
/// assert!(report.passed >= 8);
/// ```
pub fn run_suites(dirs: &[PathBuf]) -> Report {
    let mut report = Report::default();
    for dir in dirs {
        let mut suites = Vec::new();
        find(dir, 0, &mut suites, &mut report.failures);
        if suites.is_empty() {
            report
                .failures
                .push(format!("{}: no {TESTS_FILE} found", dir.display()));
        }
        suites.sort();
        for suite in suites {
            run_suite(&suite, &mut report);
        }
    }
    report
}

fn find(dir: &Path, depth: usize, suites: &mut Vec<PathBuf>, failures: &mut Vec<String>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            failures.push(format!(
                "{}: cannot read the directory: {error}",
                dir.display()
            ));
            return;
        }
    };
    let mut children: Vec<_> = entries.flatten().collect();
    children.sort_by_key(|e| e.file_name());
    for entry in children {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_file() && entry.file_name() == TESTS_FILE {
            suites.push(dir.to_owned());
        } else if kind.is_dir() && depth < MAX_DEPTH {
            find(&path, depth + 1, suites, failures);
        }
    }
}

fn run_suite(dir: &Path, report: &mut Report) {
    let at = |what: &str| format!("{}: {what}", dir.display());
    let list: TestList = match read_file(&dir.join(TESTS_FILE))
        .map_err(|e| e.to_string())
        .and_then(|text| yaml::from_str(&text).map_err(|e| e.to_string()))
    {
        Ok(list) => list,
        Err(error) => {
            report.failures.push(at(&format!("{TESTS_FILE}: {error}")));
            return;
        }
    };
    let discovery = read_file(&dir.join("discovery.lua")).map_err(|e| e.to_string());
    let harness = LuaActionRunner::new(EvalOptions {
        sandbox: Sandbox::TestHarness,
        timeout: None,
        ..EvalOptions::default()
    });
    let production = LuaActionRunner::new(EvalOptions {
        timeout: None,
        ..EvalOptions::default()
    });
    for test in list.discovery_tests {
        let name = format!("discovery/{}", test.input_path);
        let outcome = discovery.clone().and_then(|script| {
            let input = object(dir, &test.input_path)?;
            let offered = harness
                .discover("discovery.lua", &script, &input)
                .map_err(|e| e.to_string())?;
            let expected: Vec<ResourceAction> = test.result.into_iter().map(Into::into).collect();
            match offered.iter().find(|action| !expected.contains(action)) {
                Some(extra) => Err(format!("offers {extra:?}, which result does not list")),
                None => Ok(()),
            }
        });
        tally(report, &at(&name), outcome);
    }
    for test in list.action_tests {
        let name = format!("actions/{}/{}", test.action, test.input_path);
        let outcome = action_test(dir, &production, &test);
        tally(report, &at(&name), outcome);
    }
}

fn action_test(dir: &Path, runner: &LuaActionRunner, test: &ActionTest) -> Result<(), String> {
    let script_path = dir.join(&test.action).join("action.lua");
    let script = read_file(&script_path).map_err(|e| e.to_string())?;
    let input = object(dir, &test.input_path)?;
    let name = format!("{}/action.lua", test.action);
    let result = runner.run(&name, &script, &input, &test.parameters);
    if let Some(message) = &test.expected_error_message {
        return match result {
            Err(error) if error.to_string().contains(message.as_str()) => Ok(()),
            Err(error) => Err(format!(
                "failed with {error:?}, expected an error containing {message:?}"
            )),
            Ok(_) => Err(format!(
                "succeeded, expected an error containing {message:?}"
            )),
        };
    }
    let impacted = result.map_err(|e| e.to_string())?;
    let expected_path = test
        .expected_output_path
        .as_deref()
        .ok_or("the test has neither expectedOutputPath nor expectedErrorMessage")?;
    let expected = expected_objects(&object(dir, expected_path)?);
    for resource in impacted {
        let id = identity(&resource.object);
        let Some(want) = expected.iter().find(|e| identity(e) == id) else {
            return Err(format!(
                "returned {id:?}, which {expected_path} does not hold"
            ));
        };
        let mut got = resource.object.clone();
        keep_compared(&mut got, want);
        if &got != want {
            return Err(format!(
                "the output differs from {expected_path}:\n  expected: {want}\n  got:      {got}"
            ));
        }
    }
    Ok(())
}

fn tally(report: &mut Report, name: &str, outcome: Result<(), String>) {
    match outcome {
        Ok(()) => report.passed += 1,
        Err(error) => report.failures.push(format!("{name}: {error}")),
    }
}

fn object(dir: &Path, relative: &str) -> Result<Value, String> {
    // As Go's filepath.Join, a leading `/` does not leave the suite.
    let path = dir.join(relative.trim_start_matches('/'));
    let text = read_file(&path).map_err(|e| e.to_string())?;
    yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The expected objects: one object, or Argo CD's list of `{unstructuredObj: ...}`.
fn expected_objects(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|item| item.get("unstructuredObj").cloned().unwrap_or(Value::Null))
            .collect(),
        one => vec![one.clone()],
    }
}

/// apiVersion, kind, namespace and name: what tells the returned resources apart.
fn identity(object: &Value) -> [String; 4] {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    [
        text(&object["apiVersion"]),
        text(&object["kind"]),
        text(&object["metadata"]["namespace"]),
        text(&object["metadata"]["name"]),
    ]
}

/// Drops from `got` the fields `want` leaves out, as Argo CD's diff of an expected
/// (configured) object against a live one ignores fields only the live one has.
fn keep_compared(got: &mut Value, want: &Value) {
    match (got, want) {
        (Value::Object(got), Value::Object(want)) => {
            got.retain(|key, _| want.contains_key(key));
            for (key, value) in got.iter_mut() {
                keep_compared(value, &want[key]);
            }
        }
        (Value::Array(got), Value::Array(want)) if got.len() == want.len() => {
            for (got, want) in got.iter_mut().zip(want) {
                keep_compared(got, want);
            }
        }
        _ => {}
    }
}
