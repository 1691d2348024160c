//! What the comparison reports for a training notebook that drifted.

use nbv_core::compare::compare;

use super::*;

fn training(accuracy: &str, when: &str, extra: bool) -> Value {
    let mut cells = vec![
        json!({"cell_type": "markdown", "metadata": {}, "source": "# Train"}),
        json!({"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["loading data\n", format!("started {when}\n")]},
            {"output_type": "stream", "name": "stderr", "text": "warning: slow\n"}]}),
        json!({"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [
            {"output_type": "execute_result", "execution_count": 2, "metadata": {},
             "data": {"text/plain": [format!("{{'accuracy': {accuracy}}}")]}}]}),
        json!({"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [
            {"output_type": "display_data", "metadata": {},
             "data": {"image/png": "iVBORw0KGgo=\n", "text/plain": "<Figure size 640x480 with 1 Axes>"}}]}),
    ];
    if extra {
        cells.push(
            json!({"cell_type": "code", "execution_count": 4, "metadata": {}, "outputs": [
            {"output_type": "error", "ename": "KeyError", "evalue": "'f1'", "traceback": []}]}),
        );
    }
    json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
}

#[test]
fn a_run_within_tolerance_matches_and_a_drifted_one_names_each_cell() {
    let golden = training("0.9312", "2026-01-24 22:30:05", false);
    let settings = Settings::default();
    let noisy = training("0.93120001", "2026-12-02 04:31:00", false);
    assert!(compare(&noisy, &golden, &settings).matched());

    let drifted = training("0.95", "2026-12-02 04:31:00", true);
    let report = compare(&drifted, &golden, &settings);
    insta::assert_debug_snapshot!("drifted_report", report);
    let reported = report.reported();
    insta::assert_snapshot!(
        "drifted_cmp",
        serde_json::to_string_pretty(&reported).unwrap()
    );
    insta::assert_snapshot!(reported.first_difference(), @r#"cell 2: output 0 (execute_result:text/plain) differs: expected "{'accuracy': 0.9312}", got "{'accuracy': 0.95}" (1 more cell differs)"#);

    let exact = Settings {
        strategy: ComparisonStrategy::Exact,
        ..Settings::default()
    };
    let report = compare(&noisy, &golden, &exact);
    insta::assert_debug_snapshot!("exact_report", report);
}
