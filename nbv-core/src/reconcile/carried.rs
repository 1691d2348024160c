//! What carrying out one planned effect came to, and what that means for the job.

use crate::actions::restart::Method;
use crate::actions::{SyncReport, TriggerOutcome};
use crate::events::{Report, ReportReason};
use crate::phase::{ConditionStatus, ConditionType, ConditionUpdate, Reason};
use crate::plan::{Effect, Outcome, PlannedEffect, SyncStage, sync_condition};
use crate::triggers::Action;

use super::Wake;

/// What the shell saw when it carried out a planned effect: the action's result, which
/// [`Settlement::record`](super::Settlement::record) turns into the ledger's record of
/// it, an [`Outcome`] (a write's result already is one: it took effect or failed).
///
/// # Examples
///
/// ```
/// use nbv_core::actions::TriggerOutcome;
/// use nbv_core::plan::Outcome;
/// use nbv_core::reconcile::Carried;
///
/// let fired = Carried::Trigger(Ok(TriggerOutcome::Done { summary: "deleted 2 pods".into() }));
/// let refused = Carried::Trigger(Err(Outcome::GiveUp("namespace serving has not opted in".into())));
/// assert_ne!(fired, refused);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Carried {
    /// A wave patch, a notification or the report of an abandoned effect: whether it
    /// took effect.
    Written(Outcome),
    /// A trigger: how it went, or the failure to record ([`Outcome::Failed`] or
    /// [`Outcome::GiveUp`]).
    Trigger(Result<TriggerOutcome, Outcome>),
    /// Following the sync a trigger started: where it stands, or the failure to record.
    Sync(Result<SyncReport, Outcome>),
}

impl Carried {
    /// The error, when carrying the effect out failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::plan::Outcome;
    /// use nbv_core::reconcile::Carried;
    ///
    /// assert_eq!(Carried::Written(Outcome::Failed("503".into())).failure(), Some("503"));
    /// assert_eq!(Carried::Written(Outcome::Done).failure(), None);
    /// ```
    pub fn failure(&self) -> Option<&str> {
        match self {
            Carried::Written(outcome)
            | Carried::Trigger(Err(outcome))
            | Carried::Sync(Err(outcome)) => outcome.error(),
            _ => None,
        }
    }
}

/// A condition beyond the plan's, as a reconcile found it, with the Event that
/// announces a change of it.
///
/// # Examples
///
/// ```
/// use nbv_core::plan::{sync_condition, SyncStage};
/// use nbv_core::reconcile::Reported;
///
/// let started = Reported::quiet(sync_condition(SyncStage::Started, "sync argocd/serving: started"));
/// assert!(started.announce.is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reported {
    /// The condition.
    pub update: ConditionUpdate,
    /// The Event created when the condition changes to this state.
    pub announce: Option<ReportReason>,
}

impl Reported {
    /// A condition whose change is announced with an Event of `reason`.
    pub fn announced(update: ConditionUpdate, reason: ReportReason) -> Self {
        Reported {
            update,
            announce: Some(reason),
        }
    }

    /// A condition whose change is not announced.
    pub fn quiet(update: ConditionUpdate) -> Self {
        Reported {
            update,
            announce: None,
        }
    }
}

/// What one carried-out effect means for the job.
#[derive(Debug, Default)]
pub(super) struct Meaning {
    /// What to record in the ledger; `None`: nothing (deferred, or a sync that runs).
    pub outcome: Option<Outcome>,
    /// An Event to create at once.
    pub report: Option<Report>,
    /// A condition to report.
    pub reported: Option<Reported>,
    /// Whether this counts as an effect still owed (a deferred trigger).
    pub owed: bool,
    /// When to look again because of it.
    pub wake: Wake,
}

