//! The jobs' trigger annotations, parsed once per value rather than once per reconcile.

use std::sync::{Arc, Mutex};

use nbv_core::api::NotebookValidationJob;
use nbv_core::plan::{ParsedAnnotations, PlanCache, PlanContext};

/// The core's [`PlanCache`], shared by the reconciles. The lock is held to look an
/// entry up and to store one, never while parsing: a large annotation does not hold up
/// the reconciles of other jobs.
#[derive(Default)]
pub struct ParsedTriggers(Mutex<PlanCache>);

impl ParsedTriggers {
    /// The parse of `job`'s annotations, cached while they do not change.
    pub(super) fn parsed(
        &self,
        job: &NotebookValidationJob,
        ctx: &PlanContext,
    ) -> Arc<ParsedAnnotations> {
        let cached = self.lock().get(job, ctx);
        cached.unwrap_or_else(|| {
            let parsed = Arc::new(ParsedAnnotations::of(job, ctx));
            self.lock().insert(job, Arc::clone(&parsed));
            parsed
        })
    }

    /// Forgets a deleted job's parse.
    pub(crate) fn forget(&self, uid: &str) {
        self.lock().forget(uid);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PlanCache> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
