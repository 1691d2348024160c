//! The ledger a shell wrote a moment ago, against the one its watch cache shows.

use crate::api::EffectLedger;

/// The ledger to plan the job's current `run` (its [`crate::plan::RunKey`]) from: the one `observed` on the job,
/// merged with the one the shell wrote `recent`ly.
///
/// A watch cache may not show a status write yet when the next reconcile runs. A
/// reconcile on that stale view must not carry an effect out twice, so what the shell
/// recorded for the run counts as done too, and what it recorded as failed since is
/// not done, whatever the view says. A ledger of
/// another run is void and left out: a stale view may still show the ledger of the
/// run before, while the shell already recorded this run's effects.
///
/// # Examples
///
/// ```
/// use nbv_core::api::EffectLedger;
/// use nbv_core::reconcile::merge_recent;
///
/// let run = "g2@t1";
/// let mut observed = EffectLedger::for_run("g2@t1");
/// observed.done.insert("wave".into());
/// let mut recent = EffectLedger::for_run("g2@t1");
/// recent.done.insert("notify".into());
/// let merged = merge_recent(run, Some(&observed), Some(recent.clone())).unwrap();
/// assert_eq!(merged.done.len(), 2);
///
/// // An effect recorded as failed since the view was taken is not done any more.
/// let mut failed = recent.clone();
/// failed.failed.push(nbv_core::api::EffectFailure { key: "wave".into(), ..Default::default() });
/// let merged = merge_recent(run, Some(&observed), Some(failed)).unwrap();
/// assert!(!merged.is_done("wave"));
///
/// // The view still shows the run before; what was written for this run counts.
/// let older = EffectLedger::for_run("g1@t0");
/// assert_eq!(merge_recent(run, Some(&older), Some(recent.clone())), Some(recent));
/// assert_eq!(merge_recent(run, Some(&older), None), None);
/// ```
pub fn merge_recent(
    run: &str,
    observed: Option<&EffectLedger>,
    recent: Option<EffectLedger>,
) -> Option<EffectLedger> {
    let observed = observed.filter(|o| o.run == run);
    let recent = recent.filter(|r| r.run == run);
    match (observed, recent) {
        (Some(o), Some(mut r)) => {
            // What the shell recorded since is newer than the view: an effect whose
            // failure it recorded after the view was taken is not in place, whatever
            // the stale view says. A failure the view shows too is not news.
            let still_done: Vec<String> = (o.done.iter())
                .filter(|key| r.failure(key).is_none_or(|f| o.failure(key) == Some(f)))
                .cloned()
                .collect();
            r.done.extend(still_done);
            Some(r)
        }
        (Some(o), None) => Some(o.clone()),
        (None, r) => r,
    }
}

/// Whether the ledger the shell wrote `recent`ly for the job's current `run` adds
/// nothing to the one `observed` on the job: the watch cache shows the write, so the
/// shell may forget it, and planning from `observed` alone plans the same
/// ([`merge_recent`] gives `observed`). A recent ledger of another run is never
/// persisted in this sense: the view may be the stale one, still showing the run
/// before.
///
/// # Examples
///
/// ```
/// use nbv_core::api::EffectLedger;
/// use nbv_core::reconcile::recent_persisted;
///
/// let mut recent = EffectLedger::for_run("g2@t1");
/// recent.done.insert("notify".into());
/// // The watch cache does not show the write yet.
/// assert!(!recent_persisted("g2@t1", None, &recent));
/// let mut observed = recent.clone();
/// assert!(recent_persisted("g2@t1", Some(&observed), &recent));
/// observed.done.insert("wave".into());
/// assert!(recent_persisted("g2@t1", Some(&observed), &recent));
/// // A view of the run before says nothing about this one.
/// assert!(!recent_persisted("g1@t0", Some(&observed), &recent));
/// ```
pub fn recent_persisted(run: &str, observed: Option<&EffectLedger>, recent: &EffectLedger) -> bool {
    recent.run == run
        && observed.is_some_and(|observed| {
            observed.run == run
                && observed.failed == recent.failed
                && recent.done.is_subset(&observed.done)
        })
}
