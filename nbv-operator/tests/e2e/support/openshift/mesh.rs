//! A service mesh's sidecar injector, as Istio's mutating webhook injects into the Pods
//! of namespaces labelled `istio-injection: enabled`: its `istio-init` container
//! programs the Pod's iptables as root with `NET_ADMIN` and `NET_RAW`. On OpenShift,
//! SCC admission validates the Pod again after the webhooks, and `restricted-v2`
//! refuses that container (hence Istio's CNI plugin there).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

/// The name of Istio's injecting webhook.
pub const WEBHOOK: &str = "namespace.sidecar-injector.istio.io";

/// The namespace label that enables injection.
pub const LABEL: (&str, &str) = ("istio-injection", "enabled");

/// The Pod with `istio-init` appended to its init containers and Istio's status
/// annotation; a Pod already injected is returned as it is.
pub fn inject(pod: &Pod) -> Pod {
    const STATUS: &str = "sidecar.istio.io/status";
    let mut pod = pod.clone();
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    if annotations.contains_key(STATUS) {
        return pod;
    }
    annotations.insert(
        STATUS.to_owned(),
        r#"{"initContainers":["istio-init"],"containers":["istio-proxy"]}"#.to_owned(),
    );
    let init = serde_json::from_value(json!({
        "name": "istio-init",
        "image": "docker.io/istio/proxyv2:1.24.0",
        "args": ["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337"],
        "securityContext": {
            "runAsUser": 0, "runAsGroup": 0, "runAsNonRoot": false,
            "allowPrivilegeEscalation": false, "privileged": false,
            "capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]}
        }
    }))
    .expect("istio-init is a container");
    if let Some(spec) = pod.spec.as_mut() {
        spec.init_containers.get_or_insert_with(Vec::new).push(init);
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::openshift::scc::{self, Allocation};

    #[test]
    fn restricted_v2_refuses_the_injected_init_container() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "clone", "image": "git:1"}],
                     "containers": [{"name": "main", "image": "nb:1"}]}
        }))
        .unwrap();
        let allocation = Allocation::from_annotations(&BTreeMap::from([
            (scc::UID_RANGE.to_owned(), "1000680000/10000".to_owned()),
            (scc::MCS.to_owned(), "s0:c26,c15".to_owned()),
        ]))
        .unwrap();
        let admitted = scc::admit(&pod, &allocation).expect("admitted before injection");
        let injected = inject(&admitted);
        assert_eq!(inject(&injected), injected, "injected once");
        let refusal = scc::admit(&injected, &allocation).unwrap_err();
        assert_eq!(
            refusal.violations,
            [
                "provider restricted-v2: .initContainers[1].runAsUser: Invalid value: 0: must \
                 be in the ranges: [1000680000, 1000689999]",
                "provider restricted-v2: .initContainers[1].capabilities.add: Invalid value: \
                 \"NET_ADMIN\": capability may not be added",
                "provider restricted-v2: .initContainers[1].capabilities.add: Invalid value: \
                 \"NET_RAW\": capability may not be added",
            ]
        );
    }
}
