//! The conditions that report a plan's diagnostics and a run's effects (the
//! mechanics of setting a condition are [`crate::phase::set_condition`]'s).

use crate::aggregate::ParentProblem;
use crate::annotations;
use crate::api::EffectLedger;
use crate::phase::{ConditionStatus, ConditionType, Reason};

use super::Diagnostic;
use crate::phase::ConditionUpdate;

/// The `AnnotationsValid` and `EffectsApplied` conditions for a job whose plan found
/// `diagnostics` and whose run's effects stand as `ledger` says, with `owed` effects
/// not yet carried out.
///
/// - `AnnotationsValid`: `False` (`InvalidAnnotation`) naming each malformed annotation
///   and what to fix; `True` with reason `AnnotationWarnings` when there are only
///   warnings; `True` (`AnnotationsValid`) otherwise.
/// - `EffectsApplied`: `False` (`EffectAbandoned`) naming each effect nbv gave up on
///   and its last error; `Unknown` (`EffectsPending`) while effects are owed or failing;
///   `True` (`EffectsApplied`) once everything owed is done.
///
/// # Examples
///
/// ```
/// use nbv_core::api::EffectLedger;
/// use nbv_core::phase::ConditionStatus;
/// use nbv_core::plan::{conditions, Diagnostic};
///
/// let bad = Diagnostic {
///     annotation: "argocd.argoproj.io/sync-wave",
///     is_error: true,
///     message: "\"three\" is not a wave number".to_owned(),
/// };
/// let [annotations, effects] = conditions(&[bad], &EffectLedger::for_run("g1"), 0);
/// assert_eq!(annotations.status, ConditionStatus::False);
/// assert!(annotations.message.contains("argocd.argoproj.io/sync-wave"));
/// assert_eq!(effects.status, ConditionStatus::True);
/// ```
pub fn conditions(
    diagnostics: &[Diagnostic],
    ledger: &EffectLedger,
    owed: usize,
) -> [ConditionUpdate; 2] {
    let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.is_error).collect();
    let warnings: Vec<&Diagnostic> = diagnostics.iter().filter(|d| !d.is_error).collect();
    let describe = |ds: &[&Diagnostic]| {
        ds.iter()
            .map(|d| format!("{}: {}", d.annotation, d.message))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let annotations = if !errors.is_empty() {
        ConditionUpdate {
            type_: ConditionType::ANNOTATIONS_VALID,
            status: ConditionStatus::False,
            reason: Reason::INVALID_ANNOTATION,
            message: describe(&errors),
        }
    } else if !warnings.is_empty() {
        ConditionUpdate {
            type_: ConditionType::ANNOTATIONS_VALID,
            status: ConditionStatus::True,
            reason: Reason::ANNOTATION_WARNINGS,
            message: describe(&warnings),
        }
    } else {
        ConditionUpdate {
            type_: ConditionType::ANNOTATIONS_VALID,
            status: ConditionStatus::True,
            reason: Reason::ANNOTATIONS_VALID,
            message: "nbv's annotations are well-formed".to_owned(),
        }
    };

    let abandoned: Vec<String> = ledger
        .failed
        .iter()
        .filter(|f| f.gave_up)
        .map(|f| format!("{} after {} attempts: {}", f.key, f.attempts, f.last_error))
        .collect();
    // Why each failing effect waits: a job never waits without saying why.
    let retrying: Vec<String> = ledger
        .failed
        .iter()
        .filter(|f| !f.gave_up)
        .map(|f| format!("{} (attempt {}): {}", f.key, f.attempts, f.last_error))
        .collect();
    let effects = if !abandoned.is_empty() {
        ConditionUpdate {
            type_: ConditionType::EFFECTS_APPLIED,
            status: ConditionStatus::False,
            reason: Reason::EFFECT_ABANDONED,
            message: format!("gave up on:\n{}", abandoned.join("\n")),
        }
    } else if owed > 0 || !retrying.is_empty() {
        let mut message = format!(
            "{owed} effect(s) owed, {} failing and retried with backoff",
            retrying.len()
        );
        if !retrying.is_empty() {
            message = format!("{message}:\n{}", retrying.join("\n"));
        }
        ConditionUpdate {
            type_: ConditionType::EFFECTS_APPLIED,
            status: ConditionStatus::Unknown,
            reason: Reason::EFFECTS_PENDING,
            message,
        }
    } else {
        ConditionUpdate {
            type_: ConditionType::EFFECTS_APPLIED,
            status: ConditionStatus::True,
            reason: Reason::EFFECTS_APPLIED,
            message: format!(
                "{} effect(s) of run {} took effect",
                ledger.done.len(),
                ledger.run
            ),
        }
    };
    [annotations, effects]
}

