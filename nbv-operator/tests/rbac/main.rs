//! The RBAC manifests in `config/rbac/` against what the code really calls.
//!
//! The operator runs (leader election, controller, publisher, every effect) against the
//! in-memory API server of `nbv-testkit`, in a scenario that exercises every feature,
//! and its request log is checked against the rules in both directions:
//!
//! - every request is allowed by a rule (the operator cannot be refused in production
//!   for something the tests did);
//! - every rule is used by some request, or listed in [`UNUSED_ON_PURPOSE`] with the
//!   reason (the role stays minimal: a permission that no code path needs fails here).
//!
//! `nbv wait` is checked the same way against `config/rbac/wait-hook-role.yaml`, with
//! no exception.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use futures::FutureExt;
use futures::future::Shared;
use nbv_core::api::Phase;
use nbv_operator::operator::config::OperatorConfig;
use nbv_operator::operator::controller::{self, Runtime};
use nbv_operator::operator::metrics::Metrics;
use nbv_operator::runtime::leader::{LeaderConfig, run_while_leader};
use nbv_operator::wait::{WaitArgs, wait};
use nbv_testkit::cluster::{ApiResourceSpec, FakeCluster, RequestRecord, Verb};
use nbv_testkit::fixtures::JobBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

/// The operator's namespace, where its Lease lives.
const OPERATOR_NAMESPACE: &str = "nbv-system";
/// The namespace of the scenario's jobs.
const ML: &str = "self-healing-platform";

/// Rules that the scenario cannot use, with the reason they are kept anyway:
/// `(file, apiGroup, resource, verb, reason)`. Add an entry only with a reason a reviewer
/// can check, for example a check of a real API server that the in-memory one does not
/// make; the test fails when an entry is used after all (it is then not needed here).
const UNUSED_ON_PURPOSE: &[(&str, &str, &str, &str, &str)] = &[
    (
        "role.yaml",
        "authentication.k8s.io",
        "tokenreviews",
        "create",
        "made by the /metrics endpoint for each scrape's token, not by the controller this \
     scenario runs; the end-to-end test secure_metrics proves it on a real API server",
    ),
    (
        "role.yaml",
        "authorization.k8s.io",
        "subjectaccessreviews",
        "create",
        "made by the /metrics endpoint for the user of each scrape's token, not by the \
     controller; the end-to-end test secure_metrics proves it on a real API server",
    ),
    (
        "role.yaml",
        "mlops.mlops.dev",
        "notebookvalidationjobs/finalizers",
        "update",
        "the validation Pod names its job as owner with blockOwnerDeletion: true, which the \
     OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift) allows only \
     to a client that may update the owner's finalizers; the in-memory API server runs no \
     admission plugins, so no request shows it",
    ),
    (
        "role.yaml",
        "build.openshift.io",
        "builds/source",
        "create",
        "OpenShift's build admission lets a client create a Build of the Source strategy only \
     if it may create builds/source; the in-memory API server has no such admission, so \
     no request shows it",
    ),
    (
        "role.yaml",
        "build.openshift.io",
        "builds/docker",
        "create",
        "OpenShift's build admission lets a client create a Build of the Docker strategy only \
     if it may create builds/docker; the in-memory API server has no such admission",
    ),
];

// ---------------------------------------------------------------------------------------
// Reading the manifests
// ---------------------------------------------------------------------------------------

fn config_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("config")
        .join(relative)
}

/// One document of a manifest file, as far as RBAC goes.
#[derive(Debug, Deserialize)]
struct Document {
    kind: String,
    metadata: Metadata,
    #[serde(default)]
    rules: Vec<PolicyRule>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    name: String,
    namespace: Option<String>,
}

/// An RBAC rule. Fields nbv's manifests never use (`nonResourceURLs`) are rejected,
/// so that a rule cannot mean more than this test checks.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyRule {
    api_groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    /// When given, the rule allows requests for these objects only (so never a list
    /// or a watch, which name no object).
    #[serde(default)]
    resource_names: Vec<String>,
}

/// Where a rule applies.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    /// A ClusterRole bound with a ClusterRoleBinding: every namespace and cluster-scoped
    /// resources.
    Cluster,
    /// A Role: one namespace.
    Namespace(String),
}

