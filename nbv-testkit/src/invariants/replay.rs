//! The change history, indexed by object, to read any object's state at any time.

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use nbv_core::api::{NotebookValidationJob, Phase};
use nbv_core::plan::RunKey;
use serde_json::Value;

use crate::cluster::{Actor, Change};

/// An object's identity across its history: API group, kind, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ObjKey {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl ObjKey {
    pub fn of(change: &Change) -> ObjKey {
        ObjKey {
            group: group_of(&change.api_version).to_owned(),
            kind: change.kind.clone(),
            namespace: change.namespace.clone().unwrap_or_default(),
            name: change.name.clone(),
        }
    }

    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> ObjKey {
        ObjKey {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// `namespace/name`.
    pub fn path(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

impl fmt::Display for ObjKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// The group of an `apiVersion` (empty for the core group).
pub(crate) fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

/// The history, by object, in commit order.
pub(crate) struct Index<'a> {
    by_object: BTreeMap<ObjKey, Vec<&'a Change>>,
}

impl<'a> Index<'a> {
    pub fn new(history: &'a [Change]) -> Index<'a> {
        let mut by_object: BTreeMap<ObjKey, Vec<&'a Change>> = BTreeMap::new();
        for change in history {
            by_object
                .entry(ObjKey::of(change))
                .or_default()
                .push(change);
        }
        Index { by_object }
    }

    /// The changes of one object, oldest first.
    pub fn changes(&self, key: &ObjKey) -> &[&'a Change] {
        self.by_object.get(key).map_or(&[], Vec::as_slice)
    }

    /// Every object of `kind` that appears in the history.
    pub fn of_kind<'s>(&'s self, kind: &'s str) -> impl Iterator<Item = &'s ObjKey> + 's {
        self.by_object.keys().filter(move |k| k.kind == kind)
    }

    /// The object as it was at `at` (after every change at or before `at`).
    pub fn state_at(&self, key: &ObjKey, at: DateTime<Utc>) -> Option<&'a Value> {
        self.changes(key)
            .iter()
            .take_while(|c| c.at <= at)
            .last()
            .and_then(|c| c.after.as_ref())
    }

    /// Every object of `kind` that exists at `at`, with its state.
    pub fn all_at<'s>(
        &'s self,
        kind: &'s str,
        at: DateTime<Utc>,
    ) -> impl Iterator<Item = (&'s ObjKey, &'a Value)> + 's {
        self.of_kind(kind)
            .filter_map(move |k| self.state_at(k, at).map(|v| (k, v)))
    }

    /// The last change to the object made by someone other than nbv (setup, another
    /// controller, a user), if any.
    pub fn last_outside_change(&self, key: &ObjKey) -> Option<DateTime<Utc>> {
        self.changes(key)
            .iter()
            .rev()
            .find(|c| c.actor != Actor::Client)
            .map(|c| c.at)
    }
}

/// A string-to-string map of `metadata.<field>` (non-string values are skipped).
pub(crate) fn string_map(object: &Value, field: &str) -> BTreeMap<String, String> {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.annotations`.
pub(crate) fn annotations(object: &Value) -> BTreeMap<String, String> {
    string_map(object, "annotations")
}

/// An RFC 3339 time at `pointer`.
pub(crate) fn time_at(object: &Value, pointer: &str) -> Option<DateTime<Utc>> {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// What a job's status says about its run, as far as the invariants need it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunState {
    /// The phase, legacy phases migrated; `None` without a readable phase.
    pub phase: Option<Phase>,
    /// `status.completionTime`.
    pub completed: Option<DateTime<Utc>>,
    /// The run key nbv-core derives, when the job reads as a typed job.
    pub run: Option<String>,
}

impl RunState {
    pub fn of(job: &Value) -> RunState {
        let phase = job
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .and_then(|p| p.parse::<Phase>().ok())
            .map(Phase::migrated);
        let run = serde_json::from_value::<NotebookValidationJob>(job.clone())
            .ok()
            .map(|typed| RunKey::of(&typed).as_str().to_owned());
        RunState {
            phase,
            completed: time_at(job, "/status/completionTime"),
            run,
        }
    }

    /// The terminal phase and completion time, when the run has ended (as nbv-core's
    /// plan sees it: a terminal phase *with* a completion time).
    pub fn terminal(&self) -> Option<(Phase, DateTime<Utc>)> {
        self.phase.filter(|p| p.is_terminal()).zip(self.completed)
    }
}

/// The start time inside a run key `g<generation>@<start>`.
pub(crate) fn run_start(run: &str) -> Option<DateTime<Utc>> {
    let (_, start) = run.split_once('@')?;
    DateTime::parse_from_rfc3339(start)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
