//! `config/monitoring/`: the ServiceMonitor and PrometheusRule against the Prometheus
//! Operator's CRD schemas (`../shared/reference/prometheus-operator/`), the plain rule
//! file against the PrometheusRule it is generated from, every alert's runbook, and
//! every query of the rules and of the Grafana dashboard against the metric families,
//! labels and label values `nbv` really exposes (its registry, fully exercised).
//!
//! promtool runs the rules' unit tests (`scripts/monitoring-tools test`, in `.ci/run`).
//! `NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test monitoring` rewrites the
//! generated files (the rule file, the OpenShift console's dashboard) instead of
//! failing.

mod repository;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher;
use nbv_core::aggregate::{TrackingMethod, TrackingSettings};
use nbv_core::api::Phase;
use nbv_operator::operator::metrics::{
    ClusterView, JobScope, Metrics, MetricsOptions, ReconcileOutcome, TriggerStatus,
};
use nbv_operator::operator::projection::{CachedJob, PodCache};
use nbv_operator::runtime::clock::Clock;
use nbv_testkit::fixtures::JobBuilder;
use repository::{assert_valid, documents, read};
use serde_json::{Value, json};

const RULE: &str = "config/monitoring/prometheusrule.yaml";
const RULES_FILE: &str = "config/monitoring/promtool/nbv.rules.yaml";
const DASHBOARD: &str = "config/monitoring/dashboards/nbv.json";
const CONSOLE_DASHBOARD: &str = "config/openshift/console-dashboard.yaml";

/// The Grafana dashboard as the OpenShift console's dashboard: a ConfigMap in
/// openshift-config-managed labelled `console.openshift.io/dashboard`, holding the
/// dashboard's JSON as it is.
fn console_dashboard(json: &str) -> String {
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "nbv-dashboard",
            "namespace": "openshift-config-managed",
            "labels": {
                "console.openshift.io/dashboard": "true",
                "app.kubernetes.io/name": "nbv-operator",
                "app.kubernetes.io/part-of": "nbv",
            },
        },
        "data": { "nbv.json": json },
    });
    format!(
        "# Generated from {DASHBOARD} by nbv-operator/tests/monitoring.rs; do not edit.\n\
         # The console shows it under Observe > Dashboards, from the cluster's Prometheus:\n\
         # with user workload monitoring on, it scrapes nbv through config/monitoring.\n{}",
        serde_yaml_ng::to_string(&config_map).expect("a ConfigMap serializes")
    )
}

#[test]
fn the_console_dashboard_is_the_grafana_dashboard() {
    let json = read(DASHBOARD);
    repository::assert_generated(
        CONSOLE_DASHBOARD,
        &console_dashboard(&json),
        "NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test monitoring",
        "monitoring",
    );
    let config_map = documents(CONSOLE_DASHBOARD).remove(0);
    assert_eq!(
        config_map["metadata"]["namespace"],
        "openshift-config-managed"
    );
    assert_eq!(
        config_map["metadata"]["labels"]["console.openshift.io/dashboard"],
        "true"
    );
    let data = config_map["data"].as_object().unwrap();
    assert_eq!(data.len(), 1);
    let (key, text) = data.iter().next().unwrap();
    assert!(key.ends_with(".json"), "{key}");
    let embedded: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    let source: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(embedded, source);
}

#[test]
fn the_jobs_namespace_survives_either_scrape() {
    // nbv's families label jobs with their own `namespace`. honorLabels keeps it;
    // without it, or where the Prometheus overrides it (OpenShift's user workload
    // monitoring), Prometheus renames it `exported_namespace` and sets `namespace` to
    // the target's. So every query grouping by namespace takes exported_namespace
    // when a series has one (promtool's tests cover both shapes of series).
    let monitor = documents("config/monitoring/servicemonitor.yaml").remove(0);
    let endpoints = monitor["spec"]["endpoints"].as_array().unwrap();
    assert!(!endpoints.is_empty());
    for endpoint in endpoints {
        assert_eq!(endpoint["honorLabels"], true, "{endpoint}");
    }
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).unwrap();
    let mut exprs: Vec<String> = alerts()
        .iter()
        .map(|a| a["expr"].as_str().unwrap().to_owned())
        .collect();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            exprs.push(target["expr"].as_str().unwrap_or_default().to_owned());
        }
    }
    let grouped: Vec<&String> = exprs
        .iter()
        .filter(|e| e.contains("by (namespace"))
        .collect();
    assert!(grouped.len() >= 4, "{grouped:?}");
    for expr in grouped {
        let compact: String = expr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            compact.contains(r#""namespace", "$1", "exported_namespace", "(.+)")"#),
            "{expr} groups by namespace without reading exported_namespace"
        );
    }
}

