//! What this process wrote a moment ago, for the reconciles that run before its watch
//! cache shows it.

use std::collections::HashMap;
use std::sync::Mutex;

use nbv_core::api::EffectLedger;
use nbv_core::reconcile::{merge_recent, recent_persisted};

/// What the shell wrote recently about one job.
#[derive(Default)]
struct Recent {
    /// The ledger it recorded last.
    ledger: Option<EffectLedger>,
    /// The versions of the job that its last successful status write replaced: the one
    /// its reconcile started from, and the one its own metadata patch made on the way.
    superseded: Vec<String>,
}

/// Ledgers the shell wrote recently, by job uid. The watch cache may not show a
/// status write yet when the next reconcile runs; merging what was written keeps a
/// reconcile on a stale view from carrying an effect out twice.
#[derive(Default)]
pub struct RecentLedgers(Mutex<HashMap<String, Recent>>);

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
            match ledgers.get_mut(uid) {
                Some(entry) => match entry.ledger.take() {
                    // The job shows the write: the view is newer than every version the
                    // write replaced, so nothing of the entry is needed any more.
                    Some(ledger) if recent_persisted(run, observed, &ledger) => {
                        ledgers.remove(uid);
                        None
                    }
                    ledger => {
                        entry.ledger.clone_from(&ledger);
                        ledger
                    }
                },
                None => None,
            }
        };
        merge_recent(run, observed, recent)
    }

    pub(super) fn remember(&self, uid: &str, ledger: &EffectLedger) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(uid.to_owned())
            .or_default()
            .ledger = Some(ledger.clone());
    }

    /// A status write succeeded, replacing the versions `superseded`.
    pub(super) fn wrote(&self, uid: &str, superseded: Vec<String>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(uid.to_owned())
            .or_default()
            .superseded = superseded;
    }

    /// Whether `version` of the job is one that this process's last status write
    /// replaced: a view from before that write, whose watch event is still to come.
    /// Writing from it again could only conflict, or repeat what was written.
    pub(super) fn predates_last_write(&self, uid: &str, version: Option<&str>) -> bool {
        let Some(version) = version else {
            return false;
        };
        let mut recent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = recent.get_mut(uid) else {
            return false;
        };
        if entry.superseded.iter().any(|v| v == version) {
            return true;
        }
        // A version the write did not replace comes after it (the watch cache only
        // moves forward): the replaced versions will not be seen again.
        entry.superseded.clear();
        if entry.ledger.is_none() {
            recent.remove(uid);
        }
        false
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

    #[test]
    fn the_versions_a_write_replaced_are_forgotten_once_a_later_one_is_seen() {
        let recent = RecentLedgers::default();
        recent.wrote("u1", vec!["10".into(), "11".into()]);
        assert!(recent.predates_last_write("u1", Some("10")));
        assert!(recent.predates_last_write("u1", Some("11")));
        assert_eq!(kept(&recent), 1);
        // The write's own version arrives: nothing before it will be seen again.
        assert!(!recent.predates_last_write("u1", Some("12")));
        assert_eq!(kept(&recent), 0);
        assert!(!recent.predates_last_write("u1", Some("10")));
    }
}
