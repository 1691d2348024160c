//! The result format the notebook container writes and the core reads.

use super::*;

// ---------------------------------------------------------------------------------------
// The result format
// ---------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn encoded_reports_fit_the_kubelet_and_keep_the_failing_cell(report in arbitrary_report()) {
        let encoded = report.encode();
        prop_assert!(encoded.len() <= MAX_REPORT_BYTES, "{} bytes", encoded.len());
        let read = RunReport::parse(&encoded).expect("nbv reads what it writes");
        prop_assert_eq!(read.cells.len() as u64 + read.dropped, report.cells.len() as u64);
        prop_assert_eq!(read.error.as_ref().map(|e| (e.kind, e.cell)),
                        report.error.as_ref().map(|e| (e.kind, e.cell)));
        // Kept: a prefix of the cells, plus the failing cell.
        let failing = report.error.as_ref().and_then(|e| e.cell);
        let kept: Vec<u64> = read.cells.iter().map(|c| c.index).collect();
        let prefix: Vec<u64> = report.cells.iter().map(|c| c.index)
            .filter(|i| Some(*i) != failing).take(kept.iter().filter(|i| Some(**i) != failing).count()).collect();
        prop_assert_eq!(kept.iter().copied().filter(|i| Some(*i) != failing).collect::<Vec<_>>(), prefix);
        if let Some(cell) = failing {
            prop_assert!(kept.contains(&cell), "the failing cell {} was dropped", cell);
        }
        if read.dropped == 0 {
            prop_assert_eq!(read.cells.iter().map(|c| (c.index, c.outcome)).collect::<Vec<_>>(),
                            report.cells.iter().map(|c| (c.index, c.outcome)).collect::<Vec<_>>());
        }
        // Encoding is idempotent on what was read.
        prop_assert_eq!(RunReport::parse(&read.encode()).ok(), Some(read));
    }

    #[test]
    fn parsing_never_panics(text in "\\PC{0,500}") {
        let _ = RunReport::parse(&text);
    }

    #[test]
    fn parsing_json_shaped_garbage_never_panics(
        text in r#"\{"cells":\[(\{"i":-?[0-9]{1,22},"s":"(ok|err|skip|x)","t":-?[0-9.e+]{1,8}\},?){0,3}\](,"error":\{"kind":"[a-z]{0,8}","cell":[0-9-]{1,3}\})?,"dropped":-?[0-9]{1,25}\}"#
    ) {
        if let Ok(report) = RunReport::parse(&text) {
            for result in report.cell_results() {
                prop_assert!(result.cell_index >= 0);
            }
            let _ = report.summary();
        }
    }
}

#[test]
fn a_large_report_keeps_the_failing_cell_and_says_how_many_were_left_out() {
    let cells: Vec<ReportedCell> = (0..300)
        .map(|i| ReportedCell {
            index: i,
            outcome: if i == 250 {
                CellOutcome::Failed
            } else if i > 250 {
                CellOutcome::Skipped
            } else {
                CellOutcome::Succeeded
            },
            seconds: (i <= 250).then_some(0.25),
            error: (i == 250).then(|| format!("KeyError: '{}'", "k".repeat(500))),
        })
        .collect();
    let report = RunReport {
        cells,
        error: Some(RunError {
            kind: RunErrorKind::Cell,
            cell: Some(250),
            ename: "KeyError".to_owned(),
            evalue: "x".repeat(5000),
        }),
        cmp: None,
        chk: None,
        mdl: None,
        dropped: 0,
    };
    let read = RunReport::parse(&report.encode()).expect("valid");
    let failing = read.cells.iter().find(|c| c.index == 250).expect("kept");
    assert_eq!(failing.error.as_deref().map(str::len), Some(160));
    assert_eq!(read.error.as_ref().map(|e| e.evalue.len()), Some(1024));
    insta::assert_snapshot!("large_report_summary", read.summary());
    let results = read.cell_results();
    assert_eq!(
        results.last().map(|r| (r.cell_index, r.status)),
        Some((250, CellStatus::Failure))
    );
}
