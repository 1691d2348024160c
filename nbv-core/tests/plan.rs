//! The plan: idempotence, completeness and exactly-once under failures.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, TimeZone, Utc};
use nbv_core::actions::{SyncReport, TriggerOutcome};
use nbv_core::api::{EffectLedger, NotebookValidationJob, NotebookValidationJobStatus, Phase};
use nbv_core::plan::{
    Effect, EffectKey, Outcome, ParsedAnnotations, PlanCache, PlanContext, RunKey, plan, plan_with,
    record,
};
use nbv_core::reconcile::{Carried, Settlement, merge_recent};
use proptest::prelude::*;

const SEED_TRIGGERS: &str = "- apiVersion: serving.kserve.io/v1beta1
  kind: InferenceService
  name: predictive-analytics
  namespace: self-healing-platform
  action: restart
- apiVersion: argoproj.io/v1alpha1
  kind: Application
  name: serving
  namespace: argocd
  action: sync
";

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 29, 19).unwrap()
}

fn job(
    annotations: BTreeMap<String, String>,
    status: Option<NotebookValidationJobStatus>,
) -> NotebookValidationJob {
    let mut job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "predictive-analytics-kserve-validation",
                     "namespace": "self-healing-platform", "generation": 2, "uid": "u1"},
        "spec": {"notebook": {"git": {"url": "https://github.com/example/models", "ref": "main"},
                 "path": "notebooks/predictive-analytics.ipynb"},
                 "podConfig": {"containerImage": "quay.io/jupyter/scipy-notebook:latest"}}
    }))
    .unwrap();
    job.metadata.annotations = Some(annotations);
    job.status = status;
    job
}

fn status(phase: Phase) -> NotebookValidationJobStatus {
    NotebookValidationJobStatus {
        phase: Some(phase),
        observed_generation: Some(2),
        start_time: Some(t0()),
        completion_time: phase.is_terminal().then(|| t0() + Duration::seconds(41)),
        message: Some(if phase == Phase::Failed {
            "ModuleNotFoundError: x".into()
        } else {
            "ok".into()
        }),
        ..Default::default()
    }
}

fn seed_annotations() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("argocd.argoproj.io/sync-wave".to_owned(), "3".to_owned()),
        ("mlops.dev/block-wave".to_owned(), "4".to_owned()),
        (
            "mlops.dev/on-success-trigger".to_owned(),
            SEED_TRIGGERS.to_owned(),
        ),
    ])
}

fn apply_merge_patch(annotations: &mut BTreeMap<String, String>, patch: &serde_json::Value) {
    for (k, v) in patch["metadata"]["annotations"].as_object().unwrap() {
        match v.as_str() {
            Some(v) => annotations.insert(k.clone(), v.to_owned()),
            None => annotations.remove(k),
        };
    }
}

/// What goes wrong around a reconcile, besides an effect failing.
#[derive(Clone, Copy, Debug, Default)]
struct Weather {
    /// The ledger write fails (an API error, a conflict): nothing is persisted.
    write_fails: bool,
    /// The next reconcile's watch cache does not show this round's write yet.
    lags: bool,
    /// The shell restarts after this round, forgetting what it wrote recently (its
    /// watch cache is then listed afresh). Only after a round whose ledger reached the
    /// cluster: an effect carried out whose record was lost is the one window the
    /// ledger cannot cover, and each effect's own idempotency does.
    restarts: bool,
}

/// A shell around the core's real decisions: plan from the persisted ledger merged with
/// the one written recently ([`merge_recent`]), carry out each effect (apply wave
/// patches, count the others), let the [`Settlement`] record the outcomes, and write
/// what [`Settlement::ledger_write`] says — through a watch cache that may lag, writes
/// that may fail and restarts.
struct Shell {
    successes: BTreeMap<EffectKey, u32>,
    gave_up_reports: BTreeMap<EffectKey, u32>,
    /// The ledger on the cluster.
    persisted: Option<EffectLedger>,
    /// The ledger the watch cache shows.
    view: Option<EffectLedger>,
    /// The ledger this process wrote last.
    recent: Option<EffectLedger>,
}

