//! The Application board: fed by the jobs' watch, it says what each Application shows
//! and when to publish it.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use nbv_core::aggregate::{
    AppId, Board, Custody, MIN_INTERVAL, PublishOutcome, RESYNC_INTERVAL, RETRY_INTERVAL,
    TrackingSettings,
};
use nbv_core::annotations::NOTEBOOK_SUMMARY;
use nbv_core::api::NotebookValidationJob;
use proptest::prelude::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap()
}

fn secs(s: i64) -> DateTime<Utc> {
    start() + TimeDelta::seconds(s)
}

/// A job `namespace/name` of Application `app` (by `app.kubernetes.io/part-of`; none
/// without), in `phase` (no phase reported without).
fn job(
    namespace: &str,
    name: &str,
    app: Option<&str>,
    phase: Option<&str>,
) -> NotebookValidationJob {
    let mut object = json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1",
        "kind": "NotebookValidationJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                              "path": "t.ipynb"},
                 "podConfig": {"containerImage": "quay.io/example/papermill:1"}},
    });
    if let Some(app) = app {
        object["metadata"]["labels"] = json!({"app.kubernetes.io/part-of": app});
    }
    if let Some(phase) = phase {
        object["status"] = json!({"phase": phase});
    }
    serde_json::from_value(object).expect("a valid job")
}

fn app(name: &str) -> AppId {
    AppId::new(None, name).unwrap()
}

fn board() -> Board {
    Board::new(TrackingSettings::default())
}

/// Publishes everything due at `now` with `outcome`; returns the summaries published.
fn publish_all(board: &mut Board, now: DateTime<Utc>, outcome: PublishOutcome) -> Vec<String> {
    let due = board.due(now);
    let shown = due
        .publish
        .iter()
        .map(|p| {
            format!(
                "{}: {}",
                p.app,
                board.status(p, &everywhere(), now).summary()
            )
        })
        .collect();
    for publication in &due.publish {
        board.published(publication, now, outcome);
    }
    shown
}

/// What an Application answers for when it manages resources in every namespace of
/// these tests.
fn everywhere() -> Custody {
    let resources: Vec<Value> = NAMESPACES
        .iter()
        .map(|namespace| json!({"namespace": namespace}))
        .collect();
    Custody::of(&json!({"status": {"resources": resources}}))
}

/// Applies a merge patch of annotations to what an Application shows.
fn apply_patch(shown: &mut BTreeMap<String, String>, patch: &Value) {
    for (key, value) in patch["metadata"]["annotations"]
        .as_object()
        .expect("annotations")
    {
        match value.as_str() {
            Some(value) => shown.insert(key.clone(), value.to_owned()),
            None => shown.remove(key),
        };
    }
}

// ---------------------------------------------------------------------------------------
// Feeding the board
// ---------------------------------------------------------------------------------------

#[test]
fn a_job_counts_in_its_application_and_moves_with_its_tracking() {
    let mut board = board();
    assert_eq!(
        board.apply(&job("ml", "t", Some("a"), None)),
        vec![app("a")]
    );
    assert_eq!(board.aggregate(&app("a")).running(), 1);
    assert_eq!(
        board.apply(&job("ml", "t", Some("b"), Some("Failed"))),
        vec![app("a"), app("b")]
    );
    assert_eq!(board.aggregate(&app("a")).total(), 0);
    assert!(board.aggregate(&app("b")).failed_jobs().eq(["ml/t"]));
    // Without a parent it counts nowhere, and both Applications moved on.
    assert_eq!(
        board.apply(&job("ml", "t", None, Some("Failed"))),
        vec![app("b")]
    );
    assert_eq!(board.applications().count(), 0);
}

