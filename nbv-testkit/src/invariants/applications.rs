//! Invariant 3: every Application shows the true aggregate of its jobs, and is patched
//! at most once a minute.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use nbv_core::aggregate::{
    Aggregate, AggregateIndex, AppId, Custody, JobKey, JobPhase, NotebookStatus, StatusLimit,
    TrackingSettings, parent_application,
};
use nbv_core::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use nbv_core::time::rfc3339;

use super::replay::{Index, ObjKey, RunState, annotations, string_map};
use super::{Observation, Violation};
use crate::cluster::Actor;

const INVARIANT: u8 = 3;
const APPLICATION: (&str, &str) = ("argoproj.io", "Application");

/// What the Applications should show at one time, by Application object.
type Expected = BTreeMap<ObjKey, NotebookStatus>;

/// Checks invariant 3 (see the [module documentation](super)).
///
/// The true aggregate is computed from the jobs as they are at each moment, with the
/// parent lookup and counting rules of `nbv_core::aggregate`; an Application named
/// without a namespace is the first that exists among
/// [`Settings::application_namespaces`](super::Settings::application_namespaces) and
/// its jobs' namespaces. Whenever the aggregate changes and then holds for
/// [`Settings::publish_within`](super::Settings::publish_within) of operator time, the
/// Application must show it by then (`lastUpdate` aside).
///
/// # Examples
///
/// ```
/// use nbv_testkit::invariants::{Observation, Settings, applications_show_their_aggregate};
/// use nbv_testkit::scenario::Mode;
///
/// let observation = Observation {
///     history: &[], requests: &[], end: chrono::Utc::now(), mode: Mode::GitopsOnly,
///     uptimes: &[], disturbed: false, settings: Settings::default(),
/// };
/// assert!(applications_show_their_aggregate(&observation).is_empty());
/// ```
pub fn applications_show_their_aggregate(observation: &Observation<'_>) -> Vec<Violation> {
    let index = Index::new(observation.history);
    let mut violations = Vec::new();
    shows_the_aggregate(observation, &index, &mut violations);
    rate_limited(observation, &mut violations);
    violations
}

/// The Application object an [`AppId`] names at `at`, found as the operator finds it.
fn resolve(
    index: &Index<'_>,
    observation: &Observation<'_>,
    app: &AppId,
    homes: Option<&BTreeSet<String>>,
    at: DateTime<Utc>,
) -> Option<ObjKey> {
    let candidates: Vec<&str> = match app.namespace() {
        Some(ns) => vec![ns],
        None => observation
            .settings
            .application_namespaces
            .iter()
            .map(String::as_str)
            .chain(homes.into_iter().flatten().map(String::as_str))
            .collect(),
    };
    candidates.into_iter().find_map(|ns| {
        let key = ObjKey::new(APPLICATION.0, APPLICATION.1, ns, app.name());
        index.state_at(&key, at).map(|_| key)
    })
}

/// The aggregate every Application should show at `at`. Applications that had jobs
/// before and have none now should show an empty aggregate.
fn expected_at(
    index: &Index<'_>,
    observation: &Observation<'_>,
    at: DateTime<Utc>,
    known: &mut BTreeMap<AppId, BTreeSet<String>>,
) -> Expected {
    let mut aggregates = AggregateIndex::new();
    for (key, job) in index.all_at(nbv_core::api::KIND, at) {
        let job_key = JobKey::new(key.namespace.clone(), key.name.clone());
        // The operator under test reads no argocd-cm in simulation: Argo CD's defaults.
        let lookup = parent_application(
            &job_key,
            &annotations(job),
            &string_map(job, "labels"),
            &TrackingSettings::default(),
        );
        let Some(parent) = lookup.parent else {
            continue;
        };
        known
            .entry(parent.app.clone())
            .or_default()
            .insert(key.namespace.clone());
        aggregates.upsert(job_key, Some(parent), JobPhase::of(RunState::of(job).phase));
    }
    // `lastUpdate` is not compared, so any fixed time will do.
    let fixed = observation.end;
    known
        .iter()
        .filter_map(|(app, homes)| {
            let key = resolve(index, observation, app, Some(homes), at)?;
            // Only the jobs the Application answers for count; an Application without
            // such jobs (any more) has the empty aggregate.
            let custody = index
                .state_at(&key, at)
                .map(Custody::of)
                .unwrap_or_default();
            let answered = aggregates.aggregate(app).within(&custody);
            Some((key, answered.status(fixed, StatusLimit::DEFAULT)))
        })
        .collect()
}

