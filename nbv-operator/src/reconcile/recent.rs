//! What this process wrote a moment ago, for the reconciles that run before its watch
//! cache shows it.

use std::collections::HashMap;
use std::sync::Mutex;

use nbv_core::api::EffectLedger;
use nbv_core::reconcile::merge_recent;

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
    /// The ledger to plan from ([`merge_recent`]).
    pub(super) fn merged(
        &self,
        uid: &str,
        run: &str,
        observed: Option<&EffectLedger>,
    ) -> Option<EffectLedger> {
        let recent = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(uid)
            .and_then(|r| r.ledger.clone());
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
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(uid)
            .is_some_and(|r| r.superseded.iter().any(|v| v == version))
    }

    pub(crate) fn forget(&self, uid: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(uid);
    }
}
