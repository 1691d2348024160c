//! What this process wrote a moment ago, for the reconciles that run before its watch
//! cache shows it.

use std::collections::HashMap;
use std::sync::Mutex;

use nbv_core::api::EffectLedger;
use nbv_core::reconcile::{merge_recent, recent_persisted};

/// Ledgers the shell wrote recently, by job uid. The watch cache may not show a
/// status write yet when the next reconcile runs; merging what was written keeps a
/// reconcile on a stale view from carrying an effect out twice.
#[derive(Default)]
pub struct RecentLedgers(Mutex<HashMap<String, EffectLedger>>);

impl RecentLedgers {
    /// The ledger to plan from ([`merge_recent`]). A recent ledger the job now shows
    /// ([`recent_persisted`]) is forgotten: kept, it would hold a ledger for every job
    /// that ever had one written, for the life of the process.
    pub(super) fn merged(
        &self,
        uid: &str,
        run: &str,
        observed: Option<&EffectLedger>,
    ) -> Option<EffectLedger> {
        let recent = {
            let mut ledgers = self.0.lock().unwrap_or_else(|e| e.into_inner());
            match ledgers.get(uid) {
                Some(recent) if recent_persisted(run, observed, recent) => {
                    ledgers.remove(uid);
                    None
                }
                recent => recent.cloned(),
            }
        };
        merge_recent(run, observed, recent)
    }

    pub(super) fn remember(&self, uid: &str, ledger: &EffectLedger) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uid.to_owned(), ledger.clone());
    }

    pub(crate) fn forget(&self, uid: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(run: &str, done: &[&str]) -> EffectLedger {
        let mut ledger = EffectLedger::for_run(run);
        ledger.done.extend(done.iter().map(|d| (*d).to_owned()));
        ledger
    }

    fn kept(recent: &RecentLedgers) -> usize {
        recent.0.lock().unwrap().len()
    }

    #[test]
    fn a_ledger_is_kept_until_the_job_shows_it() {
        let recent = RecentLedgers::default();
        recent.remember("u1", &ledger("g1@t0", &["notify"]));
        // The watch cache lags: the recent ledger counts, and is kept.
        let merged = recent.merged("u1", "g1@t0", None);
        assert_eq!(merged, Some(ledger("g1@t0", &["notify"])));
        assert_eq!(kept(&recent), 1);
        // A view of another run keeps it too.
        recent.merged("u1", "g0@t0", Some(&ledger("g0@t0", &[])));
        assert_eq!(kept(&recent), 1);
        // The job shows the write (and more): it is forgotten, the plan unchanged.
        let observed = ledger("g1@t0", &["notify", "wave"]);
        assert_eq!(
            recent.merged("u1", "g1@t0", Some(&observed)),
            Some(observed)
        );
        assert_eq!(kept(&recent), 0);
    }
}
