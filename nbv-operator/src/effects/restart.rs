//! The `restart` action: a rolling restart where the workload supports one, otherwise
//! deleting the target's pods that predate the run.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Preconditions};
use kube::core::{ApiResource, GroupVersionKind, Selector};
use nbv_core::annotations::{KSERVE_INFERENCESERVICE, KUBECTL_RESTARTED_AT};
use nbv_core::triggers::TargetRef;
use serde_json::{Value, json};

use super::target::{describe, not_older, resource_version, rfc3339, timestamp};
use super::{EffectError, Executor, TriggerOutcome};
use nbv_core::actions::AlreadyDone;

/// Most intermediate owners (ReplicaSets and the like) read to decide which pods a
/// target owns. A target rarely has more than a few; the bound keeps a hostile or
/// broken selector from turning one trigger into hundreds of reads.
const MAX_OWNER_LOOKUPS: usize = 16;

/// How a target is restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    /// Deployment, StatefulSet, DaemonSet: the controller replaces pods gradually.
    RollingRestart,
    /// KServe InferenceService: its pods, found by KServe's label (the seed's contract).
    InferenceServicePods,
    /// Anything else: the pods it selects and owns.
    OwnedPods,
}

impl Method {
    fn of(target: &TargetRef) -> Method {
        let group = target.api_version().group();
        let kind = target.kind().as_str();
        match (group, kind) {
            ("apps", "Deployment" | "StatefulSet" | "DaemonSet") => Method::RollingRestart,
            ("serving.kserve.io", "InferenceService") => Method::InferenceServicePods,
            _ => Method::OwnedPods,
        }
    }
}

/// The pods of a target, sorted by what a restart does to them.
struct Census {
    /// Created before the run ended and not already terminating: to be deleted.
    older: Vec<Pod>,
    /// Created at or after the end of the run: they already run the new model.
    newer: usize,
    /// Already being deleted.
    terminating: usize,
}

impl Census {
    fn of(pods: Vec<Pod>, cutoff: Timestamp) -> Census {
        let mut census = Census {
            older: Vec::new(),
            newer: 0,
            terminating: 0,
        };
        for pod in pods {
            if pod.metadata.deletion_timestamp.is_some() {
                census.terminating += 1;
            } else if pod
                .metadata
                .creation_timestamp
                .as_ref()
                .is_some_and(|created| created.0 < cutoff)
            {
                census.older.push(pod);
            } else {
                // A pod without a creation time cannot be shown to predate the run,
                // so it is spared like a newer one.
                census.newer += 1;
            }
        }
        census
    }
}

impl Executor {
    /// Restarts `target` for the run that completed at `completed_at`.
    pub(super) async fn restart(
        &self,
        target: &TargetRef,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        match Method::of(target) {
            Method::RollingRestart => self.rolling_restart(target, completed_at).await,
            Method::InferenceServicePods => {
                // Read the InferenceService first: listing pods of a misspelled name
                // finds none and would report success for a restart that never happened.
                self.get_target(target).await?;
                let selector = format!("{KSERVE_INFERENCESERVICE}={}", target.name());
                let pods = self.list_pods(target, &selector).await?;
                let census = Census::of(pods, timestamp(completed_at)?);
                self.delete_older(target, census, completed_at).await
            }
            Method::OwnedPods => {
                let object = self.get_target(target).await?;
                let request = || format!("restart {}", describe(target));
                let Some(uid) = object.metadata.uid.clone() else {
                    return Err(EffectError::invalid(request(), "it has no metadata.uid"));
                };
                let selector = selector_of(&object)
                    .map_err(|reason| EffectError::invalid(request(), reason))?;
                let pods = self.list_pods(target, &selector.to_string()).await?;
                let mut census = Census::of(pods, timestamp(completed_at)?);
                census.older = self.owned_by(target, &uid, census.older).await?;
                self.delete_older(target, census, completed_at).await
            }
        }
    }

    /// A rolling restart, as `kubectl rollout restart` does it, with the run's
    /// completion time as the value: the same run always writes the same template.
    ///
    /// The template is read first: when it already restarted at this run's time or
    /// later, nothing is written, so a retry of a write whose answer was lost cannot
    /// move the time backwards over a newer run's restart (which would roll the
    /// workload out once more). The patch carries the `resourceVersion` read, so a
    /// restart written in between makes it a conflict, and the retry reads again.
    async fn rolling_restart(
        &self,
        target: &TargetRef,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        let object = self.get_target(target).await?;
        let current = object.data["spec"]["template"]["metadata"]["annotations"]
            [KUBECTL_RESTARTED_AT]
            .as_str();
        if let Some(existing) = not_older(current, completed_at) {
            return Ok(TriggerOutcome::AlreadyDone {
                summary: format!(
                    "{} already restarted at {existing} (not older than this run)",
                    describe(target)
                ),
                by: AlreadyDone::ByThisRun,
            });
        }
        let at = rfc3339(completed_at);
        let patch = json!({
            "metadata": {"resourceVersion": resource_version(&object, target)?},
            "spec": {"template": {"metadata": {"annotations": {KUBECTL_RESTARTED_AT: at}}}}
        });
        self.patch_target(target, &patch).await?;
        Ok(TriggerOutcome::Done {
            summary: format!("rolling restart of {} (restartedAt {at})", describe(target)),
        })
    }

    async fn list_pods(&self, target: &TargetRef, selector: &str) -> Result<Vec<Pod>, EffectError> {
        let namespace = target.namespace().as_str();
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        pods.list(&ListParams::default().labels(selector))
            .await
            .map(|list| list.items)
            .map_err(|e| {
                EffectError::from_kube(
                    format!("list Pods in {namespace} with labels {selector}"),
                    &format!("Pods in {namespace}"),
                    e,
                )
            })
    }