impl Shell {
    fn new(job: &NotebookValidationJob) -> Self {
        let persisted = job.status.as_ref().and_then(|s| s.effects.clone());
        Shell {
            successes: BTreeMap::new(),
            gave_up_reports: BTreeMap::new(),
            view: persisted.clone(),
            persisted,
            recent: None,
        }
    }

    /// Runs reconciles until nothing is owed, advancing a virtual clock to each retry
    /// time; `fail` decides which effects fail, in the weather `weather` brings.
    fn drive(
        &mut self,
        job: &mut NotebookValidationJob,
        ctx: &PlanContext,
        mut fail: impl FnMut() -> bool,
        mut weather: impl FnMut() -> Weather,
    ) -> usize {
        let mut now = t0() + Duration::minutes(1);
        for round in 0..1000 {
            let run = RunKey::of(job);
            job.status.get_or_insert_with(Default::default).effects =
                merge_recent(run.as_str(), self.view.as_ref(), self.recent.clone());
            let p = plan(job, ctx, now);
            let w = weather();
            let mut settlement = Settlement::new(&p);
            for e in &p.effects {
                let failed = fail();
                let carried = match (&e.effect, failed) {
                    (_, true) => Carried::Written(Outcome::Failed("injected".into())),
                    (Effect::Trigger { .. }, false) => Carried::Trigger(Ok(TriggerOutcome::Done {
                        summary: "took effect".into(),
                    })),
                    (Effect::SyncResult { .. }, false) => Carried::Sync(Ok(SyncReport::Finished {
                        succeeded: true,
                        summary: "synced".into(),
                    })),
                    (_, false) => Carried::Written(Outcome::Done),
                };
                let carried = match (&e.effect, carried) {
                    (Effect::Trigger { .. }, Carried::Written(o)) => Carried::Trigger(Err(o)),
                    (Effect::SyncResult { .. }, Carried::Written(o)) => Carried::Sync(Err(o)),
                    (_, c) => c,
                };
                // Following a sync reads the Application and takes no effect: it is
                // not counted (what it reports is tested in `reconcile.rs`).
                let observes = matches!(e.effect, Effect::SyncResult { .. });
                if !failed && !observes {
                    match &e.effect {
                        Effect::PatchJob { patch } => apply_merge_patch(
                            job.metadata
                                .annotations
                                .get_or_insert_with(Default::default),
                            patch,
                        ),
                        Effect::ReportGaveUp { effect, .. } => {
                            *self.gave_up_reports.entry(effect.clone()).or_default() += 1
                        }
                        _ => {}
                    }
                    *self.successes.entry(e.key.clone()).or_default() += 1;
                }
                settlement.record(e, carried, now, &ctx.retry);
            }
            let before = self.persisted.clone();
            // As the real shell: compared with the ledger its (possibly stale) view shows.
            if let Some(ledger) = settlement.ledger_write(self.view.as_ref()) {
                self.recent = Some(ledger.clone());
                if !w.write_fails {
                    self.persisted = Some(ledger);
                }
            }
            self.view = if w.lags {
                before
            } else {
                self.persisted.clone()
            };
            if w.restarts && self.persisted == self.recent {
                self.recent = None;
                self.view = self.persisted.clone();
            }
            if p.carries_out_nothing() && !w.write_fails {
                match p.retry_at {
                    Some(at) => now = at,
                    None if self.view == self.persisted => {
                        job.status.get_or_insert_with(Default::default).effects =
                            self.persisted.clone();
                        return round;
                    }
                    None => {}
                }
            }
        }
        panic!("the plan never settled");
    }
}

fn calm() -> Weather {
    Weather::default()
}

#[test]
fn seed_example_plan() {
    let j = job(seed_annotations(), Some(status(Phase::Succeeded)));
    let p = plan(
        &j,
        &PlanContext {
            application: Some("self-healing-platform".into()),
            ..Default::default()
        },
        t0(),
    );
    insta::assert_json_snapshot!(p);
}

