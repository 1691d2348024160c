//! The `restart` action: a rolling restart where the workload supports one, otherwise
//! evicting the target's pods that predate the run, one at a time.
//!
//! - Deployment, StatefulSet, DaemonSet (group `apps`) restart as `kubectl rollout
//!   restart` does it: [`rolling_restart`] patches
//!   `spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"]` with the
//!   run's completion time, unless the template already restarted at that time or
//!   later (a retry never moves it backwards over a newer run's restart).
//! - A KServe InferenceService: its pods, found by KServe's label
//!   `serving.kserve.io/inferenceservice=<name>` ([`pods_to_list`]).
//! - Any other kind: the pods its `spec.selector` selects and that it owns, directly or
//!   through one intermediate owner such as a ReplicaSet ([`Owners`]). A target without
//!   a selector is refused: nbv never deletes every pod of a namespace.
//!
//! Of those pods, [`pace`] picks the next to evict through the Eviction API (so that
//! PodDisruptionBudgets apply), with its uid, so that an eviction spares a namesake
//! created since. It evicts one pod at a time, and the next only once no pod
//! terminates and every pod created since the run is Ready; a budget that refuses
//! ([`budget_refused`]) or a replacement that is not Ready yet makes the trigger wait
//! and look again later. A pod created at or after the run's end already runs the new
//! model, which makes a repeated trigger a no-op.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use kube::core::Selector;
use serde::Serialize;
use serde_json::{Value, json};

use super::{
    Already, Decision, Patch, Refused, Run, TriggerOutcome, conditional, describe, done_since,
};
use crate::annotations::{KSERVE_INFERENCESERVICE, KUBECTL_RESTARTED_AT};
use crate::triggers::TargetRef;

mod replicas;

pub use replicas::Replicas;

/// Most intermediate owners (ReplicaSets and the like) read to decide which pods a
/// target owns. A target rarely has more than a few; the bound keeps a hostile or
/// broken selector from turning one trigger into hundreds of reads.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::actions::restart::MAX_OWNER_LOOKUPS, 16);
/// ```
pub const MAX_OWNER_LOOKUPS: usize = 16;

/// How a target is restarted.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::restart::Method;
///
/// let set = nbv_core::triggers::parse_triggers("- {apiVersion: apps/v1, kind: StatefulSet, name: db, action: restart}", "ml").unwrap();
/// assert_eq!(Method::of(set.triggers()[0].target()), Method::RollingRestart);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Method {
    /// Deployment, StatefulSet, DaemonSet: the controller replaces pods gradually.
    RollingRestart,
    /// KServe InferenceService: its pods, found by KServe's label (the seed's contract).
    InferenceServicePods,
    /// Anything else: the pods it selects and owns.
    OwnedPods,
}

impl Method {
    /// How `target` is restarted.
    pub fn of(target: &TargetRef) -> Method {
        Method::of_kind(target.api_version().group(), target.kind().as_str())
    }

    /// How an object of `group` and `kind` is restarted.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_core::actions::restart::Method;
    ///
    /// assert_eq!(Method::of_kind("serving.kserve.io", "InferenceService"), Method::InferenceServicePods);
    /// assert_eq!(Method::of_kind("", "ReplicationController"), Method::OwnedPods);
    /// ```
    pub fn of_kind(group: &str, kind: &str) -> Method {
        match (group, kind) {
            ("apps", "Deployment" | "StatefulSet" | "DaemonSet") => Method::RollingRestart,
            ("serving.kserve.io", "InferenceService") => Method::InferenceServicePods,
            _ => Method::OwnedPods,
        }
    }
}

/// What a rolling restart of `target` (read as `object`) for `run` takes: the
/// template annotation at the run's completion time, so the same run always writes
/// the same template.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::{Already, Decision, Run, restart};
///
/// let set = nbv_core::triggers::parse_triggers("- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}", "ml").unwrap();
/// let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// let web = serde_json::json!({"metadata": {"name": "web", "resourceVersion": "5"}});
/// let Decision::Write(write) = restart::rolling_restart(&web, set.triggers()[0].target(), &run) else { panic!() };
/// assert_eq!(write.summary, "rolling restart of Deployment ml/web (restartedAt 2026-01-24T22:30:00Z)");
/// ```
pub fn rolling_restart(object: &Value, target: &TargetRef, run: &Run) -> Decision<Patch> {
    let current =
        object["spec"]["template"]["metadata"]["annotations"][KUBECTL_RESTARTED_AT].as_str();
    if let Some(done) = done_since(current, target, run, "restarted", |at| Already::Restarted {
        at,
    }) {
        return done;
    }
    let at = run.completed();
    let summary = format!("rolling restart of {} (restartedAt {at})", describe(target));
    conditional(
        object,
        target,
        |version| {
            json!({
                "metadata": {"resourceVersion": version},
                "spec": {"template": {"metadata": {"annotations": {KUBECTL_RESTARTED_AT: at}}}}
            })
        },
        summary,
    )
}