#[test]
fn the_rule_file_is_rendered_from_the_prometheusrule() {
    let rendered =
        nbv_operator::runtime::monitoring::rules_file(&read(RULE)).expect("the rule renders");
    repository::assert_generated(
        RULES_FILE,
        &rendered,
        "NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test monitoring",
        "monitoring",
    );
    // nbv compiles the same file in.
    assert_eq!(
        nbv_operator::runtime::monitoring::PROMETHEUS_RULE,
        read(RULE)
    );
}

#[test]
fn the_manifests_validate_against_the_prometheus_operator_crds() {
    let monitor = documents("config/monitoring/servicemonitor.yaml").remove(0);
    assert_valid(
        "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml",
        "v1",
        &monitor,
        "config/monitoring/servicemonitor.yaml",
    );
    let rule = documents(RULE).remove(0);
    assert_valid(
        "prometheus-operator/monitoring.coreos.com_prometheusrules.yaml",
        "v1",
        &rule,
        RULE,
    );
    // The ServiceMonitor selects the metrics Service, by its labels and port.
    let service = documents("config/manager/service.yaml").remove(0);
    for (key, value) in monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .unwrap()
    {
        assert_eq!(&service["metadata"]["labels"][key], value, "label {key}");
    }
    assert_eq!(
        monitor["spec"]["endpoints"][0]["port"],
        service["spec"]["ports"][0]["name"]
    );
    assert_eq!(
        monitor["spec"]["namespaceSelector"]["matchNames"][0],
        service["metadata"]["namespace"]
    );
}

