//! The `eviction` subresource of pods, as kube-apiserver 1.20 serves it
//! (`pkg/registry/core/pod/storage/eviction.go`): a pod is deleted only when the one
//! PodDisruptionBudget that selects it allows a disruption, which the budget's status
//! says and the eviction spends.

use serde_json::{Value, json};

use nbv_core::time::rfc3339;

use super::error::{ApiError, Reason};
use super::log::Actor;
use super::ops::{DeleteOpts, object_key};
use super::resource::ApiResourceSpec;
use super::selector::LabelSelector;
use super::state::State;
use super::store::WriteCtx;

/// What kube-apiserver says when a budget does not allow the eviction.
const VIOLATES: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

impl State {
    /// Evicts pod `name` of `namespace` as `body` (a `policy` Eviction) asks; the
    /// `Status` to answer.
    pub(crate) fn evict(
        &mut self,
        pods: &ApiResourceSpec,
        namespace: &str,
        name: &str,
        body: &Value,
        ctx: WriteCtx,
    ) -> Result<Value, ApiError> {
        match body["apiVersion"].as_str() {
            Some("policy/v1beta1" | "policy/v1") if body["kind"] == "Eviction" => {}
            other => {
                return Err(ApiError::bad_request(format!(
                    "the body of an eviction is a policy/v1beta1 Eviction, not {other:?} {}",
                    body["kind"]
                )));
            }
        }
        if body["metadata"]["name"].as_str() != Some(name) {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object",
            ));
        }
        let options = &body["deleteOptions"];
        let opts = DeleteOpts {
            dry_run: false,
            propagation: Default::default(),
            precondition_uid: options
                .pointer("/preconditions/uid")
                .and_then(Value::as_str)
                .map(str::to_owned),
            precondition_resource_version: options
                .pointer("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_owned),
        };
        let key = object_key(pods, namespace, name);
        let pod = self
            .store
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::not_found("pods", name))?;
        // A pod that does not run (any more, or yet) is no disruption: deleted at once.
        let phase = pod.pointer("/status/phase").and_then(Value::as_str);
        if !matches!(phase, Some("Succeeded" | "Failed" | "Pending")) {
            self.spend_budget(namespace, &pod, ctx)?;
        }
        self.store.delete(pods, &key, ctx, &opts)?;
        Ok(
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                  "code": 201}),
        )
    }

    /// `checkAndDecrement`: the one budget selecting `pod` must have observed its
    /// generation and allow a disruption, which is spent and recorded in
    /// `disruptedPods` (by the API server itself: not logged as the client's write).
    fn spend_budget(
        &mut self,
        namespace: &str,
        pod: &Value,
        ctx: WriteCtx,
    ) -> Result<(), ApiError> {
        let Some(spec) = self.registry.resolve("poddisruptionbudgets").cloned() else {
            return Ok(());
        };
        let budgets: Vec<Value> = self
            .store
            .list(&spec.key(), Some(namespace))
            .filter(|budget| selects(budget, pod))
            .cloned()
            .collect();
        let budget = match budgets.as_slice() {
            [] => return Ok(()),
            [budget] => budget,
            _ => {
                return Err(ApiError::new(
                    Reason::InternalError,
                    "This pod has more than one PodDisruptionBudget, which the eviction \
                     subresource does not support.",
                ));
            }
        };
        let name = budget["metadata"]["name"].as_str().unwrap_or_default();
        let status = &budget["status"];
        let int = |field: &str| status[field].as_i64().unwrap_or(0);
        // An unready pod does not count among the healthy: evicting it costs nothing
        // while the budget is met.
        let ready = pod["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        });
        if !ready && int("currentHealthy") >= int("desiredHealthy") && int("desiredHealthy") > 0 {
            return Ok(());
        }
        let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
        if int("observedGeneration") < generation {
            return Err(
                ApiError::new(Reason::TooManyRequests, VIOLATES).with_cause(format!(
                    "The disruption budget {name} is still being processed by the server."
                )),
            );
        }
        let allowed = int("disruptionsAllowed");
        if allowed < 0 {
            return Err(ApiError::new(
                Reason::Forbidden,
                format!(
                    "poddisruptionbudgets.policy \"{name}\" is forbidden: pdb disruptions \
                     allowed is negative"
                ),
            ));
        }
        if allowed == 0 {
            return Err(
                ApiError::new(Reason::TooManyRequests, VIOLATES).with_cause(format!(
                    "The disruption budget {name} needs {} healthy pods and has {} currently",
                    int("desiredHealthy"),
                    int("currentHealthy")
                )),
            );
        }
        let mut status = status.clone();
        status["disruptionsAllowed"] = json!(allowed - 1);
        let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
        status["disruptedPods"][pod_name] = json!(rfc3339(ctx.now));
        let key = object_key(&spec, namespace, name);
        self.store
            .set_status(&spec, &key, status, ctx.with_actor(Actor::Direct))?;
        Ok(())
    }
}

/// Whether `budget`'s `spec.selector` selects `pod`; an empty selector selects none
/// (`policy/v1beta1`).
fn selects(budget: &Value, pod: &Value) -> bool {
    let selector = &budget["spec"]["selector"];
    let mut requirements: Vec<String> = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    for expression in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expression["key"].as_str().unwrap_or_default();
        let values: Vec<&str> = expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        requirements.push(match expression["operator"].as_str() {
            Some("In") => format!("{key} in ({})", values.join(",")),
            Some("NotIn") => format!("{key} notin ({})", values.join(",")),
            Some("Exists") => key.to_owned(),
            _ => format!("!{key}"),
        });
    }
    !requirements.is_empty()
        && LabelSelector::parse(&requirements.join(",")).is_ok_and(|selector| selector.matches(pod))
}