    /// The pods among `pods` that the object with uid `owner_uid` owns, directly or
    /// through one intermediate owner (a ReplicaSet under a Deployment-like kind).
    async fn owned_by(
        &self,
        target: &TargetRef,
        owner_uid: &str,
        pods: Vec<Pod>,
    ) -> Result<Vec<Pod>, EffectError> {
        // Whether each intermediate owner (by uid) is itself owned by the target.
        let mut intermediate: HashMap<String, bool> = HashMap::new();
        let mut owned = Vec::new();
        let mut warned = false;
        for pod in pods {
            let references = pod.metadata.owner_references.clone().unwrap_or_default();
            let mut is_owned = references.iter().any(|r| r.uid == owner_uid);
            for reference in &references {
                if is_owned {
                    break;
                }
                is_owned = match intermediate.get(&reference.uid) {
                    Some(known) => *known,
                    None if intermediate.len() >= MAX_OWNER_LOOKUPS => {
                        if !warned {
                            warned = true;
                            tracing::warn!(
                                target = %describe(target),
                                "more than {MAX_OWNER_LOOKUPS} intermediate owners; remaining pods are spared"
                            );
                        }
                        false
                    }
                    None => {
                        let known = self.owned_via(target, reference, owner_uid).await?;
                        intermediate.insert(reference.uid.clone(), known);
                        known
                    }
                };
            }
            if is_owned {
                owned.push(pod);
            }
        }
        Ok(owned)
    }

    /// Whether the object `reference` points to is owned by `owner_uid`.
    async fn owned_via(
        &self,
        target: &TargetRef,
        reference: &OwnerReference,
        owner_uid: &str,
    ) -> Result<bool, EffectError> {
        let namespace = target.namespace().as_str();
        let resource = ApiResource::from_gvk(&GroupVersionKind::from(reference.clone()));
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), namespace, &resource);
        let object = format!("{} {namespace}/{}", reference.kind, reference.name);
        match api.get_opt(&reference.name).await {
            // The uid check skips a namesake created after the pod's owner was deleted.
            Ok(Some(found)) => Ok(
                found.metadata.uid.as_deref() == Some(reference.uid.as_str())
                    && found
                        .metadata
                        .owner_references
                        .iter()
                        .flatten()
                        .any(|r| r.uid == owner_uid),
            ),
            Ok(None) => Ok(false),
            Err(e) => Err(EffectError::from_kube(format!("get {object}"), &object, e)),
        }
    }

    /// Deletes the older pods of `census`, each only if it is still the same pod.
    async fn delete_older(
        &self,
        target: &TargetRef,
        census: Census,
        completed_at: DateTime<Utc>,
    ) -> Result<TriggerOutcome, EffectError> {
        let namespace = target.namespace().as_str();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let mut deleted = 0usize;
        for pod in &census.older {
            let (Some(name), Some(uid)) = (&pod.metadata.name, &pod.metadata.uid) else {
                continue;
            };
            let params = DeleteParams::default().preconditions(Preconditions {
                uid: Some(uid.clone()),
                resource_version: None,
            });
            match api.delete(name, &params).await {
                Ok(_) => deleted += 1,
                // Gone already: the old pod no longer runs.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => {
                    let object = format!("Pod {namespace}/{name}");
                    // A conflict is what a failed uid precondition answers, but not
                    // only that: only a pod of that name with another uid (or none)
                    // proves that the old pod is gone. Otherwise the restart is retried.
                    let conflict =
                        matches!(&error, kube::Error::Api(status) if status.is_conflict());
                    if !conflict || still_there(&api, name, uid, &object).await? {
                        return Err(EffectError::from_kube(
                            format!("delete {object}"),
                            &object,
                            error,
                        ));
                    }
                }
            }
        }
        let at = rfc3339(completed_at);
        let spared = spared(&census);
        if deleted == 0 {
            Ok(TriggerOutcome::AlreadyDone {
                summary: format!(
                    "no pod of {} was created before the run ended at {at}{spared}",
                    describe(target)
                ),
                by: AlreadyDone::ByThisRun,
            })
        } else {
            Ok(TriggerOutcome::Done {
                summary: format!(
                    "deleted {deleted} pod{} of {} created before the run ended at {at}{spared}",
                    if deleted == 1 { "" } else { "s" },
                    describe(target)
                ),
            })
        }
    }
}

/// `; 2 newer pods spared, 1 already terminating`, or nothing.
fn spared(census: &Census) -> String {
    let mut parts = Vec::new();
    if census.newer > 0 {
        parts.push(format!("{} newer spared", census.newer));
    }
    if census.terminating > 0 {
        parts.push(format!("{} already terminating", census.terminating));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The pods an object selects: `spec.selector` as a label selector (`matchLabels`,
/// `matchExpressions`) or as a plain label map (ReplicationController, Service).
fn selector_of(object: &DynamicObject) -> Result<Selector, String> {
    let value = &object.data["spec"]["selector"];
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

/// Whether the pod `name` with `uid` still exists (`object` names it in errors).
async fn still_there(
    api: &Api<Pod>,
    name: &str,
    uid: &str,
    object: &str,
) -> Result<bool, EffectError> {
    match api.get_opt(name).await {
        Ok(current) => Ok(current.is_some_and(|pod| pod.metadata.uid.as_deref() == Some(uid))),
        Err(error) => Err(EffectError::from_kube(
            format!("get {object}"),
            object,
            error,
        )),
    }
}
