//! The `restart` action on the cluster: the reads and writes that
//! [`nbv_core::actions::restart`] decides (a rolling restart where the workload
//! supports one, otherwise deleting the target's pods that predate the run).

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Preconditions};
use kube::core::{ApiResource, GroupVersionKind};
use nbv_core::actions::restart::{
    Census, MAX_OWNER_LOOKUPS, Owners, PodDeletions, pods_by_label, pods_to_delete, pods_to_list,
    rolling_restart,
};
use nbv_core::actions::{Run, TriggerOutcome, describe};
use nbv_core::triggers::TargetRef;

use super::target::{as_json, settle};
use super::{EffectError, Executor};
use crate::api_error::{ApiErrorClass, classify};

impl Executor {
    /// Restarts `target` for `run`.
    pub(super) async fn restart(
        &self,
        target: &TargetRef,
        run: &Run,
    ) -> Result<TriggerOutcome, EffectError> {
        // An InferenceService's pods carry its name in KServe's label: one LIST finds
        // them without reading it. Only a LIST that finds none reads the target, since
        // a misspelled name finds none either and would report success for a restart
        // that never happened.
        if let Some(query) = pods_by_label(target) {
            let pods = self.list_pods(target, &query.label_selector).await?;
            if pods.is_empty() {
                self.get_target(target).await?;
            }
            let census = Census::of(pods, run.completed_at);
            return match settle(pods_to_delete(target, census, run)) {
                Ok(deletions) => self.delete_pods(target, &deletions).await,
                Err(settled) => settled,
            };
        }
        let object = self.get_target(target).await?;
        let object = as_json(&object, target)?;
        let Some(query) = pods_to_list(&object, target)? else {
            return self
                .carry_patch(target, rolling_restart(&object, target, run))
                .await;
        };
        let pods = self.list_pods(target, &query.label_selector).await?;
        let mut census = Census::of(pods, run.completed_at);
        if let Some(owner_uid) = &query.owner_uid {
            census.older = self.owned_by(target, owner_uid, census.older).await?;
        }
        match settle(pods_to_delete(target, census, run)) {
            Ok(deletions) => self.delete_pods(target, &deletions).await,
            Err(settled) => settled,
        }
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

    /// The pods among `pods` that the object with uid `owner_uid` owns, reading the
    /// intermediate owners [`Owners`] asks for.
    async fn owned_by(
        &self,
        target: &TargetRef,
        owner_uid: &str,
        pods: Vec<Pod>,
    ) -> Result<Vec<Pod>, EffectError> {
        let mut owners = Owners::new(owner_uid);
        while let Some(reference) = owners.next_lookup(&pods) {
            let namespace = target.namespace().as_str();
            let resource = ApiResource::from_gvk(&GroupVersionKind::from(reference.clone()));
            let api: Api<DynamicObject> =
                Api::namespaced_with(self.client.clone(), namespace, &resource);
            let object = format!("{} {namespace}/{}", reference.kind, reference.name);
            let found = api
                .get_opt(&reference.name)
                .await
                .map_err(|e| EffectError::from_kube(format!("get {object}"), &object, e))?;
            owners.learn(&reference, found.as_ref().map(|found| &found.metadata));
        }
        if owners.bounded(&pods) {
            tracing::warn!(
                target = %describe(target),
                "more than {MAX_OWNER_LOOKUPS} intermediate owners; remaining pods are spared"
            );
        }
        Ok(owners.owned(pods))
    }

    /// Deletes the pods of `deletions`, each only if it is still the same pod.
    async fn delete_pods(
        &self,
        target: &TargetRef,
        deletions: &PodDeletions,
    ) -> Result<TriggerOutcome, EffectError> {
        let namespace = target.namespace().as_str();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let mut deleted = 0usize;
        for pod in &deletions.pods {
            let (name, uid) = (&pod.name, &pod.uid);
            let params = DeleteParams::default().preconditions(Preconditions {
                uid: Some(uid.clone()),
                resource_version: None,
            });
            let Err(error) = api.delete(name, &params).await else {
                deleted += 1;
                continue;
            };
            let object = format!("Pod {namespace}/{name}");
            match classify(&error) {
                // Gone already: the old pod no longer runs.
                ApiErrorClass::NotFound => {}
                // A conflict is what a failed uid precondition answers, but not only
                // that: only a pod of that name with another uid (or none) proves that
                // the old pod is gone. Otherwise the restart is retried.
                ApiErrorClass::Conflict if !still_there(&api, name, uid, &object).await? => {}
                _ => {
                    return Err(EffectError::from_kube(
                        format!("delete {object}"),
                        &object,
                        error,
                    ));
                }
            }
        }
        Ok(deletions.done(deleted))
    }
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
