//! OpenShift's default SecurityContextConstraints, `restricted-v2`, as pure functions:
//! what its admission assigns to a Pod and what it refuses, written from OpenShift's
//! published rules (openshift/apiserver-library-go, `pkg/securitycontextconstraints`:
//! `sccmatching`'s provider and the `user`, `group`, `capabilities` strategies) and the
//! SCC's definition:
//!
//! - `runAsUser: MustRunAsRange` over the namespace's `openshift.io/sa.scc.uid-range`;
//!   a container with no UID (its own or the Pod's) gets the range's first;
//! - `fsGroup: MustRunAs` with the first ID of `openshift.io/sa.scc.supplemental-groups`
//!   (the UID range when absent); `supplementalGroups: RunAsAny`;
//! - `seLinuxContext: MustRunAs` with the level of `openshift.io/sa.scc.mcs`;
//! - seccomp `runtime/default`; `requiredDropCapabilities: [ALL]`;
//!   `allowedCapabilities: [NET_BIND_SERVICE]`; `allowPrivilegeEscalation: false` (and
//!   its default); no privileged containers, host namespaces or host ports;
//! - volumes: configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim,
//!   projected, secret.
//!
//! A refusal reads as OpenShift's: `unable to validate against any security context
//! constraint: [...]`, one entry per violation, `provider restricted-v2: <path>:
//! Invalid value: <value>: <detail>` (a volume's entry has no provider prefix, as in
//! OpenShift), after the `anyuid` SCC that an ordinary user may not use.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{
    Capabilities, Container, Pod, PodSecurityContext, SELinuxOptions, SeccompProfile,
    SecurityContext,
};

/// The SCC this module emulates.
pub const NAME: &str = "restricted-v2";

/// The annotation OpenShift's admission writes on a Pod it admitted: the SCC's name.
pub const VALIDATED: &str = "openshift.io/scc";

/// The namespace annotations OpenShift's namespace controller writes.
pub const UID_RANGE: &str = "openshift.io/sa.scc.uid-range";
/// See [`UID_RANGE`].
pub const SUPPLEMENTAL_GROUPS: &str = "openshift.io/sa.scc.supplemental-groups";
/// See [`UID_RANGE`].
pub const MCS: &str = "openshift.io/sa.scc.mcs";

const ALLOWED_CAPABILITIES: [&str; 1] = ["NET_BIND_SERVICE"];
const REQUIRED_DROP: &str = "ALL";
const VOLUMES: [&str; 8] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// An inclusive range of IDs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRange {
    /// The first ID.
    pub min: i64,
    /// The last ID.
    pub max: i64,
}

impl IdRange {
    /// A block as OpenShift writes it: `START/SIZE` or `START-END`.
    pub fn parse(block: &str) -> Result<IdRange, String> {
        let number = |s: &str| {
            s.trim()
                .parse::<i64>()
                .map_err(|e| format!("{block:?} is not a block of IDs: {e}"))
        };
        let range = match (block.split_once('/'), block.split_once('-')) {
            (Some((start, size)), _) => {
                let (min, size) = (number(start)?, number(size)?);
                IdRange {
                    min,
                    max: min + size - 1,
                }
            }
            (None, Some((start, end))) => IdRange {
                min: number(start)?,
                max: number(end)?,
            },
            (None, None) => return Err(format!("{block:?} is not START/SIZE or START-END")),
        };
        if range.max < range.min {
            return Err(format!("{block:?} is an empty block of IDs"));
        }
        Ok(range)
    }

    fn contains(&self, id: i64) -> bool {
        (self.min..=self.max).contains(&id)
    }
}

/// What OpenShift allocated to a namespace, from its annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// `openshift.io/sa.scc.uid-range`.
    pub uids: IdRange,
    /// The fsGroup: the first ID of the supplemental groups' first block.
    pub fs_group: i64,
    /// `openshift.io/sa.scc.mcs`, the SELinux level.
    pub mcs: String,
}