/// Every alerting rule of the PrometheusRule.
fn alerts() -> Vec<Value> {
    documents(RULE).remove(0)["spec"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .filter(|r| r["alert"].is_string())
        .collect()
}

#[test]
fn the_issues_alerts_exist_each_with_a_severity_and_a_runbook_section() {
    let names: BTreeSet<String> = alerts()
        .iter()
        .map(|a| a["alert"].as_str().unwrap().to_owned())
        .collect();
    let wanted = [
        "NbvOperatorDown",
        "NbvNoLeader",
        "NbvReconcileErrorsRising",
        "NbvReconcileQueueBacklog",
        "NbvTriggersFailing",
        "NbvValidationFailureRateHigh",
        "NbvJobPastTimeout",
        "NbvEffectsAbandoned",
    ];
    assert_eq!(names, wanted.iter().map(|s| (*s).to_owned()).collect());
    let operations = read("docs/operations.md");
    let anchors: BTreeSet<String> = operations
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(|heading| {
            heading
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-')
                .collect::<String>()
                .replace(' ', "-")
        })
        .collect();
    for alert in alerts() {
        let name = alert["alert"].as_str().unwrap();
        assert!(
            matches!(
                alert["labels"]["severity"].as_str(),
                Some("critical" | "warning")
            ),
            "{name}: no severity"
        );
        let url = alert["annotations"]["runbook_url"]
            .as_str()
            .unwrap_or_default();
        let anchor = url
            .rsplit_once("docs/operations.md#")
            .map(|(_, a)| a)
            .unwrap_or_default();
        assert_eq!(anchor, name.to_lowercase(), "{name}: runbook_url {url:?}");
        assert!(
            anchors.contains(anchor),
            "docs/operations.md has no section `### {name}`"
        );
        assert!(
            alert["annotations"]["summary"].is_string(),
            "{name}: no summary"
        );
    }
}

/// A fixed instant, for the cluster gauges.
struct At(DateTime<Utc>);

impl Clock for At {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

/// The exposition of a registry in which every family has series with every label
/// value the rules and the dashboard select on.
async fn exposition() -> String {
    let metrics = Metrics::with_options(MetricsOptions::default());
    JobScope::new("ml", "train")
        .run(async {
            metrics.validation_finished(Phase::Succeeded, Some(Duration::from_secs(60)));
            metrics.validation_finished(Phase::Failed, Some(Duration::from_secs(30)));
            metrics.reconciled(ReconcileOutcome::Ok, Duration::from_millis(5));
            metrics.reconciled(ReconcileOutcome::Error, Duration::from_millis(5));
            metrics.reconcile_error("conflict");
        })
        .await;
    for action in ["restart", "sync", "refresh"] {
        for status in [
            TriggerStatus::Succeeded,
            TriggerStatus::Failed,
            TriggerStatus::Refused,
            TriggerStatus::Deferred,
        ] {
            metrics.trigger(action, status);
        }
    }
    metrics.application_published("patched");
    metrics.pod_created("ml", true);
    let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let mut jobs = Writer::<CachedJob>::default();
    // The fixtures name their Application with Argo CD's instance label.
    let tracking = TrackingSettings {
        method: TrackingMethod::Label,
        ..TrackingSettings::default()
    };
    let in_platform = |name: &str| JobBuilder::new("ml", name).instance("platform");
    let gave_up = json!([{
        "type": "EffectsApplied", "status": "False", "reason": "EffectAbandoned",
        "message": "gave up", "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
    for job in [
        in_platform("a").phase(Phase::Succeeded),
        in_platform("b")
            .phase(Phase::Failed)
            .status_field("conditions", gave_up),
        in_platform("c")
            .spec_field("timeout", json!("10m"))
            .phase(Phase::ValidationRunning)
            .started_at(start),
    ] {
        let job = job.typed().expect("a valid job");
        jobs.apply_watcher_event(&watcher::Event::Apply(CachedJob::pack(job, &tracking)));
    }
    let pods = PodCache::default();
    for phase in ["Pending", "Running"] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": format!("c-{phase}"), "namespace": "ml"},
            "status": {"phase": phase}}))
        .unwrap();
        pods.apply(&watcher::Event::Apply(pod));
    }
    let _leading = metrics.leading();
    let _observing = metrics.observe(ClusterView {
        jobs: jobs.as_reader(),
        pods: Some(pods),
        clock: Arc::new(At(start + chrono::Duration::minutes(11))),
    });
    metrics.encode()
}

/// The samples of an exposition: sample name → every label set it has.
fn samples(text: &str) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    let mut out: BTreeMap<String, Vec<BTreeMap<String, String>>> = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, _value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        let labels = labels
            .split(',')
            .filter(|l| !l.is_empty())
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
            .collect();
        out.entry(name.to_owned()).or_default().push(labels);
    }
    out
}

/// A vector selector of a query: the metric and its label matchers.
#[derive(Debug)]
struct Selector {
    metric: String,
    matchers: Vec<(String, String, String)>,
}

/// The vector selectors of a PromQL expression. Enough PromQL for the queries nbv
/// ships: functions and aggregations, `by (...)`, matchers, ranges, numbers.
fn selectors(expr: &str) -> Vec<Selector> {
    const OPERATORS: [&str; 12] = [
        "sum",
        "min",
        "max",
        "avg",
        "count",
        "stddev",
        "stdvar",
        "topk",
        "bottomk",
        "quantile",
        "group",
        "count_values",
    ];
    const LABEL_LISTS: [&str; 4] = ["by", "without", "on", "ignoring"];
    const KEYWORDS: [&str; 7] = [
        "and",
        "or",
        "unless",
        "bool",
        "offset",
        "group_left",
        "group_right",
    ];
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_to = |i: &mut usize, close: char| {
        while *i < chars.len() && chars[*i] != close {
            *i += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let ident: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            let next = chars.get(j).copied();
            if LABEL_LISTS.contains(&ident.as_str()) {
                i = j;
                skip_to(&mut i, ')');
            } else if OPERATORS.contains(&ident.as_str())
                || KEYWORDS.contains(&ident.as_str())
                || next == Some('(')
            {
                // A function, an aggregation or a keyword: not a metric.
            } else {
                let mut selector = Selector {
                    metric: ident,
                    matchers: Vec::new(),
                };
                if next == Some('{') {
                    let close = (j..chars.len()).find(|&k| chars[k] == '}').unwrap();
                    let body: String = chars[j + 1..close].iter().collect();
                    for matcher in body.split(',').map(str::trim).filter(|m| !m.is_empty()) {
                        let op_at = matcher.find(['=', '!']).unwrap();
                        let (label, rest) = matcher.split_at(op_at);
                        let op_len = if rest.starts_with("=~")
                            || rest.starts_with("!~")
                            || rest.starts_with("!=")
                        {
                            2
                        } else {
                            1
                        };
                        selector.matchers.push((
                            label.trim().to_owned(),
                            rest[..op_len].to_owned(),
                            rest[op_len..].trim().trim_matches('"').to_owned(),
                        ));
                    }
                    i = close + 1;
                }
                out.push(selector);
            }
        } else if c == '[' {
            skip_to(&mut i, ']');
        } else if c == '"' {
            i += 1;
            skip_to(&mut i, '"');
        } else {
            i += 1;
        }
    }
    out
}