#[test]
fn a_job_being_deleted_counts_nowhere() {
    let mut board = board();
    let failed = job("ml", "t", Some("a"), Some("Failed"));
    board.apply(&failed);
    let mut object = serde_json::to_value(&failed).unwrap();
    object["metadata"]["deletionTimestamp"] = json!("2026-01-24T22:30:00Z");
    object["metadata"]["finalizers"] = json!(["example.com/keep"]);
    let deleting: NotebookValidationJob = serde_json::from_value(object).unwrap();
    assert_eq!(board.apply(&deleting), vec![app("a")]);
    assert_eq!(board.aggregate(&app("a")).total(), 0);
    // Nor in a listing.
    board.apply(&failed);
    board.reset([&deleting]);
    assert_eq!(board.aggregate(&app("a")).total(), 0);
}

#[test]
fn a_relist_forgets_the_jobs_deleted_while_the_watch_was_down() {
    let mut board = board();
    board.apply(&job("ml", "kept", Some("a"), Some("Succeeded")));
    board.apply(&job("ml", "gone", Some("a"), Some("Failed")));
    board.apply(&job("ml", "other", Some("b"), None));
    assert!(!board.sweep_due());
    let changed = board.reset([&job("ml", "kept", Some("a"), Some("Succeeded"))]);
    assert_eq!(changed, vec![app("a"), app("b")]);
    assert_eq!(board.aggregate(&app("a")).total(), 1);
    assert_eq!(board.aggregate(&app("a")).failed(), 0);
    assert_eq!(board.aggregate(&app("b")).total(), 0);
    assert!(board.sweep_due());
}

#[test]
fn the_sweep_schedules_only_applications_with_a_status_and_no_job() {
    let mut board = board();
    board.reset([&job("ml", "t", Some("known"), None)]);
    let shows = BTreeMap::from([(NOTEBOOK_SUMMARY.to_owned(), "1/1 succeeded".to_owned())]);
    let plain = BTreeMap::new();
    let in_argocd = |name: &str| AppId::new(Some("argocd"), name).unwrap();
    let mut asked = Vec::new();
    let swept = board.sweep(
        [
            (in_argocd("known"), &shows),
            (in_argocd("stale"), &shows),
            (in_argocd("untouched"), &plain),
        ],
        |app, homes| {
            asked.push((app.clone(), homes.join(",")));
            Some(in_argocd(app.name()))
        },
    );
    assert_eq!(swept, vec![in_argocd("stale")]);
    assert_eq!(asked, vec![(app("known"), "ml".to_owned())]);
    assert!(!board.sweep_due());
    let published = publish_all(&mut board, start(), PublishOutcome::Patched);
    assert_eq!(
        published,
        [
            "known: 0/1 succeeded (0% success rate)",
            "argocd/stale: No notebook validation jobs",
        ]
    );
    // Told, the stale Application is forgotten.
    assert_eq!(
        publish_all(&mut board, secs(600), PublishOutcome::Patched),
        ["known: 0/1 succeeded (0% success rate)"]
    );
}

// ---------------------------------------------------------------------------------------
// The publish policy
// ---------------------------------------------------------------------------------------

#[test]
fn changes_within_a_minute_are_published_together_a_minute_later() {
    let mut board = board();
    board.apply(&job("ml", "t", Some("a"), None));
    assert_eq!(
        publish_all(&mut board, secs(0), PublishOutcome::Patched).len(),
        1
    );
    board.apply(&job("ml", "t", Some("a"), Some("Succeeded")));
    board.apply(&job("ml", "u", Some("a"), Some("Failed")));
    let due = board.due(secs(10));
    assert!(due.publish.is_empty());
    assert_eq!(due.next, Some(secs(0) + MIN_INTERVAL));
    assert_eq!(
        publish_all(&mut board, secs(60), PublishOutcome::Patched),
        ["a: 1/2 succeeded (50% success rate)"]
    );
    // Nothing changed since: the next look is the resync.
    assert_eq!(board.due(secs(61)).next, Some(secs(60) + RESYNC_INTERVAL));
}

