//! The ledgers the shell wrote recently: when one may be forgotten.

use nbv_core::api::{EffectFailure, EffectLedger};
use nbv_core::reconcile::{merge_recent, recent_persisted};
use proptest::prelude::*;

const RUNS: [&str; 2] = ["g1@2026-01-24T22:30:00Z", "g2@2026-01-24T22:40:00Z"];
const KEYS: [&str; 4] = ["wave", "notify", "trigger/0", "trigger/1"];

fn ledger() -> impl Strategy<Value = EffectLedger> {
    (
        0..RUNS.len(),
        proptest::collection::btree_set(0..KEYS.len(), 0..=KEYS.len()),
        proptest::option::of((0..KEYS.len(), 1..4u32)),
    )
        .prop_map(|(run, done, failed)| EffectLedger {
            run: RUNS[run].to_owned(),
            done: done.into_iter().map(|k| KEYS[k].to_owned()).collect(),
            failed: failed
                .into_iter()
                .map(|(key, attempts)| EffectFailure {
                    key: KEYS[key].to_owned(),
                    attempts,
                    last_error: "503 Service Unavailable".to_owned(),
                    last_attempt: None,
                    gave_up: false,
                })
                .collect(),
        })
}

proptest! {
    /// Forgetting a recent ledger that [`recent_persisted`] calls persisted never
    /// changes what is planned from: the merge without it is the merge with it.
    #[test]
    fn forgetting_a_persisted_ledger_plans_the_same(
        run in 0..RUNS.len(),
        observed in proptest::option::of(ledger()),
        recent in ledger(),
    ) {
        let run = RUNS[run];
        if recent_persisted(run, observed.as_ref(), &recent) {
            prop_assert_eq!(
                merge_recent(run, observed.as_ref(), Some(recent.clone())),
                merge_recent(run, observed.as_ref(), None)
            );
        }
    }

    /// A ledger the job shows whole, for the run planned, is always persisted: the
    /// shell does not keep ledgers the watch cache already holds.
    #[test]
    fn a_ledger_the_job_shows_is_persisted(run in 0..RUNS.len(), recent in ledger(), extra in 0..KEYS.len()) {
        let run = RUNS[run];
        let mut recent = recent;
        recent.run = run.to_owned();
        let mut observed = recent.clone();
        observed.done.insert(KEYS[extra].to_owned());
        prop_assert!(recent_persisted(run, Some(&observed), &recent));
    }

    /// Without a view of the run, nothing is persisted.
    #[test]
    fn nothing_is_persisted_without_a_view_of_the_run(run in 0..RUNS.len(), recent in ledger()) {
        prop_assert!(!recent_persisted(RUNS[run], None, &recent));
    }
}
