//! What this process wrote a moment ago, for the reconciles that run before its watch
//! cache shows it.

use std::collections::HashMap;
use std::sync::Mutex;

use nbv_core::api::EffectLedger;
use nbv_core::reconcile::merge_recent;

/// Ledgers the shell wrote recently, by job uid. The watch cache may not show a
/// status write yet when the next reconcile runs; merging what was written keeps a
/// reconcile on a stale view from carrying an effect out twice.
#[derive(Default)]
pub struct RecentLedgers(Mutex<HashMap<String, EffectLedger>>);

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
            .cloned();
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