#[test]
fn a_bad_trigger_annotation_is_reported_and_everything_else_still_happens() {
    let mut annotations = seed_annotations();
    annotations.insert(
        "mlops.dev/on-success-trigger".into(),
        "- {kind: Deployment, name: x, action: Restart}".into(),
    );
    annotations.insert("argocd.argoproj.io/sync-wave".into(), "three".into());
    let p = plan(
        &job(annotations, Some(status(Phase::Succeeded))),
        &PlanContext::default(),
        t0(),
    );
    let keys: Vec<_> = p.effects.iter().map(|e| e.key.as_str()).collect();
    // The invalid sync-wave is reported, and the job is in wave 0 as in Argo CD.
    assert_eq!(keys, ["wave", "notify"]);
    let Effect::PatchJob { patch } = &p.effects[0].effect else {
        panic!()
    };
    assert_eq!(
        patch["metadata"]["annotations"]["mlops.dev/wave-complete"],
        "0"
    );
    insta::assert_yaml_snapshot!(p.diagnostics);
}

#[test]
fn an_effect_that_keeps_failing_is_given_up_and_reported_once() {
    let mut j = job(seed_annotations(), Some(status(Phase::Succeeded)));
    let ctx = PlanContext::default();
    let mut shell = Shell::new(&j);
    // The first round's four effects: wave ok, both triggers fail, notify ok; then
    // everything fails for a while, then everything succeeds.
    let mut outcomes = [false, true, true, false]
        .into_iter()
        .chain(std::iter::repeat_n(true, 12));
    shell.drive(&mut j, &ctx, || outcomes.next().unwrap_or(false), calm);
    let ledger = j.status.unwrap().effects.unwrap();
    let abandoned: Vec<_> = ledger
        .failed
        .iter()
        .filter(|f| f.gave_up)
        .map(|f| f.key.as_str())
        .collect();
    assert_eq!(
        abandoned,
        [
            "trigger/restart:serving.kserve.io/InferenceService:self-healing-platform/predictive-analytics",
            "trigger/sync:argoproj.io/Application:argocd/serving"
        ]
    );
    assert!(shell.gave_up_reports.values().all(|&n| n == 1));
    assert_eq!(shell.gave_up_reports.len(), 2);
}

// ---------- properties ----------

fn annotations_strategy() -> impl Strategy<Value = BTreeMap<String, String>> {
    let wave = prop_oneof![
        Just(None),
        (-5i64..10).prop_map(|w| Some(w.to_string())),
        Just(Some("+2".to_owned())),
        Just(Some("not-a-wave".to_owned())),
    ];
    let block = prop_oneof![
        Just(None),
        (0i64..10).prop_map(|w| Some(w.to_string())),
        Just(Some("x".to_owned()))
    ];
    let triggers = prop_oneof![
        Just(None),
        Just(Some(SEED_TRIGGERS.to_owned())),
        Just(Some("[]".to_owned())),
        Just(Some("- {apiVersion: apps/v1, kind: Deployment, name: a, action: restart}\n- {apiVersion: v1, kind: ConfigMap, name: b, action: refresh, extra: 1}".to_owned())),
        Just(Some("- {kind: Deployment}".to_owned())),
        Just(Some("&a [*a]".to_owned())),
    ];
    let stale = prop_oneof![
        Just(vec![]),
        Just(vec![("mlops.dev/wave-complete", "3")]),
        Just(vec![
            ("mlops.dev/wave-failed", "1"),
            ("mlops.dev/completion-time", "2020-01-01T00:00:00Z")
        ]),
    ];
    (wave, block, triggers, stale).prop_map(|(wave, block, triggers, stale)| {
        let mut m = BTreeMap::new();
        if let Some(w) = wave {
            m.insert("argocd.argoproj.io/sync-wave".to_owned(), w);
        }
        if let Some(b) = block {
            m.insert("mlops.dev/block-wave".to_owned(), b);
        }
        if let Some(t) = triggers {
            m.insert("mlops.dev/on-success-trigger".to_owned(), t);
        }
        for (k, v) in stale {
            m.insert(k.to_owned(), v.to_owned());
        }
        m
    })
}

