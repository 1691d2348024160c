//! Gathering the facts the confused-deputy rule needs, and no more.

use futures::FutureExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DynamicObject, Patch};
use kube::runtime::reflector::ObjectRef;
use nbv_core::actions::{self, Decision, TriggerOutcome, describe};
use nbv_core::triggers::{ACCEPT_TRIGGERS_FROM, AccessFacts, Action, Grant, TargetRef, Trigger};

use super::target::{JobRef, settle, target_api};
use super::{EffectError, Executor};
use crate::resources::application_resource;

/// How long a read waits for the Application cache's first listing before it sends a
/// GET instead (at the operator's start, or while Argo CD's CRDs are missing).
pub(crate) const CACHE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// The decision, and the Application when reading it was part of deciding.
pub(super) struct Authorized {
    pub(super) grant: Grant,
    pub(super) application: Option<DynamicObject>,
}

impl Executor {
    /// Decides whether `trigger` of `job` may act, reading only what the decision needs.
    ///
    /// Facts only widen access, so the decision is first made without any; an
    /// Application is read when the decision needs its destination or the action is a
    /// `sync` (which needs the object anyway), and the target's `Namespace` only when
    /// everything else refused. A missing Application or Namespace counts as "no
    /// permission" rather than "not found", so that a refused job learns nothing about
    /// namespaces it may not act in.
    pub(super) async fn authorize(
        &self,
        job: &JobRef,
        trigger: &Trigger,
    ) -> Result<Authorized, EffectError> {
        let access = &self.config.trigger_access;
        let mut facts = AccessFacts::default();
        let decide = |facts: &AccessFacts| access.authorize(trigger, &job.namespace, facts);

        let mut application = None;
        let mut application_missing = None;
        if trigger.is_argo_application()
            && (trigger.action() == Action::Sync || decide(&facts).is_err())
        {
            match self.read_target(trigger.target()).await {
                Ok(app) => {
                    facts.application_destination = destination(&app);
                    application = Some(app);
                }
                Err(missing @ EffectError::NotFound { .. }) => application_missing = Some(missing),
                Err(other) => return Err(other),
            }
        }
        if decide(&facts).is_err() {
            facts.target_namespace_accepts = self
                .namespace_opt_in(trigger.target().namespace().as_str())
                .await?;
        }
        let grant = decide(&facts)?;
        if let Some(missing) = application_missing {
            return Err(missing);
        }
        tracing::debug!(trigger = %trigger, %grant, "trigger allowed");
        Ok(Authorized { grant, application })
    }

    /// The target: an Application from the watch cache when the cache watches its
    /// namespace, has listed it and holds it; anything else with a GET. The cache
    /// keeps only the Applications jobs name ([`crate::projection::AppInterest`]), and
    /// one named a moment ago may not be in it yet, so an Application it does not hold
    /// is read too (found absent then, the trigger fails as not found). A cache not
    /// filled within [`CACHE_PATIENCE`] is not waited for further.
    pub(super) async fn read_target(
        &self,
        target: &TargetRef,
    ) -> Result<DynamicObject, EffectError> {
        if target.is_argo_application()
            && let Some((store, namespaces)) = &self.caches.applications
            && namespaces
                .iter()
                .any(|ns| ns == target.namespace().as_str())
            && cache_ready(store).await
        {
            let key = ObjectRef::new_with(target.name().as_str(), application_resource())
                .within(target.namespace().as_str());
            if let Some(app) = store.get(&key) {
                return Ok(app.to_object());
            }
        }
        self.get_target(target).await
    }

    /// The target, read whole with a GET.
    pub(super) async fn get_target(
        &self,
        target: &TargetRef,
    ) -> Result<DynamicObject, EffectError> {
        target_api(&self.client, target)
            .get(target.name().as_str())
            .await
            .map_err(|e| {
                EffectError::from_kube(
                    format!("get {}", describe(target)),
                    &describe(target).to_string(),
                    e,
                )
            })
    }

    /// Applies a JSON merge patch to the target with nbv's field manager.
    pub(super) async fn patch_target(
        &self,
        target: &TargetRef,
        patch: &serde_json::Value,
    ) -> Result<(), EffectError> {
        target_api(&self.client, target)
            .patch(
                target.name().as_str(),
                &self.patch_params(),
                &Patch::Merge(patch),
            )
            .await
            .map(drop)
            .map_err(|e| {
                EffectError::from_kube(
                    format!("patch {}", describe(target)),
                    &describe(target).to_string(),
                    e,
                )
            })
    }

    /// Carries out a decision of [`nbv_core::actions`] that writes a merge patch: the
    /// patch and its outcome, or the outcome without a write.
    pub(super) async fn carry_patch(
        &self,
        target: &TargetRef,
        decision: Decision<actions::Patch>,
    ) -> Result<TriggerOutcome, EffectError> {
        let patch = match settle(decision) {
            Ok(patch) => patch,
            Err(settled) => return settled,
        };
        self.patch_target(target, &patch.patch).await?;
        Ok(patch.done())
    }

    /// The value of the opt-in annotation on namespace `name`; `None` when the
    /// namespace or the annotation is absent.
    pub(crate) async fn namespace_opt_in(&self, name: &str) -> Result<Option<String>, EffectError> {
        let namespaces: Api<Namespace> = Api::all(self.client.clone());
        match namespaces.get_opt(name).await {
            Ok(namespace) => Ok(namespace.and_then(|ns| {
                ns.metadata
                    .annotations
                    .and_then(|mut a| a.remove(ACCEPT_TRIGGERS_FROM))
            })),
            Err(e) => Err(EffectError::from_kube(
                format!("get Namespace {name}"),
                &format!("Namespace {name}"),
                e,
            )),
        }
    }
}

/// Whether `store` has listed its objects, waiting for it at most [`CACHE_PATIENCE`]:
/// before its first listing a cache knows nothing, and "absent" would be a lie.
///
/// The store is looked at every [`READY_POLL`] rather than awaited: kube-runtime's
/// `Store::wait_until_ready` wakes only the last of several tasks waiting on it (a
/// oneshot channel), so at a start with many triggers due all but one would wait out
/// the patience and fall back to a GET.
pub(super) async fn cache_ready<K>(store: &kube::runtime::reflector::Store<K>) -> bool
where
    K: kube::runtime::reflector::Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    let deadline = tokio::time::Instant::now() + CACHE_PATIENCE;
    loop {
        if let Some(listed) = store.wait_until_ready().now_or_never() {
            return listed.is_ok();
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(READY_POLL).await;
    }
}

/// How often [`cache_ready`] looks whether a cache has listed.
const READY_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// `spec.destination.namespace` of an Application.
pub(super) fn destination(application: &DynamicObject) -> Option<String> {
    application.data["spec"]["destination"]["namespace"]
        .as_str()
        .filter(|ns| !ns.is_empty())
        .map(str::to_owned)
}