/// Panics unless every selector of `expr` names a sample nbv exposes, with series
/// carrying each label it matches on and, for `=` and `=~`, a value it selects.
/// `up` comes from Prometheus itself, `job` and `instance` from the scrape.
fn assert_exposed(
    expr: &str,
    what: &str,
    exposed: &BTreeMap<String, Vec<BTreeMap<String, String>>>,
) {
    let found = selectors(expr);
    assert!(!found.is_empty(), "{what}: no metric in {expr:?}");
    for selector in found {
        if selector.metric == "up" {
            continue;
        }
        let series = exposed
            .get(&selector.metric)
            .unwrap_or_else(|| panic!("{what}: nbv exposes no {} ({expr})", selector.metric));
        for (label, op, value) in &selector.matchers {
            if label == "job" || label == "instance" {
                continue;
            }
            let values: BTreeSet<&str> = series
                .iter()
                .filter_map(|s| s.get(label))
                .map(String::as_str)
                .collect();
            assert!(
                !values.is_empty(),
                "{what}: {} has no label {label}",
                selector.metric
            );
            match op.as_str() {
                "=" => assert!(
                    values.contains(value.as_str()),
                    "{what}: {} has no {label}={value:?} (only {values:?})",
                    selector.metric
                ),
                "=~" => {
                    for alternative in value.split('|') {
                        assert!(
                            values.contains(alternative),
                            "{what}: {} has no {label}={alternative:?} (only {values:?})",
                            selector.metric
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

#[tokio::test]
async fn every_rule_queries_only_what_nbv_exposes() {
    let exposed = samples(&exposition().await);
    for alert in alerts() {
        let what = alert["alert"].as_str().unwrap();
        assert_exposed(alert["expr"].as_str().unwrap(), what, &exposed);
    }
}

#[tokio::test]
async fn every_dashboard_query_names_only_what_nbv_exposes() {
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).expect("the dashboard is JSON");
    let exposed = samples(&exposition().await);
    let panels = dashboard["panels"].as_array().unwrap();
    let titles: BTreeSet<&str> = panels
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    for wanted in [
        "Jobs by phase",
        "Success rate per Application",
        "Validation duration",
        "Trigger outcomes",
        "Reconcile rate",
        "Reconcile errors",
        "Reconcile latency",
        "Effects abandoned",
    ] {
        assert!(
            titles.contains(wanted),
            "the dashboard has no panel {wanted:?}"
        );
    }
    let mut queries = 0;
    for panel in panels {
        for target in panel["targets"].as_array().unwrap() {
            let what = format!("panel {:?}", panel["title"]);
            assert_exposed(target["expr"].as_str().unwrap(), &what, &exposed);
            queries += 1;
        }
    }
    assert!(queries >= panels.len());
}

#[test]
fn the_query_reader_finds_metrics_and_matchers() {
    // The checks above depend on it, so it is tested on its own.
    let found = selectors(
        r#"sum by (le, phase) (rate(a_bucket{job="x",phase=~"A|B"}[5m])) / max(b) > 0.1 and absent(up{job="y"} == 1)"#,
    );
    let names: Vec<&str> = found.iter().map(|s| s.metric.as_str()).collect();
    assert_eq!(names, ["a_bucket", "b", "up"]);
    assert_eq!(
        found[0].matchers[1],
        ("phase".to_owned(), "=~".to_owned(), "A|B".to_owned())
    );
    let exposed = samples("a_bucket{phase=\"A\"} 1\n");
    let result =
        std::panic::catch_unwind(|| assert_exposed("a_bucket{phase=\"B\"}", "t", &exposed));
    assert!(result.is_err(), "a label value nbv never writes must fail");
    let result = std::panic::catch_unwind(|| assert_exposed("nope_total", "t", &exposed));
    assert!(result.is_err(), "a family nbv does not expose must fail");
}

/// `config/monitoring-openshift`'s ServiceMonitor: `config/monitoring`'s with the
/// overlay's JSON 6902 patches applied (the operations it uses: `replace`, `add`).
fn openshift_service_monitor() -> Value {
    const OVERLAY: &str = "config/monitoring-openshift/kustomization.yaml";
    let kustomization = documents(OVERLAY).remove(0);
    let resources: Vec<&str> = kustomization["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(resources, ["../monitoring", "service-ca-configmap.yaml"]);
    let mut monitor = documents("config/monitoring/servicemonitor.yaml").remove(0);
    let patches = kustomization["patches"].as_array().unwrap();
    assert_eq!(
        patches.len(),
        1,
        "{OVERLAY}: one patch, of the ServiceMonitor"
    );
    let target = &patches[0]["target"];
    assert_eq!(target["kind"], "ServiceMonitor");
    assert_eq!(target["name"], monitor["metadata"]["name"]);
    let ops: Vec<Value> = serde_yaml_ng::from_str(patches[0]["patch"].as_str().unwrap()).unwrap();
    for op in ops {
        let path = op["path"].as_str().unwrap();
        let at = monitor.pointer_mut(path).unwrap_or_else(|| {
            panic!("{OVERLAY}: {path} is not in config/monitoring/servicemonitor.yaml")
        });
        match op["op"].as_str() {
            Some("replace" | "add") => *at = op["value"].clone(),
            other => panic!("{OVERLAY}: operation {other:?} is not read by this test"),
        }
    }
    monitor
}

#[test]
fn on_openshift_the_service_monitor_verifies_the_service_cas_certificate() {
    let monitor = openshift_service_monitor();
    assert_valid(
        "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml",
        "v1",
        &monitor,
        "config/monitoring-openshift",
    );
    let service = documents("config/manager/service.yaml").remove(0);
    let config_map = documents("config/monitoring-openshift/service-ca-configmap.yaml").remove(0);
    // The service CA signs a certificate for the Service's DNS name; OpenShift puts its
    // bundle into a ConfigMap so annotated, which the Prometheus Operator reads from
    // the ServiceMonitor's namespace.
    assert_eq!(config_map["kind"], "ConfigMap");
    assert_eq!(
        config_map["metadata"]["annotations"]["service.beta.openshift.io/inject-cabundle"],
        "true"
    );
    assert_eq!(
        config_map["metadata"]["namespace"],
        monitor["metadata"]["namespace"]
    );
    let server_name = format!(
        "{}.{}.svc",
        service["metadata"]["name"].as_str().unwrap(),
        service["metadata"]["namespace"].as_str().unwrap()
    );
    for endpoint in monitor["spec"]["endpoints"].as_array().unwrap() {
        let tls = &endpoint["tlsConfig"];
        assert_eq!(endpoint["scheme"], "https", "{endpoint}");
        assert!(
            tls.get("insecureSkipVerify").is_none(),
            "config/monitoring-openshift skips verification: {tls}"
        );
        assert_eq!(
            tls["ca"]["configMap"]["name"],
            config_map["metadata"]["name"]
        );
        assert_eq!(tls["ca"]["configMap"]["key"], "service-ca.crt");
        assert_eq!(tls["serverName"], server_name.as_str());
        // The rest is config/monitoring's: the token, honorLabels, the interval.
        assert_eq!(endpoint["honorLabels"], true);
        assert!(endpoint["bearerTokenFile"].is_string(), "{endpoint}");
    }
    // And the plain ServiceMonitor still skips verification: nbv's own certificate is
    // self-signed there.
    let plain = documents("config/monitoring/servicemonitor.yaml").remove(0);
    assert_eq!(
        plain["spec"]["endpoints"][0]["tlsConfig"]["insecureSkipVerify"],
        true
    );
}