/// Which pods to list for a restart by pods ([`pods_to_list`]).
///
/// # Examples
///
/// ```
/// use nbv_core::actions::restart::PodQuery;
///
/// let query = PodQuery { label_selector: "app=web".into(), owner_uid: Some("u1".into()) };
/// assert!(query.owner_uid.is_some());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodQuery {
    /// The label selector to list the target's namespace with.
    pub label_selector: String,
    /// The uid the pods must be owned by (directly or through an intermediate owner),
    /// when the selector alone does not prove that they are the target's.
    pub owner_uid: Option<String>,
}

/// The pods to list for restarting `target` when its name alone selects them, without
/// reading the target: KServe's label `serving.kserve.io/inferenceservice=<name>` for
/// an InferenceService. `None` for every other kind, whose pods only the object says.
///
/// A listing that finds no pod proves nothing about the target (a misspelled name
/// finds none either): the shell then reads the target, so that a restart of nothing
/// is reported as the error it is.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::restart;
///
/// let set = nbv_core::triggers::parse_triggers("
/// - {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: fraud, action: restart}
/// - {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}
/// ", "ml").unwrap();
/// let query = restart::pods_by_label(set.triggers()[0].target()).unwrap();
/// assert_eq!(query.label_selector, "serving.kserve.io/inferenceservice=fraud");
/// assert_eq!(query.owner_uid, None);
/// assert_eq!(restart::pods_by_label(set.triggers()[1].target()), None);
/// ```
pub fn pods_by_label(target: &TargetRef) -> Option<PodQuery> {
    (Method::of(target) == Method::InferenceServicePods).then(|| PodQuery {
        label_selector: format!("{KSERVE_INFERENCESERVICE}={}", target.name()),
        owner_uid: None,
    })
}

/// The pods to list for restarting `target` (read as `object`) by deleting pods:
/// KServe's label for an InferenceService, otherwise the target's `spec.selector` and
/// uid. `None` for a workload restarted in place ([`Method::RollingRestart`]).
///
/// # Errors
///
/// A [`Refused`] when the target has no uid or no usable selector: nbv never deletes
/// every pod of a namespace.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::restart;
///
/// let set = nbv_core::triggers::parse_triggers("- {apiVersion: v1, kind: ReplicationController, name: rc, action: restart}", "ml").unwrap();
/// let rc = serde_json::json!({"metadata": {"uid": "u1"}, "spec": {"selector": {"app": "rc"}}});
/// let query = restart::pods_to_list(&rc, set.triggers()[0].target()).unwrap().unwrap();
/// assert_eq!(query.label_selector, "app=rc");
/// assert_eq!(query.owner_uid.as_deref(), Some("u1"));
///
/// let unselective = serde_json::json!({"metadata": {"uid": "u1"}, "spec": {}});
/// assert!(restart::pods_to_list(&unselective, set.triggers()[0].target()).is_err());
/// ```
pub fn pods_to_list(object: &Value, target: &TargetRef) -> Result<Option<PodQuery>, Refused> {
    match Method::of(target) {
        Method::RollingRestart => Ok(None),
        Method::InferenceServicePods => Ok(pods_by_label(target)),
        Method::OwnedPods => {
            let refused =
                |reason: String| Refused::new(format!("restart {}", describe(target)), reason);
            let Some(uid) = object["metadata"]["uid"].as_str() else {
                return Err(refused("it has no metadata.uid".to_owned()));
            };
            let selector = selector_of(object).map_err(refused)?;
            Ok(Some(PodQuery {
                label_selector: selector.to_string(),
                owner_uid: Some(uid.to_owned()),
            }))
        }
    }
}