fn phase_strategy() -> impl Strategy<Value = Phase> {
    proptest::sample::select(Phase::ALL.to_vec())
}

fn ledger_strategy() -> impl Strategy<Value = Option<EffectLedger>> {
    prop_oneof![
        Just(None),
        Just(Some(EffectLedger::for_run("g1@2020-01-01T00:00:00Z"))),
        proptest::collection::btree_set(prop_oneof![Just("notify"), Just("wave"), Just("trigger/restart:serving.kserve.io/InferenceService:self-healing-platform/predictive-analytics")], 0..3)
            .prop_map(|done| {
                let mut l = EffectLedger::for_run("g2@2026-01-24T22:29:19Z");
                l.done = done.into_iter().map(str::to_owned).collect::<BTreeSet<_>>();
                Some(l)
            }),
    ]
}

fn arbitrary_job() -> impl Strategy<Value = NotebookValidationJob> {
    (annotations_strategy(), phase_strategy(), ledger_strategy()).prop_map(|(a, p, l)| {
        let mut s = status(p);
        s.effects = l;
        job(a, Some(s))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Carrying out a plan and planning again from the resulting state carries nothing
    /// out: at most it follows syncs that ended well (which are never recorded on a
    /// job that does not show its syncs).
    #[test]
    fn planning_is_idempotent(mut j in arbitrary_job()) {
        let ctx = PlanContext::default();
        Shell::new(&j).drive(&mut j, &ctx, || false, calm);
        let again = plan(&j, &ctx, t0() + Duration::days(1));
        prop_assert!(again.carries_out_nothing() && again.retry_at.is_none(), "still owed: {:?}", again.effects);
    }

    /// Under arbitrary failures, every effect takes effect at most once, and each one is
    /// either done or reported as abandoned exactly once: nothing is lost.
    #[test]
    fn effects_happen_at_most_once_and_none_is_lost(
        mut j in arbitrary_job(),
        failures in proptest::collection::vec(any::<bool>(), 0..64),
        weather in proptest::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 0..16),
    ) {
        let ctx = PlanContext::default();
        let owed: Vec<EffectKey> = plan(&j, &ctx, t0()).effects.into_iter().map(|e| e.key).collect();
        let mut shell = Shell::new(&j);
        let mut it = failures.into_iter();
        let mut skies = weather.into_iter().map(|(write_fails, lags, restarts)| Weather { write_fails, lags, restarts });
        shell.drive(&mut j, &ctx, || it.next().unwrap_or(false), || skies.next().unwrap_or_default());
        let ledger = j.status.clone().unwrap().effects.unwrap_or_default();
        for key in &owed {
            let done = ledger.is_done(key.as_str());
            let abandoned = ledger.failure(key.as_str()).is_some_and(|f| f.gave_up);
            prop_assert!(done ^ abandoned, "{} neither done nor abandoned (or both): {:?}", key, ledger);
            if abandoned {
                // Reported exactly once, unless the report itself kept failing: then
                // its own record (and the EffectsApplied condition) says so.
                let reports = shell.gave_up_reports.get(key).copied().unwrap_or(0);
                let report_key = EffectKey::gave_up(key);
                let report_abandoned = ledger.failure(report_key.as_str()).is_some_and(|f| f.gave_up);
                prop_assert!(reports == 1 || (reports == 0 && report_abandoned), "{} reported {} times", key, reports);
            }
        }
        for (key, n) in &shell.successes {
            // The wave patch is content-checked, so it can only succeed more than once
            // if something undid it; nothing does here.
            prop_assert_eq!(*n, 1, "{} took effect {} times", key, n);
        }
    }

    /// What a plan owes for a job with no record of its run.
    #[test]
    fn a_fresh_run_owes_exactly_what_its_phase_requires(a in annotations_strategy(), p in phase_strategy()) {
        let j = job(a.clone(), Some(status(p)));
        let pl = plan(&j, &PlanContext::default(), t0());
        let keys: BTreeSet<String> = pl.effects.iter().map(|e| e.key.to_string()).collect();
        prop_assert_eq!(keys.len(), pl.effects.len(), "keys must be unique");
        prop_assert_eq!(keys.contains("notify"), p.is_terminal());
        let triggers_valid = nbv_core::triggers::from_annotations(&a, "self-healing-platform").map(|s| s.len()).unwrap_or(0);
        let fired = keys.iter().filter(|k| k.starts_with("trigger/")).count();
        prop_assert_eq!(fired, if p == Phase::Succeeded { triggers_valid } else { 0 });
        // Diagnostics name the annotation at fault whenever one is malformed.
        if nbv_core::triggers::from_annotations(&a, "self-healing-platform").is_err() {
            prop_assert!(pl.diagnostics.iter().any(|d| d.is_error && d.annotation == "mlops.dev/on-success-trigger"));
        }
        if nbv_core::waves::sync_wave(&a).is_err() {
            prop_assert!(pl.diagnostics.iter().any(|d| d.is_error && d.annotation == "argocd.argoproj.io/sync-wave"));
        }
    }

    /// A ledger of another run is void: the plan is that of a job with no ledger.
    #[test]
    fn records_of_another_run_are_ignored(a in annotations_strategy(), p in phase_strategy()) {
        let mut s = status(p);
        let fresh = plan(&job(a.clone(), Some(s.clone())), &PlanContext::default(), t0());
        let mut stale = EffectLedger::for_run("g1@2001-01-01T00:00:00Z");
        stale.done = fresh.effects.iter().map(|e| e.key.to_string()).collect();
        s.effects = Some(stale);
        let with_stale = plan(&job(a, Some(s)), &PlanContext::default(), t0());
        prop_assert_eq!(with_stale.effects, fresh.effects);
    }

    /// A cache never serves a stale parse: whatever versions of a job (other
    /// annotations, other namespaces, another Argo CD namespace) were planned through
    /// it before, and in whatever order, the plan it gives is `plan`'s.
    #[test]
    fn cached_plans_are_fresh_plans(
        versions in proptest::collection::vec((arbitrary_job(), any::<bool>(), any::<bool>()), 1..8),
        capacity in 1usize..3,
    ) {
        let mut cache = PlanCache::with_capacity(capacity);
        let mut previous: Option<ParsedAnnotations> = None;
        for (mut j, other_namespace, gitops) in versions {
            if other_namespace {
                j.metadata.namespace = Some("elsewhere".to_owned());
            }
            let ctx = PlanContext {
                argocd_namespace: if gitops { "gitops" } else { "argocd" }.to_owned(),
                ..PlanContext::default()
            };
            let fresh = plan(&j, &ctx, t0());
            prop_assert_eq!(&cache.plan(&j, &ctx, t0()), &fresh);
            // Planned again from the entry it left: still the same.
            prop_assert_eq!(&cache.plan(&j, &ctx, t0()), &fresh);
            if let Some(previous) = &previous {
                prop_assert_eq!(&plan_with(&j, &ctx, t0(), previous), &fresh);
            }
            prop_assert!(cache.len() <= capacity);
            previous = Some(ParsedAnnotations::of(&j, &ctx));
        }
    }

    /// Run keys separate runs: another start time or generation is another run.
    #[test]
    fn run_keys_differ_between_runs(secs in 0i64..1_000_000, gen_a in 1i64..5, gen_b in 1i64..5) {
        let mut a = status(Phase::Succeeded);
        a.observed_generation = Some(gen_a);
        let mut b = a.clone();
        b.observed_generation = Some(gen_b);
        b.start_time = Some(t0() + Duration::seconds(secs));
        let (ka, kb) = (RunKey::of(&job(BTreeMap::new(), Some(a))), RunKey::of(&job(BTreeMap::new(), Some(b))));
        prop_assert_eq!(ka == kb, gen_a == gen_b && secs == 0);
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        (-3i64..3).prop_map(serde_json::Value::from),
        "[a-c]{0,2}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..3).prop_map(serde_json::Value::from),
            proptest::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Nulls mean "absent" to a merge patch; compare documents the same way.
fn without_nulls(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        serde_json::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(without_nulls).collect())
        }
        other => other.clone(),
    }
}

