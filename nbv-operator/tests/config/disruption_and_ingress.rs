//! The PodDisruptionBudget and the NetworkPolicy of `config/manager` select exactly the
//! operator's Pods, and the NetworkPolicy admits exactly the ports those Pods serve: a
//! port renamed or added in the Deployment, or a selector changed on one side only,
//! fails here rather than cutting off Prometheus or leaving the Pods unprotected.

use super::*;

/// The operator's Deployment, PodDisruptionBudget, NetworkPolicy and metrics Service.
struct Manager {
    deployment: Value,
    budget: Value,
    policy: Value,
    service: Value,
}

fn manager() -> Manager {
    let manifests = manifests();
    Manager {
        deployment: find(&manifests, "Deployment", "nbv-operator").clone(),
        budget: find(&manifests, "PodDisruptionBudget", "nbv-operator").clone(),
        policy: find(&manifests, "NetworkPolicy", "nbv-operator").clone(),
        service: find(&manifests, "Service", "nbv-operator-metrics").clone(),
    }
}

/// Whether `labels` carry every `matchLabels` entry of `selector`.
fn selects(selector: &Value, labels: &Value) -> bool {
    selector["matchLabels"]
        .as_object()
        .is_some_and(|wanted| wanted.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// What is wrong with the selectors: each must be the Deployment's own selector, in the
/// Deployment's namespace, with `matchLabels` only.
fn selector_problems(m: &Manager) -> Vec<String> {
    let mut problems = Vec::new();
    let selector = &m.deployment["spec"]["selector"];
    let template = &m.deployment["spec"]["template"]["metadata"]["labels"];
    if !selects(selector, template) {
        problems.push("the Deployment's selector does not select its own Pods".to_owned());
    }
    let namespace = &m.deployment["metadata"]["namespace"];
    for (what, object, field) in [
        ("PodDisruptionBudget", &m.budget, "selector"),
        ("NetworkPolicy", &m.policy, "podSelector"),
    ] {
        let own = &object["spec"][field];
        if own != selector {
            problems.push(format!(
                "the {what}'s {field} {own} is not the Deployment's selector {selector}"
            ));
        }
        if &object["metadata"]["namespace"] != namespace {
            problems.push(format!("the {what} is not in the Deployment's namespace"));
        }
    }
    problems
}

/// The container ports of the operator's Pods, as `name/protocol`.
fn container_ports(deployment: &Value) -> BTreeSet<String> {
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["ports"].as_array().cloned().unwrap_or_default())
        .map(|p| {
            format!(
                "{}/{}",
                p["name"].as_str().unwrap_or("(unnamed)"),
                p["protocol"].as_str().unwrap_or("TCP")
            )
        })
        .collect()
}

/// What is wrong with the NetworkPolicy's ingress: it must admit, from any source,
/// exactly the container ports (by name), which must be those the Service and the
/// probes use; and it must leave egress alone.
fn ingress_problems(m: &Manager) -> Vec<String> {
    let mut problems = Vec::new();
    let spec = &m.policy["spec"];
    if spec["policyTypes"] != serde_json::json!(["Ingress"]) || !spec["egress"].is_null() {
        problems.push(format!(
            "policyTypes is {}: nbv restricts ingress only (its egress goes to the API \
             server, whose address differs from cluster to cluster)",
            spec["policyTypes"]
        ));
    }
    let rules = spec["ingress"].as_array().cloned().unwrap_or_default();
    let mut admitted = BTreeSet::new();
    for rule in &rules {
        if !rule["from"].is_null() {
            problems.push(
                "an ingress rule has `from`: the shipped policy admits any source, since \
                 Prometheus' namespace is not known"
                    .to_owned(),
            );
        }
        for port in rule["ports"].as_array().into_iter().flatten() {
            match port["port"].as_str() {
                Some(name) => {
                    admitted.insert(format!(
                        "{name}/{}",
                        port["protocol"].as_str().unwrap_or("TCP")
                    ));
                }
                None => problems.push(format!(
                    "the NetworkPolicy admits port {}: name it as the container does",
                    port["port"]
                )),
            }
        }
    }
    let served = container_ports(&m.deployment);
    if admitted != served {
        problems.push(format!(
            "the NetworkPolicy admits {admitted:?}, the operator's container serves {served:?}"
        ));
    }
    let container = &m.deployment["spec"]["template"]["spec"]["containers"][0];
    let mut used: Vec<(String, &Value)> = ["livenessProbe", "readinessProbe"]
        .iter()
        .map(|p| (format!("the {p}"), &container[*p]["httpGet"]["port"]))
        .collect();
    for port in m.service["spec"]["ports"].as_array().into_iter().flatten() {
        used.push(("the metrics Service".to_owned(), &port["targetPort"]));
    }
    for (who, port) in used {
        let name = port.as_str().unwrap_or("(a number)");
        if !served.contains(&format!("{name}/TCP")) {
            problems.push(format!(
                "{who} uses port {port}, which is not a named container port the \
                 NetworkPolicy admits"
            ));
        }
    }
    problems
}

#[test]
fn the_budget_and_the_network_policy_select_exactly_the_operator_s_pods() {
    let m = manager();
    assert_eq!(selector_problems(&m), Vec::<String>::new());
    let selector = &m.deployment["spec"]["selector"];
    assert!(
        selector["matchExpressions"].is_null()
            && selector["matchLabels"]
                .as_object()
                .is_some_and(|l| !l.is_empty()),
        "an empty selector selects every Pod of the namespace (policy/v1)"
    );
    // No other Pod template under config/ in the operator's namespace matches.
    let namespace = &m.deployment["metadata"]["namespace"];
    for (file, object) in manifests() {
        let template = &object["spec"]["template"]["metadata"]["labels"];
        let other = object["metadata"]["name"] != m.deployment["metadata"]["name"]
            || object["kind"] != "Deployment";
        if other && &object["metadata"]["namespace"] == namespace && template.is_object() {
            assert!(
                !selects(selector, template),
                "{file}: the {} {} would be selected too",
                object["kind"],
                object["metadata"]["name"]
            );
        }
    }

    // The check fails when one side changes.
    let mut changed = manager();
    changed.budget["spec"]["selector"]["matchLabels"] =
        serde_json::json!({"app.kubernetes.io/part-of": "nbv"});
    assert!(
        selector_problems(&changed)
            .iter()
            .any(|p| p.contains("PodDisruptionBudget's selector"))
    );
    let mut changed = manager();
    changed.deployment["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] =
        serde_json::json!("nbv");
    changed.deployment["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] =
        serde_json::json!("nbv");
    assert_eq!(selector_problems(&changed).len(), 2, "both must follow");
}

/// `maxUnavailable: 1` evicts one replica at a time with two, and still lets a drain
/// through with one; `minAvailable: 1` would block that drain forever.
#[test]
fn the_budget_lets_a_drain_through_one_replica_at_a_time() {
    let m = manager();
    let spec = &m.budget["spec"];
    assert!(
        spec["minAvailable"].is_null(),
        "minAvailable blocks draining a single replica"
    );
    let max_unavailable = spec["maxUnavailable"]
        .as_i64()
        .expect("maxUnavailable, as a number of Pods");
    // The disruption controller's arithmetic: healthy Pods minus those it must keep.
    let allowed = |replicas: i64| replicas - (replicas - max_unavailable).max(0);
    assert_eq!(
        allowed(2),
        1,
        "two replicas: one evicted at a time, so one keeps the Lease"
    );
    assert!(allowed(1) >= 1, "one replica: a drain is not blocked");
    let replicas = m.deployment["spec"]["replicas"].as_i64().unwrap();
    assert!(allowed(replicas) < replicas, "never every replica at once");
}

#[test]
fn the_network_policy_admits_exactly_the_ports_the_operator_serves() {
    let m = manager();
    assert_eq!(ingress_problems(&m), Vec::<String>::new());

    // A container port renamed, or added, fails the check.
    let mut renamed = manager();
    renamed.deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["name"] =
        serde_json::json!("http-metrics");
    let problems = ingress_problems(&renamed);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("admits {\"metrics/TCP\"}")),
        "{problems:?}"
    );
    let mut added = manager();
    added.deployment["spec"]["template"]["spec"]["containers"][0]["ports"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "webhook", "containerPort": 9443, "protocol": "TCP"}));
    assert!(!ingress_problems(&added).is_empty());
    // So does a policy by number, with a `from`, or restricting egress.
    let mut numbered = manager();
    numbered.policy["spec"]["ingress"][0]["ports"][0]["port"] = serde_json::json!(8080);
    assert!(!ingress_problems(&numbered).is_empty());
    let mut narrowed = manager();
    narrowed.policy["spec"]["ingress"][0]["from"] = serde_json::json!([{"namespaceSelector": {}}]);
    assert!(!ingress_problems(&narrowed).is_empty());
    let mut egress = manager();
    egress.policy["spec"]["policyTypes"] = serde_json::json!(["Ingress", "Egress"]);
    assert!(!ingress_problems(&egress).is_empty());
}
