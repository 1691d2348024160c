//! The Python twin the validation Pod runs gives the reports the core gives, byte for
//! byte, on generated notebook pairs and settings (custom patterns included).

use std::process::{Command, Stdio};

use nbv_core::api::NotebookValidationJob;
use nbv_core::compare::{Settings, compare};
use nbv_core::phase::Attempt;
use nbv_core::pod::{
    CellOutcome, MAX_REPORT_BYTES, NOTEBOOK_CONTAINER, PodDefaults, ReportedCell, RunReport,
    validation_pod,
};
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use super::*;

fn have_python() -> bool {
    let found = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("python3 is not installed: skipping");
    }
    found
}

/// The notebook container's script of a job that compares with a golden notebook.
fn notebook_script() -> String {
    let job: NotebookValidationJob = serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u1"},
        "spec": {
            "notebook": {"git": {"url": "https://git.example.com/m.git", "ref": "main"}, "path": "a.ipynb"},
            "goldenNotebook": {"git": {"url": "https://git.example.com/m.git", "ref": "main"}, "path": "a-golden.ipynb"},
            "podConfig": {"containerImage": "quay.io/example/papermill:1"}
        }
    }))
    .expect("a job");
    let pod = validation_pod(
        &job,
        Attempt {
            generation: 1,
            retry: 0,
        },
        None,
        None,
        &PodDefaults::default(),
    )
    .expect("a pod");
    let spec = pod.spec.expect("spec");
    let container = spec
        .containers
        .iter()
        .find(|c| c.name == NOTEBOOK_CONTAINER)
        .expect("the notebook container");
    container.command.as_ref().expect("command")[2].clone()
}

/// Runs `driver` (Python, with the notebook script's functions in scope) once per line
/// of `inputs`; returns what it printed, one line per input.
fn call_script(driver: &str, inputs: &[Value]) -> Vec<String> {
    let program = format!(
        "import json, sys\nscope = {{'__name__': 'nbv_script'}}\nexec(json.loads(sys.stdin.readline()), scope)\n\
         exec({driver:?}, scope)\nfor line in sys.stdin:\n    print(scope['twin'](*json.loads(line)))\n"
    );
    let mut child = Command::new("python3")
        .args(["-c", &program])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut input = serde_json::to_string(&notebook_script()).expect("JSON") + "\n";
    for args in inputs {
        input.push_str(&serde_json::to_string(args).expect("JSON"));
        input.push('\n');
    }
    std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).expect("write");
    });
    let output = child.wait_with_output().expect("output");
    assert!(output.status.success(), "the twin driver failed");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_python_twin_reports_what_the_core_reports() {
    if !have_python() {
        return;
    }
    let mut runner = TestRunner::deterministic();
    let cases: Vec<((Value, Value), Settings)> = (0..400)
        .map(|_| {
            let pair = pair().new_tree(&mut runner).expect("a pair").current();
            let settings = settings()
                .new_tree(&mut runner)
                .expect("settings")
                .current();
            (pair, settings)
        })
        .collect();
    let inputs: Vec<Value> = cases
        .iter()
        .map(|((run, golden), settings)| {
            // The settings as the Pod reads them from NBV_COMPARISON.
            let settings: Value = serde_json::from_str(&settings.to_json()).expect("JSON");
            json!([run, golden, settings])
        })
        .collect();
    let driver = "def twin(run, golden, settings):\n    report = compare(run, golden, settings)\n    \
                  return dumps([report, dumps(report_comparison(report))])\n";
    let python = call_script(driver, &inputs);
    assert_eq!(python.len(), cases.len());
    let mut mismatches = 0;
    for (((run, golden), settings), line) in cases.iter().zip(&python) {
        let report = compare(run, golden, settings);
        mismatches += usize::from(!report.matched());
        let (python_report, python_cmp): (Value, String) =
            serde_json::from_str(line).expect("JSON");
        assert_eq!(
            serde_json::to_value(&report).expect("JSON"),
            python_report,
            "for {run} against {golden} under {settings:?}"
        );
        let cmp = serde_json::to_string(&report.reported()).expect("JSON");
        assert_eq!(
            cmp, python_cmp,
            "for {run} against {golden} under {settings:?}"
        );
    }
    // The generated pairs exercise both outcomes.
    assert!(
        mismatches > 40 && mismatches < 360,
        "{mismatches} of 400 differ"
    );
}

#[test]
fn the_python_writer_encodes_the_comparison_as_the_core_does() {
    if !have_python() {
        return;
    }
    let mut runner = TestRunner::deterministic();
    let cell = |i| ReportedCell {
        index: i,
        outcome: CellOutcome::Succeeded,
        seconds: Some(0.25),
        error: None,
    };
    let mut reports = Vec::new();
    for n in [0u64, 3, 40, 400] {
        for _ in 0..20 {
            let (run, golden) = pair().new_tree(&mut runner).expect("a pair").current();
            let settings = settings()
                .new_tree(&mut runner)
                .expect("settings")
                .current();
            reports.push(RunReport {
                cells: (0..n).map(cell).collect(),
                cmp: Some(compare(&run, &golden, &settings).reported()),
                ..RunReport::default()
            });
        }
    }
    let inputs: Vec<Value> = reports
        .iter()
        .map(|r| json!([r.cells, r.error, r.cmp]))
        .collect();
    let python = call_script(
        "def twin(cells, error, cmp):\n    return encode(cells, error, cmp)\n",
        &inputs,
    );
    for (report, line) in reports.iter().zip(python) {
        let encoded = report.encode();
        assert!(encoded.len() <= MAX_REPORT_BYTES);
        assert_eq!(encoded, line);
        let read = RunReport::parse(&encoded).expect("a report");
        assert_eq!(
            read.cmp,
            report.cmp.as_ref().map(|c| c.capped()),
            "the comparison is kept whole"
        );
    }
}