/// One (verb, group, resource) a rule grants, with where it came from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Permission {
    file: &'static str,
    role: String,
    scope: Scope,
    group: String,
    /// `plural` or `plural/subresource`.
    resource: String,
    verb: String,
    /// The objects it is limited to (`resourceNames`); empty: every object.
    names: Vec<String>,
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = match &self.scope {
            Scope::Cluster => "cluster-wide".to_owned(),
            Scope::Namespace(ns) => format!("in namespace {ns}"),
        };
        write!(
            f,
            "{} {} (apiGroup {:?}) {scope}, from {} in config/rbac/{}",
            self.verb, self.resource, self.group, self.role, self.file
        )
    }
}

/// Every permission the Roles and ClusterRoles of `file` grant. Wildcards are refused:
/// a `*` would make this test meaningless.
fn permissions(file: &'static str) -> Vec<Permission> {
    let path = config_path(&format!("rbac/{file}"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let document = Document::deserialize(document)
            .unwrap_or_else(|e| panic!("config/rbac/{file} is not a valid manifest: {e}"));
        let scope = match document.kind.as_str() {
            "ClusterRole" => Scope::Cluster,
            "Role" => Scope::Namespace(document.metadata.namespace.clone().unwrap_or_else(|| {
                panic!(
                    "Role {} in config/rbac/{file} has no namespace",
                    document.metadata.name
                )
            })),
            _ => continue,
        };
        for rule in &document.rules {
            for field in [&rule.api_groups, &rule.resources, &rule.verbs] {
                assert!(
                    !field.iter().any(|v| v.contains('*')),
                    "{} in config/rbac/{file} uses a wildcard; name each group, resource and verb",
                    document.metadata.name
                );
            }
            for group in &rule.api_groups {
                for resource in &rule.resources {
                    for verb in &rule.verbs {
                        out.push(Permission {
                            file,
                            role: document.metadata.name.clone(),
                            scope: scope.clone(),
                            group: group.clone(),
                            resource: resource.clone(),
                            verb: verb.clone(),
                            names: rule.resource_names.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------

/// A request as RBAC sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Access {
    verb: &'static str,
    group: String,
    resource: String,
    namespace: Option<String>,
    /// The object the request names, if any.
    name: Option<String>,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} (apiGroup {:?})",
            self.verb, self.resource, self.group
        )?;
        match &self.namespace {
            Some(ns) => write!(f, " in namespace {ns}"),
            None => write!(f, " (all namespaces or cluster-scoped)"),
        }
    }
}

fn rbac_verb(verb: Verb) -> &'static str {
    match verb {
        Verb::Get => "get",
        Verb::List => "list",
        Verb::Watch => "watch",
        Verb::Create => "create",
        Verb::Update => "update",
        Verb::Patch { .. } => "patch",
        Verb::Delete => "delete",
        Verb::DeleteCollection => "deletecollection",
    }
}

/// The resource requests of the log; discovery requests (`/api`, `/apis/...`,
/// `/version`) are left out: every authenticated user may make them (the built-in
/// ClusterRole `system:discovery`).
fn accesses(log: &[RequestRecord]) -> BTreeSet<Access> {
    log.iter()
        .filter(|r| !r.resource.is_empty())
        .map(|r| Access {
            verb: rbac_verb(r.verb),
            group: r.group.clone(),
            resource: match &r.subresource {
                Some(sub) => format!("{}/{sub}", r.resource),
                None => r.resource.clone(),
            },
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        })
        .collect()
}

fn allows(permission: &Permission, access: &Access) -> bool {
    let in_scope = match (&permission.scope, &access.namespace) {
        (Scope::Cluster, _) => true,
        (Scope::Namespace(ns), Some(requested)) => ns == requested,
        (Scope::Namespace(_), None) => false,
    };
    let named = permission.names.is_empty()
        || access
            .name
            .as_ref()
            .is_some_and(|name| permission.names.contains(name));
    in_scope
        && named
        && permission.verb == access.verb
        && permission.group == access.group
        && permission.resource == access.resource
}

/// Checks both directions and returns a readable list of every violation.
fn violations(
    granted: &[Permission],
    requested: &BTreeSet<Access>,
    unused_on_purpose: impl Fn(&Permission) -> bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    for access in requested {
        if !granted.iter().any(|p| allows(p, access)) {
            problems.push(format!(
                "the operator makes the request `{access}`, which no rule allows: add a rule \
                 (and say in docs/rbac.md which code path needs it)"
            ));
        }
    }
    for permission in granted {
        let used = requested.iter().any(|a| allows(permission, a));
        if !used && !unused_on_purpose(permission) {
            problems.push(format!(
                "the rule `{permission}` is used by no request of the scenario: remove it, \
                 or exercise the code path that needs it in this test"
            ));
        }
    }
    problems
}

mod openshift;
mod rules;
mod scenario;