impl Meaning {
    /// What carrying out `planned` came to; `shows_sync`: whether the job shows how its
    /// syncs stand ([`crate::plan::Plan::shows_sync`]).
    ///
    /// A sync's stages are reported on a job that shows them. On any other job only
    /// news a user must see is: a sync deferred (which starts showing them) or failed.
    /// That a sync started is the trigger's `TriggerSucceeded` Event, and that it
    /// succeeded is Argo CD's own record (the Application's `operationState`, its
    /// `on-sync-succeeded` notification): repeating it on the job would cost a status
    /// patch, and an Event, per sync.
    pub(super) fn of(planned: &PlannedEffect, carried: Carried, shows_sync: bool) -> Meaning {
        match (&planned.effect, carried) {
            (Effect::Trigger { trigger, .. }, Carried::Trigger(result)) => {
                let is_sync = trigger.action() == Action::Sync;
                let evicts = trigger.action() == Action::Restart
                    && Method::of(trigger.target()) != Method::RollingRestart;
                let restart = |status, reason, message: &str| ConditionUpdate {
                    type_: ConditionType::TARGETS_RESTARTED,
                    status,
                    reason,
                    message: message.to_owned(),
                };
                let wake = result
                    .as_ref()
                    .map_or_else(|_| Wake::default(), TriggerOutcome::wake);
                let meaning = match result {
                    Ok(TriggerOutcome::Deferred { reason, .. }) => Meaning {
                        reported: if is_sync {
                            Some(Reported::announced(
                                sync_condition(
                                    SyncStage::Deferred,
                                    &format!("{trigger}: {reason}"),
                                ),
                                ReportReason::SyncDeferred,
                            ))
                        } else {
                            evicts.then(|| {
                                Reported::announced(
                                    restart(
                                        ConditionStatus::Unknown,
                                        Reason::RESTART_WAITING,
                                        &format!("{trigger}: {reason}"),
                                    ),
                                    ReportReason::RestartWaiting,
                                )
                            })
                        },
                        owed: true,
                        ..Meaning::default()
                    },
                    Ok(done) => {
                        let message = format!("{trigger}: {}", done.summary());
                        let stage = done.sync_stage();
                        Meaning {
                            outcome: done.outcome(),
                            reported: if evicts {
                                Some(Reported::quiet(restart(
                                    ConditionStatus::True,
                                    Reason::RESTART_DONE,
                                    &message,
                                )))
                            } else {
                                (is_sync && shows_sync)
                                    .then(|| Reported::quiet(sync_condition(stage, &message)))
                            },
                            report: Some(Report::new(ReportReason::TriggerSucceeded, message)),
                            ..Meaning::default()
                        }
                    }
                    Err(failed) => {
                        let message = format!("{trigger}: {}", failed.error().unwrap_or_default());
                        Meaning {
                            // Only a restart that stopped: one that is retried still waits.
                            reported: (evicts && matches!(failed, Outcome::GiveUp(_))).then(|| {
                                Reported::quiet(restart(
                                    ConditionStatus::False,
                                    Reason::RESTART_FAILED,
                                    &message,
                                ))
                            }),
                            report: Some(Report::new(ReportReason::TriggerFailed, message)),
                            outcome: Some(failed),
                            ..Meaning::default()
                        }
                    }
                };
                Meaning { wake, ..meaning }
            }
            (Effect::SyncResult { trigger, .. }, Carried::Sync(result)) => {
                let wake = result
                    .as_ref()
                    .map_or_else(|_| Wake::default(), SyncReport::wake);
                let meaning = match result {
                    // Not an effect owed: the trigger took effect, and Argo CD may take
                    // its time. Only looked at again soon.
                    Ok(SyncReport::InProgress { summary }) => Meaning {
                        reported: shows_sync.then(|| {
                            Reported::quiet(sync_condition(
                                SyncStage::Started,
                                &format!("{trigger}: {summary}"),
                            ))
                        }),
                        ..Meaning::default()
                    },
                    Ok(SyncReport::Finished {
                        succeeded: false,
                        summary,
                    }) => finished(
                        SyncStage::Failed,
                        ReportReason::SyncFailed,
                        format!("{trigger}: {summary}"),
                    ),
                    // Nothing to record on a job that does not show its syncs: the ledger
                    // keeps no record of the end, so the sync is looked at again on later
                    // reconciles, in the watch cache, at no request, and still reads as
                    // ended (a later full sync reads as having deployed the run too).
                    Ok(SyncReport::Finished { .. } | SyncReport::Replaced { .. })
                        if !shows_sync =>
                    {
                        Meaning::default()
                    }
                    Ok(SyncReport::Finished { summary, .. }) => finished(
                        SyncStage::Succeeded,
                        ReportReason::SyncSucceeded,
                        format!("{trigger}: {summary}"),
                    ),
                    Ok(SyncReport::Replaced { summary }) => finished(
                        SyncStage::Replaced,
                        ReportReason::SyncReplaced,
                        format!("{trigger}: {summary}"),
                    ),
                    Err(failed) => Meaning {
                        outcome: Some(failed),
                        ..Meaning::default()
                    },
                };
                Meaning { wake, ..meaning }
            }
            (_, Carried::Written(outcome)) => Meaning {
                outcome: Some(outcome),
                ..Meaning::default()
            },
            // A shell that reports a trigger's outcome for another kind of effect (or
            // the reverse) records the effect as failed, so that it is tried again
            // rather than taken for done.
            (effect, carried) => Meaning {
                outcome: Some(Outcome::Failed(format!(
                    "internal error: {carried:?} is no outcome of {}",
                    kind(effect)
                ))),
                ..Meaning::default()
            },
        }
    }
}

fn finished(stage: SyncStage, reason: ReportReason, message: String) -> Meaning {
    Meaning {
        outcome: Some(Outcome::Done),
        reported: Some(Reported::quiet(sync_condition(stage, &message))),
        report: Some(Report::new(reason, message)),
        ..Meaning::default()
    }
}

fn kind(effect: &Effect) -> &'static str {
    match effect {
        Effect::PatchJob { .. } => "a wave patch",
        Effect::Trigger { .. } => "a trigger",
        Effect::SyncResult { .. } => "following a sync",
        Effect::Notify { .. } => "a notification",
        Effect::ReportGaveUp { .. } => "the report of an abandoned effect",
    }
}

/// The Event that a planned [`Effect::ReportGaveUp`] consists of; `None` for any other
/// effect.
///
/// # Examples
///
/// ```
/// use nbv_core::plan::{Effect, EffectKey};
/// use nbv_core::reconcile::abandonment;
///
/// let effect = Effect::ReportGaveUp { effect: EffectKey::notify(), error: "403 forbidden".into(), attempts: 5 };
/// let report = abandonment(&effect).unwrap();
/// assert_eq!(report.reason.as_str(), "EffectAbandoned");
/// assert_eq!(report.message, "gave up on notify after 5 attempts: 403 forbidden");
/// ```
pub fn abandonment(effect: &Effect) -> Option<Report> {
    match effect {
        Effect::ReportGaveUp {
            effect,
            error,
            attempts,
        } => Some(Report::new(
            ReportReason::EffectAbandoned,
            format!("gave up on {effect} after {attempts} attempts: {error}"),
        )),
        _ => None,
    }
}