proptest! {
    /// Applying the diff (RFC 7386, by an independent implementation) gives `after`,
    /// and equal documents give no patch.
    #[test]
    fn merge_patch_turns_before_into_after(
        before in proptest::collection::btree_map("[a-d]", json_value(), 0..5),
        after in proptest::collection::btree_map("[a-d]", json_value(), 0..5),
    ) {
        let before = serde_json::Value::Object(before.into_iter().collect());
        let after = serde_json::Value::Object(after.into_iter().collect());
        match nbv_core::plan::merge_patch(&before, &after) {
            Some(patch) => {
                let mut doc = before.clone();
                json_patch::merge(&mut doc, &patch);
                prop_assert_eq!(without_nulls(&doc), without_nulls(&after));
            }
            None => prop_assert_eq!(without_nulls(&before), without_nulls(&after)),
        }
    }
}

proptest! {
    /// The reporting conditions agree with the diagnostics and the ledger.
    #[test]
    fn conditions_agree_with_diagnostics_and_ledger(
        errors in 0usize..3, warnings in 0usize..3, owed in 0usize..3,
        failed in proptest::collection::vec(any::<bool>(), 0..3), done in 0usize..3,
    ) {
        use nbv_core::phase::ConditionStatus;
        use nbv_core::plan::{Diagnostic, conditions};
        let diagnostics: Vec<Diagnostic> = (0..errors)
            .map(|i| Diagnostic { annotation: "mlops.dev/block-wave", is_error: true, message: format!("e{i}") })
            .chain((0..warnings).map(|i| Diagnostic { annotation: "mlops.dev/on-success-trigger", is_error: false, message: format!("w{i}") }))
            .collect();
        let mut ledger = EffectLedger::for_run("g1");
        ledger.done = (0..done).map(|i| format!("d{i}")).collect();
        ledger.failed = failed.iter().enumerate().map(|(i, gave_up)| nbv_core::api::EffectFailure {
            key: format!("f{i}"), attempts: 1, last_error: "boom".into(), last_attempt: None, gave_up: *gave_up,
        }).collect();
        let [annotations, effects] = conditions(&diagnostics, &ledger, owed);
        prop_assert_eq!(annotations.status == ConditionStatus::False, errors > 0);
        if errors > 0 {
            prop_assert!(annotations.message.contains("mlops.dev/block-wave"));
        }
        let abandoned = failed.iter().any(|g| *g);
        prop_assert_eq!(effects.status == ConditionStatus::False, abandoned);
        prop_assert_eq!(effects.status == ConditionStatus::True, !abandoned && owed == 0 && failed.is_empty());
    }
}

#[test]
fn an_effect_that_cannot_succeed_is_given_up_at_once_and_reported() {
    use nbv_core::plan::EffectRetryPolicy;
    let mut j = job(seed_annotations(), Some(status(Phase::Succeeded)));
    let ctx = PlanContext::default();
    let first = plan(&j, &ctx, t0());
    let trigger = first
        .effects
        .iter()
        .find(|e| e.key.as_str().starts_with("trigger/restart"))
        .unwrap();
    let recorded = record(
        first.ledger(),
        &trigger.key,
        Outcome::GiveUp("refused: namespace x does not accept triggers".into()),
        t0(),
        &EffectRetryPolicy::default(),
    );
    assert!(recorded.gave_up);
    j.status.as_mut().unwrap().effects = Some(recorded.ledger);
    let next = plan(&j, &ctx, t0());
    let report = next
        .effects
        .iter()
        .find(|e| e.key == EffectKey::gave_up(&trigger.key));
    assert!(matches!(
        report.map(|e| &e.effect),
        Some(Effect::ReportGaveUp { attempts: 1, .. })
    ));
    assert!(
        !next.effects.iter().any(|e| e.key == trigger.key),
        "never retried"
    );
}
