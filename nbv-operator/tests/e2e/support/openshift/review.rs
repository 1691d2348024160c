//! AdmissionReview v1: the API server's question about a Pod, and the webhooks'
//! answers (a JSON Patch for the mutating one, a refusal with a `Status`).

use base64::Engine;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::scc::{self, Allocation};
use super::{mesh, policy};

/// The webhooks the profile serves, by path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// SCC admission's first half: assigns the defaults, refuses what no default fixes.
    SccMutate,
    /// Its second half, on the Pod as stored: refuses what later mutations broke.
    SccValidate,
    /// The policy engine's denial ([`policy`]).
    DisallowLatestTag,
    /// The service mesh's sidecar injection ([`mesh`]).
    SidecarInjector,
}

impl Hook {
    /// The hook served at `path`.
    pub fn at(path: &str) -> Option<Hook> {
        match path {
            "/scc/mutate" => Some(Hook::SccMutate),
            "/scc/validate" => Some(Hook::SccValidate),
            "/policy/validate" => Some(Hook::DisallowLatestTag),
            "/mesh/inject" => Some(Hook::SidecarInjector),
            _ => None,
        }
    }

    /// Its path.
    pub fn path(self) -> &'static str {
        match self {
            Hook::SccMutate => "/scc/mutate",
            Hook::SccValidate => "/scc/validate",
            Hook::DisallowLatestTag => "/policy/validate",
            Hook::SidecarInjector => "/mesh/inject",
        }
    }
}

/// The namespace a review is about (the SCC hooks read its allocation).
pub fn namespace(review: &Value) -> &str {
    review["request"]["namespace"].as_str().unwrap_or_default()
}

/// The answer to `review` by `hook`; `allocation` is the namespace's, read from its
/// annotations (the SCC hooks refuse every Pod of a namespace without one, as
/// OpenShift does; the other hooks ignore it).
pub fn answer(hook: Hook, review: &Value, allocation: Result<Allocation, String>) -> Value {
    let request = &review["request"];
    let uid = request["uid"].clone();
    let pod: Pod = match serde_json::from_value(request["object"].clone()) {
        Ok(pod) => pod,
        Err(e) => return respond(uid, refusal(400, "BadRequest", &format!("not a Pod: {e}"))),
    };
    let name = pod
        .metadata
        .name
        .clone()
        .or_else(|| pod.metadata.generate_name.clone())
        .unwrap_or_default();
    let forbidden = |why: &str| {
        let mut status = refusal(
            403,
            "Forbidden",
            &format!("pods {name:?} is forbidden: {why}"),
        );
        status["details"] = json!({"name": name, "kind": "pods"});
        status
    };
    match hook {
        Hook::DisallowLatestTag => match policy::denial(&pod, namespace(review)) {
            // Kyverno sets no code: the API server answers 400.
            Some(message) => respond(uid, json!({"status": "Failure", "message": message})),
            None => allow(uid),
        },
        Hook::SidecarInjector => patched(uid, &pod, &mesh::inject(&pod)),
        Hook::SccMutate | Hook::SccValidate => {
            let allocation = match allocation {
                Ok(a) => a,
                Err(e) => return respond(uid, forbidden(&e)),
            };
            match scc::admit(&pod, &allocation) {
                Err(refused) => respond(uid, forbidden(&refused.to_string())),
                Ok(admitted) if hook == Hook::SccMutate => patched(uid, &pod, &admitted),
                Ok(admitted) if admitted.spec == pod.spec => allow(uid),
                Ok(_) => respond(
                    uid,
                    forbidden(&format!(
                        "unable to validate against any security context constraint: \
                         [provider {}: failures final validation after mutating admission]",
                        scc::NAME
                    )),
                ),
            }
        }
    }
}

