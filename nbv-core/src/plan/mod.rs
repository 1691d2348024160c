//! The one function a shell calls: which effects a job's current state requires.
//!
//! [`plan`] looks at a job as the shell observed it (its annotations, its persisted
//! status and the [`EffectLedger`] in `status.effects`) and returns a [`Plan`]: the
//! effects still owed for the current run, each with a stable [`EffectKey`].
//!
//! The shell carries an effect out, then [`record`]s the outcome in the ledger and
//! writes the ledger to the job's status. Because planning reads the *persisted*
//! status, GitOps effects of a terminal transition are only ever planned after the
//! terminal phase has been written: a failed status write can never repeat a trigger.
//! Because the ledger is persisted too, a conflict, an API error or a restart between
//! two effects neither repeats one that was recorded nor loses one that was not.
//! Every effect is also idempotent on its own (a rolling restart writes the run's
//! completion time, an Event has a name derived from the run), which covers the one
//! window the ledger cannot: an effect carried out whose record was lost.
//!
//! # Examples
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use nbv_core::api::NotebookValidationJob;
//! use nbv_core::plan::{plan, record, Effect, Outcome, PlanContext};
//!
//! let mut job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
//!     "metadata": {"name": "train", "namespace": "ml", "generation": 1, "annotations": {
//!         "argocd.argoproj.io/sync-wave": "3",
//!         "mlops.dev/on-success-trigger":
//!             "- {apiVersion: apps/v1, kind: Deployment, name: model-server, action: restart}"
//!     }},
//!     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
//!              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
//!     "status": {"phase": "Succeeded", "observedGeneration": 1,
//!                "startTime": "2026-01-24T22:29:00Z", "completionTime": "2026-01-24T22:30:00Z"}
//! }))?;
//! let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
//! let ctx = PlanContext::default();
//!
//! let first = plan(&job, &ctx, now);
//! let keys: Vec<_> = first.effects.iter().map(|e| e.key.as_str().to_owned()).collect();
//! assert_eq!(keys, ["wave", "trigger/restart:apps/Deployment:ml/model-server", "notify"]);
//!
//! // The shell carries each effect out and records it; then nothing is owed.
//! let mut ledger = first.ledger();
//! for effect in &first.effects {
//!     ledger = record(ledger, &effect.key, Outcome::Done, now, &ctx.retry).ledger;
//!     if let Effect::PatchJob { patch } = &effect.effect {
//!         for (k, v) in patch["metadata"]["annotations"].as_object().unwrap() {
//!             let annotations = job.metadata.annotations.get_or_insert_with(Default::default);
//!             match v.as_str() {
//!                 Some(v) => { annotations.insert(k.clone(), v.to_owned()); }
//!                 None => { annotations.remove(k); }
//!             }
//!         }
//!     }
//! }
//! job.status.as_mut().unwrap().effects = Some(ledger);
//! assert!(plan(&job, &ctx, now).effects.is_empty());
//! # Ok::<(), serde_json::Error>(())
//! ```

mod cache;
mod diff;
mod key;
mod ledger;
mod reporting;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::annotations;
use crate::api::{EffectLedger, NotebookValidationJob, Phase};
use crate::events::{NotificationContext, NotificationEvent, notification};
use crate::reconcile::Wake;
use crate::triggers::{self, Trigger};
use crate::waves::{self, WaveOutcome};

pub use cache::{ParsedAnnotations, PlanCache};
pub use diff::merge_patch;
pub use key::{EffectKey, RunKey};
pub use ledger::{EffectRetryPolicy, Outcome, Recorded, record};
// The condition value at its old path; it lives beside set_condition in phase.
pub use crate::phase::ConditionUpdate;
pub use reporting::{SyncStage, conditions, parent_diagnostics, sync_condition};

/// What the shell knows beyond the job, and how effects are retried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanContext {
    /// Name of the job's parent Argo CD Application, if the shell found one.
    pub application: Option<String>,
    /// The phase machine's retry limit (shown in notifications).
    pub max_retries: u32,
    /// How failed effects are retried.
    pub retry: EffectRetryPolicy,
    /// Argo CD's control-plane namespace: where a trigger's Application without a
    /// namespace is.
    pub argocd_namespace: String,
}

impl Default for PlanContext {
    fn default() -> Self {
        PlanContext {
            application: None,
            max_retries: 3,
            retry: EffectRetryPolicy::default(),
            argocd_namespace: triggers::DEFAULT_ARGOCD_NAMESPACE.to_owned(),
        }
    }
}

