//! nbval's cell markers: what holds for every notebook pair, and what the comparison
//! reports for a notebook that uses each marker.

use std::collections::BTreeSet;

use nbv_core::compare::{ComparisonReport, DiffKind, compare};

use super::*;

/// A marker as an author writes it on a cell: a comment line or a tag.
#[derive(Clone, Debug)]
enum Mark {
    Comment(&'static str),
    Tag(&'static str),
}

const COMMENTS: [&str; 5] = [
    "NBVAL_IGNORE_OUTPUT",
    "NBVAL_CHECK_OUTPUT",
    "NBVAL_RAISES_EXCEPTION",
    "NBVAL_SKIP",
    "PYTEST_VALIDATE_IGNORE_OUTPUT",
];
const TAGS: [&str; 5] = [
    "nbval-ignore-output",
    "nbval-check-output",
    "nbval-raises-exception",
    "nbval-skip",
    "raises-exception",
];

fn mark() -> impl Strategy<Value = Mark> {
    prop_oneof![
        proptest::sample::select(COMMENTS.to_vec()).prop_map(Mark::Comment),
        proptest::sample::select(TAGS.to_vec()).prop_map(Mark::Tag),
    ]
}

/// Markers for each code cell, by position among code cells.
fn marks() -> impl Strategy<Value = Vec<Vec<Mark>>> {
    proptest::collection::vec(proptest::collection::vec(mark(), 0..3), 0..8)
}

/// The same marker on some code cells (the `true` positions), as a comment or a tag.
fn marked(marker: usize) -> impl Strategy<Value = Vec<Option<Mark>>> {
    proptest::collection::vec(
        proptest::option::of(prop_oneof![
            Just(Mark::Comment(COMMENTS[marker])),
            Just(Mark::Tag(TAGS[marker])),
        ]),
        0..8,
    )
}

/// The notebook indices of `notebook`'s code cells.
fn code_indices(notebook: &Value) -> Vec<u64> {
    notebook["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| c["cell_type"] == "code")
        .map(|(i, _)| i as u64)
        .collect()
}

/// `notebook` with `marks[p]` on its code cell `p`: comments on lines before the code,
/// tags in the metadata.
fn with_marks(notebook: &Value, marks: &[Vec<Mark>]) -> Value {
    let mut notebook = notebook.clone();
    let indices = code_indices(&notebook);
    for (index, marks) in indices.iter().zip(marks) {
        let cell = &mut notebook["cells"][*index as usize];
        let mut source = String::new();
        let mut tags = Vec::new();
        for mark in marks {
            match mark {
                Mark::Comment(comment) => source.push_str(&format!("# {comment}\n")),
                Mark::Tag(tag) => tags.push(json!(tag)),
            }
        }
        source.push_str(cell["source"].as_str().unwrap_or_default());
        cell["source"] = json!(source);
        cell["metadata"]["tags"] = Value::Array(tags);
    }
    notebook
}

fn with_mark(notebook: &Value, marks: &[Option<Mark>]) -> Value {
    let marks: Vec<Vec<Mark>> = marks.iter().map(|m| m.iter().cloned().collect()).collect();
    with_marks(notebook, &marks)
}

fn mismatched_cells(report: &ComparisonReport) -> BTreeSet<u64> {
    report.differences.iter().map(|d| d.cell).collect()
}

/// The run's cell index paired with the golden's marked code cells (`true` at `p`):
/// the comparison aligns code cells by position.
fn paired(run: &Value, chosen: impl Iterator<Item = bool>) -> Vec<u64> {
    code_indices(run)
        .into_iter()
        .zip(chosen)
        .filter(|(_, on)| *on)
        .map(|(index, _)| index)
        .collect()
}

const OUTPUT_KINDS: [DiffKind; 4] = [
    DiffKind::MissingOutput,
    DiffKind::ExtraOutput,
    DiffKind::OutputType,
    DiffKind::OutputContent,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn marking_cells_only_ever_removes_differences(
        (run, golden) in pair(),
        settings in settings(),
        run_marks in marks(),
        golden_marks in marks(),
    ) {
        let plain = compare(&run, &golden, &settings);
        let marked = compare(&with_marks(&run, &run_marks), &with_marks(&golden, &golden_marks), &settings);
        prop_assert!(
            mismatched_cells(&marked).is_subset(&mismatched_cells(&plain)),
            "marked {marked:?}\nplain {plain:?}"
        );
        prop_assert_eq!(marked.total_cells, plain.total_cells);
        prop_assert!(marked.matched_cells >= plain.matched_cells);
    }

    #[test]
    fn an_ignore_output_cell_never_yields_an_output_difference(
        (run, golden) in pair(),
        settings in settings(),
        ignored in marked(0),
        in_the_run in any::<bool>(),
    ) {
        let chosen: Vec<bool> = ignored.iter().map(Option::is_some).collect();
        let (run, golden) = if in_the_run {
            (with_mark(&run, &ignored), golden)
        } else {
            (run, with_mark(&golden, &ignored))
        };
        let report = compare(&run, &golden, &settings);
        // Positions where both notebooks have a code cell: there the mark holds.
        let both = code_indices(&golden).len().min(code_indices(&run).len());
        let cells = paired(&run, chosen.into_iter().take(both));
        for difference in &report.differences {
            prop_assert!(
                !(cells.contains(&difference.cell) && OUTPUT_KINDS.contains(&difference.kind)),
                "{difference:?} in an ignored cell"
            );
        }
    }

    #[test]
    fn a_skipped_cell_or_a_golden_cell_never_run_yields_no_difference(
        (run, golden) in pair(),
        settings in settings(),
        skipped in marked(3),
        unrun in proptest::collection::vec(any::<bool>(), 0..8),
    ) {
        let mut golden = with_mark(&golden, &skipped);
        for (index, _) in code_indices(&golden).into_iter().zip(&unrun).filter(|(_, u)| **u) {
            let cell = &mut golden["cells"][index as usize];
            cell["execution_count"] = Value::Null;
            cell["outputs"] = json!([]);
        }
        let report = compare(&run, &golden, &settings);
        let both = code_indices(&golden).len().min(code_indices(&run).len());
        let chosen = (0..both).map(|p| {
            skipped.get(p).is_some_and(Option::is_some) || unrun.get(p).copied().unwrap_or(false)
        });
        let cells = paired(&run, chosen);
        for difference in &report.differences {
            prop_assert!(!cells.contains(&difference.cell), "{difference:?} in a cell expecting nothing");
        }
    }
}

/// A code cell with `source`, `tags`, an execution count (`None`: never run) and
/// `outputs`.
fn code(source: &str, tags: &[&str], count: Option<u32>, outputs: Value) -> Value {
    json!({"cell_type": "code", "execution_count": count, "metadata": {"tags": tags},
           "source": source, "outputs": outputs})
}

fn stdout(text: &str) -> Value {
    json!({"output_type": "stream", "name": "stdout", "text": text})
}

fn error(ename: &str, evalue: &str) -> Value {
    json!({"output_type": "error", "ename": ename, "evalue": evalue, "traceback": ["\u{1b}[0;31m..."]})
}

/// A notebook that uses every marker, as stored (`golden`) and as run.
fn marked_notebook(golden: bool) -> Value {
    let pick = |stored: Value, run: Value| if golden { stored } else { run };
    let cells = vec![
        code(
            "# NBVAL_RAISES_EXCEPTION\nraise RuntimeError('foo')",
            &[],
            Some(1),
            json!([error("RuntimeError", "foo")]),
        ),
        code(
            "import time\n# NBVAL_IGNORE_OUTPUT\nprint(time.time())",
            &[],
            Some(2),
            json!([pick(stdout("1485539287.96\n"), stdout("1796601600.12\n"))]),
        ),
        code(
            "print(open('/etc/hostname').read())",
            &["nbval-skip"],
            Some(3),
            json!([pick(stdout("laptop\n"), stdout("nbv-run-7f9c\n"))]),
        ),
        code(
            "print('draft')",
            &[],
            if golden { None } else { Some(4) },
            pick(json!([]), json!([stdout("draft\n")])),
        ),
        code(
            "check_input(-1)",
            &["raises-exception"],
            Some(5),
            pick(json!([error("ValueError", "negative")]), json!([])),
        ),
        code(
            "# NBVAL_CHECK_OUTPUT\nprint(len(rows))",
            &["nbval-ignore-output"],
            Some(6),
            json!([pick(stdout("1000\n"), stdout("998\n"))]),
        ),
    ];
    json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
}

#[test]
fn each_marker_does_what_nbval_does_with_it() {
    let report = compare(
        &marked_notebook(false),
        &marked_notebook(true),
        &Settings::default(),
    );
    // Cells 0 to 3 match (an expected error, ignored output, a skipped cell, a golden
    // cell never run); cell 4 was to raise and did not; cell 5's comment overrides its
    // tag, so its output is compared.
    insta::assert_debug_snapshot!("marked_report", report);
    insta::assert_snapshot!(report.reported().first_difference(), @"cell 4: output 0 (error) is missing: the cell is marked to raise an exception and did not: expected \"ValueError: negative\" (1 more cell differs)");
}

#[test]
fn a_golden_cell_run_without_outputs_still_expects_none() {
    // An execution count and no output: nbval compares (an output in the run fails).
    let golden = json!({"cells": [code("x = 1", &[], Some(1), json!([]))]});
    let run = json!({"cells": [code("x = 1", &[], Some(1), json!([stdout("1\n")]))]});
    let report = compare(&run, &golden, &Settings::default());
    assert_eq!(report.differences[0].kind, DiffKind::ExtraOutput);
    // Outputs and no execution count (a cleared count): still an expectation.
    let golden = json!({"cells": [code("x", &[], None, json!([stdout("1\n")]))]});
    let run = json!({"cells": [code("x", &[], Some(1), json!([stdout("2\n")]))]});
    let report = compare(&run, &golden, &Settings::default());
    assert_eq!(report.differences[0].kind, DiffKind::OutputContent);
}

#[test]
fn a_marker_in_either_notebook_applies() {
    let cell = |source: &str, text: &str| code(source, &[], Some(1), json!([stdout(text)]));
    let plain = "print(now())";
    let ignore = "# NBVAL_IGNORE_OUTPUT\nprint(now())";
    for (run_source, golden_source) in [(ignore, plain), (plain, ignore)] {
        let run = json!({"cells": [cell(run_source, "b")]});
        let golden = json!({"cells": [cell(golden_source, "a")]});
        assert!(compare(&run, &golden, &Settings::default()).matched());
    }
    let run = json!({"cells": [cell(plain, "b")]});
    let golden = json!({"cells": [cell(plain, "a")]});
    assert!(!compare(&run, &golden, &Settings::default()).matched());
}

#[test]
fn a_marked_cell_missing_from_the_run_is_still_missing() {
    // Markers say what a cell's outputs mean, not whether the cell is there.
    let skipped = code("# NBVAL_SKIP\nx", &[], Some(1), json!([]));
    let golden = json!({"cells": [skipped.clone(), skipped]});
    let run = json!({"cells": [code("x", &[], Some(1), json!([]))]});
    let report = compare(&run, &golden, &Settings::default());
    assert_eq!(report.differences.len(), 1);
    assert_eq!(report.differences[0].kind, DiffKind::MissingCell);
}