#[test]
fn a_failed_patch_is_retried_and_still_counts_against_the_limit() {
    let mut board = board();
    board.apply(&job("ml", "t", Some("a"), None));
    publish_all(&mut board, secs(0), PublishOutcome::Failed);
    // Retried no sooner than 30 s, and since the patch may have been applied, no
    // sooner than a minute after it.
    assert_eq!(board.due(secs(0)).next, Some(secs(0) + RETRY_INTERVAL));
    let due = board.due(secs(30));
    assert!(due.publish.is_empty());
    assert_eq!(due.next, Some(secs(60)));
    assert_eq!(
        publish_all(&mut board, secs(60), PublishOutcome::Patched).len(),
        1
    );
}

#[test]
fn an_application_not_found_is_retried_without_counting_against_the_limit() {
    let mut board = board();
    board.apply(&job("ml", "t", Some("a"), None));
    publish_all(&mut board, secs(0), PublishOutcome::NotFound);
    assert!(board.due(secs(29)).publish.is_empty());
    assert_eq!(
        publish_all(&mut board, secs(30), PublishOutcome::Patched).len(),
        1
    );
}

#[test]
fn a_change_that_arrives_while_publishing_is_published_next() {
    let mut board = board();
    board.apply(&job("ml", "t", Some("a"), None));
    let due = board.due(secs(0));
    board.apply(&job("ml", "t", Some("a"), Some("Succeeded")));
    board.published(&due.publish[0], secs(0), PublishOutcome::Patched);
    assert_eq!(
        publish_all(&mut board, secs(60), PublishOutcome::Patched),
        ["a: 1/1 succeeded (100% success rate)"]
    );
}

#[test]
fn an_application_whose_jobs_are_gone_is_told_then_forgotten() {
    let mut board = board();
    let only = job("ml", "t", Some("a"), Some("Succeeded"));
    board.apply(&only);
    publish_all(&mut board, secs(0), PublishOutcome::Patched);
    board.delete(&only);
    // Not before a minute after the last patch; a failure keeps it.
    publish_all(&mut board, secs(60), PublishOutcome::Failed);
    assert_eq!(
        publish_all(&mut board, secs(120), PublishOutcome::Patched),
        ["a: No notebook validation jobs"]
    );
    assert_eq!(board.due(secs(121)), Default::default());
}