impl Allocation {
    /// Reads a namespace's annotations; an error names the one missing or malformed (as
    /// OpenShift refuses every Pod of such a namespace).
    pub fn from_annotations(annotations: &BTreeMap<String, String>) -> Result<Allocation, String> {
        let get = |key: &str| {
            annotations
                .get(key)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("unable to find annotation {key}"))
        };
        let uids = IdRange::parse(get(UID_RANGE)?)?;
        let groups = annotations
            .get(SUPPLEMENTAL_GROUPS)
            .filter(|v| !v.is_empty())
            .map(|g| IdRange::parse(g.split(',').next().unwrap_or_default()))
            .transpose()?
            .unwrap_or(uids);
        Ok(Allocation {
            uids,
            fs_group: groups.min,
            mcs: get(MCS)?.clone(),
        })
    }
}

/// Why `restricted-v2` does not admit a Pod: OpenShift's list of violations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// One entry per violation, in OpenShift's order and wording.
    pub violations: Vec<String>,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The SCCs an ordinary user may not use come first in OpenShift's list; `anyuid`
        // (priority 10) sorts before `restricted-v2`.
        let mut entries =
            vec!["provider \"anyuid\": Forbidden: not usable by user or serviceaccount".to_owned()];
        entries.extend(self.violations.iter().cloned());
        write!(
            f,
            "unable to validate against any security context constraint: [{}]",
            entries.join(", ")
        )
    }
}

/// The Pod as `restricted-v2` admits it (its defaults assigned), or why it is refused.
pub fn admit(pod: &Pod, allocation: &Allocation) -> Result<Pod, Refusal> {
    let mut pod = pod.clone();
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(pod);
    };
    let psc = spec
        .security_context
        .get_or_insert_with(PodSecurityContext::default);
    mutate_pod(psc, allocation);
    let psc = psc.clone();

    let mut violations = Vec::new();
    for (i, volume) in spec.volumes.iter().flatten().enumerate() {
        let kind = volume_type(volume);
        if !VOLUMES.contains(&kind.as_str()) {
            violations.push(format!(
                "spec.volumes[{i}]: Invalid value: {kind:?}: {kind} volumes are not allowed to be used"
            ));
        }
    }
    if let Some(group) = psc.fs_group.filter(|g| *g != allocation.fs_group) {
        violations.push(format!(
            "{}.spec.securityContext.fsGroup: Invalid value: []int64{{{group}}}: {group} is not an allowed group",
            provider()
        ));
    }
    let host = [
        (spec.host_network, "hostNetwork", "Host network"),
        (spec.host_pid, "hostPID", "Host PID"),
        (spec.host_ipc, "hostIPC", "Host IPC"),
    ];
    let mut containers = |field: &str, containers: &mut [Container]| {
        for (i, container) in containers.iter_mut().enumerate() {
            mutate_container(container, &psc, allocation);
            let path = format!("{}.{field}[{i}]", provider());
            violations.extend(validate_container(container, &psc, allocation, &path));
            for (on, name, what) in host {
                if on == Some(true) {
                    violations.push(format!(
                        "{path}.{name}: Invalid value: true: {what} is not allowed to be used"
                    ));
                }
            }
        }
    };
    containers(
        "initContainers",
        spec.init_containers.as_deref_mut().unwrap_or_default(),
    );
    containers("containers", &mut spec.containers);
    if !violations.is_empty() {
        return Err(Refusal { violations });
    }
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(VALIDATED.to_owned(), NAME.to_owned());
    Ok(pod)
}

/// The prefix of a violation of `restricted-v2` (OpenShift's field path root).
fn provider() -> String {
    format!("provider {NAME}: ")
}