/// Warnings for problems found while looking for a job's parent Application (a
/// malformed or copied `argocd.argoproj.io/tracking-id`, a label that names no valid
/// Application): the job is still aggregated by the next source that works, and the
/// user learns why the first was skipped.
///
/// # Examples
///
/// ```
/// use std::collections::BTreeMap;
/// use nbv_core::aggregate::{parent_application, JobKey, TrackingSettings};
/// use nbv_core::plan::parent_diagnostics;
///
/// let annotations = BTreeMap::from([(
///     "argocd.argoproj.io/tracking-id".to_owned(), "not-a-tracking-id".to_owned(),
/// )]);
/// let lookup = parent_application(&JobKey::new("ml", "train"), &annotations, &BTreeMap::new(), &TrackingSettings::default());
/// let warnings = parent_diagnostics(&lookup.problems);
/// assert_eq!(warnings[0].annotation, "argocd.argoproj.io/tracking-id");
/// assert!(!warnings[0].is_error);
/// ```
pub fn parent_diagnostics(problems: &[ParentProblem]) -> Vec<Diagnostic> {
    problems
        .iter()
        .map(|problem| Diagnostic {
            // The message names the exact key; this names the source it stands for
            // (any instance label key counts as Argo CD's instance label).
            annotation: match problem {
                ParentProblem::InvalidApplication { key, .. }
                    if key == annotations::APP_PART_OF =>
                {
                    annotations::APP_PART_OF
                }
                ParentProblem::InvalidApplication { key, .. }
                    if key == annotations::ARGOCD_TRACKING_ID =>
                {
                    annotations::ARGOCD_TRACKING_ID
                }
                ParentProblem::InvalidApplication { .. } | ParentProblem::LabelIgnored { .. } => {
                    annotations::APP_INSTANCE
                }
                ParentProblem::OtherInstallation { .. } => annotations::ARGOCD_INSTALLATION_ID,
                _ => annotations::ARGOCD_TRACKING_ID,
            },
            is_error: false,
            message: problem.to_string(),
        })
        .collect()
}

/// Where a run's Argo CD sync stands, as the shell saw it carrying out a `sync` trigger
/// or following the sync it started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncStage {
    /// Not started: an operation is in progress or a sync window is closed.
    Deferred,
    /// nbv wrote the operation, or Argo CD is running it.
    Started,
    /// Argo CD reported success (or a full sync since the run already deployed it).
    Succeeded,
    /// Argo CD reported `Failed` or `Error`.
    Failed,
    /// Another operation replaced it before nbv saw it end.
    Replaced,
}

/// The `ApplicationSynced` condition for a sync at `stage`, `message` saying what nbv
/// saw (which Application, until when a window is closed, Argo CD's message).
///
/// # Examples
///
/// ```
/// use nbv_core::phase::ConditionStatus;
/// use nbv_core::plan::{sync_condition, SyncStage};
///
/// let failed = sync_condition(SyncStage::Failed, "the sync of Application argocd/serving ended in phase Failed");
/// assert_eq!(failed.status, ConditionStatus::False);
/// assert_eq!(failed.reason.as_str(), "SyncFailed");
/// ```
pub fn sync_condition(stage: SyncStage, message: &str) -> ConditionUpdate {
    let (status, reason) = match stage {
        SyncStage::Deferred => (ConditionStatus::Unknown, Reason::SYNC_DEFERRED),
        SyncStage::Started => (ConditionStatus::Unknown, Reason::SYNC_STARTED),
        SyncStage::Succeeded => (ConditionStatus::True, Reason::SYNC_SUCCEEDED),
        SyncStage::Failed => (ConditionStatus::False, Reason::SYNC_FAILED),
        SyncStage::Replaced => (ConditionStatus::Unknown, Reason::SYNC_REPLACED),
    };
    ConditionUpdate {
        type_: ConditionType::APPLICATION_SYNCED,
        status,
        reason,
        message: message.to_owned(),
    }
}