/// The pods an object selects: `spec.selector` as a label selector (`matchLabels`,
/// `matchExpressions`) or as a plain label map (ReplicationController, Service).
/// Never a selector of every pod.
///
/// # Errors
///
/// What is wrong with the selector, or that there is none, in words.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::restart::selector_of;
///
/// let deployment_like = serde_json::json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}});
/// assert_eq!(selector_of(&deployment_like).unwrap().to_string(), "app=web");
/// assert!(selector_of(&serde_json::json!({"spec": {"selector": {"matchLabels": {}}}})).is_err());
/// ```
pub fn selector_of(object: &Value) -> Result<Selector, String> {
    let value = &object["spec"]["selector"];
    let selector = match value {
        Value::Object(map)
            if map.contains_key("matchLabels") || map.contains_key("matchExpressions") =>
        {
            let selector: LabelSelector = serde_json::from_value(value.clone())
                .map_err(|e| format!("its spec.selector is not a label selector: {e}"))?;
            Selector::try_from(selector)
                .map_err(|e| format!("its spec.selector cannot be used: {}", e.0))?
        }
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| match value.as_str() {
                Some(value) => Ok((key.clone(), value.to_owned())),
                None => Err(format!("its spec.selector.{key} is not a string")),
            })
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .collect(),
        _ => Selector::default(),
    };
    if selector.selects_all() {
        return Err(
            "it has no spec.selector (matchLabels, matchExpressions or a label map), \
                    and nbv never deletes every pod of a namespace; target the workload that \
                    owns the pods (a Deployment, StatefulSet or DaemonSet) instead"
                .to_owned(),
        );
    }
    Ok(selector)
}

/// Which intermediate owners own a target's pods, learnt one read at a time.
///
/// The shell asks for [`Owners::next_lookup`], reads that object (a ReplicaSet, say),
/// tells [`Owners::learn`] what it found, and repeats until there is nothing left to
/// read; [`Owners::owned`] then keeps the pods the target owns. At most
/// [`MAX_OWNER_LOOKUPS`] objects are read; pods behind further owners are spared.
///
/// # Examples
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use nbv_core::actions::restart::Owners;
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "web-1",
///     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7f", "uid": "rs1"}]}})).unwrap();
/// let mut owners = Owners::new("deploy1");
/// let reference = owners.next_lookup(std::slice::from_ref(&pod)).unwrap();
/// assert_eq!(reference.name, "web-7f");
/// let replica_set = serde_json::from_value(serde_json::json!({"uid": "rs1",
///     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "deploy1"}]})).unwrap();
/// owners.learn(&reference, Some(&replica_set));
/// assert!(owners.next_lookup(std::slice::from_ref(&pod)).is_none());
/// assert_eq!(owners.owned(vec![pod]).len(), 1);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Owners {
    owner_uid: String,
    /// Whether each intermediate owner read (by uid) is itself owned by the target.
    known: HashMap<String, bool>,
}

impl Owners {
    /// The owners of pods, for the target with `owner_uid`.
    pub fn new(owner_uid: &str) -> Owners {
        Owners {
            owner_uid: owner_uid.to_owned(),
            known: HashMap::new(),
        }
    }

    /// The next intermediate owner to read to settle which of `pods` the target owns;
    /// `None` when they are settled (or the bound is reached).
    pub fn next_lookup(&self, pods: &[Pod]) -> Option<OwnerReference> {
        pods.iter().find_map(|pod| match self.settle(pod) {
            Settled::Owned(_) => None,
            Settled::Unknown(reference) => Some(reference.clone()),
        })
    }