/// One effect the shell must carry out.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Effect {
    /// Apply this JSON merge patch to the job's metadata (wave annotations).
    PatchJob {
        /// The merge patch.
        patch: serde_json::Value,
    },
    /// Carry out an on-success trigger of the run that completed at `completed_at`.
    ///
    /// A rolling restart writes `completed_at` (RFC 3339) as
    /// `kubectl.kubernetes.io/restartedAt`, a refresh writes it as
    /// `mlops.dev/restart-timestamp`, and pod deletion spares pods created after it,
    /// so carrying the same trigger out twice for one run changes nothing.
    Trigger {
        /// What to act on and how.
        trigger: Trigger,
        /// Completion time of the run that earned the trigger.
        completed_at: DateTime<Utc>,
    },
    /// Report how the Argo CD sync that `trigger` started for this run ended, once
    /// Argo CD has finished it ([`crate::sync::sync_progress`]): planned after the
    /// trigger is recorded as done, and owed until the shell sees the operation end.
    SyncResult {
        /// The `sync` trigger.
        trigger: Trigger,
        /// Completion time of the run (its marker).
        completed_at: DateTime<Utc>,
    },
    /// Create this notification Event.
    Notify {
        /// The Event.
        event: NotificationEvent,
    },
    /// Report an effect that nbv stopped retrying (Warning Event and condition).
    ReportGaveUp {
        /// Key of the abandoned effect.
        effect: EffectKey,
        /// Its last error.
        error: String,
        /// Attempts made.
        attempts: u32,
    },
}

/// An effect and its key within the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlannedEffect {
    /// Stable identity of the effect within its run.
    pub key: EffectKey,
    /// What to do.
    pub effect: Effect,
}

/// A problem with the job's annotations that the user must fix. The shell reports it
/// as a Warning Event and in the `AnnotationsValid` condition; everything else about
/// the job still happens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    /// The annotation at fault.
    pub annotation: &'static str,
    /// `true` for an error (the annotation is ignored), `false` for a warning.
    pub is_error: bool,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// The effects a job's current state requires.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The run the plan belongs to.
    pub run: RunKey,
    /// Effects due now, in the order they should be carried out.
    pub effects: Vec<PlannedEffect>,
    /// Effects that failed and wait for their backoff; plan again at the earliest
    /// ([`Plan::wake`] says so to the job machine).
    pub retry_at: Option<DateTime<Utc>>,
    /// Annotation problems to report.
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the job shows how its Argo CD syncs stand: it carries the
    /// `ApplicationSynced` condition, which nbv adds only for news a user must see (a
    /// sync deferred by a sync window, a sync that failed). Such a job has every stage
    /// of its syncs reported; on any other job a sync that starts and succeeds costs no
    /// status write beyond the completion's, Argo CD's Application being the record of
    /// its success.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shows_sync: bool,
    /// The ledger as the plan found it (voided when it belonged to another run).
    #[serde(skip)]
    ledger: EffectLedger,
}

impl Plan {
    /// The ledger to record this plan's outcomes in: the job's, or a fresh one when the
    /// job's belonged to another run.
    pub fn ledger(&self) -> EffectLedger {
        self.ledger.clone()
    }

    /// When to plan again for the plan's sake: when the earliest backoff ends
    /// ([`Plan::retry_at`], which also counts as an effect owed later).
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::plan::{plan, PlanContext};
    /// use nbv_core::reconcile::Wake;
    ///
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "t.ipynb"}, "podConfig": {"containerImage": "img"}}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    /// // A run that has not ended owes nothing later.
    /// assert_eq!(plan(&job, &PlanContext::default(), now).wake(), Wake::default());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn wake(&self) -> Wake {
        self.retry_at.map(Wake::by).unwrap_or_default()
    }

    /// Whether there is nothing to do now or later.
    pub fn is_empty(&self) -> bool {
        self.effects.is_empty() && self.retry_at.is_none()
    }

    /// Whether nothing is to be carried out now: no effect is due but, at most, the
    /// following of syncs ([`Effect::SyncResult`]). Following one reads the watch cache
    /// and records only what it finds worth recording; on a job that does not
    /// [show its syncs](Self::shows_sync) a sync that ended well is never recorded, and
    /// is looked at again, at no request, whenever the job is reconciled.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::api::NotebookValidationJob;
    /// use nbv_core::plan::{plan, PlanContext};
    ///
    /// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "train", "namespace": "ml"},
    ///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
    ///              "path": "t.ipynb"}, "podConfig": {"containerImage": "img"}},
    ///     "status": {"phase": "Succeeded", "completionTime": "2026-01-24T22:30:00Z"}
    /// }))?;
    /// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
    /// // The notification is owed.
    /// assert!(!plan(&job, &PlanContext::default(), now).carries_out_nothing());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn carries_out_nothing(&self) -> bool {
        self.effects
            .iter()
            .all(|planned| matches!(planned.effect, Effect::SyncResult { .. }))
    }
}

