//! The jobs' trigger annotations, parsed once per value rather than once per reconcile.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use nbv_core::api::NotebookValidationJob;
use nbv_core::plan::{ParsedAnnotations, Plan, PlanCache, PlanContext, plan_with};

/// The core's [`PlanCache`], shared by the reconciles. The lock is held to look an
/// entry up and to store one, never while parsing: a large annotation does not hold up
/// the reconciles of other jobs.
#[derive(Default)]
pub struct ParsedTriggers(Mutex<PlanCache>);

impl ParsedTriggers {
    /// The plan of `job`, from its cached parse when its annotation did not change.
    pub(super) fn plan(
        &self,
        job: &NotebookValidationJob,
        ctx: &PlanContext,
        now: DateTime<Utc>,
    ) -> Plan {
        let cached = self.lock().get(job, ctx);
        let parsed = cached.unwrap_or_else(|| {
            let parsed = Arc::new(ParsedAnnotations::of(job, ctx));
            self.lock().insert(job, Arc::clone(&parsed));
            parsed
        });
        plan_with(job, ctx, now, &parsed)
    }

    /// Forgets a deleted job's parse.
    pub(crate) fn forget(&self, uid: &str) {
        self.lock().forget(uid);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PlanCache> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