    /// Records what reading the owner `reference` found (`None`: it is gone).
    pub fn learn(&mut self, reference: &OwnerReference, found: Option<&ObjectMeta>) {
        // The uid check skips a namesake created after the pod's owner was deleted.
        let owned = found.is_some_and(|found| {
            found.uid.as_deref() == Some(reference.uid.as_str())
                && found
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|r| r.uid == self.owner_uid)
        });
        self.known.insert(reference.uid.clone(), owned);
    }

    /// Whether the bound on reads left some of `pods` unsettled (they are spared).
    pub fn bounded(&self, pods: &[Pod]) -> bool {
        self.known.len() >= MAX_OWNER_LOOKUPS && pods.iter().any(|pod| self.unread(pod).is_some())
    }

    /// The pods among `pods` that the target owns, as far as the reads showed.
    pub fn owned(&self, pods: Vec<Pod>) -> Vec<Pod> {
        pods.into_iter()
            .filter(|pod| matches!(self.settle(pod), Settled::Owned(true)))
            .collect()
    }

    fn settle<'p>(&self, pod: &'p Pod) -> Settled<'p> {
        let references = pod.metadata.owner_references.as_deref().unwrap_or_default();
        if references.iter().any(|r| r.uid == self.owner_uid) {
            return Settled::Owned(true);
        }
        for reference in references {
            match self.known.get(&reference.uid) {
                Some(true) => return Settled::Owned(true),
                Some(false) => {}
                None if self.known.len() >= MAX_OWNER_LOOKUPS => {}
                None => return Settled::Unknown(reference),
            }
        }
        Settled::Owned(false)
    }

    fn unread<'p>(&self, pod: &'p Pod) -> Option<&'p OwnerReference> {
        if matches!(self.settle(pod), Settled::Owned(true)) {
            return None;
        }
        let references = pod.metadata.owner_references.as_deref().unwrap_or_default();
        references.iter().find(|r| !self.known.contains_key(&r.uid))
    }
}

enum Settled<'p> {
    /// Settled: whether the target owns the pod.
    Owned(bool),
    /// This owner must be read first.
    Unknown(&'p OwnerReference),
}

/// Whether the object was created before `completed_at`: such a pod still runs what
/// was deployed before the run. One without a creation time cannot be shown to predate
/// the run, so it is spared like a newer one.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::restart::predates;
///
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let meta = serde_json::from_value(serde_json::json!({"creationTimestamp": "2026-01-24T22:29:59Z"})).unwrap();
/// assert!(predates(&meta, ended));
/// assert!(!predates(&Default::default(), ended));
/// ```
pub fn predates(metadata: &ObjectMeta, completed_at: DateTime<Utc>) -> bool {
    metadata.creation_timestamp.as_ref().is_some_and(|created| {
        let created = created.0;
        let nanos = u32::try_from(created.subsec_nanosecond()).unwrap_or(0);
        DateTime::from_timestamp(created.as_second(), nanos)
            .is_some_and(|created| created < completed_at)
    })
}

/// A pod to evict, with the uid that must still be its (the eviction's precondition).
///
/// # Examples
///
/// ```
/// use nbv_core::actions::restart::PodRef;
///
/// let pod = PodRef { name: "predictor-1".into(), uid: "u1".into() };
/// assert_eq!(pod.uid, "u1");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PodRef {
    /// The pod's name.
    pub name: String,
    /// The pod's uid.
    pub uid: String,
}

/// How long an evicted pod may take to terminate, or a replacement to become Ready,
/// before the restart stops and fails with the pod's name: as long as a Deployment's
/// default `progressDeadlineSeconds`, the wait a platform already accepts for a
/// rollout that makes no progress.
///
/// # Examples
///
/// ```
/// assert_eq!(nbv_core::actions::restart::READY_BOUND.num_minutes(), 10);
/// ```
pub const READY_BOUND: chrono::Duration = chrono::Duration::minutes(10);

/// The shortest and longest wait before a paced restart looks at the pods again.
const RETRY_MIN: chrono::Duration = chrono::Duration::seconds(2);
const RETRY_MAX: chrono::Duration = chrono::Duration::seconds(30);

/// What a restart by eviction does next, decided from the target's pods as listed
/// ([`pace`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "pace",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Pace {
    /// Evict this pod (one at a time, guarded by its uid).
    Evict(PodRef),
    /// Evict nothing yet: an eviction is still under way (a pod terminates, a
    /// replacement is missing or not Ready). Look again at `until`.
    Wait {
        /// What the restart waits for, naming the pod.
        reason: String,
        /// When to look again.
        until: DateTime<Utc>,
    },
    /// A pod did not terminate, or a replacement did not become Ready, within
    /// [`READY_BOUND`]: the restart stops, and this says which.
    Stuck(String),
    /// No pod predates the run: every pod runs what the run validated.
    Finished {
        /// The pods created after the run, still counted (for the summary).
        newer: usize,
    },
}