/// Decides the effects `job` requires at `now`. Pure and deterministic.
///
/// - Any run: annotation problems become [`Diagnostic`]s.
/// - A run that has not ended: stale wave annotations of an earlier run are cleared.
/// - A run that ended: wave annotations are written (if the job declares a sync wave);
///   on success each valid on-success trigger is carried out once, and the result of a
///   sync it started is reported once Argo CD has finished it; one notification Event
///   is created.
///
/// Effects already recorded as done for this run are left out, failed ones come back
/// after their backoff, abandoned ones are reported once.
///
/// Parses the trigger annotation on every call; a shell that plans the same job again
/// and again keeps the parse in a [`PlanCache`] (or a [`ParsedAnnotations`]) and calls
/// [`plan_with`], which gives the same plan.
pub fn plan(job: &NotebookValidationJob, ctx: &PlanContext, now: DateTime<Utc>) -> Plan {
    plan_with(job, ctx, now, &ParsedAnnotations::of(job, ctx))
}

/// [`plan`], with the trigger annotation already parsed: `parsed` is used when it
/// [`is_for`](ParsedAnnotations::is_for) `job` under `ctx` (same annotation text, same
/// default namespaces); otherwise the annotation is parsed afresh, so a parse kept from
/// an older version of the job never changes the plan.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::plan::{plan, plan_with, ParsedAnnotations, PlanContext};
///
/// let job = |name: &str| -> NotebookValidationJob {
///     serde_json::from_value(serde_json::json!({
///         "metadata": {"name": "train", "namespace": "ml", "annotations": {
///             "mlops.dev/on-success-trigger":
///                 format!("- {{apiVersion: apps/v1, kind: Deployment, name: {name}, action: restart}}")}},
///         "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///                  "path": "t.ipynb"}, "podConfig": {"containerImage": "img"}},
///         "status": {"phase": "Succeeded", "completionTime": "2026-01-24T22:30:00Z"}
///     })).unwrap()
/// };
/// let (ctx, now) = (PlanContext::default(), Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap());
/// let parsed = ParsedAnnotations::of(&job("web"), &ctx);
/// assert_eq!(plan_with(&job("web"), &ctx, now, &parsed), plan(&job("web"), &ctx, now));
/// // The annotation changed since: the stale parse is not used.
/// assert_eq!(plan_with(&job("api"), &ctx, now, &parsed), plan(&job("api"), &ctx, now));
/// ```
pub fn plan_with(
    job: &NotebookValidationJob,
    ctx: &PlanContext,
    now: DateTime<Utc>,
    parsed: &ParsedAnnotations,
) -> Plan {
    let fresh;
    let parsed = if parsed.is_for(job, ctx) {
        parsed
    } else {
        fresh = ParsedAnnotations::of(job, ctx);
        &fresh
    };
    let empty = BTreeMap::new();
    let job_annotations = job.metadata.annotations.as_ref().unwrap_or(&empty);
    let status = job.status.clone().unwrap_or_default();
    let run = RunKey::of(job);
    let mut ledger = match status.effects {
        Some(ledger) if ledger.run == run.as_str() => ledger,
        _ => EffectLedger::for_run(run.as_str()),
    };

    let mut diagnostics = Vec::new();
    let effective = waves::effective_wave(job_annotations);
    for err in &effective.problems {
        diagnostics.push(Diagnostic {
            annotation: err.annotation(),
            is_error: true,
            message: format!(
                "{err}; Argo CD puts the job in wave {} instead",
                effective.wave.unwrap_or(waves::Wave::DEFAULT)
            ),
        });
    }
    let sync_wave = effective.wave;
    if let Err(err) = waves::block_wave(job_annotations) {
        diagnostics.push(Diagnostic {
            annotation: annotations::BLOCK_WAVE,
            is_error: true,
            message: err.to_string(),
        });
    }
    diagnostics.extend_from_slice(parsed.diagnostics());

    let mut owed: Vec<PlannedEffect> = Vec::new();
    let terminal = status
        .phase
        .filter(|p| p.is_terminal())
        .zip(status.completion_time);
    match terminal {
        None => {
            // Content-checked rather than ledger-checked: the annotations themselves
            // say whether anything is left to clear.
            if let Ok(Some(patch)) = waves::wave_patch(job_annotations, &WaveOutcome::NewRun) {
                owed.push(PlannedEffect {
                    key: EffectKey::wave(),
                    effect: Effect::PatchJob { patch },
                });
            }
        }
        Some((phase, completed_at)) => {
            let outcome = match phase {
                Phase::Succeeded => WaveOutcome::Succeeded { completed_at },
                _ => WaveOutcome::Failed { completed_at },
            };
            if let Ok(Some(patch)) = waves::wave_patch(job_annotations, &outcome) {
                owed.push(PlannedEffect {
                    key: EffectKey::wave(),
                    effect: Effect::PatchJob { patch },
                });
            }
            if phase == Phase::Succeeded {
                for trigger in parsed.triggers() {
                    let key = EffectKey::trigger(trigger);
                    // A sync is followed until Argo CD finishes it.
                    if trigger.action() == triggers::Action::Sync && ledger.is_done(key.as_str()) {
                        owed.push(PlannedEffect {
                            key: EffectKey::sync_result(trigger),
                            effect: Effect::SyncResult {
                                trigger: trigger.clone(),
                                completed_at,
                            },
                        });
                    }
                    owed.push(PlannedEffect {
                        key,
                        effect: Effect::Trigger {
                            trigger: trigger.clone(),
                            completed_at,
                        },
                    });
                }
            }
            let notify_ctx = NotificationContext {
                application: ctx.application.clone(),
                sync_wave: sync_wave.map(|w| w.get()),
                max_retries: ctx.max_retries,
            };
            if let Some(event) = notification(job, &notify_ctx) {
                owed.push(PlannedEffect {
                    key: EffectKey::notify(),
                    effect: Effect::Notify { event },
                });
            }
        }
    }

    // The wave patch is content-checked: when the annotations are already as they
    // should be (an attempt that failed to report, or a hand edit, put them there), a
    // pending failure of it is settled as done instead of staying on record for good.
    let wave_owed = owed.iter().any(|p| p.key == EffectKey::wave());
    let wave_pending = ledger
        .failure(EffectKey::wave().as_str())
        .is_some_and(|f| !f.gave_up);
    if !wave_owed && wave_pending {
        ledger = record(ledger, &EffectKey::wave(), Outcome::Done, now, &ctx.retry).ledger;
    }

    // An abandoned effect is replaced by the report of its abandonment, which is
    // itself an effect: done once, retried like any other, abandoned silently (its
    // failure stays visible in the ledger).
    let owed = owed
        .into_iter()
        .map(|planned| match ledger.failure(planned.key.as_str()) {
            Some(failure) if failure.gave_up => PlannedEffect {
                key: EffectKey::gave_up(&planned.key),
                effect: Effect::ReportGaveUp {
                    effect: planned.key,
                    error: failure.last_error.clone(),
                    attempts: failure.attempts,
                },
            },
            _ => planned,
        });

    let mut effects = Vec::new();
    let mut retry_at: Option<DateTime<Utc>> = None;
    for planned in owed {
        // Wave patches are checked against the annotations, not the ledger: if
        // someone removed them, they are written again.
        let is_wave = planned.key == EffectKey::wave();
        if !is_wave && ledger.is_done(planned.key.as_str()) {
            continue;
        }
        match ledger.failure(planned.key.as_str()) {
            Some(failure) if failure.gave_up => {}
            Some(failure) => {
                let due = ctx.retry.next_attempt(failure);
                if due <= now {
                    effects.push(planned);
                } else {
                    retry_at = Some(retry_at.map_or(due, |r| r.min(due)));
                }
            }
            None => effects.push(planned),
        }
    }

    let shows_sync = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == crate::phase::ConditionType::APPLICATION_SYNCED.as_str());
    Plan {
        run,
        effects,
        retry_at,
        diagnostics,
        shows_sync,
        ledger,
    }
}