fn review(response: Value) -> Value {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

fn allow(uid: Value) -> Value {
    review(json!({"uid": uid, "allowed": true}))
}

fn respond(uid: Value, status: Value) -> Value {
    review(json!({"uid": uid, "allowed": false, "status": status}))
}

fn refusal(code: u16, reason: &str, message: &str) -> Value {
    json!({"status": "Failure", "code": code, "reason": reason, "message": message})
}

/// Allowed, with the spec and annotations of `admitted` as a JSON Patch.
fn patched(uid: Value, pod: &Pod, admitted: &Pod) -> Value {
    if admitted == pod {
        return allow(uid);
    }
    let patch = json!([
        {"op": "add", "path": "/metadata/annotations", "value": admitted.metadata.annotations},
        {"op": "replace", "path": "/spec", "value": admitted.spec},
    ]);
    let encoded = base64::engine::general_purpose::STANDARD.encode(patch.to_string());
    review(json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": encoded}))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn request(pod: Value) -> Value {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
               "request": {"uid": "u-1", "namespace": "ml", "operation": "CREATE",
                           "object": pod}})
    }

    fn allocation() -> Result<Allocation, String> {
        Allocation::from_annotations(&BTreeMap::from([
            (scc::UID_RANGE.to_owned(), "1000680000/10000".to_owned()),
            (scc::MCS.to_owned(), "s0:c26,c15".to_owned()),
        ]))
    }

    fn pod(security_context: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
               "spec": {"containers": [{"name": "c", "image": "i:1",
                                        "securityContext": security_context}]}})
    }

    #[test]
    fn the_mutating_hook_patches_spec_and_annotations() {
        let answer = answer(Hook::SccMutate, &request(pod(json!({}))), allocation());
        let response = &answer["response"];
        assert_eq!(response["uid"], "u-1");
        assert_eq!(response["allowed"], true);
        assert_eq!(response["patchType"], "JSONPatch");
        let patch: Value = serde_json::from_slice(
            &base64::engine::general_purpose::STANDARD
                .decode(response["patch"].as_str().unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            patch[0]["value"],
            json!({"openshift.io/scc": "restricted-v2"})
        );
        assert_eq!(
            patch[1]["value"]["containers"][0]["securityContext"]["runAsUser"],
            1000680000
        );
    }

    #[test]
    fn a_refusal_is_a_403_in_openshift_s_words() {
        let answer = answer(
            Hook::SccMutate,
            &request(pod(json!({"runAsUser": 65532}))),
            allocation(),
        );
        let response = &answer["response"];
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 403);
        assert_eq!(response["status"]["reason"], "Forbidden");
        let message = response["status"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "pods \"p\" is forbidden: unable to validate against any security context constraint: ["
            ),
            "{message}"
        );
        assert!(
            message.contains("provider restricted-v2: .containers[0].runAsUser: Invalid value: 65532: must be in the ranges: [1000680000, 1000689999]"),
            "{message}"
        );
    }

    #[test]
    fn the_validating_hook_refuses_what_was_not_assigned() {
        // Admitted by the mutating hook, then a later mutation dropped a default.
        let admitted = answer(Hook::SccValidate, &request(pod(json!({}))), allocation());
        assert_eq!(admitted["response"]["allowed"], false);
        let message = admitted["response"]["status"]["message"].as_str().unwrap();
        assert!(
            message.contains("failures final validation after mutating admission"),
            "{message}"
        );
        let stored = scc::admit(
            &serde_json::from_value(pod(json!({}))).unwrap(),
            &allocation().unwrap(),
        )
        .unwrap();
        let answer = answer(
            Hook::SccValidate,
            &request(serde_json::to_value(stored).unwrap()),
            allocation(),
        );
        assert_eq!(answer["response"]["allowed"], true);
    }

    #[test]
    fn a_namespace_without_an_allocation_admits_nothing() {
        let answer = answer(
            Hook::SccMutate,
            &request(pod(json!({}))),
            Err("unable to find annotation openshift.io/sa.scc.uid-range".into()),
        );
        assert_eq!(answer["response"]["allowed"], false);
        assert_eq!(answer["response"]["status"]["code"], 403);
    }

    #[test]
    fn the_policy_hook_denies_without_a_code() {
        let mut latest = pod(json!({}));
        latest["spec"]["containers"][0]["image"] = json!("busybox:latest");
        let answer = answer(Hook::DisallowLatestTag, &request(latest), allocation());
        assert_eq!(answer["response"]["allowed"], false);
        assert_eq!(answer["response"]["status"]["code"], Value::Null);
        let allowed = super::answer(
            Hook::DisallowLatestTag,
            &request(pod(json!({}))),
            allocation(),
        );
        assert_eq!(allowed["response"]["allowed"], true);
    }
}