#[test]
fn board_timeline_snapshot() {
    let mut board = board();
    let mut lines = Vec::new();
    let mut step = |board: &mut Board, at: i64, what: &str| {
        let now = secs(at);
        let published = publish_all(board, now, PublishOutcome::Patched);
        let next = board.due(now).next.map_or("never".to_owned(), |next| {
            format!("{}s", (next - start()).num_seconds())
        });
        lines.push(format!(
            "{at:>4}s {what:<28} published {published:?}, next at {next}"
        ));
    };
    board.reset([&job(
        "ml",
        "train",
        Some("fraud"),
        Some("ValidationRunning"),
    )]);
    step(&mut board, 0, "listed: train runs");
    board.apply(&job("ml", "train", Some("fraud"), Some("Succeeded")));
    step(&mut board, 10, "train succeeded");
    board.apply(&job("ml", "lint", Some("fraud"), Some("Failed")));
    step(&mut board, 20, "lint failed");
    step(&mut board, 60, "a minute after the first");
    board.apply(&job("web", "smoke", Some("web"), None));
    step(&mut board, 70, "smoke created (another app)");
    board.delete(&job("ml", "lint", Some("fraud"), Some("Failed")));
    step(&mut board, 80, "lint deleted");
    step(&mut board, 120, "trailing update");
    board.reset([&job("ml", "train", Some("fraud"), Some("Succeeded"))]);
    step(&mut board, 200, "relisted without smoke");
    step(&mut board, 500, "resync");
    insta::assert_snapshot!(lines.join("\n"));
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

/// One job of the model: which of a few names, in which Application, in which phase.
#[derive(Debug, Clone)]
struct Spec {
    namespace: usize,
    name: usize,
    app: Option<usize>,
    phase: Option<usize>,
}

const NAMESPACES: [&str; 2] = ["ml", "web"];
const NAMES: [&str; 4] = ["a", "b", "c", "d"];
const APPS: [&str; 3] = ["fraud", "web", "ops"];
const PHASES: [&str; 5] = [
    "Initializing",
    "ValidationRunning",
    "Succeeded",
    "Failed",
    "Running",
];

impl Spec {
    fn key(&self) -> (usize, usize) {
        (self.namespace, self.name)
    }

    fn job(&self) -> NotebookValidationJob {
        job(
            NAMESPACES[self.namespace],
            NAMES[self.name],
            self.app.map(|a| APPS[a]),
            self.phase.map(|p| PHASES[p]),
        )
    }
}

#[derive(Debug, Clone)]
enum Op {
    Apply(Spec),
    Delete(Spec),
    /// A relist: some of the live jobs (by position) and some new ones.
    Reset(Vec<bool>, Vec<Spec>),
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        0..2usize,
        0..4usize,
        proptest::option::of(0..3usize),
        proptest::option::of(0..5usize),
    )
        .prop_map(|(namespace, name, app, phase)| Spec {
            namespace,
            name,
            app,
            phase,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => spec().prop_map(Op::Apply),
        3 => spec().prop_map(Op::Delete),
        1 => (proptest::collection::vec(any::<bool>(), 0..8), proptest::collection::vec(spec(), 0..3))
            .prop_map(|(keep, new)| Op::Reset(keep, new)),
    ]
}

/// How a publication turns out in the model, unless the Application already shows
/// the status (then it is `Unchanged`).
fn outcome() -> impl Strategy<Value = PublishOutcome> {
    prop_oneof![
        6 => Just(PublishOutcome::Patched),
        1 => Just(PublishOutcome::Failed),
        1 => Just(PublishOutcome::NotFound),
    ]
}

/// One step: an operation some seconds after the previous one, how publications go,
/// and whether the operation arrives between a `due` and its `published`.
#[derive(Debug, Clone)]
struct Step {
    op: Op,
    after: i64,
    outcome: PublishOutcome,
    while_publishing: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (op(), 0..90i64, outcome(), any::<bool>()).prop_map(|(op, after, outcome, while_publishing)| {
        Step {
            op,
            after,
            outcome,
            while_publishing,
        }
    })
}

/// The jobs that exist in the model, by key.
type Live = BTreeMap<(usize, usize), Spec>;

fn feed(board: &mut Board, live: &mut Live, op: &Op) {
    match op {
        Op::Apply(spec) => {
            board.apply(&spec.job());
            live.insert(spec.key(), spec.clone());
        }
        Op::Delete(spec) => {
            board.delete(&spec.job());
            live.remove(&spec.key());
        }
        Op::Reset(keep, new) => {
            let mut listed: Live = live
                .iter()
                .zip(keep.iter().chain(std::iter::repeat(&true)))
                .filter(|(_, keep)| **keep)
                .map(|((key, spec), _)| (*key, spec.clone()))
                .collect();
            for spec in new {
                listed.insert(spec.key(), spec.clone());
            }
            let jobs: Vec<NotebookValidationJob> = listed.values().map(Spec::job).collect();
            board.reset(&jobs);
            *live = listed;
        }
    }
}

/// The board a fresh start would build from `live`.
fn built_from(live: &Live) -> Board {
    let mut board = board();
    let jobs: Vec<NotebookValidationJob> = live.values().map(Spec::job).collect();
    board.reset(&jobs);
    board
}

/// The Applications the board shows a job for, with their aggregates.
fn aggregates(board: &Board) -> BTreeMap<AppId, nbv_core::aggregate::Aggregate> {
    board
        .applications()
        .map(|app| (app.clone(), board.aggregate(app).clone()))
        .collect()
}

/// A model of the Applications: what each shows and when a patch was sent to it.
#[derive(Default)]
struct Cluster {
    shown: BTreeMap<AppId, BTreeMap<String, String>>,
    sent: BTreeMap<AppId, Vec<DateTime<Utc>>>,
}

impl Cluster {
    /// Carries out a publication the way the shell does: no call when the Application
    /// already shows the status, else `outcome`.
    fn publish(
        &mut self,
        board: &Board,
        publication: &nbv_core::aggregate::Publication,
        now: DateTime<Utc>,
        outcome: PublishOutcome,
    ) -> PublishOutcome {
        let shown = self.shown.entry(publication.app.clone()).or_default();
        let Some(patch) = board.patch(publication, &everywhere(), shown, now) else {
            return PublishOutcome::Unchanged;
        };
        if outcome.sent() {
            self.sent
                .entry(publication.app.clone())
                .or_default()
                .push(now);
        }
        if outcome == PublishOutcome::Patched {
            apply_patch(shown, &patch);
        }
        outcome
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any sequence of watch events leaves the board a fresh start would build from
    /// the jobs that exist, and a deleted job counts nowhere.
    #[test]
    fn the_board_is_the_board_of_the_jobs_that_exist(ops in proptest::collection::vec(op(), 0..40)) {
        let mut board = board();
        let mut live = Live::new();
        let mut ever = BTreeSet::new();
        for op in &ops {
            feed(&mut board, &mut live, op);
            if let Op::Apply(spec) = op { ever.insert(spec.key()); }
            // A deleted job counts nowhere: the counts are those of the live jobs.
            let counted: u64 = board.applications().map(|app| board.aggregate(app).total()).sum();
            prop_assert_eq!(counted, live.values().filter(|spec| spec.app.is_some()).count() as u64);
            for key in ever.iter().filter(|key| !live.contains_key(key)) {
                let name = format!("{}/{}", NAMESPACES[key.0], NAMES[key.1]);
                for app in board.applications() {
                    prop_assert!(!board.aggregate(app).failed_jobs().any(|job| job == name));
                }
            }
        }
        prop_assert_eq!(aggregates(&board), aggregates(&built_from(&live)));
    }

    /// Whatever the watch says and however publications go: at most one patch per
    /// Application per minute, nothing is due again at the instant it was published,
    /// and once the jobs settle, every Application shows the status of its jobs.
    #[test]
    fn publication_is_rate_limited_and_the_final_state_is_shown(steps in proptest::collection::vec(step(), 1..30)) {
        let mut board = board();
        let mut live = Live::new();
        let mut cluster = Cluster::default();
        let mut now = start();
        let mut seen = BTreeSet::new();
        for step in &steps {
            now += TimeDelta::seconds(step.after);
            // The Applications that ever had a job must end up showing the truth.
            seen.extend(live.values().filter_map(|spec| spec.app).map(|a| app(APPS[a])));
            let due = board.due(now);
            if step.while_publishing {
                feed(&mut board, &mut live, &step.op);
            }
            for publication in &due.publish {
                let outcome = cluster.publish(&board, publication, now, step.outcome);
                board.published(publication, now, outcome);
            }
            if !step.while_publishing {
                feed(&mut board, &mut live, &step.op);
                let due = board.due(now);
                for publication in &due.publish {
                    let outcome = cluster.publish(&board, publication, now, step.outcome);
                    board.published(publication, now, outcome);
                }
                prop_assert!(board.due(now).publish.is_empty(), "due again at once");
            }
        }
        seen.extend(live.values().filter_map(|spec| spec.app).map(|a| app(APPS[a])));
        // The jobs settle; the shell looks whenever the board says, and patches work.
        let settled = now;
        while now < settled + TimeDelta::minutes(10) {
            let due = board.due(now);
            for publication in &due.publish {
                let outcome = cluster.publish(&board, publication, now, PublishOutcome::Patched);
                board.published(publication, now, outcome);
            }
            prop_assert!(board.due(now).publish.is_empty(), "due again at once");
            now = board.due(now).next.unwrap_or(now + RESYNC_INTERVAL);
        }
        for times in cluster.sent.values() {
            for pair in times.windows(2) {
                prop_assert!(pair[1] - pair[0] >= MIN_INTERVAL, "patches at {} and {}", pair[0], pair[1]);
            }
        }
        let truth = built_from(&live);
        for app in &seen {
            let expected = truth.aggregate(app).status(now, nbv_core::aggregate::StatusLimit::DEFAULT);
            let shown = cluster.shown.get(app).cloned().unwrap_or_default();
            if shown.is_empty() && expected.total() == 0 {
                // Never shown a job, none left: nothing to tell it.
                continue;
            }
            prop_assert_eq!(expected.application_patch(&shown), None, "{} shows {:?}", app, shown);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Custody: an Application shows only the jobs it answers for
// ---------------------------------------------------------------------------------------

/// An Application in `argocd` deploying into `namespace` of this cluster.
fn deploying_into(namespace: &str) -> Custody {
    Custody::of(&json!({
        "metadata": {"namespace": "argocd"},
        "spec": {"destination": {"server": "https://kubernetes.default.svc", "namespace": namespace}}
    }))
}

#[test]
fn a_job_of_another_namespace_cannot_paint_an_application() {
    let mut board = board();
    board.apply(&job("web", "paint", Some("fraud"), Some("Failed")));
    let publication = board.due(start()).publish.remove(0);
    assert_eq!(publication.app, app("fraud"));
    let fraud = deploying_into("ml");
    assert_eq!(
        board.patch(&publication, &fraud, &BTreeMap::new(), start()),
        None,
        "nothing is written to an Application that answers for none of its jobs"
    );
    board.apply(&job("ml", "train", Some("fraud"), Some("Succeeded")));
    let publication = board.due(secs(60)).publish.remove(0);
    let patch = board
        .patch(&publication, &fraud, &BTreeMap::new(), secs(60))
        .expect("a job it answers for is shown");
    assert_eq!(
        patch["metadata"]["annotations"][NOTEBOOK_SUMMARY],
        "1/1 succeeded (100% success rate)"
    );
}

proptest! {
    /// Whatever jobs of other namespaces name an Application, it is made to show what
    /// the jobs it answers for alone would make it show.
    #[test]
    fn jobs_outside_the_custody_change_nothing(
        specs in proptest::collection::vec(spec(), 0..12),
        destination in 0..2usize,
        shows_status in any::<bool>(),
    ) {
        let custody = deploying_into(NAMESPACES[destination]);
        let mut all = board();
        let mut answered = board();
        for spec in &specs {
            all.apply(&spec.job());
            if spec.namespace == destination {
                answered.apply(&spec.job());
            } else {
                answered.delete(&spec.job());
            }
        }
        let mut current = BTreeMap::new();
        if shows_status {
            let shown = nbv_core::aggregate::Aggregate::default()
                .status(start(), nbv_core::aggregate::StatusLimit::DEFAULT);
            current.insert(nbv_core::annotations::NOTEBOOK_STATUS.to_owned(), shown.to_json());
        }
        for publication in all.due(start()).publish {
            // The model: the jobs it answers for alone, and nothing written to an
            // Application that answers for none and shows nothing.
            let alone = answered.aggregate(&publication.app);
            let expected = (alone.total() > 0 || shows_status).then(|| {
                alone
                    .status(start(), nbv_core::aggregate::StatusLimit::DEFAULT)
                    .application_patch(&current)
            });
            let got = all.patch(&publication, &custody, &current, start());
            prop_assert_eq!(got, expected.flatten());
        }
    }
}