fn shows_the_aggregate(
    observation: &Observation<'_>,
    index: &Index<'_>,
    violations: &mut Vec<Violation>,
) {
    let times: BTreeSet<DateTime<Utc>> = observation
        .history
        .iter()
        .filter(|c| c.kind == nbv_core::api::KIND || c.kind == APPLICATION.1)
        .map(|c| c.at)
        .collect();
    let mut known = BTreeMap::new();
    let mut series: BTreeMap<ObjKey, Vec<(DateTime<Utc>, NotebookStatus)>> = BTreeMap::new();
    for at in times {
        for (app, status) in expected_at(index, observation, at, &mut known) {
            let entries = series.entry(app).or_default();
            if entries.last().is_none_or(|(_, last)| *last != status) {
                entries.push((at, status));
            }
        }
    }
    let within = observation.publish_within();
    for (app, entries) in &series {
        for (i, (since, status)) in entries.iter().enumerate() {
            let Some(mut due) = observation.deadline(*since, within) else {
                continue;
            };
            // A publication since `since` may show a state the jobs held only for an
            // instant (a run that ends as a request to run again starts the next),
            // which this replay of instants does not see: the rate limit lets nbv
            // correct it a minute after publishing it. A few such corrections at most;
            // a value nbv never updated since `since` is not excused.
            for _ in 0..3 {
                match last_published(index, app, due)
                    .filter(|published| published >= since)
                    .and_then(|published| observation.deadline(published, within))
                {
                    Some(corrected) if corrected > due => due = corrected,
                    _ => break,
                }
            }
            if entries.get(i + 1).is_some_and(|(next, _)| *next <= due) {
                continue;
            }
            let shown = index
                .state_at(app, due)
                .map(annotations)
                .unwrap_or_default();
            // An Application that never showed a status and has no job to show needs
            // none: nbv writes nothing to it.
            let nothing_to_show = status.summary() == Aggregate::default().summary()
                && !shown.contains_key(NOTEBOOK_STATUS);
            if !nothing_to_show && status.application_patch(&shown).is_some() {
                let showing = shown
                    .get(NOTEBOOK_SUMMARY)
                    .map_or("no notebook summary".to_owned(), |s| format!("{s:?}"));
                violations.push(Violation::new(
                    INVARIANT,
                    Some(due),
                    format!(
                        "Application {} shows {showing} ({NOTEBOOK_STATUS}: {}), but its jobs \
                         have added up to {:?} ({}) since {}",
                        app.path(),
                        shown
                            .get(NOTEBOOK_STATUS)
                            .map_or("absent".to_owned(), |s| s.clone()),
                        status.summary(),
                        status.to_json(),
                        rfc3339(*since)
                    ),
                ));
            }
        }
    }
}

/// When nbv last wrote the Application `app`'s notebook status, at or before `at`.
fn last_published(index: &Index<'_>, app: &ObjKey, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    index
        .changes(app)
        .iter()
        .rev()
        .filter(|c| c.at <= at && c.actor == Actor::Client)
        .find(|c| {
            c.before
                .as_ref()
                .map(|b| annotations(b).get(NOTEBOOK_STATUS).cloned())
                != c.after
                    .as_ref()
                    .map(|a| annotations(a).get(NOTEBOOK_STATUS).cloned())
        })
        .map(|c| c.at)
}

fn rate_limited(observation: &Observation<'_>, violations: &mut Vec<Violation>) {
    let mut publishes: BTreeMap<ObjKey, Vec<DateTime<Utc>>> = BTreeMap::new();
    for change in observation
        .history
        .iter()
        .filter(|c| c.actor == Actor::Client && c.kind == APPLICATION.1 && c.before.is_some())
    {
        let before = change.before.as_ref().map(annotations).unwrap_or_default();
        let after = change.after.as_ref().map(annotations).unwrap_or_default();
        let published = [NOTEBOOK_STATUS, NOTEBOOK_SUMMARY]
            .iter()
            .any(|k| before.get(*k) != after.get(*k));
        if published {
            publishes
                .entry(ObjKey::of(change))
                .or_default()
                .push(change.at);
        }
    }
    let interval = observation.settings.publish_interval;
    for (app, times) in publishes {
        for pair in times.windows(2) {
            let (previous, current) = (pair[0], pair[1]);
            if current - previous < interval && !observation.restarted_between(previous, current) {
                violations.push(Violation::new(
                    INVARIANT,
                    Some(current),
                    format!(
                        "Application {} was patched at {} and again at {}, {} s apart; at most \
                         one patch per {} s",
                        app.path(),
                        rfc3339(previous),
                        rfc3339(current),
                        (current - previous).num_seconds(),
                        interval.num_seconds()
                    ),
                ));
            }
        }
    }
}
