//! The shapes of the messages admission plugins and policy engines write, and the
//! names read from them. Each shape is checked against the source that writes it:
//! Kubernetes' admission plugins (PodSecurity, ResourceQuota, LimitRanger,
//! NamespaceLifecycle, ValidatingAdmissionPolicy, the webhook dispatcher, RBAC's
//! authorizer), OpenShift's SCC admission (apiserver-library-go), Kyverno and
//! Gatekeeper.

/// `violates PodSecurity "restricted:latest": …` (pod-security-admission).
pub(super) const POD_SECURITY: &str = "violates PodSecurity ";
/// `unable to validate against any security context constraint: [provider restricted-v2: …]`
/// (matched on its end, so that a webhook applying the same rules in other words
/// still reads as the SCCs' refusal).
pub(super) const SCC: &str = "against any security context constraint";
/// `admission webhook "x" denied the request: …` (the webhook dispatcher).
pub(super) const WEBHOOK_DENIED: &str = "admission webhook ";
/// `failed calling webhook "x": failed to call webhook: …`.
pub(super) const WEBHOOK_FAILED: &str = "failed calling webhook ";
/// `ValidatingAdmissionPolicy 'x' with binding 'y' denied request: …`.
pub(super) const VAP: &str = "ValidatingAdmissionPolicy ";
/// `exceeded quota: compute, requested: …, used: …, limited: …`.
pub(super) const QUOTA_EXCEEDED: &str = "exceeded quota: ";
/// `failed quota: compute: must specify limits.cpu for: notebook; …`.
pub(super) const QUOTA_FAILED: &str = "failed quota: ";
/// `status unknown for quota: compute, resources: …` (the quota controller has not
/// computed the usage yet).
pub(super) const QUOTA_UNKNOWN: &str = "status unknown for quota: ";
/// `User "system:serviceaccount:nbv:nbv" cannot create resource "pods" …` (RBAC).
pub(super) const RBAC_USER: &str = "User \"";
pub(super) const RBAC_CANNOT: &str = " cannot create resource \"pods\"";
/// `unable to create new content in namespace ml because it is being terminated`.
pub(super) const TERMINATING: &str = "because it is being terminated";
/// LimitRanger's refusals: `maximum cpu usage per Container is 2, but limit is 4`,
/// `minimum memory usage per Pod is …`, `cpu max limit to request ratio per Container is …`.
pub(super) const LIMIT_RANGE: [&str; 3] = [
    " usage per Container is ",
    " usage per Pod is ",
    " limit to request ratio per ",
];
/// Kyverno's denial: `resource Pod/ml/x was blocked due to the following policies`,
/// then one `policy:` line per policy, its rules indented below.
const KYVERNO_BLOCKED: &str = "was blocked due to the following policies";

/// Longest name kept from a message (a Kubernetes object name is at most 253 bytes).
const MAX_NAME_BYTES: usize = 253;
/// Most names kept from one message (a long list helps no one; the message is there).
const MAX_NAMES: usize = 8;

/// The text after `marker` up to the next `"` when it opens with one, as in
/// `admission webhook "x"`, or up to the next of `ends` otherwise.
pub(super) fn name_after<'a>(message: &'a str, marker: &str, ends: &[char]) -> Option<&'a str> {
    let rest = &message[message.find(marker)? + marker.len()..];
    let name = match rest.strip_prefix(['"', '\'']) {
        Some(quoted) => &quoted[..quoted.find(['"', '\''])?],
        None => &rest[..rest.find(ends).unwrap_or(rest.len())],
    };
    clean(name)
}

/// The SCC providers that refused the Pod on its merits, in order: `provider
/// restricted-v2: …` or `provider "restricted-v2": …`. Providers nbv's service account
/// may not use at all (`Forbidden: not usable by user or serviceaccount`) are left out
/// when others are named: they are not the policy that applies.
pub(super) fn scc_providers(message: &str) -> Vec<String> {
    let mut usable = Vec::new();
    let mut unusable = Vec::new();
    let mut rest = message;
    while let Some(at) = rest.find("provider ") {
        rest = &rest[at + "provider ".len()..];
        let name = rest.trim_start_matches('"');
        let end = name
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
            .unwrap_or(name.len());
        let entry_end = rest.find(", provider ").unwrap_or(rest.len());
        let Some(name) = clean(&name[..end]) else {
            continue;
        };
        let list = if rest[..entry_end].contains("not usable by user or serviceaccount") {
            &mut unusable
        } else {
            &mut usable
        };
        push_unique(list, name);
    }
    if usable.is_empty() { unusable } else { usable }
}

