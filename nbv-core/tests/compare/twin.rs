//! The Python twin the validation Pod runs gives the reports the core gives, byte for
//! byte, on generated notebook pairs and settings (custom patterns included).

use nbv_core::api::NotebookValidationJob;
use nbv_core::compare::{Settings, compare};
use nbv_core::pod::{CellOutcome, MAX_REPORT_BYTES, ReportedCell, RunReport};
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use super::*;

use nbv_testkit::python::require_python;

/// Runs `driver` (Python defining `twin`, with the notebook script of a job that
/// compares with a golden notebook in scope) once per line of `inputs`; returns what
/// it printed, one line per input.
fn call_script(driver: &str, inputs: &[Value]) -> Vec<String> {
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
    nbv_testkit::python::call_twin(
        &nbv_testkit::python::notebook_script(&job),
        driver,
        inputs,
        &[],
    )
}

#[test]
fn the_python_twin_reports_what_the_core_reports() {
    require_python();
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
    require_python();
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
