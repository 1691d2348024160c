//! The alert rules of `config/monitoring/prometheusrule.yaml` as a plain Prometheus
//! rule file (`config/monitoring/promtool/nbv.rules.yaml`), for a Prometheus without
//! the Prometheus Operator and for `promtool`. The PrometheusRule is the only copy of
//! the rules; the rule file is rendered from it, and a test keeps the two equal.

use serde_json::Value;

/// `config/monitoring/prometheusrule.yaml`, as compiled into `nbv`.
pub const PROMETHEUS_RULE: &str = include_str!("../../../config/monitoring/prometheusrule.yaml");

/// Why the rule file cannot be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The PrometheusRule is not YAML (or exceeds a bound of `nbv_core::yaml`).
    #[error("the PrometheusRule is not valid YAML: {0}")]
    Yaml(#[from] nbv_core::yaml::YamlError),
    /// It has no `spec.groups` list.
    #[error("the PrometheusRule has no spec.groups list: write its rule groups there")]
    NoGroups,
}

/// The rule file of `prometheus_rule` (a PrometheusRule manifest): its `spec.groups`,
/// under a header that says where it comes from.
///
/// # Examples
///
/// ```
/// let rule = "kind: PrometheusRule\nspec:\n  groups:\n    - name: g\n      rules:\n        - alert: A\n          expr: up == 0\n";
/// let file = nbv_operator::runtime::monitoring::rules_file(rule)?;
/// assert!(file.ends_with("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n"));
/// assert!(nbv_operator::runtime::monitoring::rules_file("kind: PrometheusRule\n").is_err());
/// # Ok::<(), nbv_operator::runtime::monitoring::RulesError>(())
/// ```
///
/// # Errors
///
/// [`RulesError`] when the manifest is not YAML or has no `spec.groups` list.
pub fn rules_file(prometheus_rule: &str) -> Result<String, RulesError> {
    let rule: Value = nbv_core::yaml::from_str(prometheus_rule)?;
    let groups = rule
        .pointer("/spec/groups")
        .filter(|g| g.is_array())
        .ok_or(RulesError::NoGroups)?;
    let body = serde_yaml_ng::to_string(&serde_json::json!({ "groups": groups }))
        .map_err(|e| RulesError::Yaml(e.into()))?;
    Ok(format!(
        "# Generated from config/monitoring/prometheusrule.yaml (spec.groups); do not edit.\n\
         # Regenerate: NBV_UPDATE_CONFIG=1 cargo test -p nbv-operator --test monitoring\n{body}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_beyond_the_yaml_bounds_is_refused() {
        // One 1 MiB expression repeated 10,000 times: 10 GiB if it were expanded.
        let rule = format!(
            "spec:\n  groups:\n    - name: g\n      rules:\n        - expr: &big {}\n{}",
            "x".repeat(1 << 20),
            "        - expr: *big\n".repeat(10_000)
        );
        let error = rules_file(&rule).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("document contains excessive aliasing"),
            "{error}"
        );
    }
}