/// The Pod-level defaults: fsGroup, SELinux level, seccomp (each only where unset).
fn mutate_pod(psc: &mut PodSecurityContext, allocation: &Allocation) {
    psc.fs_group.get_or_insert(allocation.fs_group);
    psc.se_linux_options.get_or_insert_with(|| SELinuxOptions {
        level: Some(allocation.mcs.clone()),
        ..SELinuxOptions::default()
    });
    psc.seccomp_profile.get_or_insert_with(|| SeccompProfile {
        type_: "RuntimeDefault".to_owned(),
        ..SeccompProfile::default()
    });
}

/// The container's defaults, where neither it nor the Pod sets them: the range's first
/// UID (on the container, as OpenShift does), `runAsNonRoot` for a UID above 0, no
/// privilege escalation, and ALL dropped.
fn mutate_container(container: &mut Container, psc: &PodSecurityContext, allocation: &Allocation) {
    let sc = container
        .security_context
        .get_or_insert_with(SecurityContext::default);
    if sc.run_as_user.or(psc.run_as_user).is_none() {
        sc.run_as_user = Some(allocation.uids.min);
    }
    if sc.run_as_non_root.or(psc.run_as_non_root).is_none()
        && sc.run_as_user.or(psc.run_as_user).is_some_and(|u| u > 0)
    {
        sc.run_as_non_root = Some(true);
    }
    let adds_sys_admin = added(sc).iter().any(|c| c == "CAP_SYS_ADMIN");
    if sc.allow_privilege_escalation.is_none() && sc.privileged != Some(true) && !adds_sys_admin {
        sc.allow_privilege_escalation = Some(false);
    }
    let caps = sc.capabilities.get_or_insert_with(Capabilities::default);
    let drop = caps.drop.get_or_insert_with(Vec::new);
    if !drop.iter().any(|d| d == REQUIRED_DROP) {
        drop.push(REQUIRED_DROP.to_owned());
        drop.sort();
    }
}

fn added(sc: &SecurityContext) -> Vec<String> {
    sc.capabilities
        .as_ref()
        .and_then(|c| c.add.clone())
        .unwrap_or_default()
}

/// The container's violations, its effective values (its own over the Pod's) checked.
fn validate_container(
    container: &Container,
    psc: &PodSecurityContext,
    allocation: &Allocation,
    path: &str,
) -> Vec<String> {
    let mut violations = Vec::new();
    let sc = container.security_context.clone().unwrap_or_default();
    if let Some(uid) = sc.run_as_user.or(psc.run_as_user) {
        let range = allocation.uids;
        if !range.contains(uid) {
            violations.push(format!(
                "{path}.runAsUser: Invalid value: {uid}: must be in the ranges: [{}, {}]",
                range.min, range.max
            ));
        }
    }
    if sc.privileged == Some(true) {
        violations.push(format!(
            "{path}.privileged: Invalid value: true: Privileged containers are not allowed"
        ));
    }
    for cap in added(&sc) {
        if !ALLOWED_CAPABILITIES.contains(&cap.as_str()) {
            violations.push(format!(
                "{path}.capabilities.add: Invalid value: {cap:?}: capability may not be added"
            ));
        }
    }
    match sc.allow_privilege_escalation {
        Some(false) => {}
        escalation => violations.push(format!(
            "{path}.allowPrivilegeEscalation: Invalid value: {}: Allowing privilege escalation for containers is not allowed",
            escalation.map_or("\"null\"".to_owned(), |e| e.to_string())
        )),
    }
    for port in container.ports.iter().flatten() {
        if let Some(host_port) = port.host_port.filter(|p| *p > 0) {
            violations.push(format!(
                "{path}.hostPort: Invalid value: {host_port}: Host ports are not allowed to be used"
            ));
        }
    }
    violations
}

