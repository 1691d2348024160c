//! What holds for every notebook pair and every setting.

use std::collections::BTreeSet;

use nbv_core::compare::{
    ComparisonReport, MAX_CMP_BYTES, Settings, compare, mask_timestamps, normalize,
};

use super::*;

fn mismatched_cells(report: &ComparisonReport) -> BTreeSet<u64> {
    report.differences.iter().map(|d| d.cell).collect()
}

fn code_cells(notebook: &Value) -> usize {
    notebook["cells"].as_array().map_or(0, |cells| {
        cells.iter().filter(|c| c["cell_type"] == "code").count()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn a_notebook_matches_itself_under_every_setting(
        (run, _) in pair(),
        settings in settings(),
    ) {
        let report = compare(&run, &run, &settings);
        prop_assert!(report.matched(), "{report:?}");
        prop_assert_eq!(report.total_cells as usize, code_cells(&run));
    }

    #[test]
    fn what_matches_exactly_matches_normalized(
        (run, golden) in pair(),
        settings in settings(),
    ) {
        let exact = compare(&run, &golden, &Settings { strategy: ComparisonStrategy::Exact, ..settings.clone() });
        let normalized = compare(&run, &golden, &Settings { strategy: ComparisonStrategy::Normalized, ..settings });
        // Cell by cell: normalizing only ever forgives.
        prop_assert!(
            mismatched_cells(&normalized).is_subset(&mismatched_cells(&exact)),
            "normalized {normalized:?}\nexact {exact:?}"
        );
        prop_assert!(normalized.matched_cells >= exact.matched_cells);
    }

    #[test]
    fn a_tolerance_that_matches_keeps_matching_when_it_grows(
        (run, golden) in pair(),
        settings in settings(),
        growth in prop_oneof![Just(1.0), Just(2.0), Just(10.0), Just(1000.0)],
    ) {
        let settings = Settings { strategy: ComparisonStrategy::Normalized, ..settings };
        let wider = Settings { tolerance: (settings.tolerance * growth).clamp(1e-3, 1.0), ..settings.clone() };
        prop_assume!(wider.tolerance >= settings.tolerance);
        let narrow = compare(&run, &golden, &settings);
        let wide = compare(&run, &golden, &wider);
        prop_assert!(mismatched_cells(&wide).is_subset(&mismatched_cells(&narrow)), "{wide:?}\n{narrow:?}");
    }

    #[test]
    fn masking_timestamps_and_normalizing_are_idempotent(
        pieces in text(),
        noise in noise(),
        settings in settings(),
    ) {
        let text = render_text(&pieces, &noise);
        let masked = mask_timestamps(&text, &settings);
        prop_assert_eq!(mask_timestamps(&masked, &settings), masked.clone());
        let normalized = normalize(&text, &settings);
        prop_assert_eq!(normalize(&normalized, &settings), normalized);
    }

    #[test]
    fn the_counts_add_up_and_the_report_fits_its_budget(
        (run, golden) in pair(),
        settings in settings(),
    ) {
        let report = compare(&run, &golden, &settings);
        prop_assert_eq!(report.matched_cells + report.differences.len() as u64, report.total_cells);
        prop_assert_eq!(report.total_cells as usize, code_cells(&run).max(code_cells(&golden)));
        prop_assert_eq!(report.matched(), report.differences.is_empty());
        let reported = report.reported();
        prop_assert!(serde_json::to_string(&reported).unwrap().len() <= MAX_CMP_BYTES);
        prop_assert_eq!(reported.diffs.len() as u64 + reported.more, reported.mismatched);
        prop_assert_eq!(reported.matched(), report.matched());
        let status = reported.status();
        prop_assert_eq!(status.matched_cells + status.mismatched_cells, status.total_cells);
        prop_assert_eq!(status.result == "matched", report.matched());
    }

    #[test]
    fn a_timestamp_alone_never_fails_a_normalized_comparison(
        cells in cells(),
        golden in noise(),
        seed in any::<u32>(),
    ) {
        // Two runs that differ only in their timestamps and addresses.
        let run = Noise { seed, ..golden.clone() };
        let settings = Settings::default();
        let report = compare(&render(&cells, &run), &render(&cells, &golden), &settings);
        prop_assert!(report.matched(), "{report:?}");
    }
}