/// The pacing of a restart by eviction: one pod at a time, each only once the one
/// before is replaced.
///
/// Of `pods` (the target's, as listed):
/// 1. a pod being deleted (`deletionTimestamp`) means an eviction is under way: wait
///    until it is gone;
/// 2. a pod created at or after the run's end that is not Ready is a replacement that
///    does not serve yet: wait until it is Ready;
/// 3. some pod predates the run and a controller of the pods (a ReplicaSet) has fewer
///    pods than its `spec.replicas` ([`Replicas`]): an evicted pod is gone but its
///    replacement not created yet, so wait;
/// 4. otherwise evict the next pod that predates the run: one that is not Ready first
///    (it serves nothing, so evicting it costs no capacity), then the oldest, ties
///    broken by name;
/// 5. none left: [`Pace::Finished`].
///
/// So there is never more than one eviction outstanding, and no pod is evicted while
/// a replacement is missing or not Ready, PodDisruptionBudget or not. A wait longer
/// than [`READY_BOUND`] since the pod's `deletionTimestamp`, or since the replacement
/// was created, is [`Pace::Stuck`]; a controller short of pods is waited for as long
/// as it is, the wait naming it.
/// Waits are looked at again after a backoff that grows with the time since the run
/// ended (from 2 s to 30 s).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::restart::{pace, Pace};
///
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).unwrap();
/// let pod = |name: &str, created: &str, ready: &str| serde_json::from_value(serde_json::json!({
///     "metadata": {"name": name, "uid": format!("u-{name}"), "creationTimestamp": created},
///     "status": {"conditions": [{"type": "Ready", "status": ready}]}})).unwrap();
/// let old = [pod("a", "2026-01-24T22:00:00Z", "True"), pod("b", "2026-01-24T21:00:00Z", "True")];
/// let Pace::Evict(first) = pace(&old, &Default::default(), ended, now) else { panic!() };
/// assert_eq!(first.name, "b", "the oldest first");
///
/// let replacing = [pod("a", "2026-01-24T22:00:00Z", "True"), pod("b-2", "2026-01-24T22:30:30Z", "False")];
/// let Pace::Wait { reason, .. } = pace(&replacing, &Default::default(), ended, now) else { panic!() };
/// assert_eq!(reason, "pod b-2, created after the run, is not Ready yet");
/// ```
pub fn pace(
    pods: &[Pod],
    replicas: &Replicas,
    completed_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Pace {
    let until = now + retry_after(completed_at, now);
    let name = |pod: &Pod| pod.metadata.name.clone().unwrap_or_default();
    let overdue = |since: DateTime<Utc>| now - since > READY_BOUND;
    let bound = READY_BOUND.num_minutes();
    if let Some(pod) = pods
        .iter()
        .find(|p| p.metadata.deletion_timestamp.is_some())
    {
        let since = pod.metadata.deletion_timestamp.as_ref().and_then(timestamp);
        if since.is_some_and(overdue) {
            return Pace::Stuck(format!(
                "pod {} has not terminated {bound} minutes after its deletion; the pods \
                 left are not evicted (is a finalizer or the node holding it?)",
                name(pod)
            ));
        }
        return Pace::Wait {
            reason: format!("pod {} is terminating", name(pod)),
            until,
        };
    }
    let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().and_then(timestamp);
    let (mut older, newer): (Vec<&Pod>, Vec<&Pod>) = pods
        .iter()
        .partition(|pod| predates(&pod.metadata, completed_at));
    // A pod without a creation time is spared like a newer one, but waited for by no
    // one: nothing says since when it should be Ready.
    if let Some(pod) = newer
        .iter()
        .find(|pod| !is_ready(pod) && created(pod).is_some())
    {
        if created(pod).is_some_and(overdue) {
            return Pace::Stuck(format!(
                "pod {}, created after the run, did not become Ready within {bound} minutes; \
                 the pods left are not evicted",
                name(pod)
            ));
        }
        return Pace::Wait {
            reason: format!("pod {}, created after the run, is not Ready yet", name(pod)),
            until,
        };
    }
    // Not bounded in time: nothing shows since when a pod is missing (the restart may
    // have waited for a budget long before), and the controller's own status says
    // what holds it back (a quota, say).
    if !older.is_empty()
        && let Some(short) = replicas.shortfall(pods)
    {
        return Pace::Wait {
            reason: format!("{short}; the next pod is evicted once it has them all"),
            until,
        };
    }
    older.sort_by_key(|pod| (is_ready(pod), created(pod), name(pod)));
    match older.iter().find_map(|pod| {
        Some(PodRef {
            name: pod.metadata.name.clone()?,
            uid: pod.metadata.uid.clone()?,
        })
    }) {
        Some(next) => Pace::Evict(next),
        None => Pace::Finished { newer: newer.len() },
    }
}

/// What an eviction refused with HTTP 429 means: a PodDisruptionBudget does not allow
/// the disruption now (or the API server has not processed it yet). The restart waits
/// and tries again later, never deleting instead; `message` is the API server's, which
/// names the budget.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::restart::{budget_refused, Pace};
///
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let message = "Cannot evict pod as it would violate the pod's disruption budget. (The disruption budget web needs 2 healthy pods and has 2 currently)";
/// let Pace::Wait { reason, until } = budget_refused("web-1", message, ended, ended) else { panic!() };
/// assert!(reason.starts_with("waits for the PodDisruptionBudget to allow evicting pod web-1: Cannot evict"));
/// assert_eq!(until, ended + chrono::Duration::seconds(2));
/// ```
pub fn budget_refused(
    pod: &str,
    message: &str,
    completed_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Pace {
    Pace::Wait {
        reason: format!(
            "waits for the PodDisruptionBudget to allow evicting pod {pod}: {}",
            crate::text::truncate(message, 512, "…")
        ),
        until: now + retry_after(completed_at, now),
    }
}

/// The wait before looking again: an eighth of the time since the run ended, between
/// [`RETRY_MIN`] and [`RETRY_MAX`], so a long restart asks the API server less often.
fn retry_after(completed_at: DateTime<Utc>, now: DateTime<Utc>) -> chrono::Duration {
    ((now - completed_at) / 8).clamp(RETRY_MIN, RETRY_MAX)
}

/// Whether the pod's `Ready` condition is `True`.
///
/// # Examples
///
/// ```
/// let pod = serde_json::from_value(serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})).unwrap();
/// assert!(nbv_core::actions::restart::is_ready(&pod));
/// assert!(!nbv_core::actions::restart::is_ready(&Default::default()));
/// ```
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn timestamp(t: &Time) -> Option<DateTime<Utc>> {
    let nanos = u32::try_from(t.0.subsec_nanosecond()).unwrap_or(0);
    DateTime::from_timestamp(t.0.as_second(), nanos)
}

/// What a restart by eviction reports once [`pace`] finds no pod that predates the
/// run: `newer` pods, all Ready, run what the run validated (none: there was nothing
/// to restart).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::{Run, TriggerOutcome, restart};
///
/// let set = nbv_core::triggers::parse_triggers(
///     "- {apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: predictor, action: restart}", "ml").unwrap();
/// let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// assert_eq!(restart::finished(set.triggers()[0].target(), &run, 2), TriggerOutcome::Done {
///     summary: "every pod of InferenceService ml/predictor (2, all Ready) was created after the run ended at 2026-01-24T22:30:00Z".into(),
/// });
/// ```
pub fn finished(target: &TargetRef, run: &Run, newer: usize) -> TriggerOutcome {
    let (target, at) = (describe(target), run.completed());
    if newer == 0 {
        TriggerOutcome::AlreadyDone {
            reason: Already::NoPodPredatesRun,
            summary: format!("no pod of {target} was created before the run ended at {at}"),
        }
    } else {
        TriggerOutcome::Done {
            summary: format!(
                "every pod of {target} ({newer}, all Ready) was created after the run ended at {at}"
            ),
        }
    }
}

/// What the restart waits for once `pod` was evicted (or found gone): its
/// replacement, looked at again after the same backoff as [`pace`]'s.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::restart::{evicted, Pace};
///
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let Pace::Wait { reason, .. } = evicted("web-1", ended, ended) else { panic!() };
/// assert_eq!(reason, "evicted pod web-1; the next waits until it is replaced by a Ready pod");
/// ```
pub fn evicted(pod: &str, completed_at: DateTime<Utc>, now: DateTime<Utc>) -> Pace {
    Pace::Wait {
        reason: format!("evicted pod {pod}; the next waits until it is replaced by a Ready pod"),
        until: now + retry_after(completed_at, now),
    }
}