/// A volume's type as the API names it (`hostPath`, `emptyDir`, …): its one field
/// besides `name` (the API server defaults a volume with none to `emptyDir`).
fn volume_type(volume: &k8s_openapi::api::core::v1::Volume) -> String {
    let value = serde_json::to_value(volume).unwrap_or_default();
    value
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "name").cloned())
        .unwrap_or_else(|| "emptyDir".to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn allocation() -> Allocation {
        Allocation::from_annotations(&BTreeMap::from([
            (UID_RANGE.to_owned(), "1000680000/10000".to_owned()),
            (
                SUPPLEMENTAL_GROUPS.to_owned(),
                "1000680000/10000".to_owned(),
            ),
            (MCS.to_owned(), "s0:c26,c15".to_owned()),
        ]))
        .unwrap()
    }

    fn pod(spec: Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap()
    }

    fn container(security_context: Value) -> Value {
        json!({"name": "c", "image": "i", "securityContext": security_context})
    }

    fn admitted(spec: Value) -> Value {
        let pod = admit(&pod(spec.clone()), &allocation())
            .unwrap_or_else(|r| panic!("refused {spec}: {r}"));
        serde_json::to_value(pod).unwrap()
    }

    fn refused(spec: Value) -> String {
        match admit(&pod(spec.clone()), &allocation()) {
            Ok(_) => panic!("admitted {spec}"),
            Err(refusal) => refusal.to_string(),
        }
    }

    #[test]
    fn allocation_reads_blocks_and_falls_back_to_the_uid_range() {
        let a = Allocation::from_annotations(&BTreeMap::from([
            (UID_RANGE.to_owned(), "1000-1009".to_owned()),
            (MCS.to_owned(), "s0:c1,c0".to_owned()),
        ]))
        .unwrap();
        assert_eq!(
            a,
            Allocation {
                uids: IdRange {
                    min: 1000,
                    max: 1009
                },
                fs_group: 1000,
                mcs: "s0:c1,c0".into()
            }
        );
        assert_eq!(
            Allocation::from_annotations(&BTreeMap::new()).unwrap_err(),
            "unable to find annotation openshift.io/sa.scc.uid-range"
        );
        assert!(IdRange::parse("12").is_err());
        assert!(IdRange::parse("12/0").is_err());
    }

    #[test]
    fn an_empty_security_context_gets_the_namespace_s_defaults() {
        let pod = admitted(json!({"containers": [container(json!(null))]}));
        assert_eq!(
            pod["spec"]["securityContext"],
            json!({"fsGroup": 1000680000, "seLinuxOptions": {"level": "s0:c26,c15"},
                   "seccompProfile": {"type": "RuntimeDefault"}})
        );
        assert_eq!(
            pod["spec"]["containers"][0]["securityContext"],
            json!({"runAsUser": 1000680000, "runAsNonRoot": true,
                   "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}})
        );
        assert_eq!(pod["metadata"]["annotations"][VALIDATED], "restricted-v2");
    }

    #[test]
    fn admitting_twice_changes_nothing_more() {
        let once = admit(
            &pod(json!({"containers": [container(json!(null))]})),
            &allocation(),
        )
        .unwrap();
        assert_eq!(admit(&once, &allocation()).unwrap(), once);
    }

    #[test]
    fn accepted_pods() {
        for spec in [
            // A UID in the range, on the Pod: the containers inherit it, none is set.
            json!({"securityContext": {"runAsUser": 1000689999},
                   "containers": [container(json!({}))]}),
            json!({"containers": [container(json!({"runAsNonRoot": true,
                   "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}))]}),
            json!({"containers": [container(json!({}))], "volumes": [
                {"name": "a", "emptyDir": {}}, {"name": "b", "secret": {"secretName": "s"}},
                {"name": "c", "configMap": {"name": "m"}}, {"name": "d", "projected": {"sources": []}},
                {"name": "e", "persistentVolumeClaim": {"claimName": "x"}}]}),
            json!({"containers": [container(json!({}))],
                   "initContainers": [container(json!({"runAsUser": 1000680001}))]}),
        ] {
            admitted(spec);
        }
        let pod = admitted(json!({"securityContext": {"runAsUser": 1000680005},
                                  "containers": [container(json!({}))]}));
        assert_eq!(
            pod["spec"]["containers"][0]["securityContext"]["runAsUser"],
            Value::Null,
            "the Pod's UID is effective; the container gets none of its own"
        );
    }

    #[test]
    fn refused_pods_and_their_messages() {
        let anyuid = "unable to validate against any security context constraint: \
                      [provider \"anyuid\": Forbidden: not usable by user or serviceaccount, ";
        for (spec, expected) in [
            (
                json!({"containers": [container(json!({"runAsUser": 65532}))]}),
                "provider restricted-v2: .containers[0].runAsUser: Invalid value: 65532: \
                 must be in the ranges: [1000680000, 1000689999]]",
            ),
            // The container's UID overrides the Pod's.
            (
                json!({"securityContext": {"runAsUser": 1000680000},
                       "initContainers": [container(json!({"runAsUser": 0}))],
                       "containers": [container(json!({}))]}),
                "provider restricted-v2: .initContainers[0].runAsUser: Invalid value: 0: \
                 must be in the ranges: [1000680000, 1000689999]]",
            ),
            (
                json!({"securityContext": {"runAsUser": 65532},
                       "containers": [container(json!({"runAsUser": 1000680000})),
                                      container(json!({}))]}),
                "provider restricted-v2: .containers[1].runAsUser: Invalid value: 65532: \
                 must be in the ranges: [1000680000, 1000689999]]",
            ),
            (
                json!({"securityContext": {"fsGroup": 65532}, "containers": [container(json!({}))]}),
                "provider restricted-v2: .spec.securityContext.fsGroup: Invalid value: \
                 []int64{65532}: 65532 is not an allowed group]",
            ),
            (
                json!({"containers": [container(json!({"capabilities": {"add": ["NET_ADMIN"]}}))]}),
                "provider restricted-v2: .containers[0].capabilities.add: Invalid value: \
                 \"NET_ADMIN\": capability may not be added]",
            ),
            (
                json!({"containers": [container(json!({"privileged": true}))]}),
                "provider restricted-v2: .containers[0].privileged: Invalid value: true: \
                 Privileged containers are not allowed, provider restricted-v2: \
                 .containers[0].allowPrivilegeEscalation: Invalid value: \"null\": Allowing \
                 privilege escalation for containers is not allowed]",
            ),
            (
                json!({"containers": [container(json!({"allowPrivilegeEscalation": true}))]}),
                "provider restricted-v2: .containers[0].allowPrivilegeEscalation: Invalid \
                 value: true: Allowing privilege escalation for containers is not allowed]",
            ),
            (
                json!({"hostNetwork": true, "hostPID": true, "hostIPC": true,
                       "containers": [container(json!({}))]}),
                "provider restricted-v2: .containers[0].hostNetwork: Invalid value: true: Host \
                 network is not allowed to be used, provider restricted-v2: \
                 .containers[0].hostPID: Invalid value: true: Host PID is not allowed to be \
                 used, provider restricted-v2: .containers[0].hostIPC: Invalid value: true: \
                 Host IPC is not allowed to be used]",
            ),
            (
                json!({"containers": [{"name": "c", "image": "i",
                       "ports": [{"containerPort": 80, "hostPort": 80}]}]}),
                "provider restricted-v2: .containers[0].hostPort: Invalid value: 80: Host \
                 ports are not allowed to be used]",
            ),
            (
                json!({"containers": [container(json!({}))],
                       "volumes": [{"name": "ok", "emptyDir": {}},
                                   {"name": "host", "hostPath": {"path": "/var/run"}}]}),
                "spec.volumes[1]: Invalid value: \"hostPath\": hostPath volumes are not \
                 allowed to be used]",
            ),
        ] {
            let message = refused(spec.clone());
            assert_eq!(message, format!("{anyuid}{expected}"), "{spec}");
        }
    }
}