/// The policies a policy engine's denial names: Kyverno's `policy:` lines after its
/// "blocked" line, Gatekeeper's `[constraint]` prefixes.
pub(super) fn engine_policies(message: &str) -> Vec<String> {
    let mut policies = Vec::new();
    if let Some(at) = message.find(KYVERNO_BLOCKED) {
        for line in message[at + KYVERNO_BLOCKED.len()..].lines() {
            // A policy is an unindented `name:` line; its rules are indented below.
            if line.starts_with([' ', '\t']) {
                continue;
            }
            if let Some(name) = line.trim_end().strip_suffix(':').and_then(clean) {
                push_unique(&mut policies, name);
            }
        }
    }
    // Gatekeeper: `denied the request: [psp-pods-allowed-user-ranges] Container …`,
    // one `[constraint] message` per violation, each opening the text or a line.
    for (open, _) in message.match_indices('[') {
        let before = message[..open].trim_end_matches(' ');
        if !(before.is_empty() || before.ends_with([':', '\n'])) {
            continue;
        }
        let rest = &message[open + 1..];
        if let Some(name) = rest.find(']').and_then(|close| clean(&rest[..close])) {
            push_unique(&mut policies, name);
        }
    }
    policies
}

/// `name` when it looks like an object name (no spaces, not empty), cut to a bound.
fn clean(name: &str) -> Option<&str> {
    let name = name.trim();
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '/'));
    valid.then_some(name)
}

fn push_unique(list: &mut Vec<String>, name: &str) {
    if list.len() < MAX_NAMES && !list.iter().any(|n| n == name) {
        list.push(name.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_quoted_or_bare() {
        assert_eq!(
            name_after("admission webhook \"a.b\" denied", WEBHOOK_DENIED, &[' ']),
            Some("a.b")
        );
        assert_eq!(
            name_after("exceeded quota: compute, requested", QUOTA_EXCEEDED, &[',']),
            Some("compute")
        );
        assert_eq!(name_after("no marker", QUOTA_EXCEEDED, &[',']), None);
        assert_eq!(
            name_after("exceeded quota: a b, x", QUOTA_EXCEEDED, &[',']),
            None
        );
    }

    #[test]
    fn scc_providers_prefer_those_that_judged_the_pod() {
        let message = "[provider \"anyuid\": Forbidden: not usable by user or serviceaccount, \
                       provider restricted-v2: .containers[0].runAsUser: Invalid value: 65532, \
                       provider \"restricted\": .spec.securityContext.fsGroup: Invalid value]";
        assert_eq!(scc_providers(message), ["restricted-v2", "restricted"]);
        let unusable = "[provider \"anyuid\": Forbidden: not usable by user or serviceaccount]";
        assert_eq!(scc_providers(unusable), ["anyuid"]);
        assert!(scc_providers("[spec.volumes[0]: Invalid value]").is_empty());
    }

    #[test]
    fn engine_policies_of_kyverno_and_gatekeeper() {
        let kyverno = "admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\n\
                       resource Pod/ml/train-g1-r0 was blocked due to the following policies \n\n\
                       disallow-privileged:\n  check-privileged: 'validation error: no'\n\
                       require-labels:\n  check-for-labels: 'validation error: label'\n";
        assert_eq!(
            engine_policies(kyverno),
            ["disallow-privileged", "require-labels"]
        );
        let gatekeeper = "admission webhook \"validation.gatekeeper.sh\" denied the request: \
                          [psp-pods-allowed-user-ranges] Container clone is attempting to run as \
                          disallowed user 65534.\n[must-have-owner] you must provide labels: {\"owner\"}";
        assert_eq!(
            engine_policies(gatekeeper),
            ["psp-pods-allowed-user-ranges", "must-have-owner"]
        );
        assert!(engine_policies("spec.containers[0].image: Required value").is_empty());
    }
}
